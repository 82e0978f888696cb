"""The learned MemoryQA-v0 skimmer: statements, feature rows, reading the observation alone, learning."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

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


def test_the_policy_reads_only_the_observation_and_writes_well_formed_actions() -> None:
    env = skim.make_env("papergym/MemoryQA-v0", SETTING)
    policy = skim.SkimmerPolicy()
    with pytest.raises(ValueError, match="not a MemoryQA-v0 observation"):
        policy.act("Question: nothing else", np.random.default_rng(0), [])
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
