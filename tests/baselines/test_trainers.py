"""Every trainer of this module runs two steps in-process on the tiny model (finite loss, changed
parameters); a multi-turn GRPO run on SearchCritic-v0 with a scripted policy checks the advantage hook;
``--resume`` continues a killed run exactly."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import papergym  # noqa: F401  (registers the ids)
from papergym.core import info_keys as K

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tyro")

from papergym.baselines import grpo, sft  # noqa: E402
from papergym.baselines.losses import group_advantages  # noqa: E402
from papergym.baselines.policy import load_policy  # noqa: E402
from papergym.baselines.prefix import prefix_cut  # noqa: E402
from papergym.baselines.run import read_metrics  # noqa: E402
from papergym.credit.feedback import FeedbackAdvantageShaping, FeedbackRequestReward  # noqa: E402


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in load_policy(path).model.named_parameters()}


def _changed(before: dict[str, torch.Tensor], after: dict[str, torch.Tensor]) -> bool:
    return any(not torch.equal(before[n], after[n]) for n in before)


def by_member(group, *, batch=()):
    """A GroupReward with a reward spread inside every group, so every step has a gradient."""
    return [float(i) for i in range(len(group))]


def _tiny_grpo_args(tiny_dir: Path, out: Path, **overrides: Any) -> grpo.Args:
    """Two small GRPO steps of the tiny model on level-1 maths."""
    settings: dict[str, Any] = {
        "env_kw": ["domain=math", "difficulty=1"],
        "steps": 2,
        "prompts_per_step": 2,
        "group_size": 2,
        "max_new_tokens": 6,
        "lr": 1e-3,
        "progress": False,
    }
    return grpo.Args(model=str(tiny_dir), out=str(out), **{**settings, **overrides})


def test_sft_two_steps(tiny_dir: Path, tmp_path: Path) -> None:
    args = sft.Args(
        env_kw=["domain=math", "difficulty=1"],
        model=str(tiny_dir),
        out=str(tmp_path / "sft"),
        episodes=16,
        steps=2,
        batch_size=4,
        progress=False,
    )
    result = sft.main(args)
    assert math.isfinite(result["loss"]) and result["demonstration_contexts"] == 16
    assert _changed(_weights(tiny_dir), _weights(tmp_path / "sft" / "final"))
    assert [r["step"] for r in read_metrics(tmp_path / "sft" / "metrics.jsonl")] == [0, 1]
    assert (tmp_path / "sft" / "curves.png").stat().st_size > 0


@pytest.mark.parametrize(
    ("variant", "extra"),
    [
        ("grpo", {}),
        ("dapo", {}),
        ("dr_grpo", {"updates_per_batch": 2}),
        ("grpo", {"prefix_prob": 1.0, "prefix_loss": "mask"}),
        ("dapo", {"prefix_prob": 1.0, "prefix_loss": "luffy"}),
    ],
)
def test_grpo_variants_two_steps(tiny_dir: Path, tmp_path: Path, variant: str, extra: dict) -> None:
    prefix = "prefix_prob" in extra
    seen = []
    args = _tiny_grpo_args(
        tiny_dir,
        tmp_path / "g",
        variant=variant,
        prefix_model=str(tiny_dir) if prefix else None,
        prefix_tokens=8,
        **extra,
    )
    result = grpo.main(args, group_reward=by_member, on_step=lambda step, m, eps: seen.append(eps))
    assert math.isfinite(result["loss"]) and result["samples_per_s"] > 0
    assert _changed(_weights(tiny_dir), _weights(tmp_path / "g" / "final"))
    assert len(seen) == 2 and all(len(eps) == 4 for eps in seen)
    if prefix:
        assert result["prefix_share"] == 1.0
        for episode in seen[-1]:
            seg = episode.segments[0]
            assert sum(seg.forced_mask) > 0  # the prefix model's tokens start the action
            if extra["prefix_loss"] == "mask":
                assert all(m == 0 for m, f in zip(seg.loss_mask, seg.forced_mask, strict=True) if f)


def test_prefix_cut_takes_the_largest_drop_inside_the_window() -> None:
    entropies = [5.0, 0.1] + [4.0] * 10 + [1.0] * 8  # the big drop at 1 lies before 10% of the trace
    assert prefix_cut(entropies, window=1) == 12
    assert prefix_cut(entropies, window=2) == 12
    assert 1 <= prefix_cut([1.0], window=4) <= 1


REQUEST = "<think>Let me ask.</think><request_feedback></request_feedback>"
WRONG = "<think>Guess.</think><answer>Nobody Knows</answer>"


def _script(i: int, env: gym.Env, observation) -> str:
    """Members 0, 1: search, request feedback, then the oracle (success); 2: the oracle without a request
    (success); 3: a wrong answer at once. Requesters succeed more than skippers, so CAFE's shaping acts."""
    turn = env.unwrapped._state().tool_calls + env.unwrapped._state().requests
    if i % 4 == 3:
        return WRONG
    if i % 4 in (0, 1) and turn == 1 and env.unwrapped._state().requests == 0:
        return REQUEST
    return env.unwrapped.oracle_action()


