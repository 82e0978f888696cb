"""Small pieces several reasoning domains share: the difficulty check and the pool of names."""

from __future__ import annotations

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
