"""The record every reasoning domain generates, and the protocol a domain follows."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass(slots=True)  # not frozen: a frozen dataclass costs ~2 µs to build, on the reset path
class Problem:
    """One verifiable problem.

    Attributes:
        domain: the domain's name ("math", "code", ...).
        prompt: the question shown to the model. The env adds the answer-format instruction.
        answer: the canonical gold answer, exactly what the oracle writes inside ``\\boxed{}``
            (or ``<answer>`` tags). ``Domain.is_correct(problem, problem.answer)`` is always True.
        difficulty: the level it was generated at, 1 = easiest.
        data: domain-specific checker data (constraints, the expected tool call, ...): plain
            JSON-like values only, so problems pickle and compare.
    """

    domain: str
    prompt: str
    answer: str
    difficulty: int
    data: Mapping[str, Any] = field(default_factory=dict)


class Domain(Protocol):
    """A generator and checker of one domain's problems.

    ``generate`` must be a pure function of ``rng``'s state and ``difficulty``: the same seed gives
    the same problem on every machine. It draws only from ``rng`` (never the global ``random``).
    ``is_correct`` never raises, whatever the answer string holds.
    """

    name: str
    levels: int
    """Difficulty levels 1..levels."""
    answer_format: Literal["boxed", "tag"]
    """Where the answer goes: ``\\boxed{...}`` or ``<answer>...</answer>``."""

    def generate(self, rng: random.Random, difficulty: int) -> Problem: ...

    def is_correct(self, problem: Problem, answer: str) -> bool: ...
