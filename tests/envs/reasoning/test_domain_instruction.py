"""Tests of the instruction-following domain of Reasoning-v0 that go beyond the shared ones in
test_domains_common.py."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from papergym.envs.reasoning.domains import instruction
from papergym.envs.reasoning.domains.instruction import (
    CHECKS,
    COMPATIBLE,
    DOMAIN,
    FORBIDDEN,
    TYPES,
    describe,
    vocabulary,
    words,
)
from papergym.envs.reasoning.problem import Problem
from tests.envs.reasoning._helpers import LEVELS, generated


def test_every_constraint_type_has_a_check_and_a_description() -> None:
    assert len(CHECKS) >= 12 and set(TYPES) == set(CHECKS)
    assert all(describe({"type": kind, "n": 2, "word": "w", "keyword": "k", "phrase": "p"}) for kind in TYPES)


@pytest.mark.parametrize("level", LEVELS)
def test_gold_satisfies_every_constraint(level: int) -> None:
    for problem in generated("instruction", level):
        for constraint in problem.data["constraints"]:
            assert CHECKS[constraint["type"]](problem.answer, constraint), (constraint, problem.answer)
            assert describe(constraint) in problem.prompt
        assert problem.data["topic"] in problem.prompt
        assert problem.answer == problem.answer.strip()  # survives extract_answer's strip


@pytest.mark.parametrize("level", LEVELS)
def test_constraint_counts_and_compatibility(level: int) -> None:
    for problem in generated("instruction", level):
        kinds = [c["type"] for c in problem.data["constraints"]]
        assert len(kinds) == len(set(kinds))
        assert len(kinds) == level if level < 3 else len(kinds) in (3, 4)
        for i, a in enumerate(kinds):
            for b in kinds[i + 1 :]:
                assert b in COMPATIBLE[a] and a in COMPATIBLE[b], (a, b)


def test_compatibility_rules() -> None:
    for kind in TYPES:
        assert kind not in COMPATIBLE[kind]
        for other in COMPATIBLE[kind]:
            assert kind in COMPATIBLE[other]
    incompatible = [
        ("lowercase", "uppercase"),
        ("word_count_min", "word_count_max"),
        ("sentence_count", "bullet_count"),
        ("bullet_count", "numbered_lines"),
        ("quoted", "ends_with"),
        ("title", "starts_with"),
    ]
    for a, b in incompatible:
        assert b not in COMPATIBLE[a]
    assert "keyword_frequency" in COMPATIBLE["lowercase"] and "keyword_frequency" in COMPATIBLE["uppercase"]
    # any three compatible types leave a fourth to draw (level 3 draws up to four)
    for a in TYPES:
        for b in COMPATIBLE[a]:
            for c in COMPATIBLE[a] & COMPATIBLE[b]:
                assert COMPATIBLE[a] & COMPATIBLE[b] & COMPATIBLE[c]


def test_every_type_is_drawn_and_met() -> None:
    drawn = {
        c["type"] for level in LEVELS for p in generated("instruction", level) for c in p.data["constraints"]
    }
    assert drawn == set(TYPES)


def test_casing_of_words_follows_the_case_rule() -> None:
    checked = 0
    for problem in generated("instruction", 2) + generated("instruction", 3):
        kinds = {c["type"]: c for c in problem.data["constraints"]}
        for case, convert in (("lowercase", str.lower), ("uppercase", str.upper)):
            if case not in kinds:
                continue
            for kind, key in (
                ("keyword_frequency", "keyword"),
                ("starts_with", "word"),
                ("ends_with", "phrase"),
            ):
                if kind in kinds:
                    assert kinds[kind][key] == convert(kinds[kind][key])
                    checked += 1
    assert checked > 20


def test_forbidden_words_never_occur_in_generated_texts() -> None:
    assert not set(FORBIDDEN) & vocabulary()


# --- each check on hand-written texts --------------------------------------------------------------

_CASES: dict[str, tuple[dict[str, Any], list[str], list[str]]] = {
    "word_count_exact": (
        {"n": 3},
        ["one two three", "One, two; three!", "- don't stop now", "<<big title>> ok"],
        ["one two", "one two three four", "", "1. 2. 3. 4."],
    ),
    "word_count_min": ({"n": 3}, ["a b c", "a b c d e", "well-known a b"], ["a b", "- -- ... a", ""]),
    "word_count_max": ({"n": 3}, ["a b c", "a", "well-known don't x"], ["a b c d", "a,b,c,d"]),
    "lowercase": ({}, ["all lower here", "<<title>>\n1. ok"], ["Not lower", "123 456", "", "mostly lower X"]),
    "uppercase": ({}, ["ALL UPPER", "<<T>>\n1. OK"], ["ALL UPPEr", "123", ""]),
    "keyword_frequency": (
        {"keyword": "river", "n": 2},
        ["River and river.", "the RIVER, the river", "river river river"],
        ["one river", "rivers riverbank river-side", "", "riv er river"],
    ),
    "forbidden_word": (
        {"word": "very"},
        ["a fine day", "everyone every veryfine"],
        ["very good", "It was VERY."],
    ),
    "starts_with": (
        {"word": "Today"},
        ["Today is fine.", '"today, yes"', "- Today we go", "  TODAY!"],
        ["Yesterday today", "Todays news", "", "To day"],
    ),
    "ends_with": (
        {"phrase": "until next time."},
        ["See you until next time.", "UNTIL NEXT TIME.  \n"],
        ["until next time", "until next time. ok", 'until next time."'],
    ),
    "no_commas": ({}, ["no commas here.", ""], ["a, b", "a，b"]),
    "sentence_count": (
        {"n": 2},
        ["One here. Two here!", '"One. Two?"', "It costs 3.5 dollars. Fine.", "One... Two?!"],
        ["One. Two. Three.", "Only one.", "...", "One two three"],
    ),
    "bullet_count": (
        {"n": 2},
        ["- a\n- b", "intro\n  - a\n- b\n"],
        ["- a", "- a\n- b\n- c", "-a\n-b", "* a\n* b"],
    ),
    "quoted": ({}, ['"hello"', " “hi” ", '"a"\n'], ["hello", '"hello', '"', "'hi'"]),
    "numbered_lines": (
        {"n": 3},
        ["1. a\n2. b\n3. c", "intro\n1) a\n 2. b\n10. c"],
        ["1. a\n2. b", "1.a\n2.b\n3.c", "1 a\n2 b\n3 c", "1. a 2. b 3. c"],
    ),
    "paragraph_count": (
        {"n": 2},
        ["para one\n\npara two", "p1\n \np2\n\n", "\n\np1\n\n\n\np2"],
        ["one\ntwo", "a\n\nb\n\nc", ""],
    ),
    "title": (
        {},
        ["<<My Title>>\ntext", "x <<t>> y"],
        ["<My Title>", "<<>>", "<< >>", "no title", "<<a\nb>>"],
    ),
}


def test_every_check_has_cases() -> None:
    assert set(_CASES) == set(CHECKS)


@pytest.mark.parametrize("kind", sorted(_CASES))
def test_check_on_hand_written_texts(kind: str) -> None:
    params, good, bad = _CASES[kind]
    constraint = {"type": kind, **params}
    for text in good:
        assert CHECKS[kind](text, constraint), (kind, text)
    for text in bad:
        assert not CHECKS[kind](text, constraint), (kind, text)
    problem = Problem("instruction", "p", good[0], 1, {"topic": "t", "constraints": [constraint]})
    for text in good:  # the constraint holds; whether the text names the topic decides the rest
        assert DOMAIN.is_correct(problem, text) == instruction.check_topic(text, "t"), (kind, text)
    for text in bad:
        assert not DOMAIN.is_correct(problem, text), (kind, text)


def test_each_of_several_constraints_is_needed() -> None:
    constraints = [
        {"type": "lowercase"},
        {"type": "starts_with", "word": "today"},
        {"type": "keyword_frequency", "keyword": "river", "n": 2},
        {"type": "sentence_count", "n": 2},
        {"type": "no_commas"},
    ]
    problem = Problem("instruction", "p", "", 3, {"topic": "rivers", "constraints": constraints})
    good = "today the river runs among rivers of stone. the river sings."
    assert DOMAIN.is_correct(problem, good)
    one_broken = [
        "Today the river runs among rivers of stone. the river sings.",
        "so the river runs among rivers of stone. the river sings.",
        "today the river runs among rivers of stone. the stream sings.",
        "today the river runs among rivers of stone. the river sings. ok.",
        "today the river runs among rivers of stone. the river, sings.",
    ]
    for text in one_broken:
        failing = [c["type"] for c in constraints if not CHECKS[c["type"]](text, c)]
        assert len(failing) == 1, (text, failing)
        assert not DOMAIN.is_correct(problem, text)
    off_topic = "today the river runs among hills of stone. the river sings."  # every constraint holds
    assert all(CHECKS[c["type"]](off_topic, c) for c in constraints)
    assert not DOMAIN.is_correct(problem, off_topic)


# --- each generated constraint, violated on its own ------------------------------------------------

_VIOLATE: dict[str, Callable[[str, Mapping[str, Any]], str]] = {
    "word_count_exact": lambda t, c: t + " extra",
    "word_count_min": lambda t, c: " ".join(t.split()[: c["n"] - 1]) if c["n"] > 1 else "- ...",
    "word_count_max": lambda t, c: t + " more" * (c["n"] + 1),
    "lowercase": lambda t, c: t + " Capital",
    "uppercase": lambda t, c: t + " lower",
    "keyword_frequency": lambda t, c: re.sub(rf"\b{c['keyword']}\b", "zzz", t, flags=re.IGNORECASE),
    "forbidden_word": lambda t, c: f"{t} {c['word']}",
    "starts_with": lambda t, c: "Zebra " + t,
    "ends_with": lambda t, c: t + " ok",
    "no_commas": lambda t, c: t.replace(" ", ", ", 1),
    "sentence_count": lambda t, c: t + " One more sentence.",
    "bullet_count": lambda t, c: t + "\n- extra",
    "quoted": lambda t, c: t.strip()[1:-1],
    "numbered_lines": lambda t, c: t + "\n99. extra",
    "paragraph_count": lambda t, c: t + "\n\nAn extra paragraph.",
    "title": lambda t, c: t.replace("<<", "").replace(">>", ""),
}


@pytest.mark.parametrize("level", LEVELS)
def test_each_generated_constraint_violated_alone_fails(level: int) -> None:
    assert set(_VIOLATE) == set(CHECKS)
    for problem in generated("instruction", level):
        for constraint in problem.data["constraints"]:
            broken = _VIOLATE[constraint["type"]](problem.answer, constraint)
            assert not CHECKS[constraint["type"]](broken, constraint), (constraint, broken)
            assert not DOMAIN.is_correct(problem, broken)


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_fast_path_splits_words_like_the_general_table(text: str) -> None:
    assert words(text) == text.casefold().translate(instruction._TABLE).split()


_ALL_FIXED = [problem for level in LEVELS for problem in generated("instruction", level)[:30]]
# A first word, a keyword or a closing phrase can only be met with the generator's own words, so text
# holding none of them must fail. (Other rules, like "no commas" alone, random text may well meet.)
_WORD_BOUND = {"starts_with", "ends_with", "keyword_frequency"}
_WORD_BOUND_FIXED = [p for p in _ALL_FIXED if _WORD_BOUND & {c["type"] for c in p.data["constraints"]}][:15]
_VOCABULARY = vocabulary()


@given(st.text().filter(lambda t: not _VOCABULARY.intersection(words(t))))
def test_garbage_fails_problems_that_need_particular_words(text: str) -> None:
    assert len(_WORD_BOUND_FIXED) == 15
    for problem in _WORD_BOUND_FIXED:
        assert DOMAIN.is_correct(problem, text) is False
