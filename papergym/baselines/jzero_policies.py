"""Small trainable challenger and solver policies for the J-Zero loop, learned with the GRPO loss.

Each policy is a set of softmax heads over a few generic writing decisions; a sample is the text the
decisions realise plus the decisions themselves (the "tokens" whose log-probabilities the clipped GRPO
loss of `papergym.baselines.losses` trains). Nothing here knows what a good answer is: the solver
chooses, for every ``key: arg`` line of a task, a generic treatment of ``arg`` (ignore it, mention
it, end with it, pad or cut the length to it, add that many bullet lines), plus a length and a body
style; which treatment suits which key is learned from the rewards alone. The challenger chooses
which menu constraints to impose, how much of its source to hint in the task, and whether its
privileged reference is the source edited to meet its own constraints or the raw source.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from papergym.baselines.softmax_grpo import Sample, SoftmaxHeads
from papergym.envs.selfplay.writing import FILLER, parse_constraints, words

if TYPE_CHECKING:  # torch is imported where it is used, so importing this module stays light
    pass

_DIRECTIVE = re.compile(r"^\s*([a-z_]+)\s*:\s*(\S+)\s*$")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_STOP = frozenset({"write", "about", "short", "note", "the", "with", "that", "this", "and", "for", "piece"})
KEY_BUCKETS = 16
LENGTHS: tuple[int, ...] = (8, 20, 40, 80)
BODIES: tuple[str, ...] = ("task_words", "varied", "repeat", "filler")
CONNECTIVES: tuple[str, ...] = (
    "the",
    "near",
    "with",
    "under",
    "every",
    "quiet",
    "old",
    "new",
    "morning",
    "evening",
    "many",
    "each",
    "before",
    "after",
    "where",
    "always",
    "slowly",
    "bright",
    "small",
    "great",
    "across",
    "beside",
    "still",
    "often",
)
"""Common words the ``varied`` body interleaves with the task's words."""
TREATMENTS: tuple[str, ...] = ("ignore", "mention", "end", "pad_to", "cut_to", "bullets")


def _bucket(key: str) -> int:
    return zlib.crc32(key.encode()) % KEY_BUCKETS


def _sentences(ws: Sequence[str], end: str = ".") -> str:
    chunks = [list(ws[i : i + 8]) for i in range(0, len(ws), 8)]
    text = " ".join(" ".join(c).capitalize() + "." for c in chunks if c)
    return text[:-1] + end if text else ""


