"""Open-ended writing tasks: briefs, soft constraints (the subtasks), and the hidden quality function.

A brief is drawn per round: a topic, its vocabulary, a privileged source passage on the topic (the
challenger sees it, the solver does not), and a menu of soft constraints the challenger may impose.
The challenger's task states its constraints one per line (``include: harbor``, ``max_words: 60``);
each constraint is a subtask with a check, a way to break it and a way to fix it, which is what the
subtask-amplification pairs are built from.

`hidden_quality` scores an answer with a rubric no agent sees and no reward uses: it exists only to
measure whether the judge and the solver improve or drift (papers/training.md §1.7, inferred). Its
weights and the rubric's parts are inferred and exposed through `QualityRubric`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

TOPICS: dict[str, tuple[str, ...]] = {
    "harbor": ("harbor", "boats", "tide", "fishermen", "nets", "gulls", "pier", "lantern"),
    "orchard": ("orchard", "apples", "blossom", "ladder", "harvest", "bees", "cider", "branches"),
    "library": ("library", "shelves", "readers", "silence", "catalogue", "pages", "lamps", "archive"),
    "mountain": ("mountain", "ridge", "snow", "climbers", "summit", "wind", "trail", "glacier"),
    "market": ("market", "stalls", "spices", "vendors", "coins", "bread", "crowd", "awnings"),
    "observatory": ("observatory", "telescope", "stars", "dome", "night", "comet", "lens", "orbit"),
    "railway": ("railway", "station", "platform", "engine", "tickets", "whistle", "tracks", "signal"),
    "garden": ("garden", "roses", "soil", "gardener", "hedges", "rain", "seeds", "pond"),
    "workshop": ("workshop", "hammer", "timber", "carpenter", "sawdust", "bench", "chisel", "varnish"),
    "river": ("river", "current", "bridge", "reeds", "ferry", "banks", "otters", "delta"),
}
"""Topic -> vocabulary (the topic word first)."""

OFF_TOPIC_WORDS: tuple[str, ...] = ("basically", "really", "very", "stuff", "things", "actually")
"""Words an ``avoid`` constraint draws from (padding words a weak answer leans on)."""

FILLER = "and so on"
"""The neutral words used to pad an answer when a constraint is broken or fixed by length."""

_SOURCE_TEMPLATES: tuple[str, ...] = (
    "At the {0}, the {1} meet the {2} before dawn.",
    "Nobody forgets how the {1} gather near the {2}.",
    "Each season the {0} changes, yet the {3} remain.",
    "Old {4} and new {5} share the same quiet {0}.",
    "Visitors come for the {2} and stay for the {3}.",
    "Under the {4}, the {5} tell the story of the {0}.",
)
_WORD = re.compile(r"[a-z]+")
KINDS: tuple[str, ...] = ("include", "avoid", "min_words", "max_words", "end_with", "bullets")
ENDINGS: tuple[str, ...] = ("?", "!", ".")
_LINE = re.compile(r"^\s*(include|avoid|min_words|max_words|end_with|bullets)\s*:\s*(\S+)\s*$", re.MULTILINE)
_MAX_NUMBER = 200


def words(text: str) -> list[str]:
    """The lower-cased alphabetic words of ``text``."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class Constraint:
    """One soft constraint (a subtask) of an open-ended task.

    Attributes:
        kind: one of `KINDS`.
        arg: the word, the number (as text) or the ending character.
    """

    kind: str
    arg: str

    def render(self) -> str:
        """The line the task states it with."""
        return f"{self.kind}: {self.arg}"

    def check(self, text: str) -> bool:
        """Whether ``text`` satisfies the constraint."""
        ws = words(text)
        if self.kind == "include":
            return self.arg in ws
        if self.kind == "avoid":
            return self.arg not in ws
        if self.kind == "min_words":
            return len(ws) >= int(self.arg)
        if self.kind == "max_words":
            return len(ws) <= int(self.arg)
        if self.kind == "end_with":
            return text.rstrip().endswith(self.arg)
        if self.kind == "bullets":
            return _bullets(text) >= int(self.arg)
        raise ValueError(f"unknown constraint kind {self.kind!r}")

    def broken(self, text: str) -> str:
        """``text`` edited so that it fails this constraint (other constraints untouched where possible)."""
        if self.kind == "include":
            return _drop_word(text, self.arg)
        if self.kind == "avoid":
            return f"{_strip_end(text)} {self.arg}{_end(text)}".strip()
        if self.kind == "min_words":
            return _truncate(text, max(0, int(self.arg) - 1))
        if self.kind == "max_words":
            return _pad(text, int(self.arg) + 1)
        if self.kind == "end_with":
            other = next(e for e in ENDINGS if e != self.arg)
            return _strip_end(text) + other
        if self.kind == "bullets":
            return "\n".join(line[2:] if line.startswith("- ") else line for line in text.split("\n"))
        raise ValueError(f"unknown constraint kind {self.kind!r}")

    def fixed(self, text: str) -> str:
        """``text`` edited so that it satisfies this constraint (others untouched where possible)."""
        if self.check(text):
            return text
        if self.kind == "include":
            return f"{_strip_end(text)} {self.arg}{_end(text)}".strip()
        if self.kind == "avoid":
            return _drop_word(text, self.arg)
        if self.kind == "min_words":
            return _pad(text, int(self.arg))
        if self.kind == "max_words":
            return _truncate(text, int(self.arg))
        if self.kind == "end_with":
            return _strip_end(text) + self.arg
        if self.kind == "bullets":
            missing = int(self.arg) - _bullets(text)
            return text.rstrip() + "".join(f"\n- point {i + 1}" for i in range(missing))
        raise ValueError(f"unknown constraint kind {self.kind!r}")