def test_multi_turn_grpo_spreads_the_hook_values_over_each_action(tiny_dir: Path, tmp_path: Path) -> None:
    seen = []
    reward, hook = FeedbackRequestReward(), FeedbackAdvantageShaping()
    args = grpo.Args(
        env="papergym/SearchCritic-v0",
        env_kw=["n_passages=2000"],
        model=str(tiny_dir),
        out=str(tmp_path / "s"),
        steps=1,
        prompts_per_step=1,
        group_size=4,
        max_new_tokens=128,
        variant="dr_grpo",
        lr=1e-3,
        progress=False,
    )
    result = grpo.main(
        args,
        group_reward=reward,
        advantage_hook=hook,
        script=_script,
        on_step=lambda step, m, eps: seen.append(eps),
    )
    assert math.isfinite(result["loss"])
    (episodes,) = seen
    group = [e.trajectory for e in episodes]
    assert [t.success for t in group] == [True, True, True, False]
    assert all(any(s.info.get(K.TOOL_RESULTS) for s in t.steps) for t in group[:3])  # the search tool ran
    rewards = torch.tensor([FeedbackRequestReward()(group)])
    advantages = group_advantages(rewards, std_norm=False)[0]
    shaped = 0
    for k, episode in enumerate(episodes):
        expected = FeedbackAdvantageShaping()(
            group[k], float(advantages[k]), action_lengths=episode.action_lengths, group=group
        )
        shaped += len(set(expected)) > 1
        assert episode.token_advantages is not None
        for span, value in zip(episode.spans, expected, strict=True):
            tokens = episode.token_advantages[span.segment][span.start : span.end]
            assert tokens == pytest.approx([value] * span.length)
        inside = sum(s.length for s in episode.spans)
        assert sum(1 for v in episode.token_advantages[0] if v != 0) <= inside  # env tokens carry nothing
    assert shaped == 2  # the two successful requesters get pre/post-request shaping


class _Killed(Exception):
    pass


def test_resume_continues_a_killed_run_exactly(tiny_dir: Path, tmp_path: Path) -> None:
    def args(out: Path, resume: bool = False) -> grpo.Args:
        return grpo.Args(
            env_kw=["domain=math", "difficulty=1"],
            model=str(tiny_dir),
            out=str(out),
            steps=4,
            prompts_per_step=2,
            group_size=2,
            max_new_tokens=6,
            lr=1e-3,
            progress=False,
            checkpoint_every=2,
            resume=resume,
        )

    grpo.main(args(tmp_path / "whole"), group_reward=by_member)

    def kill(step, metrics, episodes):
        if step == 3:
            raise _Killed

    with pytest.raises(_Killed):
        grpo.main(args(tmp_path / "cut"), group_reward=by_member, on_step=kill)
    assert not (tmp_path / "cut" / "final").exists()
    grpo.main(args(tmp_path / "cut", resume=True), group_reward=by_member)
    whole, cut = _weights(tmp_path / "whole" / "final"), _weights(tmp_path / "cut" / "final")
    assert all(torch.equal(whole[n], cut[n]) for n in whole)  # as if never killed
    assert [r["step"] for r in read_metrics(tmp_path / "cut" / "metrics.jsonl")] == [0, 1, 2, 3]
    strip = ("samples_per_s", "generate_s", "step_s")
    lines = [
        {k: v for k, v in r.items() if k not in strip}
        for r in read_metrics(tmp_path / "cut" / "metrics.jsonl")
    ]
    assert lines == [
        {k: v for k, v in r.items() if k not in strip}
        for r in read_metrics(tmp_path / "whole" / "metrics.jsonl")
    ]


