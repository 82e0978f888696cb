"""A small learned page-skimming policy for `papergym/MemoryQA-v0`, trained with the GRPO loss.

The policy is not a language model: it is for AWM's credit question (training.md §6) where a ~1M-parameter
LM cannot copy a value off a page on a CPU budget (benchmarks/README.md, "Tiny-LM copying"), so its
memories never hold the evidence and a memory-aware reward has nothing to act on. Here copying is given by
the action space and *what to keep* is learned:

- **reading**: the page is cut into statements (a line of prose or of key facts; a table row, rendered
  ``subject - column: value`` so it stands on its own). For each statement the policy draws keep or drop
  from a softmax row chosen by features of the statement against the question text alone (`FEATURES`:
  does it name the question's attribute, one of its subjects, only a word of one, is it a cross-reference,
  a table row). Kept statements are appended to the memory the env showed (the env keeps the first
  ``memory_limit`` characters, so a policy that keeps too much loses later evidence).
- **answering**: the policy draws, from a row chosen by the question type and whether the extractive reader
  can answer from the memory, to answer with the reader's extraction from its memory or with the prior
  guess the question allows (`papergym.envs.memory_qa.documents.prior_answer`).

Nothing reads the gold evidence list, the answer or the env's checks; the features see only the
observation text. Initial logits are zero: every statement kept with probability 1/2, either answer
mode with probability 1/2.

What this makes easy, and so what a result on it can say: the features follow the env's own statement
templates, so on MemoryQA-v0's documents the row "names the attribute and a subject, not a
cross-reference or table row" holds exactly the gold evidence statements; learning to keep is finding that
row among 32. And the memory answer is the env's own extractive reader over the memory, the function that
judges ``memory_answerable``: a correct answer in memory mode is answerable by construction, so a trained
skimmer's unsupported share measures how often it guesses, not how faithful its memory is.

`train` runs GRPO over groups of episodes of one task and returns per-step training checks; `play` runs
one episode and returns its `Sample` and final info.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from papergym.baselines.losses import group_advantages
from papergym.baselines.softmax_grpo import Sample, SoftmaxGRPOArgs, SoftmaxHeads, make_env
from papergym.core import info_keys as K
from papergym.core.errors import require
from papergym.envs.memory_qa.documents import QUESTION_TYPES, prior_answer
from papergym.envs.memory_qa.reader import UNKNOWN, ExtractiveReader, parse_question, subject_pattern

FEATURES: tuple[str, ...] = ("attribute", "subject", "subject_word", "cross_reference", "table_row")
"""The bits that pick a statement's keep row (``2 ** len(FEATURES)`` rows)."""
TRAIN_OPTIONS = {"split": "train"}
"""The reset options of a training episode."""
ANSWER_MODES: tuple[str, ...] = ("memory", "guess")
_QUESTION = re.compile(r"^Question: (.+)$", re.MULTILINE)
_MEMORY = re.compile(
    r"^Your memory \([^)]*\):\n(.*?)(?:\n\nPage \d+ of \d+ \(chunk|\n\nYou have read)", re.S | re.M
)
_PAGE = re.compile(r"\(chunk \d+ of \d+\):\n(.*?)\n\nWrite your new memory", re.S)
_TABLE = re.compile(r"^Table: (.+)$")
_ROW = re.compile(r"^\|\s*(.+?)\s*\|\s*(.+?)\s*\|$")
_WORD = re.compile(r"[\w-]+")


def read_observation(observation: str) -> tuple[str, str, str | None]:
    """``(question, memory, page)`` of a MemoryQA-v0 text observation: the memory ``""`` when empty, the page
    None in the answer phase.

    Raises:
        ValueError: the text has no question or no memory block.
    """
    question, memory = _QUESTION.search(observation), _MEMORY.search(observation)
    if question is None or memory is None:
        raise ValueError("not a MemoryQA-v0 observation (no question or memory block)")
    held = "" if memory[1].strip() == "(empty)" else memory[1].strip()
    page = _PAGE.search(observation)
    return question[1], held, None if page is None else page[1]


def statements(page: str) -> list[tuple[str, bool]]:
    """The page's statements as ``(text, is a table row)``: prose and fact lines as written, table rows as
    ``subject - column: value``; the page heading, section line, labels and table headers are left out.

    >>> statements("Report - page 1 of 3\\nSection: X\\n\\nA line.\\n\\nTable: headcount\\n"
    ...            "| subject | headcount |\\n|---|---|\\n| Harbor Media | 12 |")
    [('A line.', False), ('Harbor Media - headcount: 12', True)]
    """
    out: list[tuple[str, bool]] = []
    column: str | None = None
    for i, raw in enumerate(page.splitlines()):
        line = raw.strip()
        if i < 2 or not line or line == "Key facts:":
            continue
        if table := _TABLE.match(line):
            column = table[1]
            continue
        row = _ROW.match(line)
        if row is not None:
            if column is not None and row[1] != "subject" and not set(row[1]) <= {"-"}:
                out.append((f"{row[1]} - {column}: {row[2]}", True))
            continue
        column = None
        out.append((line, False))
    return out


def feature_row(text: str, is_table_row: bool, attribute: str, subjects: Sequence[str]) -> int:
    """The keep row of a statement: the `FEATURES` bits read from its text and the question's parse.

    >>> feature_row("The headcount of Harbor Media is 12.", False, "headcount", ["Harbor Media"])
    3
    >>> feature_row("Harbor Foods grew.", False, "headcount", ["Harbor Media"])
    4
    """
    lower = text.lower()
    names_subject = any(subject_pattern(s).search(lower) for s in subjects)
    subject_words = {w.lower() for s in subjects for w in s.split()}
    bits = (
        attribute.lower() in lower,
        names_subject,
        not names_subject and bool(subject_words & set(_WORD.findall(lower))),
        lower.startswith("(see page"),
        is_table_row,
    )
    return sum(int(b) << i for i, b in enumerate(bits))