def _bullets(text: str) -> int:
    return sum(1 for line in text.split("\n") if line.startswith("- ") and words(line))


def _end(text: str) -> str:
    stripped = text.rstrip()
    return stripped[-1] if stripped and stripped[-1] in ENDINGS else ""


def _strip_end(text: str) -> str:
    return text.rstrip().rstrip("".join(ENDINGS)).rstrip()


def _drop_word(text: str, word: str) -> str:
    out = re.sub(rf"(?i)(?<![a-z]){re.escape(word)}(?![a-z])", "", text)
    return re.sub(r"[ \t]{2,}", " ", out).strip()


def _truncate(text: str, n: int) -> str:
    """The first ``n`` words of ``text`` (as plain words, ending kept)."""
    kept = words(text)[:n]
    return (" ".join(kept) + _end(text)) if kept else ""


def _pad(text: str, n: int) -> str:
    """``text`` padded with `FILLER` words before its ending until it has at least ``n`` words."""
    filler = words(FILLER)
    body, extra = _strip_end(text), []
    while len(words(body)) + len(extra) < n:
        extra.append(filler[len(extra) % len(filler)])
    return f"{body} {' '.join(extra)}{_end(text)}".strip() if extra else text


def parse_constraints(task: str) -> tuple[Constraint, ...] | None:
    """The constraint lines of a task; None if a line names a constraint with an unusable argument.

    >>> parse_constraints("Write about tides.\\ninclude: tide\\nmax_words: 40")
    (Constraint(kind='include', arg='tide'), Constraint(kind='max_words', arg='40'))
    >>> parse_constraints("end_with: x") is None
    True
    """
    found = []
    for kind, arg in _LINE.findall(task):
        arg = arg.lower() if kind in ("include", "avoid") else arg
        if kind in ("include", "avoid") and not arg.isalpha():
            return None
        if kind in ("min_words", "max_words", "bullets") and not (
            arg.isdigit() and 0 < int(arg) <= _MAX_NUMBER
        ):
            return None
        if kind == "end_with" and arg not in ENDINGS:
            return None
        found.append(Constraint(kind, arg))
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class Brief:
    """The material of one open-ended round.

    Attributes:
        topic: the topic word.
        vocabulary: the topic's words (part of the hidden rubric; the challenger sees the source).
        source: a passage on the topic, privileged to the challenger.
        menu: constraints the challenger may impose (it may also write its own).
    """

    topic: str
    vocabulary: tuple[str, ...]
    source: str
    menu: tuple[Constraint, ...]


