"""What `papergym reproduce speechgym` measures on service episodes beyond success.

SpeechGym (papers/envs.md §2.1) reports, besides task success, the share of GRPO groups that carry
gradient (nonzero reward variance; 16% outcome-only, 99.6% with the process reward), unauthorized
writes (23% -> 10%) and dead loops (14% -> 5%). The paper's text is a summary, so the two behaviours are
defined here, precisely and from structured step info only (never from message text):

- **unauthorized write**: an executed write-tool call (a tool of the domain's ``WRITE`` list whose
  ``info["tool_calls"]`` entry has ``ok=True``) that matches none of the task's gold assistant actions
  (tau2's rule, `papergym.envs.service.tasks.Action.matches`: same tool, equal compared arguments). A
  write the task did not ask for changed the database: the refused request of an insistent caller, a
  write on a misheard id that happened to exist, or a write the user never asked for.
- **dead loop**: a run of at least ``length`` (default 3, inferred) consecutive identical agent actions
  (the same text, whitespace-trimmed): the same failing call retried unchanged, or the same message
  repeated, each spending a step of the budget. Counted once per run.

`GroupShares` gives, for a batch of GRPO groups, the share with nonzero variance of the outcome term alone
and of the outcome plus ``bonus`` per successful tool call (`papergym.wrappers.ProcessReward`'s reward),
both read from the same episodes, so either arm's rollouts show both numbers.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from papergym.core import info_keys as K
from papergym.core.tasks import parse_task_id
from papergym.core.trajectory import Trajectory
from papergym.envs.service.domains import get_domain
from papergym.envs.service.tasks import ServiceTask
from papergym.wrappers.process_reward import BONUS, tool_call_succeeded

DEAD_LOOP_LENGTH = 3
"""Identical consecutive actions that make a dead loop (inferred: one unchanged retry is an agent's
normal second try; a third identical action is a loop)."""


@cache
def _env(domain: str) -> Any:
    import gymnasium as gym

    return gym.make("papergym/ServiceAgent-v0", domain=domain).unwrapped


@cache
def _task(task_id: str) -> ServiceTask:
    domain, split, _, index = parse_task_id(task_id)
    task: ServiceTask = _env(domain).generated_task(split, index)
    return task


def task_of(trajectory: Trajectory) -> tuple[str, ServiceTask]:
    """The domain and the generated task a trajectory played (from its reset ``task_id``)."""
    task_id = str(trajectory.reset_info.get(K.TASK_ID, trajectory.task_id))
    return parse_task_id(task_id)[0], _task(task_id)


def unauthorized_writes(trajectory: Trajectory, task: ServiceTask, domain: str) -> int:
    """Executed write-tool calls that match none of ``task``'s gold assistant actions (module docstring)."""
    writes = set(get_domain(domain).toolkit.WRITE)
    gold = [a for a in task.criteria.actions if a.requestor == "assistant"]
    count = 0
    for step in trajectory.steps:
        for call in step.info.get(K.TOOL_CALLS) or []:
            name, arguments = call.get("name"), call.get("arguments") or {}
            if (
                name in writes
                and call.get("ok") is True
                and not any(a.matches(name, arguments) for a in gold)
            ):
                count += 1
    return count


def dead_loops(actions: Sequence[Any], length: int = DEAD_LOOP_LENGTH) -> int:
    """Runs of at least ``length`` consecutive identical actions (module docstring).

    >>> dead_loops(["a", "b", "b", "b", "b", "c", "a", "a", "a"])
    2
    """
    if length < 2:
        raise ValueError(f"a loop needs length >= 2, got {length}")
    loops, run = 0, 1
    texts = [str(a).strip() for a in actions]
    for previous, current in itertools.pairwise(texts):
        run = run + 1 if current == previous else 1
        loops += int(run == length)
    return loops


def outcome(trajectory: Trajectory) -> float:
    """The episode's outcome term (tau2's check), without format or process terms."""
    return float(sum(s.info.get(K.REWARD_COMPONENTS, {}).get("outcome", 0.0) for s in trajectory.steps))


def successful_calls(trajectory: Trajectory) -> int:
    """Steps whose tool call executed (what `ProcessReward` credits, uncapped)."""
    return sum(tool_call_succeeded(s.info) for s in trajectory.steps)


@dataclass(frozen=True)
class GroupShares:
    """Shares of groups with nonzero reward variance, two rewards over the same episodes.

    Attributes:
        outcome: under the outcome term alone.
        process: under outcome + ``bonus`` per successful tool call.
    """

    outcome: float
    process: float


def _nonzero_share(rewards: np.ndarray) -> float:
    return float(np.mean(rewards.max(axis=1) - rewards.min(axis=1) > 1e-9))


def group_shares(trajectories: Sequence[Trajectory], group_size: int, bonus: float = BONUS) -> GroupShares:
    """`GroupShares` of consecutive groups of ``group_size`` trajectories (GRPO's group-major order)."""
    if group_size < 1 or len(trajectories) % group_size:
        raise ValueError(f"{len(trajectories)} trajectories do not form groups of {group_size}")
    base = np.array([outcome(t) for t in trajectories]).reshape(-1, group_size)
    calls = np.array([successful_calls(t) for t in trajectories]).reshape(-1, group_size)
    return GroupShares(_nonzero_share(base), _nonzero_share(base + bonus * calls))


def return_share(trajectories: Sequence[Trajectory], group_size: int) -> float:
    """The share of consecutive groups of ``group_size`` whose returns (the reward trained on) vary."""
    if group_size < 1 or len(trajectories) % group_size:
        raise ValueError(f"{len(trajectories)} trajectories do not form groups of {group_size}")
    return _nonzero_share(np.array([t.total_reward for t in trajectories]).reshape(-1, group_size))


def episode_measures(trajectory: Trajectory) -> dict[str, float]:
    """Success, unauthorized writes, dead loops, successful calls and steps of one episode."""
    domain, task = task_of(trajectory)
    return {
        "success": float(trajectory.success),
        "unauthorized_writes": float(unauthorized_writes(trajectory, task, domain)),
        "dead_loops": float(dead_loops([s.action for s in trajectory.steps])),
        "successful_calls": float(successful_calls(trajectory)),
        "turns": float(len(trajectory.steps)),
    }


def mean_measures(trajectories: Sequence[Trajectory]) -> dict[str, float]:
    """`episode_measures` averaged over ``trajectories``."""
    rows = [episode_measures(t) for t in trajectories]
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]} if rows else {}
