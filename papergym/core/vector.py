"""An async vector env for LLM policies: each env steps as soon as its own action is ready.

Gymnasium's vector envs step in lockstep: a batch waits for its slowest action. With a language model
in the loop the time per action varies per env (long completions, tool latency, a queue at the server),
so `LLMVectorEnv` lets each env move on its own:

- `LLMVectorEnv.submit` sends one env its action and returns at once; `LLMVectorEnv.ready` returns the
  results of whichever envs have finished (the ``multiprocessing.connection.wait`` of their pipes);
- `LLMVectorEnv.step_ready` steps only the envs named in a ``{index: action}`` mapping (as GEM's vector
  env does) and returns their results;
- `LLMVectorEnv.reset` / `LLMVectorEnv.step` keep Gymnasium's batched ``VectorEnv`` API (tuples of text
  observations, info dicts merged with ``_key`` masks), so code written for ``AsyncVectorEnv`` runs too.

`play_episodes` is the driver for a latency-bound policy: policy calls run on a thread pool and each
env is stepped the moment its action arrives, so neither side waits for the slowest member.

Autoreset is ``AutoresetMode.DISABLED`` by default (an LLM rollout ends where the episode ends); reset
finished envs with ``reset(options={"reset_mask": mask})`` or `LLMVectorEnv.submit_reset`.
``AutoresetMode.NEXT_STEP`` (Gymnasium's default) is available for the batched API.

>>> import papergym
>>> vec = LLMVectorEnv([lambda: gymnasium.make("papergym/Reasoning-v0")] * 2, workers="inline")
>>> obs, infos = vec.reset(seed=0)
>>> done = vec.step_ready({1: "\\\\boxed{0}"})
>>> sorted(done), done[1].index
([1], 1)
>>> vec.close()
"""

from __future__ import annotations

import logging
import multiprocessing
import traceback
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_connections
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from papergym.core import info_keys as K
from papergym.core.errors import PapergymError
from papergym.core.trajectory import Policy, Step, Trajectory

logger = logging.getLogger(__name__)

__all__ = ["EnvResult", "LLMVectorEnv", "WorkerError", "play_episodes"]