class SkimmerPolicy:
    """The learned skimmer (see the module docstring): a ``keep`` head (one row per feature pattern, choices
    drop / keep) and an ``answer`` head (one row per question type x reader-can-answer, choices
    `ANSWER_MODES`), trained with the clipped GRPO loss of `SoftmaxHeads`.

    Args:
        lr, epochs, clip: `SoftmaxHeads`' Adam step size, epochs per update and clip range.
    """

    def __init__(self, *, lr: float = 0.1, epochs: int = 4, clip: float = 0.2) -> None:
        self.heads = SoftmaxHeads(
            {"keep": (2 ** len(FEATURES), 2), "answer": (2 * len(QUESTION_TYPES), len(ANSWER_MODES))},
            lr=lr,
            epochs=epochs,
            clip=clip,
        )
        self.reader = ExtractiveReader()

    def act(self, observation: str, rng: np.random.Generator, decisions: list[tuple[str, int, int]]) -> str:
        """The next action from the observation text alone; the draws are appended to ``decisions``."""
        question, held, page = read_observation(observation)
        parsed = parse_question(question)
        if parsed is None:
            raise ValueError(f"not one of MemoryQA-v0's question templates: {question!r}")
        qtype, attribute, subjects = parsed
        if page is None:  # the answer phase
            extracted = self.reader.answer(question, held)
            row = 2 * QUESTION_TYPES.index(qtype) + int(extracted != UNKNOWN)
            mode = ANSWER_MODES[self.heads.draw("answer", row, rng, decisions)]
            answer = extracted if mode == "memory" else prior_answer(qtype, attribute, subjects)
            return f"<answer>{answer}</answer>"
        kept = [
            text
            for text, is_row in statements(page)
            if self.heads.draw("keep", feature_row(text, is_row, attribute, subjects), rng, decisions)
        ]
        return "<memory>" + "\n".join([held, *kept] if held else kept) + "</memory>"

    def keep_probabilities(self) -> list[float]:
        """P(keep) per feature row (for logging)."""
        return [self.heads.probabilities("keep", row)[1] for row in range(2 ** len(FEATURES))]

    def update(self, samples: Sequence[Sample], advantages: Sequence[float]) -> float:
        """One GRPO update on whole episodes (one advantage per episode)."""
        return self.heads.update(samples, advantages)


def play(
    env: Any,
    policy: SkimmerPolicy,
    rng: np.random.Generator,
    *,
    seed: int,
    options: dict[str, Any] | None = None,
) -> tuple[Sample, float, dict[str, Any]]:
    """One episode of ``policy`` on ``env`` reset with ``seed``: its `Sample` (every decision of the episode;
    ``text``: the last action), its return and its final info."""
    observation, _ = env.reset(seed=seed, options=options)
    sample, total = Sample(""), 0.0
    while True:
        action = policy.act(observation, rng, sample.decisions)
        observation, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        if terminated or truncated:
            sample.text = action
            return sample, total, info


def episode_checks(info: dict[str, Any]) -> tuple[bool, bool]:
    """(answer correct?, final memory answerable?) from an episode's final info (False, False without
    checks: an episode cut before its answer)."""
    checks = info.get(K.CHECKS) or {}
    return bool(checks.get("correct", False)), bool(checks.get("memory_answerable", False))


@dataclass
class Args(SoftmaxGRPOArgs):
    """GRPO for the skimmer on one env."""

    env: str = "papergym/MemoryQA-v0"
    """The env id the policy trains on."""
    env_wrapper: str | None = None
    """A wrapper around the training env: a short name of `papergym.wrappers.WRAPPERS` (e.g. four_cell) or
    module:Class; None: the env's own reward."""


StepCallback = Callable[[int, dict[str, float], SkimmerPolicy], None]


def train(args: Args, *, on_step: StepCallback | None = None) -> SkimmerPolicy:
    """GRPO on ``args.env`` (its reward, through ``args.env_wrapper``, is what the run trains on): every
    step, ``tasks_per_step`` train-split tasks, ``group_size`` episodes each, one group-normalised advantage
    per episode. ``on_step(step, metrics, policy)`` gets the step's mean reward, the share of its episodes
    answered correctly and with an answerable memory, and the loss."""
    torch = require("torch", "llm")
    env = make_env(args.env, args.env_kw, args.env_wrapper)
    policy = SkimmerPolicy(lr=args.lr, epochs=args.epochs)
    rng = np.random.default_rng(args.seed)
    try:
        for step in range(args.steps):
            task_seeds = rng.integers(0, 2**31 - 1, size=args.tasks_per_step)
            samples: list[Sample] = []
            rewards: list[float] = []
            checks: list[tuple[bool, bool]] = []
            for task_seed in task_seeds:
                for _ in range(args.group_size):
                    sample, total, info = play(env, policy, rng, seed=int(task_seed), options=TRAIN_OPTIONS)
                    samples.append(sample)
                    rewards.append(total)
                    checks.append(episode_checks(info))
            table = torch.tensor(rewards, dtype=torch.float32).view(args.tasks_per_step, args.group_size)
            loss = policy.update(samples, group_advantages(table).flatten().tolist())
            if on_step is not None:
                metrics = {
                    "reward": float(np.mean(rewards)),
                    "accuracy": float(np.mean([c for c, _ in checks])),
                    "answerable": float(np.mean([a for _, a in checks])),
                    "loss": loss,
                }
                on_step(step, metrics, policy)
    finally:
        env.close()
    return policy
