"""`TextEnv`: the base class of every single-agent papergym env.

A subclass writes only the task logic (`_new_task`, `_start`, `_act`, `success_check`,
`oracle_action`, `_state` / `_load_state`); this class does the Gymnasium plumbing once: seeding,
reset options, observation modes, the fixed info keys, invalid-action handling, snapshots, ansi
rendering and timings.
"""

from __future__ import annotations

import abc
import copy
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import gymnasium as gym
from gymnasium.error import ResetNeeded

from papergym.core import info_keys as K
from papergym.core.spaces import Chat, FreeText
from papergym.core.tasks import Task, task_options

logger = logging.getLogger(__name__)

ObsMode = Literal["text", "chat"]


@dataclass(slots=True)  # not frozen: a frozen dataclass costs ~2 µs to build, on the reset path
class Turn:
    """What one transition produces.

    Attributes:
        text: the new environment text (feedback, tool results, the user's reply, ...).
        reward_components: additive terms; the step reward is their sum.
        terminated: the episode ended naturally (answer submitted, goal reached, ...).
        truncated: the episode was cut short by a backend fault (put the fault in ``info["error"]``).
        info: extra info keys for this step (names from `papergym.core.info_keys`).
        role: the chat role the text is shown under.
    """

    text: str
    reward_components: Mapping[str, float] = field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    info: Mapping[str, Any] = field(default_factory=dict)
    role: str = "user"


@dataclass
class EnvTimings:
    """Wall-clock timings, kept outside ``info`` so infos stay deterministic."""

    resets: int = 0
    steps: int = 0
    last_reset_s: float = 0.0
    last_step_s: float = 0.0
    total_reset_s: float = 0.0
    total_step_s: float = 0.0


@dataclass
class _Episode:
    """The base class's own per-episode state (snapshotted with the subclass's state)."""

    task: Task
    messages: list[dict[str, str]]
    steps: int = 0
    done: bool = False


