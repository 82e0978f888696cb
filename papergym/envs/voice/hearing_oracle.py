"""`HearingOracle`: a policy that knows the task's procedure but fills slot values only from what it heard.

The privileged `VoiceServiceEnv.oracle_action` reads the user's clean words; this policy reads the
user's turns as the agent perceives them (the transcript or simulated text; in audio mode its own ASR
of the waveform with the env's engine) and tool results as the env shows them. So a misheard email
or order id reaches the tool arguments, fails against the database, and the policy asks the user to
repeat (up to ``max_retries``) as an agent would. Its choices (wording, whether to ask the user to
repeat a value before using it) are sampled from its own policy seed at ``temperature``.

`slot_errors` measures the share of the scenario's slot values that reached tool arguments wrongly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from papergym.core import info_keys as K
from papergym.envs.service.plan import Call, PlanContext, PlanError, Said, render_step
from papergym.envs.service.tasks import ServiceTask
from papergym.envs.service.user import STOP
from papergym.envs.voice.slots import normalize_heard

PREFIXES: tuple[str, ...] = ("", "Sure. ", "Thank you. ", "Alright. ")
"""Wordings the policy may open a message with; the first is its greedy choice."""
PREFIX_LOGITS: tuple[float, ...] = (0.0, -1.0, -1.0, -1.0)
"""Inferred preferences over `PREFIXES`."""
CONFIRM_LOGITS: tuple[float, ...] = (0.0, -1.5)
"""Inferred preferences over (use a heard value at once, ask the user to repeat it first)."""


_CARRIER = re.compile(
    r"\bmy ((?:second )?order id|first name|last name|zip code|user id|e-?mail(?: address)?) is",
    re.IGNORECASE,
)


def understood(heard: str) -> str:
    """``heard`` as a competent listener reads it: the carrier "My <topic> is" in the plan's casing
    ("My order ID is" -> "My order id is") and ASR formatting undone (`normalize_heard`: digit grouping,
    spoken symbols). Misheard values stay misheard.

    >>> understood("my Order ID is hash W1,234,567. My E-mail address is a at b.com")
    'My order id is #W1234567. My email is a@b.com'
    """

    def fix(m: re.Match[str]) -> str:
        topic = m.group(1).lower().replace("e-mail", "email").replace("email address", "email")
        return f"My {topic} is"

    return normalize_heard(_CARRIER.sub(fix, heard))


def _said_topics(value: Any) -> list[str]:
    if isinstance(value, Said):
        return [value.topic]
    if isinstance(value, Mapping):
        return [t for v in value.values() for t in _said_topics(v)]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _said_topics(v)]
    return []


def _latest_text(observation: Any) -> str:
    if isinstance(observation, Mapping):
        observation = observation["text"]
    if isinstance(observation, tuple):
        return observation[-1]["content"] if observation else ""
    return str(observation)


class HearingOracle:
    """The task's procedure, with slot values from perception (a `Policy` for `rollout`).

    Args:
        temperature: sampling temperature of its choices (0 = always the greedy choice).
        max_retries: how often it asks the user to repeat values of a failed or unparseable call.
    """

    def __init__(self, *, temperature: float = 0.0, max_retries: int = 2) -> None:
        if temperature < 0 or max_retries < 0:
            raise ValueError("temperature and max_retries must be >= 0")
        self.temperature = float(temperature)
        self.max_retries = int(max_retries)
        self._env: Any = None
        self.reset(seed=0)

    def bind(self, env: gym.Env) -> None:
        self._env = env.unwrapped

    def reset(self, *, seed: int) -> None:
        self._rng = np.random.default_rng(seed)
        self._ctx = PlanContext()
        self._pos = 0
        self._pending: Call | None = None
        self._failed: Call | None = None
        self._retries = 0
        self._checked: set[int] = set()
        self._seen = 0

    def _choose(self, logits: Sequence[float]) -> int:
        if self.temperature == 0:
            return int(np.argmax(logits))
        z = np.asarray(logits, np.float64) / self.temperature
        p = np.exp(z - z.max())
        return int(self._rng.choice(len(p), p=p / p.sum()))

    # ------------------------------------------------------------------ perception
    def _perceive(self, observation: Any) -> None:
        env = self._env
        if self._pending is not None:
            text = _latest_text(observation)
            step, self._pending = self._pending, None
            if text.startswith("Error"):
                self._failed = step
            else:
                if step.label:
                    self._ctx.results[step.label] = text  # as the agent saw it (PlanContext decodes)
                self._pos += 1
                self._retries = 0
        heard = env.heard
        for i in range(self._seen, len(heard)):
            if env.channel == "audio" and i == len(heard) - 1 and isinstance(observation, Mapping):
                self._ctx.user_messages.append(understood(env.hear(observation["audio"])))
            else:
                self._ctx.user_messages.append(understood(heard[i]))
        self._seen = len(heard)

    # ------------------------------------------------------------------ acting
    def _ask_repeat(self, topics: Iterable[str]) -> str:
        names = list(dict.fromkeys(topics))
        listed = ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1]
        return f"I'm sorry, I could not catch that. Could you please repeat your {listed}?"

    def __call__(self, observation: Any, info: Mapping[str, Any]) -> str:
        if self._env is None:
            raise RuntimeError("HearingOracle is not bound to an env: call bind(env) (rollout does)")
        self._perceive(observation)
        plan = self._env.procedure()
        if self._failed is not None:
            topics = _said_topics(self._failed.arguments)
            self._failed = None
            if topics and self._retries < self.max_retries:
                self._retries += 1
                return self._ask_repeat(topics)
            self._pos += 1  # give up on this call; later steps may still be possible
        if self._pos >= len(plan):
            return STOP
        step = plan[self._pos]
        if isinstance(step, Call):
            topics = _said_topics(step.arguments)
            if topics and self._pos not in self._checked:
                self._checked.add(self._pos)
                if self._choose(CONFIRM_LOGITS) == 1:
                    return self._ask_repeat(topics)
            try:
                action = render_step(step, self._ctx)
            except PlanError:
                if topics and self._retries < self.max_retries:
                    self._retries += 1
                    return self._ask_repeat(topics)
                return STOP
            self._pending = step
            return action
        try:
            text = render_step(step, self._ctx)
        except PlanError:
            return STOP
        self._pos += 1
        return PREFIXES[self._choose(PREFIX_LOGITS)] + text


def slot_errors(task: ServiceTask, steps_infos: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(slots, misheard): the task's user-known values that gold tool calls need, and how many of them
    reached tool arguments wrongly. Per (tool, argument), the values the agent used that no gold call
    uses count as wrong, at most one per gold slot of that (tool, argument).
    """
    facts = set((task.script.facts if task.script else {}).values())
    gold: dict[tuple[str, str], set[str]] = {}
    for a in task.criteria.actions:
        if a.requestor != "assistant":
            continue
        for key, value in a.arguments.items():
            if str(value) in facts:
                gold.setdefault((a.name, key), set()).add(str(value))
    seen: dict[tuple[str, str], set[str]] = {}
    for info in steps_infos:
        for call in info.get(K.TOOL_CALLS) or []:
            for key, value in (call.get("arguments") or {}).items():
                seen.setdefault((call["name"], key), set()).add(str(value))
    slots = sum(len(v) for v in gold.values())
    wrong = sum(min(len(v), len(seen.get(k, set()) - v)) for k, v in gold.items())
    return slots, wrong


__all__ = ["HearingOracle", "slot_errors"]
