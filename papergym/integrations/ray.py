"""Group rollouts on a Ray cluster: env instances as actors, the policy served elsewhere.

Each actor builds its env by id with ``gymnasium.make("papergym:<id>")``, so a worker imports papergym
and registers the ids on its own. The policy runs in the driver (typically a thin client of a model
server, e.g. `papergym.backends.openai_compat.OpenAIChatModel` in front of vLLM), one thread per
group member; each member holds one actor for its whole episode. When an actor dies mid-episode
(node lost, OOM, ``ray.kill``), the failure is recorded on that member's `RayEpisode`, the actor is
replaced and the episode is replayed once from its reset on the new actor; same seeds give the same
trajectory, so a retried episode is indistinguishable from an undisturbed one.

>>> pool = RayEnvPool("papergym/Reasoning-v0", num_actors=2)  # doctest: +SKIP
>>> episodes = pool.rollout_group(OraclePolicy, seed=0, group_size=4)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import gymnasium

from papergym.core import info_keys as K
from papergym.core.errors import PapergymError, require
from papergym.core.trajectory import Policy, Step, Trajectory, member_seed

logger = logging.getLogger(__name__)

__all__ = ["EnvActor", "RayEnvPool", "RayEpisode"]


class EnvActor:
    """The env side of an episode, run as a Ray actor (`RayEnvPool` wraps it with ``ray.remote``)."""

    def __init__(
        self,
        env_id: str,
        env_kwargs: Mapping[str, Any],
        wrappers: Sequence[Callable[[gymnasium.Env], gymnasium.Env]] = (),
    ) -> None:
        import papergym  # noqa: F401  (registers the ids in this worker)

        prefixed = env_id if ":" in env_id else f"papergym:{env_id}"
        env = gymnasium.make(prefixed, **dict(env_kwargs))
        for wrapper in wrappers:
            env = wrapper(env)
        self.env = env

    def spaces(self) -> tuple[gymnasium.Space, gymnasium.Space, Any]:
        return self.env.action_space, self.env.observation_space, self.env.spec

    def reset(self, seed: int, options: Mapping[str, Any] | None) -> tuple[Any, dict[str, Any]]:
        return self.env.reset(seed=seed, options=dict(options) if options else None)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return self.env.step(action)

    def oracle_action(self) -> Any:
        return self.env.unwrapped.oracle_action()


class _RemoteEnvView:
    """What a policy's ``bind(env)`` sees of a remote env: its spaces, spec and oracle."""

    def __init__(self, actor: Any, spaces: tuple[gymnasium.Space, gymnasium.Space, Any]) -> None:
        self.actor = actor
        self.action_space, self.observation_space, self.spec = spaces

    @property
    def unwrapped(self) -> _RemoteEnvView:
        return self

    def oracle_action(self) -> Any:
        import ray

        return ray.get(self.actor.oracle_action.remote())


@dataclass
class RayEpisode:
    """One group member's episode: its trajectory (None if every attempt failed) and the failures."""

    member: int
    trajectory: Trajectory | None
    failures: list[str] = field(default_factory=list)

    @property
    def retried(self) -> bool:
        return bool(self.failures)


