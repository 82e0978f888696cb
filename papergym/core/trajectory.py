"""Trajectories, policies, and (group) rollouts.

GRPO samples several responses to one prompt; `rollout_group` plays one task on isolated env
instances with the same env seed (so every member sees the same task) and a distinct policy seed
per member.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from papergym.core import info_keys as K


@dataclass(frozen=True)
class Step:
    """One transition: the observation the policy saw, its action, and what came back."""

    observation: Any
    action: Any
    reward: float
    info: Mapping[str, Any]


@dataclass
class Trajectory:
    """One episode.

    Attributes:
        task_id: the task that was played.
        seed: the env seed of ``reset``.
        steps: the transitions, in order.
        success: the env's ``info["success"]`` at the end (False if the episode never ended).
        terminated: the episode ended naturally.
        truncated: the episode was cut (step budget, backend fault).
        reset_info: the ``info`` of ``reset``.
    """

    task_id: str
    seed: int
    steps: list[Step] = field(default_factory=list)
    success: bool = False
    terminated: bool = False
    truncated: bool = False
    reset_info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def total_reward(self) -> float:
        return float(sum(s.reward for s in self.steps))

    @property
    def final_info(self) -> Mapping[str, Any]:
        """The ``info`` of the last step (of ``reset`` for an empty trajectory)."""
        return self.steps[-1].info if self.steps else self.reset_info


@runtime_checkable
class Policy(Protocol):
    """Maps an observation to an action. ``reset`` gives it the episode's policy seed.

    A policy that needs the env itself (the oracle) may also define ``bind(env)``; `rollout`
    calls it before ``reset``.
    """

    def reset(self, *, seed: int) -> None: ...

    def __call__(self, observation: Any, info: Mapping[str, Any]) -> Any: ...


class OraclePolicy:
    """Plays ``env.unwrapped.oracle_action()`` (a privileged, correct solution)."""

    def __init__(self) -> None:
        self._env: gym.Env | None = None

    def bind(self, env: gym.Env) -> None:
        self._env = env.unwrapped

    def reset(self, *, seed: int) -> None:
        del seed  # the oracle is deterministic

    def __call__(self, observation: Any, info: Mapping[str, Any]) -> Any:
        if self._env is None:
            raise RuntimeError("OraclePolicy is not bound to an env: call bind(env) (rollout does)")
        return self._env.oracle_action()  # type: ignore[attr-defined]


class RandomPolicy:
    """Samples the env's action space (well-formed canned actions) with its own seeded generator."""

    def __init__(self) -> None:
        self._space: gym.Space | None = None

    def bind(self, env: gym.Env) -> None:
        self._space = env.action_space

    def reset(self, *, seed: int) -> None:
        if self._space is None:
            raise RuntimeError("RandomPolicy is not bound to an env: call bind(env) (rollout does)")
        self._space.seed(seed)

    def __call__(self, observation: Any, info: Mapping[str, Any]) -> Any:
        if self._space is None:
            raise RuntimeError("RandomPolicy is not bound to an env: call bind(env) (rollout does)")
        return self._space.sample()


def member_seed(seed: int, member: int) -> int:
    """The policy seed of group member ``member`` (stable, distinct per member)."""
    return int(np.random.SeedSequence([seed, member]).generate_state(1)[0])


def rollout(
    env: gym.Env,
    policy: Policy,
    *,
    seed: int,
    options: dict[str, Any] | None = None,
    policy_seed: int | None = None,
    max_steps: int | None = None,
) -> Trajectory:
    """Play one episode.

    Args:
        env: the environment (wrapped or not).
        policy: the policy; its ``bind(env)`` is called first if it has one.
        seed: the env seed for ``reset``.
        options: ``reset`` options (``task_id``, ``split``, ``difficulty``).
        policy_seed: the policy's seed; defaults to ``seed``.
        max_steps: a safety bound for envs without a time limit; defaults to the spec's
            ``max_episode_steps`` or 1,000.

    Returns:
        The trajectory.
    """
    bind = getattr(policy, "bind", None)
    if callable(bind):
        bind(env)
    policy.reset(seed=seed if policy_seed is None else policy_seed)
    observation, info = env.reset(seed=seed, options=options)
    trajectory = Trajectory(task_id=info.get(K.TASK_ID, ""), seed=seed, reset_info=info)
    limit = max_steps or (env.spec.max_episode_steps if env.spec and env.spec.max_episode_steps else 1000)
    for _ in range(limit):
        action = policy(observation, info)
        next_observation, reward, terminated, truncated, info = env.step(action)
        trajectory.steps.append(Step(observation, action, float(reward), info))
        observation = next_observation
        if terminated or truncated:
            trajectory.terminated, trajectory.truncated = bool(terminated), bool(truncated)
            trajectory.success = bool(info.get(K.SUCCESS, False))
            break
    else:
        trajectory.truncated = True
    return trajectory


def rollout_group(
    make_env: Callable[[], gym.Env],
    policy: Policy,
    *,
    seed: int,
    group_size: int,
    options: dict[str, Any] | None = None,
) -> list[Trajectory]:
    """Play one task ``group_size`` times on isolated env instances.

    Every member resets with the same ``seed`` (hence the same task); member ``i``'s policy seed
    is `member_seed(seed, i)`. Each member gets a fresh env from ``make_env``, so no state leaks
    between members.
    """
    if group_size < 1:
        raise ValueError(f"group_size must be >= 1, got {group_size}")
    group = []
    for i in range(group_size):
        env = make_env()
        try:
            group.append(rollout(env, policy, seed=seed, options=options, policy_seed=member_seed(seed, i)))
        finally:
            env.close()
    return group


def nonzero_variance_share(
    groups: Sequence[Sequence[Trajectory]], *, rewards: Sequence[Sequence[float]] | None = None
) -> float:
    """The share of groups whose rewards are not all equal (GRPO learns nothing from the others).

    Args:
        groups: the groups of a batch.
        rewards: per-member training rewards (e.g. from a GroupReward); defaults to each
            trajectory's total reward.
    """
    if not groups:
        raise ValueError("nonzero_variance_share needs at least one group")
    if rewards is None:
        rewards = [[t.total_reward for t in group] for group in groups]
    varied = sum(1 for r in rewards if len(r) > 1 and max(r) - min(r) > 1e-12)
    return varied / len(groups)
