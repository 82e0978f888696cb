"""A scripted fake ChatModel for the role and policy tests: it records requests, replies from a list."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from papergym.backends.protocols import Message
from papergym.backends.usage import Usage


class ScriptedChat:
    """Replies with ``replies`` in turn (the last one repeats); records every call's arguments."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies) or ["ok"]
        self.calls: list[dict[str, Any]] = []
        self.model_id = "scripted"
        self.usage = Usage()

    def chat(
        self,
        messages: Sequence[Message],
        *,
        seed: int | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> str:
        self.calls.append(
            {
                "messages": [dict(m) for m in messages],
                "seed": seed,
                "max_tokens": max_tokens,
                "temperature": temperature,
            }
        )
        self.usage.add(model_calls=1)
        return self.replies[min(len(self.calls), len(self.replies)) - 1]

    @property
    def last(self) -> dict[str, Any]:
        return self.calls[-1]
