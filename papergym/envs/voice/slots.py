"""Slot values in spoken text and the calibrated text-level confusion channel (``channel="simulated"``).

A slot is a value a tool argument may need: an email, an order or user id, a date, an amount, a
digit string (zip codes, item ids), a letter-digit code or a name. `find_slots` locates them in a
message; `ConfusionChannel` mishears each one with the rate measured for its class on the real
TTS -> ASR channel, rewriting it character by character with the edit distribution measured on the
values the real channel got wrong (`papergym.envs.voice.calibrate` builds the table; the shipped one
is `papergym.envs.voice.confusion_table.TABLE`). Words outside slots pass unchanged: the channel
models perception errors where they matter for tool calls.

>>> [(s.cls, s.value) for s in find_slots("My email is ann.lee@mail.com. Order #W1234567 costs $12.50.")]
[('email', 'ann.lee@mail.com'), ('order_id', '#W1234567'), ('amount', '$12.50')]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

import numpy as np

SLOT_PATTERNS: tuple[tuple[str, str], ...] = (
    ("email", r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    ("order_id", r"#?W\d{7}\b"),
    ("user_id", r"\b[a-z]+_[a-z]+_\d{3,5}\b"),
    ("date", r"\b\d{4}-\d{2}-\d{2}\b"),
    ("amount", r"\$\d[\d,]*(?:\.\d{2})?|\b\d+\.\d{2}\b"),
    ("digits", r"\b\d{2,}\b"),
    ("code", r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{3,10}\b"),
    ("name", r"(?<=name is )[A-Z][a-z]+(?: [A-Z][a-z]+)?|(?<=I am )[A-Z][a-z]+ [A-Z][a-z]+"),
)
"""(class, regex) in order of precedence: an earlier class claims its span first."""
SLOT_CLASSES: tuple[str, ...] = tuple(c for c, _ in SLOT_PATTERNS)
_COMPILED = tuple((cls, re.compile(p)) for cls, p in SLOT_PATTERNS)


@dataclass(frozen=True)
class Slot:
    """A slot value at ``text[start:end]``."""

    cls: str
    value: str
    start: int
    end: int


def find_slots(text: str) -> list[Slot]:
    """The slot values in ``text``, left to right, without overlaps (earlier classes win)."""
    taken: list[Slot] = []
    for cls, pattern in _COMPILED:
        for m in pattern.finditer(text):
            if not any(m.start() < s.end and s.start < m.end() for s in taken):
                taken.append(Slot(cls, m.group(0), m.start(), m.end()))
    return sorted(taken, key=lambda s: s.start)


_DIGIT_GROUP = re.compile(r"(?<=\d),(?=\d{3}\b)")
_HASH = re.compile(r"\b(?:hash|number|pound)\s*#?\s*(?=[Ww]\s?\d)|#\s+(?=[Ww])", re.IGNORECASE)
_W_DIGITS = re.compile(r"#[Ww]\s?(?=\d)")
_AT = re.compile(r"\s+at\s+(?=[\w-]+\.[a-z]{2,})")
_DOT = re.compile(r"\s+dot\s+", re.IGNORECASE)


def normalize_heard(text: str) -> str:
    """Undo ASR formatting that is not a perception error: digit grouping ("10,891"), spoken symbols
    ("hash W123" -> "#W123", "a at b.com" -> "a@b.com", " dot " -> "."), as a competent listener (and
    ASR scoring's text normalisers) would. What remains wrong was misheard.

    >>> normalize_heard("My zip code is 10,891. Order hash W 2,254,892, email ann at mail.com")
    'My zip code is 10891. Order #W2254892, email ann@mail.com'
    """
    text = _DIGIT_GROUP.sub("", text)
    text = _HASH.sub("#", text)
    text = _W_DIGITS.sub("#W", text)
    text = _AT.sub("@", text)
    return _DOT.sub(".", text)


def char_edits(said: str, heard: str) -> list[tuple[str, str]]:
    """An alignment of ``said`` to ``heard`` as (said char, heard piece) pairs covering both strings.

    Replaced blocks map their first character to the whole heard block and the rest to ""; inserted
    text attaches to the preceding said character (or the first one).

    >>> char_edits("a1b", "a7b")
    [('a', 'a'), ('1', '7'), ('b', 'b')]
    """
    pieces = [[c, c] for c in said]
    if not pieces:
        return []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, said, heard, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag in ("replace", "delete"):
            pieces[i1][1] = heard[j1:j2]
            for i in range(i1 + 1, i2):
                pieces[i][1] = ""
        else:  # insert
            if i1 > 0:
                pieces[i1 - 1][1] += heard[j1:j2]
            else:
                pieces[0][1] = heard[j1:j2] + pieces[0][1]
    return [(a, b) for a, b in pieces]


def stats_from_pairs(pairs: Any, *, normalize: bool = True) -> dict[str, dict[str, Any]]:
    """Per-class stats from calibration triples ``(class, said, heard)`` (heard normalised first)."""
    stats: dict[str, dict[str, Any]] = {}
    for cls, said, heard in pairs:
        record(stats.setdefault(cls, empty_stats()), said, normalize_heard(heard) if normalize else heard)
    return stats


def empty_stats() -> dict[str, Any]:
    """Per-class counts the calibration accumulates: values seen, values misheard, char outcomes."""
    return {"n": 0, "wrong": 0, "outcomes": {}}


def record(stats: dict[str, Any], said: str, heard: str) -> None:
    """Count one (said, heard) value pair into a class's ``stats``."""
    stats["n"] += 1
    if heard == said:
        return
    stats["wrong"] += 1
    for c, piece in char_edits(said, heard):
        row = stats["outcomes"].setdefault(c, {})
        row[piece] = row.get(piece, 0) + 1


class ConfusionChannel:
    """A text-level channel that mishears slot values at calibrated per-class rates.

    Args:
        table: one calibration level's stats, ``{class: {"n", "wrong", "outcomes"}}`` (`stats_from_pairs`
            of the calibration's (class, said, heard) triples).
        scale: multiplies every class's error rate (capped at 1); 1 = as calibrated.
    """

    def __init__(self, table: Mapping[str, Mapping[str, Any]], *, scale: float = 1.0) -> None:
        if scale < 0:
            raise ValueError(f"scale must be >= 0, got {scale}")
        self.table = table
        self.scale = float(scale)

    def rate(self, cls: str) -> float:
        """The probability that a value of class ``cls`` is misheard."""
        stats = self.table.get(cls)
        if not stats or not stats["n"]:
            return 0.0
        return min(1.0, self.scale * stats["wrong"] / stats["n"])

    def mishear(self, value: str, cls: str, rng: np.random.Generator) -> str:
        """A misheard version of ``value`` drawn from the class's character outcomes (may equal it)."""
        outcomes = self.table.get(cls, {}).get("outcomes", {})
        for _ in range(20):
            out = []
            for c in value:
                row = outcomes.get(c)
                if not row:
                    out.append(c)
                    continue
                pieces = sorted(row)
                counts = np.array([row[p] for p in pieces], dtype=np.float64)
                out.append(pieces[int(rng.choice(len(pieces), p=counts / counts.sum()))])
            heard = "".join(out)
            if heard != value:
                return heard
        return value

    def __call__(self, text: str, rng: np.random.Generator) -> str:
        """``text`` with each slot value misheard with its class's probability."""
        out, last = [], 0
        for slot in find_slots(text):
            out.append(text[last : slot.start])
            misheard = rng.random() < self.rate(slot.cls)
            out.append(self.mishear(slot.value, slot.cls, rng) if misheard else slot.value)
            last = slot.end
        out.append(text[last:])
        return "".join(out)


def nearest_level(levels: Mapping[str, Any], snr_db: float | None) -> str:
    """The calibration level closest to ``snr_db`` (``"clean"`` for None)."""
    if snr_db is None:
        if "clean" not in levels:
            raise ValueError("the confusion table has no 'clean' level")
        return "clean"
    numeric = {float(k): k for k in levels if k != "clean"}
    if not numeric:
        raise ValueError("the confusion table has no noisy levels; use snr_db=None")
    return numeric[min(numeric, key=lambda v: abs(v - snr_db))]


__all__ = [
    "SLOT_CLASSES",
    "ConfusionChannel",
    "Slot",
    "char_edits",
    "find_slots",
    "nearest_level",
    "normalize_heard",
    "record",
    "stats_from_pairs",
]