class TextEnv(gym.Env[Any, str], abc.ABC):
    """Base class of a text environment whose action is the model's whole completion (a ``str``).

    Args:
        obs_mode: ``"text"``: each observation is the new environment text (the first one holds
            the system prompt and the task); ``"chat"``: a tuple of ``{"role", "content"}``
            messages, the whole conversation so far.
        render_mode: ``None`` or ``"ansi"`` (the transcript as text).
        max_action_length: longer actions are rejected as invalid (characters).
        max_observation_length: longer environment texts are cut, with a marker saying so.
        format_penalty: the (positive) size of the ``format`` penalty for an invalid action.

    Subclasses set `canned_actions` (well-formed actions that ``action_space.sample()`` draws
    from) and may extend `reset_options`.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012  # gymnasium's own type
    action_space: FreeText
    reset_options: ClassVar[frozenset[str]] = frozenset({"task_id", "split", "difficulty"})
    canned_actions: ClassVar[tuple[str, ...]] = ("",)
    terminate_on_invalid: ClassVar[bool] = False
    """Whether an invalid action ends the episode (single-turn envs)."""
    tool_schemas: ClassVar[tuple[Mapping[str, Any], ...]] = ()
    """The env's tools as OpenAI function schemas (``{"name", "description", "parameters"}``), for
    adapters that expose them natively (TRL's ``environment_factory``); empty for envs without tools."""
    resets_context: ClassVar[bool] = False
    """The setting resets the agent's context every step (memory agents): chat observations hold only
    the current context (the system prompt, if any, and the new text), and ``info["context_reset"]``
    is True on every step. ``render()`` still shows the whole transcript."""

    def __init__(
        self,
        *,
        obs_mode: ObsMode = "text",
        render_mode: str | None = None,
        max_action_length: int = 32_768,
        max_observation_length: int = 262_144,
        format_penalty: float = 0.1,
    ) -> None:
        if obs_mode not in ("text", "chat"):
            raise ValueError(f"obs_mode must be 'text' or 'chat', got {obs_mode!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        if format_penalty < 0:
            raise ValueError(f"format_penalty is a penalty's size and must be >= 0, got {format_penalty}")
        self.obs_mode: ObsMode = obs_mode
        self.render_mode = render_mode
        self.max_observation_length = max_observation_length
        self.format_penalty = float(format_penalty)
        self.action_space = FreeText(max_action_length, samples=self.canned_actions)
        self.observation_space: gym.Space = (
            FreeText(max_observation_length) if obs_mode == "text" else Chat(4096, max_observation_length)
        )
        self.timings = EnvTimings()
        self._episode: _Episode | None = None

    # ------------------------------------------------------------------ subclass API
    @abc.abstractmethod
    def _new_task(self, options: Mapping[str, Any]) -> Task:
        """The episode's task: from ``options["task_id"]`` or drawn with ``self.np_random``."""

    @abc.abstractmethod
    def _start(self, task: Task) -> Turn:
        """Set up the episode's state for ``task`` and return the first environment text."""

    @abc.abstractmethod
    def _act(self, action: str) -> Turn:
        """Parse and apply one action. Never raises on bad text: return `_invalid` instead."""

    @abc.abstractmethod
    def success_check(self) -> bool:
        """The task's success check, evaluated on the current state."""

    @abc.abstractmethod
    def oracle_action(self) -> str:
        """The next action of a correct solution from the current state."""

    @abc.abstractmethod
    def _state(self) -> Any:
        """The subclass's episode state (deep-copied by `snapshot`)."""

    @abc.abstractmethod
    def _load_state(self, state: Any) -> None:
        """Restore what `_state` returned."""

    def _system_prompt(self, task: Task) -> str:
        """The system prompt of an episode (empty: none)."""
        return ""

    # ------------------------------------------------------------------ helpers for subclasses
    def _invalid(self, feedback: str, **info: Any) -> Turn:
        """An invalid-action turn: feedback for the model and the ``format`` penalty."""
        return Turn(
            feedback,
            {"format": -self.format_penalty},
            terminated=self.terminate_on_invalid,
            info={K.INVALID_ACTION: True, **info},
        )

    @property
    def task(self) -> Task:
        """The current episode's task."""
        return self._require_episode().task

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        start = time.perf_counter()
        super().reset(seed=seed)
        task = self._new_task(task_options(options, allowed=self.reset_options))
        turn = self._start(task)
        system = self._system_prompt(task)
        messages = [{"role": "system", "content": system}] if system else []
        first = self._cap(turn.text)
        messages.append({"role": turn.role, "content": first})
        self._episode = _Episode(task=task, messages=messages)
        info = {K.TASK_ID: task.task_id, K.SPLIT: task.split, K.DIFFICULTY: task.difficulty, **turn.info}
        if self.resets_context:
            info[K.CONTEXT_RESET] = False
        obs = self._observe(f"{system}\n\n{first}" if system else first)
        self._tick(start, reset=True)
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        start = time.perf_counter()
        episode = self._require_episode()
        if episode.done:
            raise ResetNeeded("the episode has ended: call reset() before step()")
        if not isinstance(action, str):
            turn = self._invalid(
                f"The action must be a string (your whole reply), not {type(action).__name__}."
            )
            action = repr(action)[:200]
        elif len(action) > self.action_space.max_length:
            turn = self._invalid(
                f"The reply is {len(action)} characters long; the limit is {self.action_space.max_length}."
            )
            action = action[: self.action_space.max_length]
        else:
            turn = self._act(action)
        text = self._cap(turn.text)
        episode.steps += 1
        episode.messages.append({"role": "assistant", "content": action})
        episode.messages.append({"role": turn.role, "content": text})
        episode.done = turn.terminated or turn.truncated
        info = {K.REWARD_COMPONENTS: dict(turn.reward_components), K.INVALID_ACTION: False, **turn.info}
        if self.resets_context:
            info[K.CONTEXT_RESET] = True
        if episode.done:
            info[K.SUCCESS] = self.success_check()
        reward = float(sum(turn.reward_components.values()))
        obs = self._observe(text)
        self._tick(start, reset=False)
        return obs, reward, turn.terminated, turn.truncated, info

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn("render() was called without a render_mode; pass render_mode='ansi' to make()")
            return None
        if self._episode is None:
            return ""
        return "\n".join(f"[{m['role']}] {m['content']}" for m in self._episode.messages) + "\n"

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> Any:
        """A copy of the full env state (episode, subclass state, random generator)."""
        episode = self._require_episode()
        return copy.deepcopy((episode, self._state(), self.np_random.bit_generator.state))

    def restore(self, snapshot: Any) -> None:
        """Return to a state taken with `snapshot` (the snapshot stays reusable)."""
        episode, state, rng_state = copy.deepcopy(snapshot)
        self._episode = episode
        self._load_state(state)
        self.np_random.bit_generator.state = rng_state

    # ------------------------------------------------------------------ internals
    def _require_episode(self) -> _Episode:
        if self._episode is None:
            raise ResetNeeded("call reset() before using the env")
        return self._episode

    def _observe(self, text: str) -> Any:
        if self.obs_mode == "text":
            return text
        messages = self._require_episode().messages
        if self.resets_context:
            system = [dict(messages[0])] if messages[0]["role"] == "system" else []
            return (*system, dict(messages[-1]))
        return tuple(dict(m) for m in messages)

    def _cap(self, text: str) -> str:
        if len(text) <= self.max_observation_length:
            return text
        cut = len(text) - self.max_observation_length + 64
        return text[: len(text) - cut] + f"\n[... {cut} characters cut]"

    def _tick(self, start: float, *, reset: bool) -> None:
        elapsed = time.perf_counter() - start
        t = self.timings
        if reset:
            t.resets += 1
            t.last_reset_s = elapsed
            t.total_reset_s += elapsed
        else:
            t.steps += 1
            t.last_step_s = elapsed
            t.total_step_s += elapsed