def test_train_command(tiny_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from papergym.cli import main

    out = tmp_path / "cli"
    code = main(
        [
            "train",
            "sft",
            "--env-kw",
            "domain=math",
            "--model",
            str(tiny_dir),
            "--out",
            str(out),
            "--episodes",
            "4",
            "--steps",
            "1",
            "--batch-size",
            "2",
            "--eval-tasks",
            "2",
            "--no-progress",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "success_before: " in printed and "95% Wilson CI, n=2" in printed
    assert json.loads(printed.strip().splitlines()[-1])["out"] == str(out)
    with pytest.raises(SystemExit):
        main(["train", "nope"])


def test_a_step_without_an_update_logs_strict_json_and_still_draws(tmp_path: Path) -> None:
    from papergym.baselines.run import Run

    run = Run(tmp_path / "run", total_steps=2, progress=False)
    run.log(0, {"loss": 0.5, "updated": True})
    run.log(1, {"loss": float("nan"), "updated": False})  # every group dropped: no loss
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert json.loads(lines[1], parse_constant=pytest.fail) == {"step": 1, "loss": None, "updated": False}
    assert run.finish() == tmp_path / "run" / "curves.png"


def test_grpo_reports_parameter_drift_from_the_start(tiny_dir: Path, tmp_path: Path) -> None:
    grpo.main(_tiny_grpo_args(tiny_dir, tmp_path / "g"), group_reward=by_member)
    rows = read_metrics(tmp_path / "g" / "metrics.jsonl")
    before, after = _weights(tiny_dir), _weights(tmp_path / "g" / "final")
    expected = math.sqrt(sum(float((after[n] - before[n]).norm()) ** 2 for n in before))
    assert rows[0]["drift_l2"] > 0
    assert rows[-1]["drift_l2"] == pytest.approx(expected, rel=1e-4)


def test_grpo_env_wrapper_wraps_every_training_env_and_names_must_resolve() -> None:
    from papergym.wrappers import ProcessReward

    envs = grpo.training_envs(grpo.Args(env="papergym/ServiceAgent-v0", env_wrapper="process_reward"), 3)
    assert len(envs) == 3 and all(isinstance(env, ProcessReward) for env in envs)
    plain = grpo.training_envs(grpo.Args(env="papergym/ServiceAgent-v0"), 2)
    assert not any(isinstance(env, ProcessReward) for env in plain)
    spelled = grpo.Args(env="papergym/ServiceAgent-v0", env_wrapper="papergym.wrappers:ProcessReward")
    assert isinstance(grpo.training_envs(spelled, 1)[0], ProcessReward)
    with pytest.raises(ValueError, match="unknown name"):
        grpo.training_envs(grpo.Args(env="papergym/ServiceAgent-v0", env_wrapper="process"), 1)


def test_sft_demonstrator_plays_the_demonstrations(tiny_dir: Path) -> None:
    """With ``demonstrator``, SFT's contexts hold that policy's actions (here the HearingOracle, whose
    slot values are the misheard ones), not the privileged oracle's."""
    from papergym.baselines.rollout import demonstrations
    from papergym.core.trajectory import member_seed, rollout
    from papergym.envs.voice.hearing_oracle import HearingOracle

    policy = load_policy(tiny_dir)
    args = sft.Args(
        env="papergym/VoiceService-v0",
        env_kw=["channel=simulated"],
        episodes=3,
        demonstrator="papergym.envs.voice.hearing_oracle:HearingOracle",
    )
    contexts = sft.demonstration_contexts(policy, args)
    oracle = sft.demonstration_contexts(policy, sft.Args(env=args.env, env_kw=args.env_kw, episodes=3))
    assert [c.token_ids for c in contexts] != [c.token_ids for c in oracle]
    seed = member_seed(args.seed, 0) % 2**31
    env = gym.make(args.env, channel="simulated")
    played = [s.action for s in rollout(env, HearingOracle(), seed=seed, policy_seed=seed).steps]
    first = demonstrations(policy, [env], seeds=[seed], act=lambda e, o: played.pop(0))[0]
    assert contexts[0].token_ids == first.segments[0].token_ids
    assert isinstance(sft.demonstrator(args.demonstrator), HearingOracle)
    with pytest.raises(ValueError, match="module:Class"):
        sft.demonstrator("HearingOracle")


def test_grpo_builds_the_named_hook_with_its_kwargs(
    tiny_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from papergym.credit.influence import InfluenceAdvantage, NoisyAnnotator

    built: list[Any] = []
    original = InfluenceAdvantage.__init__

    def spy(self: InfluenceAdvantage, **kwargs: Any) -> None:
        original(self, **kwargs)
        built.append(self)

    monkeypatch.setattr(InfluenceAdvantage, "__init__", spy)
    args = _tiny_grpo_args(
        tiny_dir, tmp_path / "g", steps=1, advantage_hook="influence", advantage_hook_kw=["noise=0.25"]
    )
    assert math.isfinite(grpo.main(args, group_reward=by_member)["loss"])
    (hook,) = built
    assert isinstance(hook.annotator, NoisyAnnotator) and hook.annotator.rate == 0.25
    with pytest.raises(ValueError, match="give the hook by name"):
        grpo.main(_tiny_grpo_args(tiny_dir, tmp_path / "h", advantage_hook_kw=["noise=0.25"]))
