"""CAFE's recovery SFT data (`papergym.baselines.recovery`): the agent's own error prefix, an inserted
feedback request, the teacher's feedback and a successful continuation; both roles' contexts."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("bm25s")

from papergym.baselines.recovery import REQUEST_ACTION, build_recovery, first_error, training_contexts
from papergym.core.trajectory import OraclePolicy, Trajectory, rollout
from papergym.envs.search.search_critic_env import SearchCriticEnv

N = 500


def _search(query: str) -> str:
    return f"<tool_call>{json.dumps({'name': 'search', 'arguments': {'query': [query]}})}</tool_call>"


class Scripted(OraclePolicy):
    """Plays ``actions`` first, then the oracle."""

    def __init__(self, *actions: str) -> None:
        super().__init__()
        self.actions = list(actions)

    def reset(self, *, seed: int) -> None:
        self.queue = list(self.actions)

    def __call__(self, observation: Any, info: Any) -> Any:
        return self.queue.pop(0) if self.queue else super().__call__(observation, info)


def _play(*actions: str, seed: int = 0) -> Trajectory:
    return rollout(SearchCriticEnv(n_passages=N), Scripted(*actions), seed=seed, max_steps=40)


def _trained_text(policy, segment) -> str:
    return policy.decode([t for t, m in zip(segment.token_ids, segment.loss_mask, strict=True) if m])


def test_a_stalled_search_then_a_wrong_answer_is_repaired_from_the_agents_own_prefix(tiny_policy) -> None:
    failed = _play(_search("zzz qqq unrelated"), "<answer>Nobody</answer>")
    assert not failed.success
    env = SearchCriticEnv(n_passages=N)
    assert first_error(env, failed) == (0, 1)  # the first search found nothing on the chain
    (repair,) = build_recovery(tiny_policy, lambda: SearchCriticEnv(n_passages=N), [failed])
    assert repair.error_step == 0 and repair.kept == 1
    text = policy_text = tiny_policy.decode(repair.agent.token_ids)
    assert "zzz qqq unrelated" in text and "<feedback>" in policy_text  # own prefix, then feedback
    trained = _trained_text(tiny_policy, repair.agent)
    assert "zzz qqq unrelated" not in trained  # the error is context, not a target
    assert trained.startswith(tiny_policy.decode(tiny_policy.encode(REQUEST_ACTION)))
    assert "<answer>" in trained and "Nobody" not in trained
    critic_trained = _trained_text(tiny_policy, repair.critic)
    assert critic_trained == f"<feedback>{repair.feedback}</feedback>"
    assert "trajectory critic" in tiny_policy.decode(repair.critic.token_ids)
    assert len(training_contexts([repair])) == 2


def test_a_wrong_answer_first_is_replaced_by_the_request(tiny_policy) -> None:
    failed = _play("<answer>Nobody</answer>", seed=1)
    assert first_error(SearchCriticEnv(n_passages=N), failed) == (0, 0)
    (repair,) = build_recovery(tiny_policy, lambda: SearchCriticEnv(n_passages=N), [failed])
    assert repair.kept == 0 and "Nobody" not in tiny_policy.decode(repair.agent.token_ids)


def test_successes_and_rollouts_that_already_asked_are_not_repaired(tiny_policy) -> None:
    solved = _play()
    asked = _play("<request_feedback></request_feedback>", "<answer>Nobody</answer>", seed=2)
    assert solved.success and not asked.success
    assert first_error(SearchCriticEnv(n_passages=N), asked) is None
    assert build_recovery(tiny_policy, lambda: SearchCriticEnv(n_passages=N), [solved, asked]) == []


def test_a_repair_whose_continuation_fails_is_dropped(tiny_policy) -> None:
    failed = _play(_search("zzz qqq unrelated"), "<answer>Nobody</answer>", seed=3)
    # a one-step budget leaves no room for the teacher's continuation after the request
    repairs = build_recovery(tiny_policy, lambda: SearchCriticEnv(n_passages=N, max_tool_calls=1), [failed])
    assert repairs == []


def test_sft_trains_on_the_recovery_contexts_alone(tiny_dir, tmp_path) -> None:
    from papergym.baselines import sft
    from papergym.baselines.policy import load_policy

    policy = load_policy(tiny_dir)
    failed = _play(_search("zzz qqq unrelated"), "<answer>Nobody</answer>")
    contexts = training_contexts(build_recovery(policy, lambda: SearchCriticEnv(n_passages=N), [failed]))
    args = sft.Args(model=str(tiny_dir), out=str(tmp_path / "sft"), episodes=0, steps=2, batch_size=2,
                    progress=False)  # fmt: skip
    result = sft.main(args, extra=contexts)
    assert result["demonstration_contexts"] == 2 and (tmp_path / "sft" / "final" / "config.json").exists()
    with pytest.raises(ValueError, match="no training contexts"):
        sft.main(args)
