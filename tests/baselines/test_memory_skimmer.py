"""The learned MemoryQA-v0 skimmer: statements, feature rows, reading the observation alone, learning."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import torch

from papergym.baselines import memory_skimmer as skim

SETTING = ["pages=[3, 3]", "difficulty=1", "kind=annual_report", "max_episode_steps=8"]


def test_table_rows_stand_alone_and_headings_are_left_out() -> None:
    page = (
        "Annual Report of X - page 2 of 3\nSection: Outlook\n\nHarbor Media grew.\n\nKey facts:\n"
        "(See page 3 for the headcount of Harbor Media.)\n\nTable: headcount\n| subject | headcount |\n"
        "|---|---|\n| Harbor Media | 12 |\n| Redstone Foods | 40 |"
    )
    got = skim.statements(page)
    assert got == [
        ("Harbor Media grew.", False),
        ("(See page 3 for the headcount of Harbor Media.)", False),
        ("Harbor Media - headcount: 12", True),
        ("Redstone Foods - headcount: 40", True),
    ]
    rows = [skim.feature_row(text, row, "headcount", ["Harbor Media"]) for text, row in got]
    # subject only; attribute + subject + cross-reference; attribute + subject + table row; attribute + table
    assert rows == [0b00010, 0b01011, 0b10011, 0b10001]
    assert skim.feature_row("Harbor Foods grew.", False, "headcount", ["Harbor Media"]) == 0b00100


OBSERVATION = """You answer a question about a long document.

Question: What is the headcount of Harbor Media?

Your memory (20/512 characters):
Old line I kept.

Page 2 of 3 (chunk 1 of 1):
Report - page 2 of 3
Section: Outlook

Key facts:
The headcount of Harbor Media is 12.
(See page 3 for the headcount of Harbor Media.)

Write your new memory between <memory> and </memory>."""


def test_the_policy_acts_on_an_observation_text_alone() -> None:
    policy = skim.SkimmerPolicy()
    with torch.no_grad():  # keep exactly the statements naming the attribute and a subject
        policy.heads.logits["keep"].fill_(-50.0)
        policy.heads.logits["keep"][0b00011, 1] = 50.0
    decisions: list[tuple[str, int, int]] = []
    action = policy.act(OBSERVATION, np.random.default_rng(0), decisions)
    assert action == "<memory>Old line I kept.\nThe headcount of Harbor Media is 12.</memory>"
    assert decisions == [("keep", 0b00011, 1), ("keep", 0b01011, 0)]
    answer_phase = OBSERVATION.split("\n\nPage")[0] + "\n\nYou have read the whole document."
    answer_phase = answer_phase.replace("Old line I kept.", "Harbor Media - headcount: 12")
    with torch.no_grad():
        reader_can_answer_single = 2 * skim.QUESTION_TYPES.index("single") + 1
        policy.heads.logits["answer"][reader_can_answer_single] = torch.tensor([50.0, -50.0])
    assert policy.act(answer_phase, np.random.default_rng(0), []) == "<answer>12</answer>"
    with pytest.raises(ValueError, match="not a MemoryQA-v0 observation"):
        policy.act("Question: nothing else", np.random.default_rng(0), [])


def test_episodes_end_on_a_well_formed_answer() -> None:
    env = skim.make_env("papergym/MemoryQA-v0", SETTING)
    policy = skim.SkimmerPolicy()
    sample, total, info = skim.play(env, policy, np.random.default_rng(0), seed=3, options={"split": "test"})
    assert sample.text.startswith("<answer>") and sample.text.endswith("</answer>")
    assert {head for head, _, _ in sample.decisions} == {"keep", "answer"}
    assert sum(head == "answer" for head, _, _ in sample.decisions) == 1
    assert total in (0.0, 1.0) and set(info["checks"]) == {"correct", "memory_answerable"}


def test_same_seed_same_policy_and_curve() -> None:
    def once() -> tuple[list[float], list[dict[str, float]]]:
        rows: list[dict[str, float]] = []
        args = skim.Args(env_kw=SETTING, steps=2, tasks_per_step=2, group_size=3, seed=4)
        policy = skim.train(args, on_step=lambda step, metrics, _: rows.append(metrics))
        return policy.keep_probabilities(), rows

    assert once() == once()


def test_grpo_learns_to_keep_the_asked_fact_and_answer_from_memory() -> None:
    rows: list[dict[str, float]] = []
    args = skim.Args(env_kw=SETTING, steps=10, tasks_per_step=4, group_size=4, seed=0)
    policy = skim.train(args, on_step=lambda step, metrics, _: rows.append(metrics))
    keep = policy.keep_probabilities()
    assert keep[0b00011] > 0.9  # names the attribute and a subject of the question
    assert keep[0b00000] < 0.2  # names neither
    reader_can_answer_single = 2 * skim.QUESTION_TYPES.index("single") + 1
    assert policy.heads.probabilities("answer", reader_can_answer_single)[0] > 0.9  # answer from memory
    assert np.mean([r["accuracy"] for r in rows[-3:]]) > np.mean([r["accuracy"] for r in rows[:3]]) + 0.3
