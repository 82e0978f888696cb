"""Small pieces several reasoning domains share: fast seeded draws, names, the difficulty check."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

NAMES: tuple[str, ...] = (
    "Ava", "Ben", "Chloe", "Diego", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jamal", "Kira", "Liam",
    "Maya", "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sam", "Tariq", "Uma", "Victor", "Wen", "Yusuf",
    "Zoe", "Amara", "Bruno", "Leila", "Mateo", "Sofia",
)  # fmt: skip
"""First names for word problems; varied so that prompts differ beyond their numbers."""


def check_difficulty(difficulty: int, levels: int, domain: str) -> None:
    """Raise a ValueError naming the fix when ``difficulty`` is not one of ``1..levels``.

    Raises:
        ValueError: ``difficulty`` is not an int in ``1..levels``.
    """
    # bool is an int subclass; True would silently mean level 1.
    if isinstance(difficulty, bool) or not isinstance(difficulty, int) or not 1 <= difficulty <= levels:
        raise ValueError(f"{domain} difficulty must be an int in 1..{levels}, got {difficulty!r}")


def infix(left: str, left_prec: int, op: str, right: str, right_prec: int, prec: int) -> str:
    """The text of ``left op right`` with exactly the parentheses a left-associative reader needs.

    A left operand binding less tightly than ``op`` is wrapped; a right operand binding no more
    tightly is wrapped too, which keeps ``a - (b - c)`` and ``a * (b // c)`` unambiguous.

    >>> infix("a + b", 1, "*", "c", 3, 2), infix("a", 3, "-", "b - c", 1, 1)
    ('(a + b) * c', 'a - (b - c)')
    >>> infix("a", 3, "+", "b * c", 2, 1)
    'a + b * c'
    """
    if left_prec < prec:
        left = f"({left})"
    if right_prec <= prec:
        right = f"({right})"
    return f"{left} {op} {right}"


# Draws built on ``rng.random()`` alone. They are about three times faster than ``randint`` and
# ``choice`` (whose rejection sampling dominates a generator's time budget), and just as
# reproducible: ``random()`` is the same 53-bit Mersenne Twister output on every platform, and
# scaling it is one correctly rounded multiplication.


def rand_below(rng: random.Random, n: int) -> int:
    """An int in ``0..n-1`` (``n >= 1``), uniform up to the 2**-53 granularity of ``random()``."""
    return int(rng.random() * n)


def rand_int(rng: random.Random, low: int, high: int) -> int:
    """An int in ``low..high`` inclusive, like ``rng.randint``."""
    return low + int(rng.random() * (high - low + 1))


def pick(rng: random.Random, items: Sequence[T]) -> T:
    """One element of a non-empty sequence, like ``rng.choice``."""
    return items[int(rng.random() * len(items))]


def pick_distinct(rng: random.Random, items: Sequence[T], count: int) -> list[T]:
    """``count`` distinct elements in draw order, like ``rng.sample`` (``count`` well below the size).

    >>> import random
    >>> picked = pick_distinct(random.Random(0), "abcdef", 3)
    >>> len(set(picked)) == 3 and set(picked) <= set("abcdef")
    True
    """
    chosen: list[T] = []
    while len(chosen) < count:
        item = items[int(rng.random() * len(items))]
        if item not in chosen:
            chosen.append(item)
    return chosen
