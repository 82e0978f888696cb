"""Countdown-lite: combine the given small numbers with + − × ÷ to reach a target.

The task Qiu et al. train ES on (Countdown; papers/training.md §5.3) and the CPU-scale setting
training.md §5.5 proposes for ES vs GRPO, shrunk to what a tiny LM can learn (inferred sizes): level 1
gives two numbers in 1..9, level 2 three numbers in 1..9, level 3 four numbers in 1..12. The target is
the value of an expression drawn over all the numbers, so every task has a solution, and most have
several (``2 + 6`` and ``6 + 2``, ``3 × 4 − 4`` and ``4 × 3 − 4``, different groupings): the setting where
sampling diversity can matter for pass@k.

Checked as Countdown's verifier checks it (countdown_task.py of Qiu et al.'s code): the answer must be an
arithmetic expression using each given number exactly once (no other numbers) and evaluate to the
target exactly. The expression is parsed with `ast` and evaluated here on exact fractions over its
number and operator nodes only; nothing is ever ``eval``'d.
"""

from __future__ import annotations

import ast
import random
from collections import Counter
from fractions import Fraction

from papergym.envs.reasoning.domains._common import check_difficulty, pick, rand_int
from papergym.envs.reasoning.problem import Problem

_SIZES = {1: (2, 9), 2: (3, 9), 3: (4, 12)}
"""Per level: how many numbers are given and their largest value (inferred, sized for a tiny LM)."""
_OPS: dict[str, type] = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div}
_MAX_ANSWER_CHARS = 200
"""Longer answers are rejected before parsing (a real expression over four numbers is far shorter)."""


def _combine(rng: random.Random, numbers: list[int]) -> tuple[str, Fraction] | None:
    """A random expression over ``numbers`` (each once, in a random order) and its exact value; None when
    a drawn division is by zero or the value is not a whole number (then the caller draws again)."""
    terms: list[tuple[str, Fraction]] = [(str(n), Fraction(n)) for n in numbers]
    rng.shuffle(terms)
    while len(terms) > 1:
        (left, lv), (right, rv) = terms.pop(), terms.pop()
        op = pick(rng, tuple(_OPS))
        if op == "/" and rv == 0:
            return None
        value = _apply(_OPS[op], lv, rv)
        wrap = len(terms) > 0  # inner results are parenthesised; the outermost is not
        text = f"{left} {op} {right}"
        terms.insert(rng.randrange(len(terms) + 1), (f"({text})" if wrap else text, value))
    text, value = terms[0]
    if value.denominator != 1 or value < 0:
        return None
    return text, value


def _value(node: ast.AST, used: list[int]) -> Fraction | None:
    """The exact value of an expression node over integer literals and + − × ÷ (None: anything else)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        used.append(node.value)
        return Fraction(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS.values():
        left, right = _value(node.left, used), _value(node.right, used)
        if left is None or right is None or (isinstance(node.op, ast.Div) and right == 0):
            return None
        return _apply(type(node.op), left, right)
    return None


def _apply(op: type, left: Fraction, right: Fraction) -> Fraction:
    if op is ast.Add:
        return left + right
    if op is ast.Sub:
        return left - right
    if op is ast.Mult:
        return left * right
    return left / right


def evaluate(expression: str) -> tuple[Fraction, list[int]] | None:
    """``(value, numbers used)`` of an arithmetic expression, or None when it is not one.

    ``×``, ``÷`` and ``−`` are read as ``*``, ``/`` and ``-``; a trailing ``= value`` is allowed when it
    states exactly the expression's value (anything else after ``=`` rejects the answer).

    >>> evaluate("(3 + 5) × 2")
    (Fraction(16, 1), [3, 5, 2])
    >>> evaluate("__import__('os')") is None, evaluate("3 ** 2") is None
    (True, True)
    """
    text = expression.strip().replace("×", "*").replace("÷", "/").replace("−", "-")
    if not text or len(text) > _MAX_ANSWER_CHARS:
        return None
    text, _, stated = text.partition("=")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    used: list[int] = []
    value = _value(tree.body, used)
    if value is None or (stated and stated.strip() != str(value)):  # "= 9" must state the value itself
        return None
    return value, used


class CountdownDomain:
    """Countdown-lite problems (a `Domain`).

    Attributes:
        name: ``"countdown"``.
        levels: 3.
        answer_format: ``"tag"``: the expression goes between ``<answer>`` and ``</answer>``.

    >>> import random
    >>> problem = DOMAIN.generate(random.Random(0), 1)
    >>> DOMAIN.is_correct(problem, problem.answer), DOMAIN.is_correct(problem, problem.data["target"])
    (True, False)
    """

    name = "countdown"
    levels = 3
    answer_format = "tag"

    def generate(self, rng: random.Random, difficulty: int) -> Problem:
        """A problem at ``difficulty`` (1..3), drawn only from ``rng``.

        Raises:
            ValueError: ``difficulty`` is not in 1..3.
        """
        check_difficulty(difficulty, self.levels, self.name)
        count, largest = _SIZES[difficulty]
        while True:
            numbers = [rand_int(rng, 1, largest) for _ in range(count)]
            drawn = _combine(rng, numbers)
            if drawn is not None:
                break
        expression, value = drawn
        listed = ", ".join(str(n) for n in numbers)
        prompt = (
            f"Using the numbers {listed}, each exactly once, and the operations + - * /, "
            f"write an expression that equals {value.numerator}."
        )
        data = {"numbers": numbers, "target": str(value.numerator)}
        return Problem(self.name, prompt, expression, difficulty, data)

    def is_correct(self, problem: Problem, answer: str) -> bool:
        """Whether ``answer`` uses exactly the given numbers, each once, and equals the target."""
        if not isinstance(answer, str):
            return False
        result = evaluate(answer)
        if result is None:
            return False
        value, used = result
        return Counter(used) == Counter(problem.data["numbers"]) and value == int(problem.data["target"])


DOMAIN = CountdownDomain()
"""The countdown domain instance."""
