"""Tests of the agent (tool choice) domain of Reasoning-v0 that go beyond the shared ones in
test_domains_common.py."""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from papergym.core.tools import ToolCall, parse_tool_calls, validate_call
from papergym.envs.reasoning.domains.agent import _SIMILAR, DOMAIN, TOOLS
from papergym.envs.reasoning.problem import Problem
from tests.envs.reasoning._helpers import LEVELS, generated

ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def _problem(seed: int, level: int) -> Problem:
    return DOMAIN.generate(random.Random(seed), level)


def _request(problem: Problem) -> str:
    return problem.prompt.split("\nRequest: ", 1)[1].split("\n", 1)[0]


def _shown_tools(problem: Problem) -> list[str]:
    return re.findall(r'^\{"name": "(\w+)"', problem.prompt, flags=re.MULTILINE)


def _answer(name: str, arguments: dict[str, Any]) -> str:
    return ToolCall(name, arguments).format("python")


def _gold(problem: Problem) -> tuple[str, dict[str, Any]]:
    return problem.data["name"], dict(problem.data["arguments"])


def test_tool_count() -> None:
    assert 15 <= len(TOOLS) <= 25


@pytest.mark.parametrize("level", LEVELS)
def test_gold_is_correct_in_both_styles(level: int) -> None:
    for problem in generated("agent", level):
        name, arguments = _gold(problem)
        assert problem.answer == _answer(name, arguments)
        assert DOMAIN.is_correct(problem, ToolCall(name, arguments).format("tag")), problem
        assert DOMAIN.is_correct(problem, f"\n```python\n{problem.answer}\n```\n")
        assert validate_call(ToolCall(name, arguments), TOOLS) is None  # the gold fits its schema


@pytest.mark.parametrize("level", LEVELS)
def test_problem_shape(level: int) -> None:
    for problem in generated("agent", level):
        name, arguments = _gold(problem)
        shown = _shown_tools(problem)
        assert len(shown) == (2, 4, 6)[level - 1] and len(set(shown)) == len(shown)
        assert name in shown
        assert _request(problem)  # a non-empty request follows the schemas
        assert all(isinstance(v, (str, int, float)) for v in arguments.values())


def test_level_one_states_every_value_verbatim() -> None:
    for problem in generated("agent", 1):
        request = _request(problem)
        for value in problem.data["arguments"].values():
            said = value if isinstance(value, str) else (str(value), f"{value:g}")
            assert (said in request) if isinstance(said, str) else any(s in request for s in said), problem


def test_levels_add_arguments_and_normalisation() -> None:
    required = {name: set(tool.parameters["required"]) for name, tool in TOOLS.items()}
    optional_used = {level: 0 for level in LEVELS}
    for level in LEVELS:
        for problem in generated("agent", level):
            name, arguments = _gold(problem)
            extra = set(arguments) - required[name]
            if level == 1:
                assert not extra  # level 1 states required arguments only
            optional_used[level] += bool(extra)
            if level == 3:  # dates are stated in words, never in the schema's format
                assert not ISO_DATE.search(_request(problem))
    assert optional_used[2] > 30 and optional_used[3] > optional_used[2]


@pytest.mark.parametrize("level", [2, 3])
def test_distractors_are_similar_tools_above_level_one(level: int) -> None:
    with_similar = 0
    for problem in generated("agent", level):
        name = problem.data["name"]
        similar = set(_SIMILAR[name])
        assert similar <= set(_shown_tools(problem))  # every tool of the same family is a distractor
        with_similar += bool(similar)
        assert "convert_units" in _SIMILAR["convert_currency"]
    assert with_similar > 250  # nearly every tool has a look-alike


def test_level_one_distractor_is_unrelated() -> None:
    for problem in generated("agent", 1):
        (other,) = (n for n in _shown_tools(problem) if n != problem.data["name"])
        assert other not in _SIMILAR[problem.data["name"]]


@pytest.mark.parametrize("level", LEVELS)
def test_every_tool_is_asked_for_within_300_seeds(level: int) -> None:
    names = Counter(p.data["name"] for p in generated("agent", level))
    assert len(names) == len(TOOLS)


def test_every_tool_is_asked_for_at_every_level() -> None:
    for level in LEVELS:
        asked = {_problem(seed, level).data["name"] for seed in range(600)}
        assert asked == set(TOOLS)


def _first(level: int, predicate: Any) -> Problem:
    for seed in range(2000):
        problem = _problem(seed, level)
        if predicate(problem):
            return problem
    raise AssertionError("no such problem")


