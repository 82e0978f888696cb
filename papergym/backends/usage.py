"""`Usage`: the deterministic counters every ChatModel backend keeps.

Envs put the change of these counters over a step into ``info["cost"]`` (counts only, never
latency, so infos stay deterministic). The counters are updated under a lock, since one backend
may serve several env instances from several threads.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass
class Usage:
    """Counters of one backend's work.

    Attributes:
        model_calls: requests the model answered (cache hits and failed requests excluded).
        prompt_tokens: prompt tokens of those requests, as the model counted them.
        completion_tokens: generated tokens of those requests.
        cache_hits: requests answered from a replay cache.
        retries: failed attempts that were retried.
        failures: requests that failed for good (a `BackendError` was raised).
    """

    COUNTERS: ClassVar[tuple[str, ...]] = (
        "model_calls",
        "prompt_tokens",
        "completion_tokens",
        "cache_hits",
        "retries",
        "failures",
    )

    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        """Add to some counters at once (atomically), e.g. ``usage.add(model_calls=1, retries=2)``.

        Raises:
            ValueError: a name that is not one of `COUNTERS`.
        """
        unknown = set(counts) - set(self.COUNTERS)
        if unknown:
            raise ValueError(f"unknown usage counters {sorted(unknown)}; known: {list(self.COUNTERS)}")
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + int(value))

    def as_dict(self) -> dict[str, int]:
        """A consistent snapshot of every counter."""
        with self._lock:
            return {name: getattr(self, name) for name in self.COUNTERS}

    def since(self, before: Mapping[str, int]) -> dict[str, int]:
        """The change of every counter since the snapshot ``before`` (an `as_dict` result)."""
        now = self.as_dict()
        return {name: now[name] - int(before.get(name, 0)) for name in self.COUNTERS}

    def __getstate__(self) -> dict[str, Any]:
        # a lock cannot be pickled: backends travel to worker processes with their counters only
        return self.as_dict()

    def __setstate__(self, state: Mapping[str, int]) -> None:
        self._lock = threading.Lock()
        for name in self.COUNTERS:
            setattr(self, name, int(state.get(name, 0)))


def usage_of(backend: object) -> Usage | None:
    """The `Usage` counters behind a backend: its own, or those of the `ChatModel` it wraps (a model role).

    Envs take a snapshot before a call and put ``usage.since(snapshot)`` into ``info["cost"]``; an
    embedded backend without a model (an oracle critic, a rule reader) has none.
    """
    for candidate in (backend, getattr(backend, "model", None)):
        usage = getattr(candidate, "usage", None)
        if isinstance(usage, Usage):
            return usage
    return None
