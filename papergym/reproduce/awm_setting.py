"""What both training paths of ``papergym reproduce awm`` share (the LM's, `papergym.reproduce.awm`, and the
learned skimmer's, `papergym.reproduce.awm_skimmer`): the run's arguments, the arms and what may differ
between them, the held-out task seeds and readings, the per-task score shape, and the loop that trains
every (seed, arm). The setting itself is described in `papergym.reproduce.awm`'s docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from papergym.reproduce.driver import WarmStartArgs, train_arms

TRAINED_ARMS = ("answer_only", "four_cell")
REFERENCE = "answer_only"
MECHANISM = {"four_cell": ("env_wrapper",)}
"""Against answer-only GRPO, the four-cell arm wraps its training envs in `FourCellReward`, nothing else."""
READINGS = ("whole", "gold")
"""The evaluation readings: the whole document, and the gold evidence pages only."""
EVAL_SEED = 10**6
"""The first held-out task seed (test split)."""


@dataclass
class Args(WarmStartArgs):
    """Answer-only GRPO vs four-cell GRPO on MemoryQA-v0 (training.md §6); the setting is
    `papergym.reproduce.awm`'s docstring."""

    env: str = "papergym/MemoryQA-v0"
    """The env every arm trains and is evaluated on."""
    env_kw: list[str] = field(
        default_factory=lambda: ["pages=[3, 3]", "difficulty=1", "kind=annual_report", "max_episode_steps=8"]
    )
    """Three-page annual reports, one distractor per evidence fact, eight actions at most (why:
    `papergym.reproduce.awm`)."""
    family_key: str = "question_type"
    """The reset-info key naming a task's question type."""
    steps: int | None = 12
    """GRPO steps per arm (the budget: what fits 20 minutes of 2 CPU cores with the SFT warm start and the
    evaluations, from measured CPU seconds: about 12 s per step of 16 episodes, 450 s of SFT)."""
    prompts_per_step: int = 2
    """Tasks per GRPO step."""
    group_size: int = 8
    """Rollouts per task."""
    lr: float = 1e-4
    """AdamW learning rate of both arms (inferred for the tiny LM, as es-vs-grpo's GRPO)."""
    max_new_tokens: int = 48
    """Token budget of one action (the oracle's longest memory, three facts, is about 48 tokens)."""
    eval_tasks: int = 32
    """Held-out test tasks per reading."""
    eval_samples: int = 2
    """Samples per held-out task (temperature 1)."""
    sft_episodes: int = 800
    """Oracle demonstrations of the SFT warm start (four contexts each)."""
    sft_steps: int = 300
    """SFT optimizer steps."""
    sft_batch: int = 16
    """SFT batch size."""
    smooth: int = 4
    """Steps per point of the learning-curve figure (a moving window)."""
    note: str = ""
    """A sentence the README section prints about how this run was made (e.g. a reused warm start)."""
    policy: str = "lm"
    """``lm``: the tiny LM (or ``--model DIR``) as above; ``skimmer``: the learned page-skimming policy of
    `papergym.baselines.memory_skimmer` (`papergym.reproduce.awm_skimmer`), no warm start; it uses the
    ``skimmer_*`` fields, ``group_size``, ``env``/``env_kw``, the evaluation fields and ``seeds``, and not the
    LM's (``steps``, ``prompts_per_step``, ``lr``, ``max_new_tokens``, ``sft_*``)."""
    skimmer_steps: int = 60
    """GRPO steps per arm of the skimmer."""
    skimmer_tasks_per_step: int = 8
    """Tasks per GRPO step of the skimmer (``group_size`` rollouts each)."""
    skimmer_lr: float = 0.1
    """Adam step size on the skimmer's logits (inferred, as the J-Zero policies')."""


def task_scores(counts: np.ndarray, samples: int) -> dict[str, list[float]]:
    """Per-task scores from ``(tasks, [correct, answerable, correct & not answerable])`` sample counts."""
    return {
        "accuracy": (counts[:, 0] / samples).tolist(),
        "answerable": (counts[:, 1] / samples).tolist(),
        "unsupported": counts[:, 2].tolist(),
        "correct": counts[:, 0].tolist(),
    }


Curves = dict[str, dict[int, list[dict[str, float]]]]
"""Per trained arm, per seed, the learning-curve rows."""


def collect_arms(
    args: Args,
    base_scores: dict[str, Any],
    job: Callable[[Any], Any],
    configs: Callable[[int], Mapping[str, Any]],
) -> tuple[dict[str, Any], Curves]:
    """``(scores, curves)``: the base's scores repeated per seed, then every (seed, arm) run of ``job`` over
    ``configs(seed)`` through `train_arms` (the arms checked against `MECHANISM` first)."""
    scores: dict[str, Any] = {"base": [base_scores] * args.seeds}
    curves: Curves = {arm: {} for arm in TRAINED_ARMS}
    for seed, arm, _, (curve, final_scores) in train_arms(job, configs, args, REFERENCE, MECHANISM):
        curves[arm][seed] = curve
        scores.setdefault(arm, []).append(final_scores)
    return scores, curves
