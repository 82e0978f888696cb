"""Spaces for LLM environments: free text, chat transcripts and waveforms.

Gymnasium's ``Text`` space checks every character against a charset, which rejects ordinary model
output (spaces, punctuation, any Unicode). `FreeText` accepts any ``str`` up to a length. Its
``sample()`` returns one of the env's canned *valid* actions, so ``check_env``'s step-determinism
check exercises a real transition instead of an invalid-action branch.

Batching (for ``SyncVectorEnv`` and ``AsyncVectorEnv(shared_memory=False)``): each space batches to a
``Tuple`` of copies and observations concatenate to a tuple, one item per sub-env. ``iterate`` is
deliberately not registered: a batched ``Tuple`` of these spaces then iterates its items directly
(registering it would make Gymnasium iterate *inside* each string).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from copy import deepcopy
from typing import Any

import numpy as np
from gymnasium.spaces import Space, Tuple
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

SAMPLE_RATE = 16_000
"""Sample rate of every `Waveform` (Hz)."""

CHAT_ROLES = frozenset({"system", "user", "assistant", "tool"})


class FreeText(Space[str]):
    """Any ``str`` of at most ``max_length`` characters (full Unicode).

    Args:
        max_length: the longest accepted string, in characters.
        samples: canned strings that ``sample()`` draws from; for an action space these should be
            well-formed actions of the env. Defaults to ``("",)``.
        seed: seed of the space's own generator (for ``sample()``).

    >>> space = FreeText(20, samples=("\\\\boxed{1}", "\\\\boxed{2}"), seed=0)
    >>> space.sample() in space, "any ✓ ünïcode" in space, "x" * 21 in space
    (True, True, False)
    """

    def __init__(self, max_length: int, *, samples: Sequence[str] = ("",), seed: int | None = None) -> None:
        if max_length < 1:
            raise ValueError(f"FreeText max_length must be >= 1, got {max_length}")
        samples = tuple(samples)
        if not samples or any(not isinstance(s, str) or len(s) > max_length for s in samples):
            raise ValueError("FreeText samples must be a non-empty sequence of str no longer than max_length")
        self.max_length = int(max_length)
        self.samples = samples
        super().__init__(dtype=str, seed=seed)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """One of the canned samples, drawn from the space's generator."""
        if mask is not None or probability is not None:
            raise NotImplementedError("FreeText.sample takes no mask or probability")
        return self.samples[int(self.np_random.integers(len(self.samples)))]

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"FreeText({self.max_length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FreeText) and other.max_length == self.max_length

    def __hash__(self) -> int:
        return hash(("FreeText", self.max_length))


class Chat(Space[tuple]):
    """A conversation: a tuple of ``{"role": ..., "content": str}`` messages.

    Args:
        max_messages: the most messages a conversation may hold.
        max_length: the longest content of one message, in characters.
        seed: seed of the space's own generator.

    >>> space = Chat(8, 100)
    >>> ({"role": "user", "content": "hi"},) in space, ({"role": "robot", "content": "hi"},) in space
    (True, False)
    """

    def __init__(self, max_messages: int, max_length: int, *, seed: int | None = None) -> None:
        if max_messages < 1 or max_length < 1:
            raise ValueError("Chat max_messages and max_length must be >= 1")
        self.max_messages = int(max_messages)
        self.max_length = int(max_length)
        super().__init__(dtype=object, seed=seed)

    def sample(self, mask: Any = None, probability: Any = None) -> tuple:
        """A short canned conversation (a system and a user message)."""
        if mask is not None or probability is not None:
            raise NotImplementedError("Chat.sample takes no mask or probability")
        words = ("hello", "order", "status", "please", "thanks")
        text = " ".join(words[int(i)] for i in self.np_random.integers(len(words), size=3))
        messages = (
            {"role": "system", "content": "You are a helpful agent."},
            {"role": "user", "content": text},
        )
        return tuple(
            {"role": m["role"], "content": m["content"][: self.max_length]}
            for m in messages[-self.max_messages :]
        )

    def contains(self, x: Any) -> bool:
        if not isinstance(x, tuple) or len(x) > self.max_messages:
            return False
        return all(
            isinstance(m, Mapping)
            and m.get("role") in CHAT_ROLES
            and isinstance(m.get("content"), str)
            and len(m["content"]) <= self.max_length
            for m in x
        )

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"Chat({self.max_messages}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Chat)
            and other.max_messages == self.max_messages
            and other.max_length == self.max_length
        )

    def __hash__(self) -> int:
        return hash(("Chat", self.max_messages, self.max_length))


class Waveform(Space[np.ndarray]):
    """Mono audio: a 1-D float32 array at 16 kHz of any length up to ``max_seconds``, values in [-1, 1].

    Args:
        max_seconds: the longest clip, in seconds.
        seed: seed of the space's own generator.

    >>> space = Waveform(max_seconds=1.0, seed=0)
    >>> space.sample() in space, np.zeros(16_001, np.float32) in space, np.zeros(10, np.float64) in space
    (True, False, False)
    """

    def __init__(self, max_seconds: float, *, seed: int | None = None) -> None:
        if max_seconds <= 0:
            raise ValueError(f"Waveform max_seconds must be > 0, got {max_seconds}")
        self.max_seconds = float(max_seconds)
        self.sample_rate = SAMPLE_RATE
        self.max_samples = round(self.max_seconds * SAMPLE_RATE)
        super().__init__(dtype=np.float32, seed=seed)

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        """Quiet noise of a random length (at most a quarter of the maximum)."""
        if mask is not None or probability is not None:
            raise NotImplementedError("Waveform.sample takes no mask or probability")
        n = int(self.np_random.integers(1, max(2, self.max_samples // 4)))
        return (0.01 * self.np_random.standard_normal(n)).astype(np.float32)

    def contains(self, x: Any) -> bool:
        return (
            isinstance(x, np.ndarray)
            and x.dtype == np.float32
            and x.ndim == 1
            and x.shape[0] <= self.max_samples
            and bool(np.all(np.abs(x) <= 1.0))
        )

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"Waveform(max_seconds={self.max_seconds})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Waveform) and other.max_seconds == self.max_seconds

    def __hash__(self) -> int:
        return hash(("Waveform", self.max_seconds))


_LLM_SPACES = (FreeText, Chat, Waveform)


def _batch(space: Space, n: int = 1) -> Tuple:
    # Independent copies with distinct seeds, so sampling the batch does not repeat one stream.
    batched = Tuple(tuple(deepcopy(space) for _ in range(n)))
    batched.seed([int(s) for s in deepcopy(space.np_random).integers(0, 2**31 - 1, n)])
    return batched


def _concatenate(space: Space, items: Iterable[Any], out: Any) -> tuple[Any, ...]:
    return tuple(items)


def _create_empty(space: Space, n: int = 1, fn: Any = np.zeros) -> tuple[Any, ...]:
    empty: Any = (
        "" if isinstance(space, FreeText) else () if isinstance(space, Chat) else np.zeros(0, np.float32)
    )
    return tuple(empty for _ in range(n))


for _space_type in _LLM_SPACES:
    batch_space.register(_space_type)(_batch)
    concatenate.register(_space_type)(_concatenate)
    create_empty_array.register(_space_type)(_create_empty)
