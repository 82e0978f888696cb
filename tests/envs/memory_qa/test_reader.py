"""The memory-only answerability readers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from papergym.envs.memory_qa.reader import ExtractiveReader, MajorityReader

Q_SINGLE = "What is the headcount of Harbor Media?"
Q_TOTAL = "What is the total headcount of Harbor Media, Oakfield Foods and Redstone Mining?"
Q_COMPARE = "Which has the higher headcount, Harbor Media or Oakfield Foods?"


def test_single_total_and_compare() -> None:
    memory = (
        "Harbor Media - headcount: 1,200\nOakfield Foods - headcount: 300. Redstone Mining headcount is 5."
    )
    reader = ExtractiveReader()
    assert reader.answer(Q_SINGLE, memory) == "1200"
    assert reader.answer(Q_TOTAL, memory) == "1505"
    assert reader.answer(Q_COMPARE, memory) == "Harbor Media"


def test_similar_subjects_do_not_count() -> None:
    memory = "Harbor Mediaworks - headcount: 7; Harbor Energy - headcount: 9"
    assert ExtractiveReader().answer(Q_SINGLE, memory) == "unknown"


def test_categorical_values() -> None:
    q = "What is the audit opinion of Harbor Media?"
    assert ExtractiveReader().answer(q, "The audit opinion of Harbor Media is adverse.") == "adverse"
    assert ExtractiveReader().answer(q, "Harbor Media: no opinion recorded") == "unknown"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.text(max_size=400))
def test_reader_never_raises(question: str, context: str) -> None:
    for q in (question, Q_SINGLE, Q_TOTAL, Q_COMPARE):
        assert isinstance(ExtractiveReader().answer(q, context), str)
        assert isinstance(ExtractiveReader().answer(q, context + " Harbor Media headcount " + "9" * 400), str)


class _Flaky:
    def __init__(self) -> None:
        self.calls: list[int | None] = []

    def answer(self, question: str, context: str, *, seed: int | None = None) -> str:
        self.calls.append(seed)
        return "7" if seed in (10, 12) else "8"


def test_majority_reader() -> None:
    inner = _Flaky()
    assert MajorityReader(inner, k=3).answer("q", "c", seed=10) == "7"
    assert inner.calls == [10, 11, 12]
