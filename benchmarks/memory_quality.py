"""Memory quality vs. unsupported correct answers in `papergym/MemoryQA-v0` (AWM's statistic).

The policy reads the pages. It sees only what the env shows it (the question, its memory and the current
page: never the gold evidence list or the answer), parses the question's attribute and subjects from its
text, and on each page keeps, with probability ``q`` each (coins from its own seed, fixed before
measuring), the statements that look relevant: a line naming the question's attribute and sharing a
word with one of its subjects. That test is loose on purpose, as a skimming reader's is: it also keeps
statements about similar-named distractor subjects and the "(See page N ...)" cross-references, which
fill the capped memory (512 characters; the env keeps the first 512) before later evidence arrives.
It appends what it keeps to the memory the env showed it, and answers from that memory when the env's
extractive reader can, else with the prior guess read from the question (the attribute's default, or the
first-named option). For each ``q`` in a sweep, reading the whole document and reading the gold evidence
pages only, the table reports accuracy, memory-only answerability and the share of correct answers
whose memory is not answerable. The AWM summary reports 42.5% for that share with gold evidence pages
(papers/training.md §6); nothing here is tuned toward it.

Usage::

    python benchmarks/memory_quality.py [--episodes 300] [--write benchmarks/README.md]
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path
from typing import Any

import gymnasium as gym
from readme_section import write_section

import papergym  # noqa: F401  (registers the ids)
from papergym.baselines.memory_skimmer import read_observation
from papergym.core import info_keys as K
from papergym.envs.memory_qa.documents import prior_answer
from papergym.envs.memory_qa.reader import UNKNOWN, ExtractiveReader, parse_question

QUALITIES = (0.0, 0.25, 0.5, 0.75, 1.0)


class SkimmingReader:
    """A page-reading policy: keeps each relevant-looking line of each page with probability ``q``."""

    def __init__(self, quality: float, seed: int) -> None:
        self.quality = quality
        self.coins = random.Random(seed * 7919 + int(quality * 1000))

    def act(self, observation: str) -> str:
        """The next action, from the observation text alone."""
        question, held, page = read_observation(observation)
        if page is None:  # the answer phase
            answer = ExtractiveReader().answer(question, held)
            return f"<answer>{prior_guess(question) if answer == UNKNOWN else answer}</answer>"
        kept = [line for line in relevant_lines(question, page) if self.coins.random() < self.quality]
        return "<memory>" + "\n".join([held, *kept] if held else kept) + "</memory>"


def relevant_lines(question: str, page: str) -> list[str]:
    """The page's lines naming the question's attribute and sharing a word with one of its subjects."""
    parsed = parse_question(question)
    if parsed is None:
        return []
    _, attribute, subjects = parsed
    words = {w.lower() for s in subjects for w in s.split()}
    return [
        line.strip().removeprefix("- ")
        for line in page.splitlines()
        if attribute.lower() in line.lower() and words & set(re.findall(r"[\w-]+", line.lower()))
    ]


def prior_guess(question: str) -> str:
    """The guess without evidence, from the question text: the first-named option of a comparison, the
    attribute's default for a categorical single fact, else "unknown"."""
    parsed = parse_question(question)
    return UNKNOWN if parsed is None else prior_answer(*parsed)


def episode(env: gym.Env, quality: float, seed: int) -> dict[str, Any]:
    """One episode of the skimming reader on the test split; the final info."""
    observation, _ = env.reset(seed=seed, options={"split": "test"})
    policy = SkimmingReader(quality, seed)
    while True:
        observation, _, terminated, truncated, info = env.step(policy.act(observation))
        if terminated or truncated:
            if not terminated:
                raise RuntimeError(f"episode {seed} did not end on its answer")
            return info


def measure(episodes: int) -> list[dict[str, Any]]:
    rows = []
    for evidence_only in (False, True):
        env = gym.make("papergym/MemoryQA-v0", evidence_only=evidence_only)
        for quality in QUALITIES:
            correct = answerable = unsupported = 0
            for seed in range(episodes):
                checks = episode(env, quality, seed)[K.CHECKS]
                correct += checks["correct"]
                answerable += checks["memory_answerable"]
                unsupported += checks["correct"] and not checks["memory_answerable"]
            rows.append(
                {
                    "reading": "gold evidence only" if evidence_only else "whole document",
                    "q": quality,
                    "accuracy": correct / episodes,
                    "answerable": answerable / episodes,
                    "unsupported": unsupported / correct if correct else float("nan"),
                    "correct": correct,
                }
            )
        env.close()
    return rows


def table(rows: list[dict[str, Any]], episodes: int) -> str:
    lines = [
        "| reading | memory quality q | accuracy | memory-only answerable | correct but not answerable "
        "(share of correct) |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['reading']} | {r['q']:.2f} | {r['accuracy']:.3f} | {r['answerable']:.3f} | "
            f"{r['unsupported']:.1%} ({r['correct']} correct) |"
        )
    lines.append("")
    lines.append(
        f"{episodes} test-split episodes per row (seeds 0..{episodes - 1}, default kwargs: 20-60 pages, "
        "guessable_share 0.3, extractive reader). Policy: reads each page and keeps each line that names the "
        "question's attribute and shares a word with one of its subjects (distractors and cross-references "
        "included) with probability q, appending to its memory (512 characters; the env keeps the first "
        "512); it never sees the gold evidence list or the answer; it answers from its memory when the "
        "reader can, else with the prior guess. Paper reference (AWM summary): "
        "42.5% of correct answers not answerable from memory, with gold evidence pages."
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--write", type=Path, default=None)
    args = parser.parse_args()
    text = table(measure(args.episodes), args.episodes)
    print(text)
    if args.write is not None:
        write_section(args.write, "memory_quality", "Memory quality (`benchmarks/memory_quality.py`)", text)


if __name__ == "__main__":
    main()
