"""What every reasoning domain promises (the `Domain` protocol), checked once for all five.

Each domain's own checks (recomputed answers, constraint checkers, tool calls, ...) stay in its
``test_domain_<name>.py``.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from papergym.envs.reasoning.domains import DOMAIN_MODULES, DOMAIN_NAMES, get_domain
from papergym.envs.reasoning.domains.agent import AgentDomain
from papergym.envs.reasoning.domains.code import CodeDomain
from papergym.envs.reasoning.domains.instruction import InstructionDomain
from papergym.envs.reasoning.domains.math import MathDomain
from papergym.envs.reasoning.domains.science import ScienceDomain
from papergym.envs.reasoning.problem import Problem
from tests.envs.reasoning._helpers import LEVELS, SEEDS, generated

# name -> (class, answer format); every domain has three levels.
EXPECTED = {
    "math": (MathDomain, "boxed"),
    "code": (CodeDomain, "tag"),
    "science": (ScienceDomain, "boxed"),
    "instruction": (InstructionDomain, "tag"),
    "agent": (AgentDomain, "tag"),
}
DOMAIN_LEVELS = [pytest.param(name, level, id=f"{name}-{level}") for name in DOMAIN_NAMES for level in LEVELS]
# At least this share of the 300 seeds gives a distinct prompt, in every domain and level (the
# domains used to set it each on its own; they all chose 0.9).
MIN_DISTINCT_PROMPTS = 0.9
# The domains whose answers are numbers, so text without a digit can never be right.
NUMERIC_DOMAINS = ("math", "science")
# The seeds (at every level) of the problems the property tests check garbage against: the ones each
# domain's own file used before these checks moved here (more problems, more time per example).
FIXED_SEEDS = {
    "math": (11, 12),
    "code": range(5),
    "science": range(4),
    "instruction": range(30),
    "agent": range(5),
}


def test_the_five_domains_are_listed() -> None:
    assert tuple(EXPECTED) == DOMAIN_NAMES
    with pytest.raises(ValueError, match="unknown reasoning domain"):
        get_domain("poetry")


@pytest.mark.parametrize("name", DOMAIN_NAMES)
def test_attributes(name: str) -> None:
    domain = get_domain(name)
    cls, answer_format = EXPECTED[name]
    assert isinstance(domain, cls)
    assert domain is importlib.import_module(DOMAIN_MODULES[name]).DOMAIN
    assert (domain.name, domain.levels, domain.answer_format) == (name, 3, answer_format)


@pytest.mark.parametrize(("name", "level"), DOMAIN_LEVELS)
def test_same_seed_same_problem_drawn_only_from_rng(name: str, level: int) -> None:
    domain = get_domain(name)
    first = generated(name, level)  # each from its own random.Random(seed)
    state = random.getstate()
    for seed in SEEDS:
        assert domain.generate(random.Random(seed), level) == first[seed]
    assert random.getstate() == state  # the global generator is untouched
    assert first[1] != first[2]


_IN_A_FRESH_PROCESS = """\
import random
from papergym.envs.reasoning.domains import DOMAIN_NAMES, get_domain
for name in DOMAIN_NAMES:
    domain = get_domain(name)
    print(name, repr([domain.generate(random.Random(s), d) for d in (1, 2, 3) for s in range(20)]))
"""


@pytest.fixture(scope="module")
def problems_in_a_fresh_process() -> dict[str, str]:
    """Each domain's repr'd problems (20 seeds per level) from a child with a fixed hash seed."""
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", _IN_A_FRESH_PROCESS], capture_output=True, text=True, env=env, check=True
    )
    return dict(line.split(" ", 1) for line in out.stdout.splitlines())


@pytest.mark.parametrize("name", DOMAIN_NAMES)
def test_same_problems_in_a_fresh_process_with_another_hash_seed(
    problems_in_a_fresh_process: dict[str, str], name: str
) -> None:
    here = [generated(name, level)[seed] for level in LEVELS for seed in range(20)]
    assert problems_in_a_fresh_process[name] == repr(here)


@pytest.mark.parametrize(("name", "level"), DOMAIN_LEVELS)
def test_gold_is_correct_and_fields_are_plain(name: str, level: int) -> None:
    domain = get_domain(name)
    for problem in generated(name, level):
        assert problem.domain == name and problem.difficulty == level
        assert isinstance(problem.prompt, str) and problem.prompt
        assert isinstance(problem.answer, str) and problem.answer
        assert json.loads(json.dumps(problem.data)) == problem.data
        assert domain.is_correct(problem, problem.answer), problem


@pytest.mark.parametrize(("name", "level"), DOMAIN_LEVELS)
def test_prompts_are_diverse(name: str, level: int) -> None:
    prompts = {problem.prompt for problem in generated(name, level)}
    assert len(prompts) >= MIN_DISTINCT_PROMPTS * len(SEEDS)


@pytest.mark.parametrize("name", DOMAIN_NAMES)
@pytest.mark.parametrize("difficulty", [0, 4, -1, True, False, 1.0, 1.5, 2.0, 3.0, "1", "2", "3", None])
def test_bad_difficulty_is_a_clear_error(name: str, difficulty: object) -> None:
    with pytest.raises(ValueError, match="difficulty"):
        get_domain(name).generate(random.Random(0), difficulty)  # type: ignore[arg-type]


def _fixed(name: str) -> list[Problem]:
    return [generated(name, level)[seed] for level in LEVELS for seed in FIXED_SEEDS[name]]


_ANY_TEXT = st.text() | st.binary().map(lambda b: b.decode("utf-8", "surrogateescape"))


@pytest.mark.parametrize("name", DOMAIN_NAMES)
@given(text=_ANY_TEXT)
def test_any_text_never_raises(name: str, text: str) -> None:
    domain = get_domain(name)
    for problem in _fixed(name):
        assert isinstance(domain.is_correct(problem, text), bool)


@pytest.mark.parametrize("name", NUMERIC_DOMAINS)
@given(text=st.text().filter(lambda t: not any(ch.isdigit() for ch in t)))
def test_text_without_digits_is_wrong(name: str, text: str) -> None:
    domain = get_domain(name)
    for problem in _fixed(name):
        assert domain.is_correct(problem, text) is False
