from __future__ import annotations

import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from papergym.baselines import mopd  # noqa: E402
from papergym.baselines.policy import load_policy  # noqa: E402
from papergym.baselines.run import read_metrics  # noqa: E402
from tests.backends.tiny_lm import build_tiny_checkpoint  # noqa: E402


def _teacher(base: Path, out: Path, seed: int) -> str:
    policy = load_policy(base)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in policy.model.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=generator))
    policy.model.save_pretrained(out)
    policy.tokenizer.save_pretrained(out)
    return str(out)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("mopd")
    student = build_tiny_checkpoint(root / "student", hidden=32, layers=2)
    teachers = {"math": _teacher(student, root / "math", 1), "code": _teacher(student, root / "code", 2)}
    return student, teachers


def test_two_steps_route_each_prompt_to_its_domain_teacher(
    checkpoints: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    student, teachers = checkpoints
    routed: list[tuple[str, str]] = []
    real = mopd.completion_logprobs

    def spy(policy, prompts, completions, **kw):  # type: ignore[no-untyped-def]
        name = next((d for d, p in loaded.items() if p is policy), "student")
        routed.append((name, tuple(map(tuple, prompts))))
        return real(policy, prompts, completions, **kw)

    loaded: dict[str, object] = {}
    real_load = mopd.load_policy

    def load(source, **kw):  # type: ignore[no-untyped-def]
        policy = real_load(source, **kw)
        for domain, path in teachers.items():
            if str(source) == path:
                loaded[domain] = policy
        return policy

    played: list = []
    real_run = mopd.run_episodes

    def run_episodes(*a, **kw):  # type: ignore[no-untyped-def]
        episodes = real_run(*a, **kw)
        played.extend(episodes)
        return episodes

    monkeypatch.setattr(mopd, "run_episodes", run_episodes)
    monkeypatch.setattr(mopd, "completion_logprobs", spy)
    monkeypatch.setattr(mopd, "load_policy", load)
    args = mopd.Args(
        env_kw=['domains=["math", "code"]'],
        model=str(student),
        teachers=[f"{d}={p}" for d, p in teachers.items()],
        out=str(tmp_path / "run"),
        steps=2,
        prompts_per_step=4,
        group_size=2,
        max_new_tokens=6,
        lr=1e-3,
        checkpoint_every=0,
        progress=False,
    )
    mopd.main(args)
    rows = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [r["step"] for r in rows] == [0, 1]
    assert all(math.isfinite(r["loss"]) and r["reverse_kl"] != 0 for r in rows)
    # every teacher call scored only prompts of its own domain; both teachers were used
    domain_of_prompt = {tuple(e.segments[0].token_ids[: e.prompt_length]): mopd.domain_of(e) for e in played}
    assert set(domain_of_prompt.values()) == {"math", "code"}
    used = {name for name, _ in routed if name != "student"}
    assert used == {"math", "code"}
    for name, prompts in routed:
        if name != "student":
            assert {domain_of_prompt[p] for p in prompts} == {name}
    from safetensors.torch import load_file

    before = load_file(str(student / "model.safetensors"))
    after = load_file(str(tmp_path / "run" / "final" / "model.safetensors"))
    assert any(not torch.equal(before[k], after[k]) for k in before)


def test_advantage_is_the_detached_teacher_student_gap() -> None:
    student = torch.tensor([[-1.0, -2.0, -0.5]], requires_grad=True)
    teacher = torch.tensor([[-0.5, -3.0, -0.5]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    adv = mopd.opd_advantages(teacher, student, mask)
    assert adv.tolist() == [[0.5, -1.0, 0.0]] and not adv.requires_grad


def test_missing_teacher_is_a_clear_error(checkpoints: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    student, teachers = checkpoints
    args = mopd.Args(
        env_kw=['domains=["math", "code"]'], model=str(student), teachers=[f"math={teachers['math']}"],
        out=str(tmp_path / "x"),
    )  # fmt: skip
    with pytest.raises(ValueError, match="code=PATH"):
        mopd.main(args)
    with pytest.raises(ValueError, match="domain=PATH"):
        mopd.parse_teachers(["math"])


@pytest.mark.parametrize("outcome_weight", [0.0, 0.5])
def test_micro_batches_give_the_whole_batchs_step(
    checkpoints: tuple[Path, dict[str, str]], outcome_weight: float
) -> None:
    import copy

    from papergym.baselines.run import make_envs

    student, teacher_paths = checkpoints
    args = mopd.Args(
        env_kw=['domains=["math", "code"]'],
        model=str(student),
        teachers=[f"{d}={p}" for d, p in teacher_paths.items()],
        prompts_per_step=3,
        group_size=2,
        max_new_tokens=6,
        outcome_weight=outcome_weight,
    )
    policy = load_policy(student)
    teachers = mopd.load_teachers(args, policy)
    envs = make_envs(args.env, {"domains": ["math", "code"]}, args.prompts_per_step * args.group_size)
    episodes = mopd.sample_groups(args, policy, envs, step=0)
    assert len({len(e.segments[0].token_ids) for e in episodes}) > 1  # lengths differ: padding matters
    results = {}
    for micro_batch in (0, 1, 4):
        student_copy = copy.deepcopy(policy)
        optimizer = torch.optim.SGD(student_copy.model.parameters(), lr=1.0)
        split = mopd.Args(**{**vars(args), "micro_batch": micro_batch})
        metrics = mopd.update(split, student_copy, teachers, optimizer, episodes)
        results[micro_batch] = (metrics, [p.detach().clone() for p in student_copy.model.parameters()])
    whole, whole_params = results[0]
    assert whole["reverse_kl"] != 0 and whole["grad_norm"] > 0
    for micro_batch in (1, 4):
        metrics, params = results[micro_batch]
        for key in ("loss", "reverse_kl", "clip_fraction", "grad_norm"):
            assert metrics[key] == pytest.approx(whole[key], rel=1e-4, abs=1e-6), (micro_batch, key)
        assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(params, whole_params, strict=True))
    moved = [not torch.equal(a, b) for a, b in zip(whole_params, policy.model.parameters(), strict=True)]
    assert any(moved)
