"""Task records, seeded random-access task generation, and fixed train/test splits.

Task ``i`` of a split at a difficulty is a pure function of ``(family, split, difficulty, i)``: the
generator receives a ``random.Random`` seeded from a stable hash of those four values, so the same
task comes out on every machine and in every process (Python's ``hash()`` is salted per process
and is never used). Train and test draw from disjoint seed streams.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

import numpy as np

SPLITS: tuple[str, ...] = ("train", "test")
DEFAULT_SPLIT_SIZES: Mapping[str, int] = {"train": 1_000_000, "test": 1_000}
"""Tasks per split and difficulty: train is effectively unbounded, test is a fixed benchmark."""

P = TypeVar("P")
_TASK_ID = re.compile(r"^(?P<family>[A-Za-z0-9_.-]+)/(?P<split>[a-z]+)/L(?P<difficulty>\d+)/(?P<index>\d+)$")


@dataclass(slots=True)  # not frozen: a frozen dataclass costs ~2 µs to build, on the reset path
class Task(Generic[P]):
    """One task.

    Attributes:
        task_id: ``"{family}/{split}/L{difficulty}/{index}"``; ``reset(options={"task_id": ...})`` takes it.
        family: the generator's name (e.g. ``"math"``).
        split: ``"train"`` or ``"test"``.
        difficulty: 1 = easiest.
        index: position within the split.
        payload: what the env needs to run the task (a problem, a scenario, ...).
    """

    task_id: str
    family: str
    split: str
    difficulty: int
    index: int
    payload: P


def stable_seed(*parts: str | int) -> int:
    """A 64-bit seed from its parts, identical on every machine and in every process."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def parse_task_id(task_id: str) -> tuple[str, str, int, int]:
    """Split a task id into ``(family, split, difficulty, index)``.

    Raises:
        ValueError: the id is not of the form ``family/split/L<difficulty>/<index>``.
    """
    match = _TASK_ID.match(task_id) if isinstance(task_id, str) else None
    if match is None:
        raise ValueError(f"task_id {task_id!r} is not of the form 'family/split/L<difficulty>/<index>'")
    return match["family"], match["split"], int(match["difficulty"]), int(match["index"])


class TaskGenerator(Generic[P]):
    """Random access to the seeded tasks of one family.

    Args:
        family: the family's name; part of every task id and of every seed.
        generate: ``generate(rng, difficulty) -> payload``, drawing only from ``rng``.
        levels: difficulty levels ``1..levels``.
        split_sizes: tasks per split and difficulty.

    >>> gen = TaskGenerator("dice", lambda rng, d: rng.randint(1, 6 * d), levels=2)
    >>> gen.task("test", 7, difficulty=2) == gen.task("test", 7, difficulty=2)
    True
    >>> gen.task("test", 7, difficulty=2).task_id
    'dice/test/L2/7'
    """

    def __init__(
        self,
        family: str,
        generate: Callable[[random.Random, int], P],
        *,
        levels: int,
        split_sizes: Mapping[str, int] = DEFAULT_SPLIT_SIZES,
    ) -> None:
        if levels < 1:
            raise ValueError(f"levels must be >= 1, got {levels}")
        if not split_sizes or any(n < 1 for n in split_sizes.values()):
            raise ValueError(f"split_sizes must name at least one split, each of size >= 1: {split_sizes}")
        self.family = family
        self.levels = levels
        self.split_sizes = dict(split_sizes)
        self._generate = generate
        self._rng = random.Random()  # reseeded per task; one instance avoids an allocation per reset

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(self.split_sizes)

    def check(self, split: str, index: int, difficulty: int) -> None:
        """Raise ``ValueError`` naming the fix when the coordinates are out of range."""
        if split not in self.split_sizes:
            raise ValueError(f"unknown split {split!r} for {self.family!r}; choose one of {self.splits}")
        if (
            type(difficulty) is not int and not isinstance(difficulty, np.integer)
        ) or not 1 <= difficulty <= self.levels:
            raise ValueError(f"difficulty must be an int in 1..{self.levels}, got {difficulty!r}")
        if (
            type(index) is not int and not isinstance(index, np.integer)
        ) or not 0 <= index < self.split_sizes[split]:
            raise ValueError(f"task index must be in 0..{self.split_sizes[split] - 1} for split {split!r}")

    def task(self, split: str, index: int, difficulty: int) -> Task[P]:
        """Task ``index`` of ``split`` at ``difficulty`` (the same on every machine)."""
        self.check(split, index, difficulty)
        self._rng.seed(_base_seed(self.family, split, difficulty) + int(index))
        payload = self._generate(self._rng, difficulty)
        return Task(
            f"{self.family}/{split}/L{difficulty}/{index}", self.family, split, difficulty, index, payload
        )

    def from_id(self, task_id: str) -> Task[P]:
        """The task a task id names."""
        family, split, difficulty, index = parse_task_id(task_id)
        if family != self.family:
            raise ValueError(f"task_id {task_id!r} belongs to {family!r}, not {self.family!r}")
        return self.task(split, index, difficulty)

    def sample(self, np_random: np.random.Generator, split: str, difficulty: int | None = None) -> Task[P]:
        """A task drawn with ``np_random`` (uniform index; uniform level when ``difficulty`` is None)."""
        if split not in self.split_sizes:
            raise ValueError(f"unknown split {split!r} for {self.family!r}; choose one of {self.splits}")
        size = self.split_sizes[split]
        if difficulty is None:  # one draw for both coordinates: reset is on the hot path
            difficulty, index = divmod(int(np_random.integers(self.levels * size)), size)
            return self.task(split, index, difficulty + 1)
        return self.task(split, int(np_random.integers(size)), difficulty)


@lru_cache(maxsize=4096)
def _base_seed(family: str, split: str, difficulty: int) -> int:
    # Seeds of one stream are base + index; MT19937's init_by_array decorrelates nearby seeds.
    return stable_seed("papergym-task", family, split, difficulty) & ((1 << 62) - 1)


def task_options(options: Mapping[str, Any] | None, *, allowed: frozenset[str]) -> dict[str, Any]:
    """Validate ``reset`` options: unknown keys raise a ``ValueError`` listing the accepted ones."""
    if not options:
        return {}
    options = dict(options)
    unknown = set(options) - allowed
    if unknown:
        raise ValueError(f"unknown reset option(s) {sorted(unknown)}; accepted: {sorted(allowed)}")
    return options
