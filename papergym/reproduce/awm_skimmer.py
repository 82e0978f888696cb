"""The ``--policy skimmer`` path of ``papergym reproduce awm``: the same two arms, trained on a learned
page-skimming policy instead of the tiny LM.

Why a non-LM policy (DESIGN.md §Reproductions allows one where an LM cannot learn the task on a CPU): the
SFT-warmed tiny LM does not copy values off the page (benchmarks/README.md, "Tiny-LM copying"; hidden
128 and 256 both stay at chance on digits), so none of its memories is answerable and the four-cell
reward, which differs from answer-only credit only through answerable memories, has nothing to act on.
`papergym.baselines.memory_skimmer.SkimmerPolicy` copies statements verbatim by construction and learns
*which* to keep and whether to answer from its memory or guess; that choice is the one AWM's reward is
about. The arms differ only in ``env_wrapper`` (`papergym.reproduce.awm_setting.MECHANISM`), and every run
(base, arm, seed) is scored on the same held-out tasks with the same sampling seeds.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

import numpy as np

from papergym.baselines import memory_skimmer as skim
from papergym.reproduce.awm_setting import EVAL_SEED, READINGS, Args, Curves, collect_arms, task_scores


def arm_configs(args: Args, seed: int) -> dict[str, skim.Args]:
    """Each arm's skimmer GRPO config for one seed."""
    config = skim.Args(
        env=args.env,
        env_kw=list(args.env_kw),
        steps=args.skimmer_steps,
        tasks_per_step=args.skimmer_tasks_per_step,
        group_size=args.group_size,
        lr=args.skimmer_lr,
        seed=seed,
    )
    return {"answer_only": config, "four_cell": dataclasses.replace(config, env_wrapper="four_cell")}


def evaluate(args: Args, policy: skim.SkimmerPolicy, reading: str) -> dict[str, list[float]]:
    """Per held-out task, as `papergym.reproduce.awm.evaluate` reports it: the share of its samples answered
    correctly and with an answerable memory, and the counts behind the unsupported share. Tasks are the
    test split's from ``EVAL_SEED``; the sampling generator is seeded the same for every policy."""
    env_kw = [*args.env_kw, "evidence_only=true"] if reading == "gold" else list(args.env_kw)
    env = skim.make_env(args.env, env_kw)
    rng = np.random.default_rng(EVAL_SEED)
    counts = np.zeros((args.eval_tasks, 3))  # (tasks, [correct, answerable, correct & not answerable])
    try:
        for task in range(args.eval_tasks):
            for _ in range(args.eval_samples):
                _, _, info = skim.play(env, policy, rng, seed=EVAL_SEED + task, options={"split": "test"})
                correct, answerable = skim.episode_checks(info)
                counts[task] += (correct, answerable, correct and not answerable)
    finally:
        env.close()
    return task_scores(counts, args.eval_samples)


def train_and_score(
    args: Args, config: skim.Args
) -> tuple[list[dict[str, float]], dict[str, dict[str, list[float]]]]:
    """One (seed, arm) run: its learning curve (per step: reward, accuracy, answerability, the keep
    probabilities of the statements naming the question's attribute and subject) and its held-out scores
    per reading (a `train_arms` job)."""
    rows: list[dict[str, float]] = []

    def on_step(step: int, metrics: dict[str, float], policy: skim.SkimmerPolicy) -> None:
        keep = policy.keep_probabilities()
        rows.append({"step": float(step), **metrics, "keep_relevant": keep[0b11], "keep_unrelated": keep[0]})

    policy = skim.train(config, on_step=on_step)
    return rows, {reading: evaluate(args, policy, reading) for reading in READINGS}


def run_arms(args: Args) -> tuple[dict[str, Any], Curves]:
    """``(scores, curves)`` in the shapes the LM path builds: the untrained skimmer's scores as the base,
    then every (seed, arm) run (`papergym.reproduce.awm_setting.collect_arms`)."""
    untrained = skim.SkimmerPolicy(lr=args.skimmer_lr)
    base_scores = {reading: evaluate(args, untrained, reading) for reading in READINGS}
    return collect_arms(args, base_scores, partial(train_and_score, args), partial(arm_configs, args))