def test_wrong_name_value_missing_and_extra_are_rejected() -> None:
    problem = _first(2, lambda p: len(p.data["arguments"]) >= 2)
    name, arguments = _gold(problem)
    other = next(n for n in TOOLS if n != name)
    assert not DOMAIN.is_correct(problem, _answer(other, arguments))
    key = next(iter(arguments))
    value = arguments[key]
    wrong = value + "x" if isinstance(value, str) else value + 1
    assert not DOMAIN.is_correct(problem, _answer(name, {**arguments, key: wrong}))
    assert not DOMAIN.is_correct(problem, _answer(name, {k: v for k, v in arguments.items() if k != key}))
    assert not DOMAIN.is_correct(problem, _answer(name, {**arguments, "bogus": 1}))
    assert not DOMAIN.is_correct(problem, problem.answer + "\n" + problem.answer)  # two calls
    assert not DOMAIN.is_correct(problem, "")


def test_strings_ignore_case_and_numbers_compare_numerically() -> None:
    problem = _first(1, lambda p: any(isinstance(v, str) for v in p.data["arguments"].values()))
    name, arguments = _gold(problem)
    shouted = {k: f"  {v.upper()} " if isinstance(v, str) else v for k, v in arguments.items()}
    assert DOMAIN.is_correct(problem, _answer(name, shouted))
    problem = _first(1, lambda p: p.data["name"] == "set_timer")
    minutes = problem.data["arguments"]["minutes"]
    assert DOMAIN.is_correct(problem, f"set_timer(minutes={float(minutes)})")
    assert DOMAIN.is_correct(problem, f"set_timer(minutes={minutes * (1 + 1e-8)})")
    assert not DOMAIN.is_correct(problem, f"set_timer(minutes={minutes * 1.01})")
    assert not DOMAIN.is_correct(problem, f"set_timer(minutes='{minutes}')")  # a string is not a number


def test_optional_arguments_and_defaults() -> None:
    problem = _first(1, lambda p: p.data["name"] == "get_current_weather")
    city = problem.data["arguments"]["city"]
    # The gold omits unit: stating its default is the same call, another value is not.
    assert DOMAIN.is_correct(problem, f"get_current_weather(city={city!r}, unit='celsius')")
    assert not DOMAIN.is_correct(problem, f"get_current_weather(city={city!r}, unit='fahrenheit')")
    problem = _first(2, lambda p: p.data["arguments"].get("unit") == "celsius")
    city = problem.data["arguments"]["city"]
    name = problem.data["name"]
    rest = {k: v for k, v in problem.data["arguments"].items() if k != "unit"}
    # The request stated the unit, so the answer must state it too, even though it is the default.
    assert not DOMAIN.is_correct(problem, _answer(name, rest))
    assert DOMAIN.is_correct(problem, _answer(name, {**rest, "unit": "Celsius"}))
    assert city in problem.prompt


def test_malformed_problem_data_is_false_not_an_error() -> None:
    problem = Problem("agent", "p", "f(x=1)", 1, {})
    assert DOMAIN.is_correct(problem, "f(x=1)") is False
    problem = Problem("agent", "p", "f(x=1)", 1, {"name": "f", "arguments": "x"})
    assert DOMAIN.is_correct(problem, "f(x=1)") is False
    assert DOMAIN.is_correct(_problem(0, 1), None) is False  # type: ignore[arg-type]


GOLD = [_problem(seed, level) for level in LEVELS for seed in range(5)]


@settings(max_examples=300)
@given(st.sampled_from(GOLD), st.text() | st.binary().map(lambda b: b.decode("utf-8", "surrogateescape")))
def test_garbage_answers_are_false_and_never_raise(problem: Problem, answer: str) -> None:
    assert DOMAIN.is_correct(problem, answer) is (answer.strip() == problem.answer)


@settings(max_examples=200)
@given(
    st.sampled_from(GOLD),
    st.sampled_from(["", " x", "(", ")", "=", "'", '"', "\x00", "\ud800", "<tool_call>", "\n", "**{}"]),
    st.integers(min_value=0, max_value=200),
)
def test_corrupted_gold_never_raises(problem: Problem, junk: str, position: int) -> None:
    answer = problem.answer[:position] + junk + problem.answer[position:]
    result = DOMAIN.is_correct(problem, answer)
    parsed = parse_tool_calls(answer)
    if not parsed.ok or len(parsed.calls) != 1:
        assert result is False
    elif result:
        assert parsed.calls[0].name == problem.data["name"]
