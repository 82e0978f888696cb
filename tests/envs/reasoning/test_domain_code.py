"""Tests of the code domain of Reasoning-v0 that go beyond the shared ones in test_domains_common.py."""

from __future__ import annotations

import contextlib
import io
import random
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from papergym.envs.reasoning.domains import code as code_module
from papergym.envs.reasoning.domains.code import DOMAIN, TEMPLATES, normalize_output
from papergym.envs.reasoning.problem import Problem
from tests.envs.reasoning._helpers import LEVELS, SEEDS, generated


def _run(program: str) -> str:
    """What the real interpreter prints for a generated program (our own generator's text)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(program, {"__name__": "generated"})
    return buffer.getvalue()


@pytest.mark.parametrize("level", LEVELS)
def test_gold_is_what_python_prints(level: int) -> None:
    for problem in generated("code", level):
        program = problem.data["program"]
        assert f"```python\n{program}\n```" in problem.prompt
        printed = _run(program)
        assert normalize_output(printed) == problem.answer, program
        assert DOMAIN.is_correct(problem, printed)  # the raw output, final newline and all


def test_level_features() -> None:
    level1 = "\n".join(p.data["program"] for p in generated("code", 1))
    assert not re.search(r"\b(for|while|if|def)\b", level1)
    for problem in generated("code", 2):
        program = problem.data["program"]
        assert re.search(r"^(for|while) ", program, re.M) and "    if " in program
    level3 = "\n".join(p.data["program"] for p in generated("code", 3))
    for feature in (
        "def ",
        "return ",
        ".append(",
        "sum(",
        "len(",
        ".join(",
        ".upper()",
        "reversed(",
        "[::-1]",
    ):
        assert feature in level3, feature
    assert re.search(r"^\s+for .*\n\s+for ", level3, re.M)  # nested loops
    assert re.search(r"-\w+ // \(-\d\)|-\d+ // \d", level3)  # floor division of negatives
    # some outputs hold negative results of // and %, where C-style truncation would differ
    assert any(
        "-" in p.answer for p in generated("code", 3) if p.data["family"] in ("floor_mod_list", "digits")
    )


@pytest.mark.parametrize("level", LEVELS)
def test_wrong_outputs_are_rejected(level: int) -> None:
    for problem in generated("code", level):
        gold = problem.answer
        first_number = re.search(r"-?\d+", gold)
        wrongs = [
            "",
            "wrong",
            gold + "\nextra line",
            gold.replace("\n", " ") + " 0",
            " ".join(gold.split()[::-1]) + "x",
        ]
        if first_number:
            bumped = str(int(first_number.group()) + 1)
            wrongs.append(gold[: first_number.start()] + bumped + gold[first_number.end() :])
        if "\n" in gold:
            wrongs.append(gold.rsplit("\n", 1)[0])  # a line missing
        for wrong in wrongs:
            assert not DOMAIN.is_correct(problem, wrong), (gold, wrong)


def test_whitespace_normalisation() -> None:
    problem = Problem("code", "p", "1 2\n[3, 4]", 2)
    for text in ("1 2\n[3, 4]", "1 2  \n[3, 4]\n", "\n1 2\r\n[3, 4]\r\n\n", "1 2\t\n[3, 4]   "):
        assert DOMAIN.is_correct(problem, text), repr(text)
    for text in ("1 2 [3, 4]", "1  2\n[3, 4]", "1 2\n\n[3, 4]", "1 2\n[3,4]", "1 2\n [3, 4]"):
        assert not DOMAIN.is_correct(problem, text), repr(text)


@pytest.mark.parametrize("level", LEVELS)
def test_programs_are_diverse(level: int) -> None:
    assert len({problem.data["program"] for problem in generated("code", level)}) >= 0.9 * len(SEEDS)


@pytest.mark.parametrize("level", LEVELS)
def test_every_family_is_drawn(level: int) -> None:
    assert {problem.data["family"] for problem in generated("code", level)} == set(TEMPLATES[level])


def test_library_code_never_executes_text() -> None:
    source = Path(code_module.__file__).read_text()
    assert not re.search(r"\b(exec|eval|compile)\(", source)


# Problems whose output spans several lines: no literal in any source file spells one of them.
_FIXED = [
    p
    for p in (DOMAIN.generate(random.Random(seed), level) for level in LEVELS for seed in range(60))
    if p.answer.count("\n") >= 1 and len(p.answer) >= 10
][:12]


@given(st.text())
def test_garbage_never_raises_and_is_wrong(text: str) -> None:
    assert len(_FIXED) == 12
    for problem in _FIXED:
        assert DOMAIN.is_correct(problem, text) is False
