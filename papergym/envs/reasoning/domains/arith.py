"""Arith: one-step integer arithmetic sized for the tiny LM (a CPU-scale domain, not from a paper).

A tiny LM cannot learn the paper domains' problems on a CPU (three-digit sums, programs, unit
conversions), so reproductions whose mechanism needs a partly competent policy with a unique answer per
task (TTPO's majority vote over answers, training.md §4) use this one. Level 1 is a sum or difference of
two numbers in 0..9, level 2 a product of two numbers in 2..9, level 3 a two-digit number plus or minus a
one-digit one (all inferred sizes). The answer is the integer, checked exactly (as `math`'s checker does).
"""

from __future__ import annotations

import random

from papergym.envs.reasoning.answers import exact_number
from papergym.envs.reasoning.domains._common import check_difficulty, pick, rand_int
from papergym.envs.reasoning.problem import Problem

_FORMS = ("What is {}?", "Compute {}.", "Calculate {}.")


class ArithDomain:
    """One-step arithmetic problems (a `Domain`).

    Attributes:
        name: ``"arith"``.
        levels: 3.
        answer_format: ``"boxed"``.

    >>> import random
    >>> problem = DOMAIN.generate(random.Random(0), 2)
    >>> DOMAIN.is_correct(problem, problem.answer), DOMAIN.is_correct(problem, problem.answer + "0")
    (True, False)
    """

    name = "arith"
    levels = 3
    answer_format = "boxed"

    def generate(self, rng: random.Random, difficulty: int) -> Problem:
        """A problem at ``difficulty`` (1..3), drawn only from ``rng``.

        Raises:
            ValueError: ``difficulty`` is not in 1..3.
        """
        check_difficulty(difficulty, self.levels, self.name)
        if difficulty == 1:
            a, b = rand_int(rng, 0, 9), rand_int(rng, 0, 9)
            op = pick(rng, ("+", "-"))
        elif difficulty == 2:
            a, b, op = rand_int(rng, 2, 9), rand_int(rng, 2, 9), "×"
        else:
            a, b = rand_int(rng, 10, 99), rand_int(rng, 1, 9)
            op = pick(rng, ("+", "-"))
        value = a + b if op == "+" else a - b if op == "-" else a * b
        prompt = pick(rng, _FORMS).format(f"{a} {op} {b}")
        return Problem(self.name, prompt, str(value), difficulty, {"operator": op})

    def is_correct(self, problem: Problem, answer: str) -> bool:
        """Whether ``answer`` is exactly the gold integer (one number, nothing else)."""
        if not isinstance(answer, str):
            return False
        value = exact_number(answer.strip())
        return value is not None and value == exact_number(problem.answer)


DOMAIN = ArithDomain()
"""The arith domain instance."""
