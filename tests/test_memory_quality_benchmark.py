"""The memory-quality benchmark's policy reads the pages (never the gold evidence), so its readings differ."""

from __future__ import annotations

import gymnasium as gym
import pytest

import papergym  # noqa: F401  (registers the ids)
from papergym.core import info_keys as K


@pytest.fixture
def bench(benchmark_module):
    return benchmark_module("memory_quality")


def test_the_policy_acts_on_the_observation_text_alone(bench) -> None:
    env = gym.make("papergym/MemoryQA-v0", pages=(3, 3))
    observation, _ = env.reset(seed=4)
    question = env.unwrapped.question
    # the same text gives the same action, whatever the env holds behind it
    action = bench.SkimmingReader(1.0, seed=0).act(observation)
    assert action == bench.SkimmingReader(1.0, seed=0).act(str(observation))
    assert action.startswith("<memory>") and action.endswith("</memory>")
    assert bench.prior_guess(question.text) in {question.subjects[0], "unknown", *_defaults(question)}
    with pytest.raises(ValueError, match="not a MemoryQA"):
        bench.SkimmingReader(1.0, seed=0).act("hello")


def _defaults(question) -> set[str]:
    from papergym.envs.memory_qa.documents import ATTRIBUTES

    default = ATTRIBUTES[question.attribute].default
    return {default} if default else set()


def test_relevant_lines_keep_distractors_and_cross_references(bench) -> None:
    question = "What is the headcount of Harbor Media?"
    page = (
        "- Harbor Media - headcount: 1200\n"
        "For Harbor Foods, the headcount stands at 1203.\n"
        "(See page 4 for the headcount of Harbor Media.)\n"
        "- Harbor Media - audit opinion: qualified\n"
        "- Redstone Mining - headcount: 77"
    )
    assert bench.relevant_lines(question, page) == [
        "Harbor Media - headcount: 1200",
        "For Harbor Foods, the headcount stands at 1203.",
        "(See page 4 for the headcount of Harbor Media.)",
    ]


def test_whole_document_and_gold_pages_rows_differ(bench) -> None:
    answerable = {}
    for evidence_only in (False, True):
        env = gym.make("papergym/MemoryQA-v0", evidence_only=evidence_only)
        answerable[evidence_only] = sum(
            bench.episode(env, 1.0, seed)[K.CHECKS]["memory_answerable"] for seed in range(12)
        )
        env.close()
    # reading only the gold pages, the skimmer's capped memory is not crowded out by distractors
    assert answerable[True] > answerable[False]
