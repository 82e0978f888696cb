from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from papergym.envs.reasoning.domains import code as code_module
from papergym.envs.reasoning.domains.code import DOMAIN, TEMPLATES, CodeDomain, normalize_output
from papergym.envs.reasoning.problem import Problem

SEEDS = range(300)
LEVELS = (1, 2, 3)


@pytest.fixture(scope="module")
def problems() -> dict[int, list[Problem]]:
    return {level: [DOMAIN.generate(random.Random(seed), level) for seed in SEEDS] for level in LEVELS}


def _run(program: str) -> str:
    """What the real interpreter prints for a generated program (our own generator's text)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(program, {"__name__": "generated"})
    return buffer.getvalue()


def test_attributes() -> None:
    assert isinstance(DOMAIN, CodeDomain)
    assert (DOMAIN.name, DOMAIN.levels, DOMAIN.answer_format) == ("code", 3, "tag")


@pytest.mark.parametrize("level", LEVELS)
def test_same_seed_same_problem(level: int) -> None:
    for seed in range(50):
        first, second = (
            DOMAIN.generate(random.Random(seed), level),
            DOMAIN.generate(random.Random(seed), level),
        )
        assert first == second
    assert DOMAIN.generate(random.Random(1), level) != DOMAIN.generate(random.Random(2), level)


def test_same_problems_in_a_fresh_process_with_another_hash_seed() -> None:
    code = (
        "import random\n"
        "from papergym.envs.reasoning.domains.code import DOMAIN\n"
        "print(repr([DOMAIN.generate(random.Random(s), d) for d in (1, 2, 3) for s in range(20)]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "4242"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    here = [DOMAIN.generate(random.Random(s), d) for d in LEVELS for s in range(20)]
    assert out.stdout.strip() == repr(here)


@pytest.mark.parametrize("level", LEVELS)
def test_gold_is_what_python_prints(problems: dict[int, list[Problem]], level: int) -> None:
    for problem in problems[level]:
        program = problem.data["program"]
        assert f"```python\n{program}\n```" in problem.prompt
        printed = _run(program)
        assert normalize_output(printed) == problem.answer, program
        assert DOMAIN.is_correct(problem, printed)  # the raw output, final newline and all


@pytest.mark.parametrize("level", LEVELS)
def test_gold_is_correct_and_fields_are_plain(problems: dict[int, list[Problem]], level: int) -> None:
    for problem in problems[level]:
        assert problem.domain == "code" and problem.difficulty == level and problem.answer
        assert json.loads(json.dumps(problem.data)) == problem.data
        assert DOMAIN.is_correct(problem, problem.answer)


def test_level_features(problems: dict[int, list[Problem]]) -> None:
    level1 = "\n".join(p.data["program"] for p in problems[1])
    assert not re.search(r"\b(for|while|if|def)\b", level1)
    for problem in problems[2]:
        program = problem.data["program"]
        assert re.search(r"^(for|while) ", program, re.M) and "    if " in program
    level3 = "\n".join(p.data["program"] for p in problems[3])
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
    assert any("-" in p.answer for p in problems[3] if p.data["family"] in ("floor_mod_list", "digits"))


@pytest.mark.parametrize("level", LEVELS)
def test_wrong_outputs_are_rejected(problems: dict[int, list[Problem]], level: int) -> None:
    for problem in problems[level]:
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
def test_programs_are_diverse(problems: dict[int, list[Problem]], level: int) -> None:
    assert len({problem.prompt for problem in problems[level]}) >= 0.9 * len(SEEDS)
    assert len({problem.data["program"] for problem in problems[level]}) >= 0.9 * len(SEEDS)


@pytest.mark.parametrize("level", LEVELS)
def test_every_family_is_drawn(problems: dict[int, list[Problem]], level: int) -> None:
    assert {problem.data["family"] for problem in problems[level]} == set(TEMPLATES[level])


def test_library_code_never_executes_text() -> None:
    source = Path(code_module.__file__).read_text()
    assert not re.search(r"\b(exec|eval|compile)\(", source)


@pytest.mark.parametrize("difficulty", [0, 4, True, 2.0, "3"])
def test_bad_difficulty_is_a_clear_error(difficulty: object) -> None:
    with pytest.raises(ValueError, match="difficulty"):
        DOMAIN.generate(random.Random(0), difficulty)  # type: ignore[arg-type]


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
