"""Memory-only answerability readers: answer a question from a text (the final memory) alone.

`ExtractiveReader` is the embedded default: a deterministic rule reader that parses the question
(its three templates), finds, line by line, a statement naming the subject and the attribute, and
reads the value after the attribute. It never guesses: without the evidence it answers
``"unknown"``. `MajorityReader` takes the majority of ``k`` seeded answers of any `Reader`
(e.g. a `papergym.backends.ModelReader`).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from papergym.backends.protocols import Reader
from papergym.envs.memory_qa.documents import ATTRIBUTES, normalize_answer

UNKNOWN = "unknown"
_ATTRS = "|".join(re.escape(a) for a in sorted(ATTRIBUTES, key=len, reverse=True))
_SINGLE = re.compile(rf"what is the ({_ATTRS}) of (.+?)\?", re.IGNORECASE)
_TOTAL = re.compile(rf"what is the total ({_ATTRS}) of (.+?)\?", re.IGNORECASE)
_COMPARE = re.compile(rf"which has the higher ({_ATTRS}), (.+?) or (.+?)\?", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_SEGMENT = re.compile(r"[\n;|]+|(?<=[.!?])\s+")


@lru_cache(maxsize=512)
def subject_pattern(subject: str) -> re.Pattern[str]:
    """A case-folded text's match of ``subject`` as a whole name (not inside a longer hyphenated word)."""
    return re.compile(rf"(?<![\w-]){re.escape(subject.lower())}(?![\w-])")


def _value_in(context: str, subject: str, attribute: str) -> str | None:
    """The value of ``attribute`` of ``subject`` stated in ``context`` (first statement wins)."""
    subject_re = subject_pattern(subject)
    attr = attribute.lower()
    spec = ATTRIBUTES[attribute]
    for segment in _SEGMENT.split(context.lower()):
        where = segment.find(attr)
        if where < 0 or subject_re.search(segment) is None:
            continue
        rest = segment[where + len(attr) :]
        if spec.numeric:
            match = _NUMBER.search(rest)
            if match:
                return normalize_answer(match.group())
        else:
            found = [(rest.find(v.lower()), v) for v in spec.values if v.lower() in rest]
            if found:
                return min(found)[1]
    return None


def _split_names(listed: str) -> list[str]:
    head, _, last = listed.rpartition(" and ")
    return [*(n.strip() for n in head.split(",")), last.strip()] if head else [listed.strip()]


def parse_question(question: str) -> tuple[str, str, list[str]] | None:
    """``(question type, attribute, subjects named)`` of one of the env's question templates, read from
    its text alone; None for other text.

    >>> parse_question("What is the total headcount of Harbor Media and Redstone Foods?")
    ('aggregate', 'headcount', ['Harbor Media', 'Redstone Foods'])
    """
    if match := _COMPARE.search(question):
        return "compare", ATTRIBUTES_CI[match[1].lower()], [match[2], match[3]]
    if match := _TOTAL.search(question):
        return "aggregate", ATTRIBUTES_CI[match[1].lower()], _split_names(match[2])
    if match := _SINGLE.search(question):
        return "single", ATTRIBUTES_CI[match[1].lower()], [match[2]]
    return None


class ExtractiveReader:
    """The default `Reader`: a deterministic extractive reader over the env's question templates.

    >>> reader = ExtractiveReader()
    >>> reader.answer("What is the headcount of Harbor Media?", "Harbor Media - headcount: 1,200")
    '1200'
    >>> reader.answer("What is the headcount of Harbor Media?", "nothing relevant")
    'unknown'
    """

    def __repr__(self) -> str:
        return "ExtractiveReader()"

    def answer(self, question: str, context: str, *, seed: int | None = None) -> str:
        """Answer ``question`` from ``context`` alone; ``"unknown"`` when the context lacks it.

        Args:
            question: one of the env's questions (other text yields ``"unknown"``).
            context: the text to read (the final memory).
            seed: unused (the reader is deterministic).
        """
        del seed
        if not isinstance(question, str) or not isinstance(context, str):
            return UNKNOWN
        parsed = parse_question(question)
        if parsed is None:
            return UNKNOWN
        qtype, attribute, names = parsed
        values = [_value_in(context, name, attribute) for name in names]
        if any(v is None for v in values):
            return UNKNOWN
        if qtype == "single":
            return values[0]  # type: ignore[return-value]
        numbers = [float(v) for v in values]  # type: ignore[arg-type]
        if qtype == "aggregate":
            return normalize_answer(str(sum(numbers)))
        if numbers[0] == numbers[1]:
            return UNKNOWN
        return names[0] if numbers[0] > numbers[1] else names[1]


ATTRIBUTES_CI: dict[str, str] = {a.lower(): a for a in ATTRIBUTES}


class MajorityReader:
    """The majority answer of ``k`` calls of a `Reader` with seeds derived from the given one.

    Args:
        reader: any `Reader` (e.g. ``ModelReader(chat_model)``).
        k: the number of samples (odd avoids ties; a tie goes to the answer seen first).
    """

    def __init__(self, reader: Reader, k: int = 3) -> None:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.reader = reader
        self.k = int(k)

    def __repr__(self) -> str:
        return f"MajorityReader({self.reader!r}, k={self.k})"

    def answer(self, question: str, context: str, *, seed: int | None = None) -> str:
        answers = [
            self.reader.answer(question, context, seed=None if seed is None else seed + i)
            for i in range(self.k)
        ]
        counts = Counter(normalize_answer(a) for a in answers)
        best = max(counts.values())
        return next(normalize_answer(a) for a in answers if counts[normalize_answer(a)] == best)
