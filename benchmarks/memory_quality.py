"""Memory quality vs. unsupported correct answers in `papergym/MemoryQA-v0` (AWM's statistic).

A policy keeps a memory of fixed, stated quality ``q``: it keeps each gold evidence fact with
probability ``q`` (its coins are drawn from its own seed, fixed before measuring), writes nothing
else, and answers from its memory when that memory supports an answer (the env's extractive
reader answers) and with the prior guess (`prior_guess`: the attribute's default, or the
first-named option) when it does not. For each ``q`` in a sweep, with full reading and with
gold-evidence-only reading, the table reports accuracy, memory-only answerability and the share
of correct answers whose memory is not answerable. The AWM summary reports 42.5% for that share
with gold evidence pages (papers/training.md §6); nothing here is tuned toward it.

Usage::

    python benchmarks/memory_quality.py [--episodes 300] [--write benchmarks/README.md]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any

import gymnasium as gym
from readme_section import write_section

import papergym  # noqa: F401  (registers the ids)
from papergym.core import info_keys as K
from papergym.envs.memory_qa.documents import fact_line, prior_guess
from papergym.envs.memory_qa.reader import UNKNOWN, ExtractiveReader

QUALITIES = (0.0, 0.25, 0.5, 0.75, 1.0)


def episode(env: gym.Env, quality: float, seed: int) -> dict[str, Any]:
    """One episode of the fixed-quality policy on the test split; the final info."""
    env.reset(seed=seed, options={"split": "test"})
    inner: Any = env.unwrapped
    coins = random.Random(seed * 7919 + int(quality * 1000))
    evidence = inner.question.evidence
    keep = [coins.random() < quality for _ in evidence]
    kept: list[str] = []
    reader = ExtractiveReader()
    for page in inner.chunks:
        for (subject, attribute, value, where), keep_it in zip(evidence, keep, strict=True):
            if where == page and keep_it:
                kept.append(fact_line(subject, attribute, value))
        env.step("<memory>" + "\n".join(kept) + "</memory>")
    answer = reader.answer(inner.question.text, inner.memory)
    if answer == UNKNOWN:
        answer = prior_guess(inner.question)
    _, _, terminated, _, info = env.step(f"<answer>{answer}</answer>")
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
        "guessable_share 0.3, extractive reader). Policy: keeps each gold evidence fact with probability q, "
        "answers from its memory when the reader can, else the prior guess. Paper reference (AWM summary): "
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
