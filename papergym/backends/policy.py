"""`ChatModelPolicy`: an agent driven by any `ChatModel`, and the ``--policy`` spec parser.

The policy sends the env's prompt as chat messages: in ``obs_mode="chat"`` the observation is
the whole conversation and is sent as is; in ``obs_mode="text"`` the policy keeps the
conversation itself. Each call's seed is derived from the episode's policy seed and the turn
index, so a seeded episode replays exactly (and hits a replay cache on the second run).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

from papergym.backends.protocols import ChatModel, Message


def turn_seed(seed: int | None, turn: int) -> int | None:
    """The seed of turn ``turn`` of an episode with policy seed ``seed`` (None stays None).

    Stable across processes and Python versions, and below 2**31 so every server accepts it.

    >>> turn_seed(0, 0) == turn_seed(0, 0) != turn_seed(0, 1)
    True
    """
    if seed is None:
        return None
    digest = hashlib.sha256(f"papergym-policy/{int(seed)}/{int(turn)}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


class ChatModelPolicy:
    """A `papergym.core.trajectory.Policy` that asks a `ChatModel` for each action.

    Args:
        model: the model (`HFChatModel`, `OpenAIChatModel`, a `CachedChatModel`, ...).
        max_tokens: the most tokens of one action.
        temperature: the sampling temperature (0: greedy).

    A `papergym.core.errors.BackendError` from the model propagates: the caller decides what a
    failed episode means (``papergym eval`` records it and goes on).
    """

    def __init__(self, model: ChatModel, *, max_tokens: int = 512, temperature: float = 0.0) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        self.model = model
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)
        self._seed: int | None = None
        self._turn = 0
        self._history: list[Message] = []

    def __repr__(self) -> str:
        return (
            f"ChatModelPolicy({self.model!r}, max_tokens={self.max_tokens}, temperature={self.temperature})"
        )

    @property
    def history(self) -> list[Message]:
        """The conversation kept in text mode (a copy)."""
        return [dict(m) for m in self._history]  # type: ignore[misc]

    def reset(self, *, seed: int) -> None:
        self._seed = seed
        self._turn = 0
        self._history = []

    def __call__(self, observation: Any, info: Mapping[str, Any]) -> str:
        """The model's reply to the observation.

        Args:
            observation: a tuple of ``{"role", "content"}`` messages (``obs_mode="chat"``), a str
                (``obs_mode="text"``), or a mapping with a ``"text"`` entry (whose text is used).
            info: unused (the model sees only what the env shows).

        Raises:
            TypeError: an observation of another kind.
        """
        del info
        if isinstance(observation, Mapping) and isinstance(observation.get("text"), str):
            observation = observation["text"]
        if isinstance(observation, str):
            self._history.append({"role": "user", "content": observation})
            messages: list[Message] = list(self._history)
        elif isinstance(observation, Sequence) and all(isinstance(m, Mapping) for m in observation):
            messages = [{"role": m["role"], "content": m["content"]} for m in observation]
        else:
            raise TypeError(
                "ChatModelPolicy takes a str or a sequence of chat messages, "
                f"got {type(observation).__name__}"
            )
        seed = turn_seed(self._seed, self._turn)
        self._turn += 1
        reply = self.model.chat(messages, seed=seed, max_tokens=self.max_tokens, temperature=self.temperature)
        if isinstance(observation, str):
            self._history.append({"role": "assistant", "content": reply})
        return reply


_POLICY_OPTIONS: dict[str, Callable[[str], Any]] = {"max_tokens": int, "temperature": float}
_BACKEND_OPTIONS: dict[str, dict[str, Callable[[str], Any]]] = {
    "hf": {"device": str, "dtype": str},
    "openai": {"timeout": float, "max_retries": int, "backoff_s": float},
}


def parse_policy_spec(spec: str) -> ChatModelPolicy | None:
    """Build a `ChatModelPolicy` from a command-line spec, or return None for another kind of spec.

    Forms:
        - ``hf:PATH``: `papergym.backends.hf.HFChatModel` on a local checkpoint directory.
        - ``openai:URL#MODEL``: `papergym.backends.openai_compat.OpenAIChatModel` (the API key
          comes from ``OPENAI_API_KEY``, else ``"EMPTY"``).

    Either may end in ``?key=value&...`` options: ``cache=PATH`` wraps the model in a
    `papergym.backends.cache.CachedChatModel` stored at PATH; ``max_tokens``, ``temperature``
    (the policy's); ``device``, ``dtype`` (``hf``); ``timeout``, ``max_retries``, ``backoff_s``
    (``openai``). Example: ``openai:http://127.0.0.1:8000/v1#Qwen/Qwen3-8B?temperature=0.7&cache=runs/c.db``.

    Raises:
        ValueError: a malformed ``hf:``/``openai:`` spec or an unknown option.
    """
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in _BACKEND_OPTIONS:
        return None
    if kind == "openai":
        url, hash_sign, model_and_query = rest.partition("#")
        model, _, query = model_and_query.partition("?")
        if not hash_sign or not url or not model:
            raise ValueError(f"an openai policy is openai:URL#MODEL, got {spec!r}")
        target = url
    else:
        target, _, query = rest.partition("?")
        model = ""
        if not target:
            raise ValueError(f"an hf policy is hf:PATH (a local checkpoint directory), got {spec!r}")
    allowed: dict[str, Callable[[str], Any]] = {**_POLICY_OPTIONS, **_BACKEND_OPTIONS[kind], "cache": str}
    options: dict[str, Any] = {}
    for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)):
        if key not in allowed:
            raise ValueError(f"unknown option {key!r} in {spec!r}; {kind}: takes {sorted(allowed)}")
        try:
            options[key] = allowed[key](value)
        except ValueError as exc:
            raise ValueError(f"bad value for {key!r} in {spec!r}: {value!r}") from exc
    policy_kwargs = {k: options.pop(k) for k in _POLICY_OPTIONS if k in options}
    cache_path = options.pop("cache", None)
    backend: ChatModel
    if kind == "hf":
        from papergym.backends.hf import HFChatModel  # lazy: loads torch

        backend = HFChatModel(target, **options)
    else:
        from papergym.backends.openai_compat import OpenAIChatModel

        backend = OpenAIChatModel(target, model, **options)
    if cache_path:
        from papergym.backends.cache import CachedChatModel

        backend = CachedChatModel(backend, cache_path)
    return ChatModelPolicy(backend, **policy_kwargs)
