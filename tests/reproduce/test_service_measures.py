"""The measures of `papergym reproduce speechgym`: unauthorized writes, dead loops and group variance
shares, read from structured step info on real VoiceService-v0 episodes."""

from __future__ import annotations

import gymnasium as gym
import pytest

import papergym  # noqa: F401  (registers the ids)
from papergym.core import info_keys as K
from papergym.core.trajectory import OraclePolicy, Step, Trajectory, rollout
from papergym.envs.service.domains import get_domain
from papergym.reproduce import service_measures as sm


def _oracle_episode(seed: int) -> Trajectory:
    return rollout(gym.make("papergym/VoiceService-v0", channel="text"), OraclePolicy(), seed=seed)


def _with_call(traj: Trajectory, call: dict, *, at: int = 1) -> Trajectory:
    """``traj`` with one more step that made ``call``."""
    step = Step("obs", "<tool_call>...</tool_call>", 0.0, {K.TOOL_CALLS: [call]})
    steps = [*traj.steps[:at], step, *traj.steps[at:]]
    return Trajectory(traj.task_id, traj.seed, steps, traj.success, reset_info=traj.reset_info)


def test_the_oracle_makes_no_unauthorized_write_and_an_extra_executed_write_counts() -> None:
    for seed in range(6):
        traj = _oracle_episode(seed)
        domain, task = sm.task_of(traj)
        assert domain == "retail" and sm.unauthorized_writes(traj, task, domain) == 0
        gold = [a for a in task.criteria.actions if a.requestor == "assistant"]
        writes = [a for a in gold if a.name in get_domain(domain).toolkit.WRITE]
        arguments = {"order_id": "#W0", "reason": "ordered by mistake"}
        extra = {"name": "cancel_pending_order", "arguments": arguments}
        assert sm.unauthorized_writes(_with_call(traj, {**extra, "ok": True}), task, domain) == 1
        assert sm.unauthorized_writes(_with_call(traj, {**extra, "ok": False}), task, domain) == 0  # refused
        read = {"name": "get_order_details", "arguments": {"order_id": "#W0"}, "ok": True}
        assert sm.unauthorized_writes(_with_call(traj, read), task, domain) == 0  # a read, not a write
        for action in writes:  # a repeat of a gold write is authorized
            again = {"name": action.name, "arguments": dict(action.arguments), "ok": True}
            assert sm.unauthorized_writes(_with_call(traj, again), task, domain) == 0


@pytest.mark.parametrize(
    ("actions", "loops"),
    [([], 0), (["a", "a"], 0), (["a", "a", "a"], 1), (["a", " a", "a ", "a"], 1), (list("aaabbbab"), 2)],
)
def test_dead_loops_count_runs_of_three_identical_actions(actions: list[str], loops: int) -> None:
    assert sm.dead_loops(actions) == loops
    with pytest.raises(ValueError):
        sm.dead_loops(actions, length=1)


def _scored(outcome: float, calls: int) -> Trajectory:
    steps = [Step("o", "a", 0.0, {K.TOOL_CALLS: [{"name": "f", "ok": True}]}) for _ in range(calls)]
    steps.append(Step("o", "###STOP###", outcome, {K.REWARD_COMPONENTS: {"outcome": outcome}}))
    return Trajectory("t", 0, steps)


def test_group_shares_score_the_same_episodes_with_and_without_the_process_term() -> None:
    groups = [
        [_scored(0.0, 1), _scored(0.0, 1)],  # all fail, same calls: no variance either way
        [_scored(0.0, 0), _scored(0.0, 2)],  # all fail, calls differ: variance only with the process term
        [_scored(1.0, 2), _scored(0.0, 2)],  # outcome differs: variance both ways
        [_scored(1.0, 3), _scored(0.0, 13)],  # 0.1 x 10 more calls ties the outcome: 1.3 vs 1.3
    ]
    shares = sm.group_shares([t for g in groups for t in g], group_size=2)
    assert shares == sm.GroupShares(outcome=0.5, process=0.5)
    assert sm.group_shares([t for g in groups[:3] for t in g], 2) == sm.GroupShares(1 / 3, 2 / 3)
    with pytest.raises(ValueError):
        sm.group_shares([t for g in groups for t in g][:3], group_size=2)


def test_episode_measures_of_an_oracle_episode() -> None:
    traj = _oracle_episode(0)
    measures = sm.episode_measures(traj)
    assert measures["success"] == 1.0 and measures["unauthorized_writes"] == 0.0
    assert measures["dead_loops"] == 0.0 and measures["successful_calls"] >= 1
    assert measures["turns"] == len(traj.steps)
