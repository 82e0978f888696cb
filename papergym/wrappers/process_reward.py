"""`ProcessReward`: SpeechGym's per-turn process reward, a bonus for every successful tool call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, SupportsFloat

import gymnasium as gym

from papergym.core import info_keys as K

BONUS = 0.1
"""SpeechGym's process reward per successful tool call (papers/envs.md §2.1: "+0.1 per successful
tool call")."""


def tool_call_succeeded(info: Mapping[str, Any]) -> bool:
    """Whether the step made tool calls that all executed without error.

    Reads the structured outcome ``info["tool_calls"][i]["ok"]`` (`papergym.core.info_keys.TOOL_CALLS`); a
    call without an ``ok`` flag is not credited.
    """
    calls = info.get(K.TOOL_CALLS) or []
    if not calls or info.get(K.INVALID_ACTION):
        return False
    return all(call.get("ok") is True for call in calls)


class ProcessReward(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Add SpeechGym's process term: ``bonus`` for each step whose tool call succeeded.

    The term is ``info["reward_components"]["process"]``, added on top of the unchanged ``outcome``
    (tau2's check) and ``format`` terms; the step reward is recomputed as the sum of the components.
    With a binary outcome, GRPO groups whose members all fail (or all succeed) carry no gradient;
    crediting each successful call restores variance to nearly all of them (SpeechGym: 16% -> 99.6%
    of groups).

    Args:
        env: a service env (``papergym/ServiceAgent-v0`` or ``papergym/VoiceService-v0``).
        bonus: the reward per successful tool call (SpeechGym: 0.1).
        max_calls: credit at most this many successful calls per episode (None: no cap; inferred
            guard against farming read-only calls).

    >>> import gymnasium as gym, papergym
    >>> env = ProcessReward(gym.make("papergym/ServiceAgent-v0"))
    >>> _ = env.reset(seed=0)
    >>> total, done = 0.0, False
    >>> while not done:
    ...     _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
    ...     total, done = total + reward, terminated or truncated
    >>> info["success"], total > 1.0
    (True, True)
    """

    def __init__(self, env: gym.Env, *, bonus: float = BONUS, max_calls: int | None = None) -> None:
        if bonus < 0:
            raise ValueError(f"bonus must be >= 0, got {bonus}")
        if max_calls is not None and max_calls < 0:
            raise ValueError(f"max_calls must be None or >= 0, got {max_calls}")
        gym.utils.RecordConstructorArgs.__init__(self, bonus=bonus, max_calls=max_calls)
        super().__init__(env)
        self.bonus = float(bonus)
        self.max_calls = max_calls
        self._credited = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._credited = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if tool_call_succeeded(info) and (self.max_calls is None or self._credited < self.max_calls):
            self._credited += 1
            components = {**info[K.REWARD_COMPONENTS], "process": self.bonus}
            info = {**info, K.REWARD_COMPONENTS: components}
            reward = float(sum(components.values()))
        return obs, reward, terminated, truncated, info