def realize_answer(task: str, length: int, body: str, treatments: Sequence[tuple[str, str, str]]) -> str:
    """The text a solver's decisions describe.

    Args:
        task: the task text.
        length: body length in words.
        body: ``task_words`` (the task's prose words in turn), ``varied`` (the same interleaved with
            common `CONNECTIVES`), ``repeat`` (its first word over and over), ``filler`` (neutral filler).
        treatments: ``(treatment, key, arg)`` per ``key: arg`` line of the task.

    >>> realize_answer("About the river ferry.\\ninclude: reeds", 4, "task_words", [("mention", "", "reeds")])
    'River ferry river ferry reeds.'
    """
    prose = [
        w for line in task.split("\n") if not _DIRECTIVE.match(line) for w in words(line) if w not in _STOP
    ]
    prose = prose or words(FILLER)
    if body == "task_words":
        ws = [prose[i % len(prose)] for i in range(length)]
    elif body == "varied":
        ws = [
            prose[i // 2 % len(prose)] if i % 2 else CONNECTIVES[i // 2 % len(CONNECTIVES)]
            for i in range(length)
        ]
    elif body == "repeat":
        ws = [prose[0]] * length
    else:
        filler = words(FILLER)
        ws = [filler[i % len(filler)] for i in range(length)]
    end, bullets = ".", 0
    for treatment, _, arg in treatments:
        number = int(arg) if arg.isdigit() else None
        if treatment == "mention" and arg.isalpha():
            ws.append(arg.lower())
        elif treatment == "end" and arg in ("?", "!", "."):
            end = arg
        elif treatment == "pad_to" and number is not None:
            ws += [prose[i % len(prose)] for i in range(max(0, number - len(ws)))]
        elif treatment == "cut_to" and number is not None:
            ws = ws[: max(1, number - bullets)]
        elif treatment == "bullets" and number is not None:
            bullets = max(bullets, min(number, 10))
    text = _sentences(ws, end if not bullets else ".")
    if bullets:
        text += "".join(f"\n- {prose[i % len(prose)]}" for i in range(bullets))
        text = text + ("" if end == "." else f"\n{end}")
    return text


class SolverPolicy:
    """The small trainable solver: length, body style and a treatment per task directive key.

    Verifiable tasks (``\\boxed{}`` requested): it answers the k-th number of the task, k learned.

    Args:
        lr, epochs, clip: see `SoftmaxHeads`.
    """

    def __init__(self, *, lr: float = 0.1, epochs: int = 4, clip: float = 0.2) -> None:
        self.heads = SoftmaxHeads(
            {
                "length": (1, len(LENGTHS)),
                "body": (1, len(BODIES)),
                "treat": (KEY_BUCKETS, len(TREATMENTS)),
                "number": (1, 8),
            },
            lr=lr,
            epochs=epochs,
            clip=clip,
        )

    def act(self, observation: str, rng: np.random.Generator) -> Sample:
        """One answer to the task in ``observation`` (the solver's prompt)."""
        task = observation.split("Task:\n", 1)[-1]
        decisions: list[tuple[str, int, int]] = []
        if "\\boxed{}" in task:
            numbers = _NUMBER.findall(task.split("Put your final answer")[0])
            k = self.heads.draw("number", 0, rng, decisions)
            return Sample(f"\\boxed{{{numbers[k % len(numbers)] if numbers else 0}}}", decisions)
        length = LENGTHS[self.heads.draw("length", 0, rng, decisions)]
        body = BODIES[self.heads.draw("body", 0, rng, decisions)]
        treatments = []
        for line in task.split("\n"):
            match = _DIRECTIVE.match(line)
            if match:
                key, arg = match.groups()
                choice = self.heads.draw("treat", _bucket(key), rng, decisions)
                treatments.append((TREATMENTS[choice], key, arg))
        return Sample(realize_answer(task, length, body, treatments), decisions)

    def update(self, samples: Sequence[Sample], advantages: Sequence[float]) -> float:
        """One GRPO update (see `SoftmaxHeads.update`)."""
        return self.heads.update(samples, advantages)


class ChallengerPolicy:
    """The small trainable challenger: which menu constraints to impose (per kind), how much of the source
    to hint in the task, and which reference to write.

    Verifiable material: the task is the source problem and the reference its stated answer (no choice).

    Args:
        lr, epochs, clip: see `SoftmaxHeads`.
    """

    def __init__(self, *, lr: float = 0.1, epochs: int = 4, clip: float = 0.2) -> None:
        self.heads = SoftmaxHeads(
            {"impose": (KEY_BUCKETS, 2), "hint": (1, 3), "reference": (1, 2)}, lr=lr, epochs=epochs, clip=clip
        )

    def act(self, observation: str, rng: np.random.Generator) -> Sample:
        """One ``<task>...</task><reference>...</reference>`` for the material in ``observation``."""
        decisions: list[tuple[str, int, int]] = []
        if "(verifiable)" in observation:
            problem = observation.split("(only you see it):\n", 1)[-1].split("\nIts answer: ")
            answer = problem[1].split("\n")[0] if len(problem) > 1 else ""
            return Sample(f"<task>{problem[0]}</task>\n<reference>{answer}</reference>", decisions)
        topic = re.search(r"Topic: (\w+)", observation)
        source = observation.split("(only you see it):\n", 1)[-1].split("\n\n")[0]
        menu = observation.split("as `kind: arg`:\n", 1)[-1].split("\n\n")[0].split("\n")
        imposed = [
            line
            for line in menu
            if _DIRECTIVE.match(line)
            and self.heads.draw("impose", _bucket(line.split(":")[0]), rng, decisions) == 1
        ]
        hint_words = [w for w in dict.fromkeys(words(source)) if w not in _STOP]
        hint = (0, 3, 6)[self.heads.draw("hint", 0, rng, decisions)]
        prose = f"Write a short piece about the {topic.group(1) if topic else 'topic'}"
        prose += (": " + ", ".join(hint_words[:hint]) + ".") if hint else "."
        reference = source
        if self.heads.draw("reference", 0, rng, decisions) == 0:
            for c in parse_constraints("\n".join(imposed)) or ():
                reference = c.fixed(reference)
        task = "\n".join([prose, *imposed])
        return Sample(f"<task>{task}</task>\n<reference>{reference}</reference>", decisions)

    def update(self, samples: Sequence[Sample], advantages: Sequence[float]) -> float:
        """One GRPO update (see `SoftmaxHeads.update`)."""
        return self.heads.update(samples, advantages)