def draw_brief(rng: np.random.Generator, *, menu_size: int = 6) -> Brief:
    """A brief drawn with ``rng``: a topic, a source passage and ``menu_size`` constraints (one per kind
    first, then repeats)."""
    topic = sorted(TOPICS)[int(rng.integers(len(TOPICS)))]
    vocab = TOPICS[topic]
    order = [int(i) for i in rng.permutation(len(_SOURCE_TEMPLATES))[:4]]
    source = " ".join(_SOURCE_TEMPLATES[i].format(*vocab[:6]) for i in order)
    menu: list[Constraint] = []
    for j in range(menu_size):
        kind = KINDS[j % len(KINDS)] if j < len(KINDS) else KINDS[int(rng.integers(len(KINDS)))]
        menu.append(_draw_constraint(rng, kind, vocab))
    return Brief(topic, vocab, source, tuple(dict.fromkeys(menu)))


def _draw_constraint(rng: np.random.Generator, kind: str, vocab: Sequence[str]) -> Constraint:
    if kind == "include":
        return Constraint(kind, vocab[1 + int(rng.integers(len(vocab) - 1))])
    if kind == "avoid":
        return Constraint(kind, OFF_TOPIC_WORDS[int(rng.integers(len(OFF_TOPIC_WORDS)))])
    if kind == "min_words":
        return Constraint(kind, str(int(rng.integers(10, 31))))
    if kind == "max_words":
        return Constraint(kind, str(int(rng.integers(40, 81))))
    if kind == "end_with":
        return Constraint(kind, ENDINGS[int(rng.integers(len(ENDINGS)))])
    return Constraint(kind, str(int(rng.integers(1, 4))))


@dataclass(frozen=True)
class QualityRubric:
    """The hidden quality function's weights (inferred; papers/training.md §1.7 asks only for "a hidden
    rubric").

    quality = ``w_constraints`` · (share of the task's constraints met) + ``w_style`` · style, where
    style is the mean of topic coverage (distinct topic words used / ``coverage_target``, capped at 1),
    lexical diversity (distinct words / words) and a length score ``exp(-|ln(n / ideal_words)|)``.
    An empty answer has quality 0.

    Attributes:
        w_constraints: weight of constraint satisfaction.
        w_style: weight of the style terms.
        coverage_target: distinct topic words for full coverage.
        ideal_words: the length the length score peaks at.
    """

    w_constraints: float = 0.5
    w_style: float = 0.5
    coverage_target: int = 4
    ideal_words: int = 40


DEFAULT_RUBRIC = QualityRubric()


def hidden_quality(
    answer: str, constraints: Sequence[Constraint], brief: Brief, rubric: QualityRubric = DEFAULT_RUBRIC
) -> float:
    """The hidden quality of ``answer`` in [0, 1]; no agent sees it and no reward uses it.

    >>> b = Brief("river", TOPICS["river"], "", ())
    >>> round(hidden_quality("", (), b), 3), round(hidden_quality("river ferry reeds banks", (), b), 3)
    (0.0, 0.85)
    """
    ws = words(answer)
    if not ws:
        return 0.0
    met = sum(c.check(answer) for c in constraints) / len(constraints) if constraints else 1.0
    coverage = min(1.0, len(set(ws) & set(brief.vocabulary)) / rubric.coverage_target)
    diversity = len(set(ws)) / len(ws)
    length = math.exp(-abs(math.log(len(ws) / rubric.ideal_words)))
    style = (coverage + diversity + length) / 3.0
    return rubric.w_constraints * met + rubric.w_style * style