class RayEnvPool:
    """A pool of env actors of one id; group rollouts spread their members over it.

    Args:
        env_id: a papergym id (``"papergym/Reasoning-v0"``).
        num_actors: how many env actors to keep.
        env_kwargs: constructor arguments of every env (variants, backends).
        wrappers: wrappers applied in order to each env after ``gymnasium.make`` (classes or
            callables taking the env; pickled to the actors).
        actor_options: ``ray.remote`` options of each actor; defaults to ``{"num_cpus": 0.5}``.
        max_retries: how many times an episode whose actor died is replayed on a new actor.
    """

    def __init__(
        self,
        env_id: str,
        num_actors: int,
        *,
        env_kwargs: Mapping[str, Any] | None = None,
        wrappers: Sequence[Callable[[gymnasium.Env], gymnasium.Env]] = (),
        actor_options: Mapping[str, Any] | None = None,
        max_retries: int = 1,
    ) -> None:
        ray = require("ray", "dist")
        if num_actors < 1:
            raise ValueError(f"num_actors must be >= 1, got {num_actors}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if not ray.is_initialized():
            raise PapergymError("Ray is not initialised: call ray.init(...) (or ray.init(address=...)) first")
        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})
        self.wrappers = tuple(wrappers)
        self.max_retries = max_retries
        self._remote_cls = ray.remote(**dict(actor_options or {"num_cpus": 0.5}))(EnvActor)
        self.actors = [self._new_actor() for _ in range(num_actors)]
        self._spaces = ray.get(self.actors[0].spaces.remote())
        self._lock = threading.Lock()
        # Free actors, shared by concurrent rollout_group calls: an actor serves one episode at a time.
        self._free: queue.Queue[Any] = queue.Queue()
        for actor in self.actors:
            self._free.put(actor)

    def _new_actor(self) -> Any:
        return self._remote_cls.remote(self.env_id, self.env_kwargs, self.wrappers)

    def rollout_group(
        self,
        make_policy: Callable[[], Policy],
        *,
        seed: int,
        group_size: int,
        options: Mapping[str, Any] | None = None,
        max_steps: int | None = None,
    ) -> list[RayEpisode]:
        """Play one task ``group_size`` times, members in parallel on free actors (thread-safe).

        As `papergym.core.trajectory.rollout_group`: every member resets with ``seed`` and member
        ``i``'s policy seed is ``member_seed(seed, i)``, so the results equal an in-process group.

        Args:
            make_policy: builds one policy per member (a policy is stateful within an episode).
            seed: the env seed of every member.
            group_size: the number of members.
            options: ``reset`` options.
            max_steps: a safety bound on steps; defaults to the spec's ``max_episode_steps`` or 1,000.

        Returns:
            One `RayEpisode` per member, in member order.
        """
        if group_size < 1:
            raise ValueError(f"group_size must be >= 1, got {group_size}")
        spec = self._spaces[2]
        limit = max_steps or (spec.max_episode_steps if spec and spec.max_episode_steps else 1000)

        def play(member: int) -> RayEpisode:
            episode = RayEpisode(member, None)
            policy = make_policy()
            actor = self._free.get()
            try:
                for _attempt in range(self.max_retries + 1):
                    try:
                        episode.trajectory = self._play(actor, policy, seed, member, options, limit)
                        break
                    except self._actor_errors() as error:
                        logger.warning("env actor died in member %d's episode: %s", member, error)
                        episode.failures.append(f"{type(error).__name__}: {error}")
                        actor = self._replace(actor)
            finally:
                self._free.put(actor)
            return episode

        with ThreadPoolExecutor(max_workers=min(group_size, len(self.actors))) as pool:
            return list(pool.map(play, range(group_size)))

    def _play(
        self,
        actor: Any,
        policy: Policy,
        seed: int,
        member: int,
        options: Mapping[str, Any] | None,
        limit: int,
    ) -> Trajectory:
        import ray

        bind = getattr(policy, "bind", None)
        if callable(bind):
            bind(_RemoteEnvView(actor, self._spaces))
        policy.reset(seed=member_seed(seed, member))
        observation, info = ray.get(actor.reset.remote(seed, options))
        trajectory = Trajectory(task_id=info.get(K.TASK_ID, ""), seed=seed, reset_info=info)
        for _ in range(limit):
            action = policy(observation, info)
            next_observation, reward, terminated, truncated, info = ray.get(actor.step.remote(action))
            trajectory.steps.append(Step(observation, action, float(reward), info))
            observation = next_observation
            if terminated or truncated:
                trajectory.terminated, trajectory.truncated = bool(terminated), bool(truncated)
                trajectory.success = bool(info.get(K.SUCCESS, False))
                return trajectory
        trajectory.truncated = True
        return trajectory

    def _replace(self, dead: Any) -> Any:
        replacement = self._new_actor()
        with self._lock:
            self.actors = [replacement if a is dead else a for a in self.actors]
        return replacement

    @staticmethod
    def _actor_errors() -> tuple[type[BaseException], ...]:
        import ray.exceptions

        return (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError)

    def close(self) -> None:
        """Kill the pool's actors."""
        import ray

        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
