from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from papergym.baselines import ttpo  # noqa: E402
from papergym.baselines.rollout import Episode  # noqa: E402
from papergym.baselines.run import read_metrics  # noqa: E402
from papergym.core import info_keys as K  # noqa: E402
from papergym.core.tasks import parse_task_id  # noqa: E402
from papergym.core.trajectory import Step, Trajectory  # noqa: E402
from papergym.credit.majority_vote import majority_vote  # noqa: E402
from papergym.envs.reasoning.reasoning_env import canonical_answer  # noqa: E402
from papergym.envs.reasoning.test_time import TestTimeEnv  # noqa: E402
from tests.baselines.answering import answering_checkpoint  # noqa: E402

N_PROBLEMS = 6


class RelabelHidden(gym.Wrapper):
    """Rewrites ``info["hidden_label"]``: ``"cycle"`` gives each problem the label of the next one (a
    permutation of the problem set's labels), any other string replaces every label with itself."""

    def __init__(self, env: gym.Env, mode: str) -> None:
        super().__init__(env)
        self.mode = mode
        inner = env.unwrapped
        (domain,) = inner.domains
        generator = inner._generators[domain]
        self.labels = [
            canonical_answer(generator.task("test", i, inner.difficulty).payload.answer)
            for i in range(N_PROBLEMS)
        ]

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if K.HIDDEN_LABEL in info:
            index = parse_task_id(self.env.unwrapped.task.task_id)[3]
            assert info[K.HIDDEN_LABEL] == self.labels[index]
            label = self.labels[(index + 1) % N_PROBLEMS] if self.mode == "cycle" else self.mode
            info = {**info, K.HIDDEN_LABEL: label}
        return obs, reward, terminated, truncated, info


def _register(mode: str) -> str:
    env_id = f"papergym_test/TestTimeRelabelled{mode.capitalize()}-v0"
    if env_id not in gym.registry:
        gym.register(
            id=env_id,
            entry_point=lambda **kw: RelabelHidden(TestTimeEnv(**kw), mode),
            max_episode_steps=1,
        )
    return env_id


