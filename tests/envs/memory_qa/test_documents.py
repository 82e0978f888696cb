"""Document and question generation: every kind and question type, consistency, guessability."""

from __future__ import annotations

import random

import pytest

from papergym.envs.memory_qa.documents import (
    ATTRIBUTES,
    KINDS,
    QUESTION_TYPES,
    normalize_answer,
    page_text,
    plan_document,
    prior_guess,
)
from papergym.envs.memory_qa.reader import ExtractiveReader


def _plans(n: int, **kwargs: object) -> list:
    rng = random.Random()
    out = []
    for i in range(n):
        rng.seed(i)
        out.append(plan_document(rng, 1 + i % 3, **kwargs))  # type: ignore[arg-type]
    return out


def test_every_kind_and_question_type_is_generated() -> None:
    plans = _plans(300)
    assert {p.kind for p in plans} == set(KINDS)
    assert {p.question.qtype for p in plans} == set(QUESTION_TYPES)
    assert {(p.kind, p.question.qtype) for p in plans} == {(k, q) for k in KINDS for q in QUESTION_TYPES}


def test_generation_is_a_pure_function_of_the_rng() -> None:
    a, b = _plans(5), _plans(5)
    assert a == b
    assert [page_text(p, 0) for p in a] == [page_text(p, 0) for p in b]


def test_page_counts_follow_the_range() -> None:
    assert {p.n_pages for p in _plans(200)} <= set(range(20, 61))
    assert {p.n_pages for p in _plans(50, pages=(3, 3))} == {3}


def test_evidence_sits_on_its_pages_and_only_there() -> None:
    for plan in _plans(120):
        question = plan.question
        for subject, attribute, value, page in question.evidence:
            assert plan.entities[subject][attribute] == value
            for other in range(plan.n_pages):
                text = page_text(plan, other)
                stated = (
                    f"{attribute} of {subject} is {value}" in text
                    or f"{subject} - {attribute}: {value}" in text
                )
                stated |= f"For {subject}, the {attribute} stands at {value}" in text
                assert stated == (other == page), (plan.question, other)


def test_distractors_look_like_the_answer() -> None:
    plan = next(p for p in _plans(50, pages=(5, 5)) if p.question.qtype == "single")
    distractors = [(s, a) for items in plan.placed.values() for s, a, role in items if role == "distractor"]
    assert distractors
    subject = plan.question.subjects[0]
    for sibling, attribute in distractors:
        assert attribute == plan.question.attribute
        assert sibling != subject and set(sibling.split()) & set(subject.split())


def test_gold_answers_follow_from_the_evidence() -> None:
    reader = ExtractiveReader()
    for plan in _plans(300):
        q = plan.question
        memory = "\n".join(f"{s} - {a}: {v}" for s, a, v, _ in q.evidence)
        assert normalize_answer(reader.answer(q.text, memory)) == normalize_answer(q.answer), q
        assert reader.answer(q.text, "") == "unknown"


def test_guessable_questions_are_those_the_prior_guess_answers() -> None:
    plans = _plans(400)
    share = sum(p.question.guessable for p in plans) / len(plans)
    assert 0.2 < share < 0.4  # guessable_share = 0.3
    for plan in plans:
        q = plan.question
        assert q.guessable == (normalize_answer(prior_guess(q)) == normalize_answer(q.answer))


def test_the_default_is_the_most_frequent_value() -> None:
    counts: dict[str, dict[str, int]] = {}
    for plan in _plans(100):
        for values in plan.entities.values():
            for name, value in values.items():
                if not ATTRIBUTES[name].numeric:
                    counts.setdefault(name, {}).setdefault(value, 0)
                    counts[name][value] += 1
    for name, c in counts.items():
        assert max(c, key=c.__getitem__) == ATTRIBUTES[name].default


@pytest.mark.parametrize("text", ["1,200", " 1200. ", "1200.0"])
def test_normalize_answer_numbers(text: str) -> None:
    assert normalize_answer(text) == "1200"
