"""Tests of the math domain of Reasoning-v0 that go beyond the shared ones in test_domains_common.py."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from papergym.envs.reasoning.answers import parse_number
from papergym.envs.reasoning.domains.math import DOMAIN, TEMPLATES, format_ratio
from papergym.envs.reasoning.problem import Problem
from tests.envs.reasoning._helpers import LEVELS, generated


@pytest.mark.parametrize("level", LEVELS)
def test_answers_are_exact_and_small(level: int) -> None:
    for problem in generated("math", level):
        answer = problem.answer
        # an integer, a terminating decimal without trailing zeros, or a reduced fraction
        assert re.fullmatch(r"-?\d+(\.\d*[1-9])?|-?\d+/\d+", answer), answer
        if "/" in answer:
            num, den = map(int, answer.split("/"))
            assert Fraction(num, den).denominator == den > 1
        # below 1e5, so the off-by-one test below is beyond numbers_match's relative tolerance
        assert abs(parse_number(answer)) < 1e5


@pytest.mark.parametrize("level", LEVELS)
def test_perturbed_answers_are_rejected(level: int) -> None:
    for problem in generated("math", level):
        gold = Fraction(problem.answer)
        for wrong in (gold + 1, gold - 1, gold + 7, gold + Fraction(1, 100), gold - Fraction(1, 100)):
            text = str(wrong) if wrong.denominator != 1 else str(wrong.numerator)
            assert not DOMAIN.is_correct(problem, text), (problem.answer, text)
        for junk in ("", "wrong", "\\boxed{}", "x = 3", problem.answer + "0 apples extra 1"):
            assert not DOMAIN.is_correct(problem, junk)


def test_accepted_spellings() -> None:
    problem = Problem("math", "p", "4.5", 3)
    for text in ("4.5", "4.50", "$4.50", "\\$4.50", "9/2", "\\frac{9}{2}", " 4.5 ", "4.5%", "4.5\\%"):
        assert DOMAIN.is_correct(problem, text), text
    fraction = Problem("math", "p", "28/11", 3)
    assert DOMAIN.is_correct(fraction, "\\frac{28}{11}") and DOMAIN.is_correct(fraction, "56/22")
    assert not DOMAIN.is_correct(fraction, "2.5")


def test_level1_and_expression_answers_match_python_arithmetic() -> None:
    # an independent evaluation of the printed expression (test code, our own generator's text)
    checked = 0
    for level in (1, 2):
        for problem in generated("math", level):
            if problem.data["template"] not in ("two_operand", "expression"):
                continue
            match = re.search(r"(-?[\d(][\d\s+\-×÷()]*[\d)])[.?]$", problem.prompt)
            assert match, problem.prompt
            value = eval(match.group(1).replace("×", "*").replace("÷", "/"))
            assert value == int(problem.answer), problem.prompt
            checked += 1
    assert checked > 400


F = Fraction
# Each word-problem template's answer recomputed from the numbers its prompt shows, in order.
_RECOMPUTE = {
    "shop_change": lambda n, p, bill: bill - n * p,
    "shop_total": lambda n1, p1, n2, p2: n1 * p1 + n2 * p2,
    "ages_sum": lambda gap, age, later: 2 * age + gap + 2 * later,
    "ages_times": lambda times, age, later: times * age + later,
    "ages_past": lambda later, future, ago: future - later - ago,
    "travel": lambda v1, t1, v2, t2: v1 * t1 + v2 * t2,
    "typing": lambda rate, words: words / rate,
    "share": lambda have, each, friends: have - each * friends,
    "savings": lambda weekly, weeks, spent: weekly * weeks - spent,
    "buses": lambda count, seats: -(-count // seats),
    "recipe": lambda cups, batch, wanted: cups * wanted / batch,
    "temperature": lambda start, rise, hours, drop: start + rise * hours - drop,
    "reading": lambda pages, per_day, days: pages - per_day * days,
    "unit_price": lambda count, total, wanted: total / count * wanted,
    "fence": lambda length, width, cost: 2 * (length + width) * cost,
    "discount_tax": lambda price, off, tax: price * (1 - off / 100) * (1 + tax / 100),
    "original_price": lambda off, sale: sale / (1 - off / 100),
    "percent_of_percent": lambda members, a, b: members * a * b / 10000,
    "fraction_left": lambda total, p1, q1, p2, q2: total * (1 - p1 / q1) * (1 - p2 / q2),
    "fraction_sum": lambda a, b, c, d: a / b + c / d,
    "average_needed": lambda *n: n[-2] * n[-1] - sum(n[: int(n[-3])]),
    "class_average": lambda n1, a1, n2, a2: (n1 * a1 + n2 * a2) / (n1 + n2),
    "work_together": lambda a, b: 1 / (1 / a + 1 / b),
    "fill_drain": lambda fill, drain: 1 / (1 / fill - 1 / drain),
    "trip_average_speed": lambda d1, v1, d2, v2: (d1 + d2) / (d1 / v1 + d2 / v2),
    "trains_meet": lambda distance, v1, v2: 60 * distance / (v1 + v2),
    "simple_interest": lambda principal, rate, years: principal * (1 + rate * years / 100),
    "mixture": lambda x, a, y, b: (x * a + y * b) / (x + y),
    "ratio_split": lambda total, p, q, one, r: total * p / (p + q) * (1 - one / r),
    "profit": lambda count, cost, sold, price: sold * price + (count - sold) * price / 2 - count * cost,
    "speed_scale": lambda km, minutes, hours: km / minutes * 60 * hours,
}


def test_word_problem_answers_follow_from_their_prompts() -> None:
    assert set(_RECOMPUTE) == set(TEMPLATES[2][1:]) | set(TEMPLATES[3])
    checked = set()
    for level in (2, 3):
        for problem in generated("math", level):
            template = problem.data["template"]
            if template == "expression":
                continue
            numbers = [F(x) for x in re.findall(r"-?\d+(?:\.\d+)?", problem.prompt)]
            assert _RECOMPUTE[template](*numbers) == F(problem.answer), problem.prompt
            checked.add(template)
    assert checked == set(_RECOMPUTE)


@pytest.mark.parametrize("level", LEVELS)
def test_every_template_is_drawn(level: int) -> None:
    assert {problem.data["template"] for problem in generated("math", level)} == set(TEMPLATES[level])
    assert len(TEMPLATES[2]) - 1 >= 12 and len(TEMPLATES[3]) >= 12  # word-problem templates


def test_format_ratio() -> None:
    cases = {(6, 4): "1.5", (-7, 28): "-0.25", (10, 12): "5/6", (450, 100): "4.5", (3, -8): "-0.375"}
    for (num, den), text in cases.items():
        assert format_ratio(num, den) == text
        assert Fraction(text) == Fraction(num, den)
    assert format_ratio(0, 7) == "0" and format_ratio(-4, 2) == "-2" and format_ratio(1, 3) == "1/3"