@pytest.fixture(scope="module")
def answering(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return answering_checkpoint(tmp_path_factory.mktemp("answering") / "model")


def _args(model: Path, out: Path, **kw: Any) -> ttpo.Args:
    base: dict[str, Any] = dict(
        env_kw=[f"n_problems={N_PROBLEMS}"],
        model=str(model),
        out=str(out),
        steps=2,
        prompts_per_step=2,
        group_size=6,
        max_new_tokens=10,
        lr=1e-3,
        confidence=0.5,
        checkpoint_every=0,
        progress=False,
    )
    base.update(kw)
    return ttpo.Args(**base)


def _weights(run_dir: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(run_dir / "final" / "model.safetensors"))


@pytest.mark.parametrize("objective", ["ttpo", "ttrl", "opsd"])
def test_two_steps_change_the_parameters(answering: Path, tmp_path: Path, objective: str) -> None:
    out = tmp_path / objective
    ttpo.main(_args(answering, out, objective=objective))
    rows = read_metrics(out / "metrics.jsonl")
    assert [r["step"] for r in rows] == [0, 1]
    assert all(math.isfinite(r["loss"]) for r in rows)
    assert all(0 < r["majority_ratio"] <= 1 for r in rows)
    assert all(0 <= r["pseudo_label_error"] <= 1 for r in rows)
    from safetensors.torch import load_file

    before = load_file(str(answering / "model.safetensors"))
    after = _weights(out)
    assert any(not torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("objective", ["ttpo", "ttrl"])
def test_hidden_labels_never_reach_rewards_or_updates(
    answering: Path, tmp_path: Path, objective: str
) -> None:
    runs = {}
    for name, env_id in (("true", "papergym/TestTime-v0"), ("permuted", _register("cycle"))):
        out = tmp_path / f"{objective}-{name}"
        ttpo.main(_args(answering, out, env=env_id, objective=objective, steps=1))
        runs[name] = (read_metrics(out / "metrics.jsonl"), _weights(out))
    (true_rows, true_weights), (permuted_rows, permuted_weights) = runs["true"], runs["permuted"]
    for key in ("reward", "majority_ratio", "loss"):
        assert [r[key] for r in permuted_rows] == [r[key] for r in true_rows]
    assert all(torch.equal(permuted_weights[k], true_weights[k]) for k in true_weights)


def test_opsd_reads_the_hidden_labels(answering: Path, tmp_path: Path) -> None:
    # the true-label reference arm: its teacher is shown info["hidden_label"], so permuting the labels
    # (same rollouts, same votes) changes its update
    weights = {}
    for name, env_id in (("true", "papergym/TestTime-v0"), ("permuted", _register("cycle"))):
        out = tmp_path / f"opsd-{name}"
        ttpo.main(_args(answering, out, env=env_id, objective="opsd", steps=1))
        weights[name] = _weights(out)
    assert any(not torch.equal(weights["true"][k], weights["permuted"][k]) for k in weights["true"])


def _episode(answer: str | None, label: str) -> Episode:
    info = {K.ANSWER: answer, K.HIDDEN_LABEL: label}
    return Episode(Trajectory("t", 0, steps=[Step("q", "a", 0.0, info)]), [], [], 0)


def test_label_diagnostics_read_the_hidden_labels() -> None:
    # group 1: majority "4" is right (label 4); the dissenters "5" and None are wrong
    # group 2: majority "7" is wrong (label 8); one dissenter "8" is right
    groups = [
        [_episode("4", "4"), _episode("4", "4"), _episode("5", "4"), _episode(None, "4")],
        [_episode("7", "8"), _episode("7", "8"), _episode("8", "8")],
    ]
    votes = [majority_vote(["4", "4", "5", None]), majority_vote(["7", "7", "8"])]
    d = ttpo.label_diagnostics(groups, votes)
    assert d["pseudo_label_error"] == 0.5
    assert d["disagree_error"] == pytest.approx(2 / 3)  # "5", None wrong; "8" right
    assert d["accuracy"] == pytest.approx(3 / 7)
    # pseudo-reward = true reward: group 1 all four; group 2 none ("7" rewarded but wrong, "8" the reverse)
    assert d["reward_accuracy"] == pytest.approx(4 / 7)


def test_split_loss_branches() -> None:
    g, t, v = 4, 3, 5
    logits = torch.zeros(g, t, v)
    logits[:, [0, 2], 0] = math.log(76.0)  # p(token 0) = 0.95 at positions 0 and 2, 0.2 at position 1
    student = logits.clone().requires_grad_()
    teacher = torch.zeros(g, t, v)
    teacher[:, :, 0] = 8.0  # the teacher is surer still of token 0
    tokens = torch.zeros(g, t, dtype=torch.long)
    old_logp = torch.log_softmax(logits, dim=-1)[..., 0]  # sampled by the current policy: ratio 1
    mask = torch.ones(g, t)
    agree = torch.tensor([True, True, False, False])
    loss, stats = ttpo.ttpo_split_loss(
        student_logits=student, teacher_logits=teacher, tokens=tokens, old_logp=old_logp, mask=mask,
        agree=agree, kappa=0.1, confidence=0.9, penalty_weight=1.0,
    )  # fmt: skip
    loss.backward()
    # agreeing rows: distillation pulls token 0 up; disagreeing rows: only the confident positions 0 and 2
    # are penalised (token 0 pushed down), position 1 (p = 0.2) gets no gradient
    assert student.grad[0, :, 0].lt(0).all()
    assert student.grad[2, 1].abs().sum() == 0
    assert student.grad[2, 0, 0] > 0 and student.grad[2, 2, 0] > 0
    assert stats["confident_share"] == pytest.approx(2 / 3)
    assert 0 < stats["distill_weight"] < 1  # near-converged positions 0 and 2 count less than position 1
    # a converged token (student = teacher) has zero KL and zero weight
    same, _ = ttpo.ttpo_split_loss(
        student_logits=teacher.clone().requires_grad_(), teacher_logits=teacher, tokens=tokens,
        old_logp=old_logp, mask=mask, agree=torch.ones(g, dtype=torch.bool), kappa=0.1, confidence=0.9,
        penalty_weight=1.0,
    )  # fmt: skip
    assert float(same) == pytest.approx(0.0, abs=1e-6)