class WorkerError(PapergymError):
    """An env raised inside its worker (a bug in the env, not in the model's text)."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(f"env {index} raised in its worker:\n{message}")
        self.index = index


@dataclass(frozen=True)
class EnvResult:
    """What one env returned for one command (``kind`` is ``"reset"`` or ``"step"``)."""

    index: int
    kind: str
    observation: Any
    info: dict[str, Any]
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


def _run_command(env: gymnasium.Env, command: str, payload: Any) -> Any:
    """Apply one command to an env (in a worker process or inline)."""
    if command == "reset":
        seed, options = payload
        return env.reset(seed=seed, options=options)
    if command == "step":
        return env.step(payload)
    if command == "call":
        name, args, kwargs = payload
        attribute = getattr(env, name)
        return attribute(*args, **kwargs) if callable(attribute) else attribute
    raise ValueError(f"unknown worker command {command!r}")


def _worker(connection: Connection, env_fn_pickle: bytes) -> None:
    """A worker process: builds its env, then answers commands until ``close``."""
    import cloudpickle

    env = cloudpickle.loads(env_fn_pickle)()
    try:
        while True:
            command, payload = connection.recv()
            if command == "close":
                break
            try:
                connection.send(("ok", _run_command(env, command, payload)))
            except Exception:  # reported to the parent, which raises WorkerError
                connection.send(("error", traceback.format_exc()))
    except (EOFError, KeyboardInterrupt):
        logger.debug("worker exits: parent gone")
    finally:
        env.close()
        connection.close()


@dataclass
class _Slot:
    """One sub-env: where it runs, what it was asked, whether its episode is over."""

    connection: Connection | None = None
    process: Any = None
    env: gymnasium.Env | None = None
    pending: str | None = None
    inline_result: tuple[str, Any] | None = None
    done: bool = True
    needs_reset: bool = False

    @property
    def pipe(self) -> Connection:
        """The pipe to the worker process (a slot that runs its env inline has none)."""
        if self.connection is None:
            raise RuntimeError("this sub-env runs inline and has no worker pipe")
        return self.connection

    last_observation: Any = None


class LLMVectorEnv(VectorEnv):
    """Vectorised text envs that step independently (see the module docstring).

    Args:
        env_fns: one constructor per sub-env (pickled with cloudpickle for worker processes).
        workers: ``"process"`` (one worker process per env, like ``AsyncVectorEnv``) or ``"inline"``
            (in this process: for debugging, and for envs too cheap to be worth a process).
        context: the multiprocessing start method (``"spawn"``, ``"fork"``, ``"forkserver"``);
            defaults to the platform's.
        autoreset_mode: ``AutoresetMode.DISABLED`` (default) or ``AutoresetMode.NEXT_STEP``.
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gymnasium.Env]],
        *,
        workers: Literal["process", "inline"] = "process",
        context: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.DISABLED,
    ) -> None:
        if not env_fns:
            raise ValueError("LLMVectorEnv needs at least one env constructor")
        if workers not in ("process", "inline"):
            raise ValueError(f"workers must be 'process' or 'inline', got {workers!r}")
        autoreset_mode = AutoresetMode(autoreset_mode)
        if autoreset_mode not in (AutoresetMode.DISABLED, AutoresetMode.NEXT_STEP):
            raise ValueError("LLMVectorEnv supports AutoresetMode.DISABLED and AutoresetMode.NEXT_STEP")
        self.workers = workers
        self.num_envs = len(env_fns)
        self.metadata = {"autoreset_mode": autoreset_mode}
        probe = env_fns[0]()
        self.single_observation_space = probe.observation_space
        self.single_action_space = probe.action_space
        self.spec = probe.spec
        self.render_mode = probe.render_mode
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._slots: list[_Slot] = []
        self._closed = False
        if workers == "inline":
            self._slots = [_Slot(env=probe)] + [_Slot(env=fn()) for fn in env_fns[1:]]
            return
        probe.close()
        import cloudpickle

        ctx = multiprocessing.get_context(context)
        for fn in env_fns:
            parent, child = ctx.Pipe()
            worker = (child, cloudpickle.dumps(fn))
            process = ctx.Process(target=_worker, args=worker, daemon=True)  # type: ignore[attr-defined]
            process.start()
            child.close()
            self._slots.append(_Slot(connection=parent, process=process))

    # ------------------------------------------------------------------ the ready-based API
    @property
    def pending(self) -> frozenset[int]:
        """The envs with a command in flight."""
        return frozenset(i for i, slot in enumerate(self._slots) if slot.pending is not None)

    def submit(self, index: int, action: Any) -> None:
        """Send env ``index`` its action; returns at once (collect the result with `ready`)."""
        slot = self._slot(index)
        if slot.done:
            raise ValueError(
                f"env {index} has no episode running: reset it first (submit_reset({index}) or "
                "reset(options={'reset_mask': mask}))"
            )
        self._send(index, "step", action)

    def submit_reset(self, index: int, *, seed: int | None = None, options: dict | None = None) -> None:
        """Send env ``index`` a reset; returns at once (collect the result with `ready`)."""
        self._send(index, "reset", (seed, options))

    def ready(self, timeout: float | None = None) -> list[EnvResult]:
        """The results of every env that has finished its command, waiting for at least one.

        Args:
            timeout: seconds to wait for the first result; ``None`` waits as long as needed.

        Returns:
            The finished envs' results, in index order; empty if ``timeout`` passed first or nothing
            is pending.
        """
        pending = sorted(self.pending)
        if not pending:
            return []
        if self.workers == "inline":
            finished = pending
        else:
            connections: dict[Any, int] = {self._slots[i].pipe: i for i in pending}
            finished = sorted(connections[c] for c in wait_connections(list(connections), timeout))
        return [self._collect(i) for i in finished]

    def step_ready(self, actions: Mapping[int, Any]) -> dict[int, EnvResult]:
        """Step only the envs named in ``actions`` and wait for all of them."""
        for index, action in actions.items():
            self.submit(index, action)
        results: dict[int, EnvResult] = {}
        while len(results) < len(actions):
            for result in self.ready():
                results[result.index] = result
        return results

    def call_at(self, index: int, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call method ``name`` (or read attribute ``name``) of env ``index`` and return the result."""
        self._send(index, "call", (name, args, kwargs))
        return self._receive(index)

    # ------------------------------------------------------------------ Gymnasium's batched API
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Reset every env (or those of ``options["reset_mask"]``), as Gymnasium's vector envs do."""
        self._require_idle()
        options = dict(options or {})
        mask = np.asarray(options.pop("reset_mask", np.ones(self.num_envs, dtype=bool)), dtype=bool)
        if mask.shape != (self.num_envs,):
            raise ValueError(f"reset_mask must have shape ({self.num_envs},), got {mask.shape}")
        seeds = self._seeds(seed)
        for i in np.flatnonzero(mask):
            self.submit_reset(int(i), seed=seeds[i], options=options or None)
        infos: dict[str, Any] = {}
        for result in self._drain():
            infos = self._add_info(infos, result.info, result.index)
        return self._observations(), infos

    def step(
        self, actions: Sequence[Any]
    ) -> tuple[tuple[Any, ...], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every env with its action, as Gymnasium's vector envs do (lockstep)."""
        self._require_idle()
        if len(actions) != self.num_envs:
            raise ValueError(f"step needs {self.num_envs} actions, got {len(actions)}")
        autoreset = self.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        for i, action in enumerate(actions):
            if autoreset and self._slots[i].needs_reset:
                self.submit_reset(i)
            else:
                self.submit(i, action)
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=np.bool_)
        truncations = np.zeros(self.num_envs, dtype=np.bool_)
        infos: dict[str, Any] = {}
        for result in self._drain():
            rewards[result.index] = result.reward
            terminations[result.index] = result.terminated
            truncations[result.index] = result.truncated
            infos = self._add_info(infos, result.info, result.index)
        return self._observations(), rewards, terminations, truncations, infos

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call method ``name`` (or read attribute ``name``) of every env."""
        self._require_idle()
        return tuple(self.call_at(i, name, *args, **kwargs) for i in range(self.num_envs))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self.call(name)

    def close_extras(self, **kwargs: Any) -> None:
        if self._closed:
            return
        self._closed = True
        for slot in self._slots:
            if slot.env is not None:
                slot.env.close()
                continue
            try:
                slot.pipe.send(("close", None))
            except (BrokenPipeError, OSError):
                logger.debug("worker already gone at close")
        for slot in self._slots:
            if slot.process is not None:
                slot.process.join(timeout=5)
                if slot.process.is_alive():
                    slot.process.terminate()
                slot.pipe.close()

    # ------------------------------------------------------------------ internals
    def _slot(self, index: int) -> _Slot:
        if not 0 <= index < self.num_envs:
            raise IndexError(f"env index {index} out of range for {self.num_envs} envs")
        return self._slots[index]

    def _send(self, index: int, command: str, payload: Any) -> None:
        slot = self._slot(index)
        if self._closed:
            raise RuntimeError("the vector env is closed")
        if slot.pending is not None:
            raise ValueError(f"env {index} is still busy with a {slot.pending}: collect it with ready()")
        slot.pending = command
        if slot.env is not None:
            try:
                slot.inline_result = ("ok", _run_command(slot.env, command, payload))
            except Exception:  # the same report as a worker process gives
                slot.inline_result = ("error", traceback.format_exc())
        else:
            slot.pipe.send((command, payload))

    def _receive(self, index: int) -> Any:
        slot = self._slots[index]
        if slot.env is not None:
            status, value = slot.inline_result or ("error", "no inline result was stored")
            slot.inline_result = None
        else:
            status, value = slot.pipe.recv()
        slot.pending = None
        if status == "error":
            raise WorkerError(index, value)
        return value

    def _collect(self, index: int) -> EnvResult:
        slot = self._slots[index]
        kind = slot.pending
        value = self._receive(index)
        if kind == "reset":
            observation, info = value
            slot.done, slot.needs_reset, slot.last_observation = False, False, observation
            return EnvResult(index, "reset", observation, dict(info))
        observation, reward, terminated, truncated, info = value
        slot.last_observation = observation
        slot.done = slot.needs_reset = bool(terminated or truncated)
        return EnvResult(
            index, "step", observation, dict(info), float(reward), bool(terminated), bool(truncated)
        )

    def _drain(self) -> list[EnvResult]:
        results: list[EnvResult] = []
        while self.pending:
            results.extend(self.ready())
        return sorted(results, key=lambda r: r.index)

    def _require_idle(self) -> None:
        if self.pending:
            raise ValueError(f"envs {sorted(self.pending)} still have commands in flight: collect them first")

    def _observations(self) -> tuple[Any, ...]:
        return tuple(slot.last_observation for slot in self._slots)

    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, int | np.integer):
            return [int(seed) + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"seed needs {self.num_envs} entries, got {len(seeds)}")
        return seeds


def play_episodes(
    vec: LLMVectorEnv,
    policies: Sequence[Policy],
    *,
    seeds: Sequence[int],
    options: dict[str, Any] | None = None,
    max_steps: int = 1000,
) -> list[Trajectory]:
    """Play one episode per seed, stepping each env the moment its policy's action is ready.

    Policy calls run on a thread pool (one thread per env), so a policy waiting on a model server
    (an HTTP call releases the GIL) overlaps with the other envs' policies and steps.

    Args:
        vec: the vector env (its autoreset mode must be DISABLED: episodes end where they end).
        policies: one policy per env slot (a policy is stateful within an episode). A policy's
            ``bind(env)`` is not called: the envs may live in other processes.
        seeds: the env seeds, one episode each; slot ``i`` plays its next seed when it finishes.
        options: ``reset`` options for every episode.
        max_steps: a safety bound on steps per episode (the episode is marked truncated).

    Returns:
        The trajectories, in the order of ``seeds``.
    """
    if len(policies) != vec.num_envs:
        raise ValueError(f"play_episodes needs one policy per env ({vec.num_envs}), got {len(policies)}")
    if vec.metadata["autoreset_mode"] != AutoresetMode.DISABLED:
        raise ValueError("play_episodes needs an LLMVectorEnv with autoreset_mode=DISABLED")
    queue = deque(enumerate(seeds))
    trajectories: dict[int, Trajectory] = {}
    episode_of: dict[int, int] = {}
    observation_of: dict[int, Any] = {}
    action_of: dict[int, Any] = {}
    thinking: dict[Future, int] = {}

    def start_next(slot: int) -> None:
        if not queue:
            return
        episode, seed = queue.popleft()
        episode_of[slot] = episode
        policies[slot].reset(seed=seed)
        vec.submit_reset(slot, seed=seed, options=options)

    def on_env_result(result: EnvResult, pool: ThreadPoolExecutor) -> None:
        slot = result.index
        episode = episode_of[slot]
        if result.kind == "reset":
            trajectories[episode] = Trajectory(
                task_id=result.info.get(K.TASK_ID, ""), seed=seeds[episode], reset_info=result.info
            )
        else:
            trajectory = trajectories[episode]
            step = Step(observation_of[slot], action_of.pop(slot), result.reward, result.info)
            trajectory.steps.append(step)
            over_budget = len(trajectory.steps) >= max_steps
            if result.done or over_budget:
                trajectory.terminated, trajectory.truncated = (
                    result.terminated,
                    result.truncated or (over_budget and not result.done),
                )
                trajectory.success = bool(result.info.get(K.SUCCESS, False))
                del episode_of[slot]
                start_next(slot)
                return
        observation_of[slot] = result.observation
        thinking[pool.submit(policies[slot], result.observation, result.info)] = slot

    with ThreadPoolExecutor(max_workers=vec.num_envs, thread_name_prefix="papergym-policy") as pool:
        for slot in range(vec.num_envs):
            start_next(slot)
        while vec.pending or thinking:
            # Poll the envs without blocking while policies are thinking, and the other way round.
            for result in vec.ready(timeout=0.0 if thinking else None):
                on_env_result(result, pool)
            if thinking:
                timeout = 0.001 if vec.pending else None
                done, _ = wait_futures(list(thinking), timeout=timeout, return_when=FIRST_COMPLETED)
                for future in done:
                    slot = thinking.pop(future)
                    action_of[slot] = future.result()
                    vec.submit(slot, action_of[slot])
    return [trajectories[i] for i in sorted(trajectories)]
