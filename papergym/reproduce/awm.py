"""``papergym reproduce awm``: answer-only GRPO vs GRPO with AWM's four-cell reward (training.md §6).

The claim (AWM summary, papers/training.md §6.1): even with the gold evidence pages, 42.5% of correctly
answered samples leave a working memory that cannot support the answer on its own; AWM-GRPO, which adds a
four-cell reward (answer correct / incorrect × memory-only answerable / not) to GRPO, gains 2.3-2.7 points
over answer-only GRPO.

Setting: `papergym/MemoryQA-v0`. The policy reads a document one page per step, writes its own working
memory from the page it sees (its context is reset every step: question, memory, page), and answers from
the question and its memory alone. The env setting (``env_kw``) was chosen before any arm trained, for
what a ~1M-parameter LM can act on in a CPU budget: three pages (the shortest document the env allows, so
an episode is four actions), one distractor per evidence fact (``difficulty=1``), one document kind
(``kind="annual_report"``: one vocabulary of subjects and attributes) and a time limit of eight actions
(``max_episode_steps=8``: room for four invalid actions, so a policy that never writes a tag cannot run up
the env's default limit of 100). Every question type stays (single fact, a total over 2-3 subjects, a
comparison), and so does the env's default guessable share (0.3).

The SFT budget (800 oracle episodes, 300 steps of 16 contexts) was fixed before any arm ran, from one
calibration run of `papergym.baselines.sft` with these settings, its checkpoints at 100 and 200 steps
each evaluated on 16 held-out tasks × 2 samples in both readings: at 100 steps the policy wrote
well-formed memories and answers but of the wrong facts (0 of 32 correct, 0 answerable, in each reading);
at 200 steps 0/32 whole-document and 1/32 gold-page answers were correct, none answerable (the memories
name the asked attribute with a wrong subject or value). A larger budget does not fit the CPU budget, so
the base is weak, and the section says what that leaves the mechanism to act on.

Arms (`papergym.baselines.grpo`, one config each, built by `papergym.reproduce.driver.grpo_config`):

- ``answer_only``: GRPO on the env's own reward (``outcome`` 1 for a right answer, the format penalty);
- ``four_cell``: the same GRPO run with every training env wrapped in `papergym.wrappers.FourCellReward`
  (``env_wrapper="four_cell"``, its inferred defaults 1.0 / 0.5 / 0.2 / 0.0), which replaces ``outcome`` by
  the value of the cell (correct?, memory-only answerable?). Nothing else differs (`MECHANISM`).

Both start from one base: the tiny LM SFT-warmed on the env's oracle demonstrations (the oracle writes
the gold evidence facts into memory as it reads their pages; the policy learns from the pages it is
shown, never from the evidence list), or ``--model DIR`` as is.

Measures, for the base and each trained arm, on ``eval_tasks`` held-out test tasks with ``eval_samples``
samples each (temperature 1), in two readings: the whole document (the trained setting) and the gold
evidence pages only (``evidence_only=True``, the paper's diagnostic):

- *accuracy*: the final answer equals the gold answer (the env's ``checks["correct"]``);
- *memory-only answerability*: the env's reader (`papergym.envs.memory_qa.ExtractiveReader`, the env's
  default), given only the question text and the agent's final memory (no page), returns the gold
  answer (``checks["memory_answerable"]``); an episode cut by the time limit before it answers has no
  judged memory and counts as not answerable (and incorrect);
- *unsupported share*: of the correct answers, the share whose memory is not answerable (the paper's
  42.5%), a ratio with its own stratified bootstrap interval.

``--policy skimmer`` (`papergym.reproduce.awm_skimmer`) trains the same two arms on a learned non-LM
policy instead, `papergym.baselines.memory_skimmer.SkimmerPolicy`: it copies page statements verbatim into
its memory and learns which to keep (softmax rows over generic features of a statement against the
question text) and whether to answer from its memory or guess. The tiny LM cannot copy values off a page
on a CPU budget, so its memories are never answerable and the four-cell reward has nothing to act on; the
skimmer puts the mechanism where it can act. It has no warm start (the base is the untrained skimmer) and
its own budget fields (``skimmer_*``); its README section is ``awm-skimmer``.

Intervals are stratified bootstrap intervals over (seed, task) (`papergym.reproduce.report`); the base is
evaluated once and repeated per seed. Learning curves: per training step, the share of the step's
episodes answered correctly and the share whose final memory is answerable (both from the episodes'
own checks, whatever reward the arm trains on).
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from papergym.baselines import grpo
from papergym.baselines.rollout import Episode
from papergym.baselines.run import set_threads
from papergym.core import info_keys as K
from papergym.core.trajectory import Trajectory
from papergym.reproduce import awm_skimmer, report
from papergym.reproduce.awm_setting import (
    EVAL_SEED,
    MECHANISM,
    READINGS,
    REFERENCE,
    TRAINED_ARMS,
    Args,
    collect_arms,
    task_scores,
)
from papergym.reproduce.driver import SMOKE_WARM_START, evaluate_model, grpo_config, warm_base

__all__ = ["ARMS", "EVAL_SEED", "MECHANISM", "NAME", "READINGS", "REFERENCE", "TRAINED_ARMS", "Args", "run"]

logger = logging.getLogger(__name__)

NAME = "awm"
ARMS = ("base", "answer_only", "four_cell")
PARALLEL = True
"""``--workers`` runs the (seed, arm) jobs side by side (`train_arms`)."""
MEASURES = ("accuracy", "answerable")
PAPER = {"unsupported_share_gold": 0.425, "gain_low": 0.023, "gain_high": 0.027}
"""The AWM summary's numbers (training.md §6.1): 42.5% of correct answers not answerable from memory even
with gold pages; AWM-GRPO +2.3 to +2.7 points over answer-only GRPO."""


SMOKE: dict[str, Any] = {
    **SMOKE_WARM_START,
    "steps": 1,
    "group_size": 2,
    "max_new_tokens": 16,
    "eval_tasks": 2,
    "eval_samples": 2,
    "smooth": 1,
    "skimmer_steps": 2,
    "skimmer_tasks_per_step": 2,
}
"""``--smoke``: the same code path on a minimal budget."""


def arm_configs(args: Args, base: str, seed: int) -> dict[str, grpo.Args]:
    """Each trained arm's GRPO config for one seed, starting from ``base``."""
    out = Path(args.out) / f"seed{seed}"
    steps = 1 if args.steps is None else args.steps
    return {
        "answer_only": grpo_config(
            args, model=base, out=out / "answer_only", seed=seed, steps=steps, lr=args.lr
        ),
        "four_cell": grpo_config(
            args,
            model=base,
            out=out / "four_cell",
            seed=seed,
            steps=steps,
            lr=args.lr,
            env_wrapper="four_cell",
        ),
    }


def episode_checks(trajectory: Trajectory) -> tuple[bool, bool]:
    """(answer correct?, final memory answerable from the question alone?) of one episode; an episode
    without the env's checks (cut before its answer) is (False, False)."""
    checks = trajectory.final_info.get(K.CHECKS) or {}
    return bool(checks.get("correct", False)), bool(checks.get("memory_answerable", False))


def evaluate(args: Args, model: str, reading: str) -> dict[str, list[float]]:
    """Per held-out task: the share of its samples answered correctly, with an answerable memory, and
    both counts behind the unsupported share (correct and not answerable; correct)."""
    counts = np.zeros((args.eval_tasks, 3))  # (tasks, [correct, answerable, correct & not answerable])

    def record(task: int, trajectory: Trajectory) -> None:
        correct, answerable = episode_checks(trajectory)
        counts[task] += (correct, answerable, correct and not answerable)

    gold = reading == "gold"
    evaluate_model(
        dataclasses.replace(
            args,
            env_kw=[*args.env_kw, "evidence_only=true"] if gold else list(args.env_kw),
            out=str(Path(args.out) / "gold") if gold else args.out,
        ),
        model,
        tasks=args.eval_tasks,
        samples=args.eval_samples,
        seed=EVAL_SEED,
        on_episode=record,
    )
    return task_scores(counts, args.eval_samples)


def step_checks(episodes: Sequence[Episode]) -> dict[str, float]:
    """A training step's episodes: the share answered correctly and the share with an answerable memory."""
    pairs = [episode_checks(e.trajectory) for e in episodes]
    return {
        "accuracy": float(np.mean([c for c, _ in pairs])),
        "answerable": float(np.mean([a for _, a in pairs])),
    }


def train(config: grpo.Args) -> list[dict[str, float]]:
    """Run one arm; its learning curve (per step: the trainer's reward, and `step_checks`)."""
    rows: list[dict[str, float]] = []

    def on_step(step: int, metrics: dict[str, Any], episodes: list[Episode]) -> None:
        rows.append({"step": float(step), "reward": float(metrics["reward"]), **step_checks(episodes)})

    grpo.main(config, on_step=on_step)
    return rows


def train_and_score(
    args: Args, config: grpo.Args
) -> tuple[list[dict[str, float]], dict[str, dict[str, list[float]]]]:
    """One (seed, arm) run: its learning curve (`train`) and its final model's held-out scores per reading
    (a `train_arms` job)."""
    curve = train(config)
    final = str(Path(config.out) / "final")
    return curve, {reading: evaluate(args, final, reading) for reading in READINGS}


def run(args: Args) -> dict[str, Any]:
    """Train both arms on every seed, evaluate them and write the report (see the module docstring)."""
    set_threads(args.threads)
    out = Path(args.out)
    if args.policy == "skimmer":
        if args.model != "tiny":
            raise ValueError("--policy skimmer trains the skimmer from scratch; it takes no --model")
        scores, curves = awm_skimmer.run_arms(args)
    elif args.policy == "lm":
        scores, curves = train_lm_arms(args)
    else:
        raise ValueError(f"--policy must be 'lm' or 'skimmer', got {args.policy!r}")
    summary = summarise(scores)
    summary["setting"] = setting(args)
    summary["training"] = training_means(curves)
    summary["training_difference"] = training_difference(curves)
    report.write_results(out, name=NAME, args=args, curves=curves, summary=summary)
    plot(out, args, curves)
    key = NAME if args.policy == "lm" else f"{NAME}-{args.policy}"
    png = f"{key.replace('-', '_')}_curves.png"
    table = section(summary, png=png if args.write else None)
    (out / "table.md").write_text(table + "\n")
    if args.write:
        shutil.copyfile(out / "curves.png", Path(args.write).parent / png)
        report.write_readme_section(args.write, key, table)
    summary["out"] = str(out)
    return summary


def train_lm_arms(args: Args) -> tuple[dict[str, Any], dict[str, dict[int, list[dict[str, float]]]]]:
    """The LM path: the warm-started base's scores (repeated per seed) and every (seed, arm) run."""
    base = warm_base(args)
    base_scores = {reading: evaluate(args, base, reading) for reading in READINGS}
    return collect_arms(args, base_scores, partial(train_and_score, args), partial(arm_configs, args, base))


def training_means(curves: dict[str, dict[int, list[dict[str, float]]]]) -> dict[str, dict[str, Any]]:
    """Per arm, the share of training episodes answered correctly and with an answerable memory, averaged
    over the steps of each seed (95% interval over seeds)."""
    return {
        arm: {
            key: report.stratified_bootstrap(
                [float(np.mean([r[key] for r in rows])) for rows in per_seed.values()]
            )
            for key in MEASURES
        }
        for arm, per_seed in curves.items()
        if per_seed and all(per_seed.values())
    }


def training_difference(curves: dict[str, dict[int, list[dict[str, float]]]]) -> dict[str, Any]:
    """four_cell − answer_only in the training episodes' accuracy and answerability, each seed's mean over
    its steps, paired by seed (how fast the arms learn, where both end at the same place); empty unless
    both arms ran the same seeds."""
    seeds = sorted(curves.get("answer_only", {}))
    if not seeds or sorted(curves.get("four_cell", {})) != seeds:
        return {}

    def means(arm: str, key: str) -> list[list[float]]:
        return [[float(np.mean([r[key] for r in curves[arm][seed]]))] for seed in seeds]

    return {
        key: report.paired_difference(means("four_cell", key), means("answer_only", key)) for key in MEASURES
    }


def setting(args: Args) -> dict[str, Any]:
    """The budget and setting of this run, as the README section states them."""
    keys = ("model", "seeds", "steps", "prompts_per_step", "group_size", "lr", "max_new_tokens", "eval_tasks",
            "eval_samples", "sft_episodes", "sft_steps", "env_kw", "smoke", "note", "policy", "skimmer_steps",
            "skimmer_tasks_per_step", "skimmer_lr")  # fmt: skip
    return {key: getattr(args, key) for key in keys}


def _matrix(per_seed: list[dict[str, dict[str, list[float]]]], reading: str, key: str) -> np.ndarray:
    return np.array([s[reading][key] for s in per_seed], dtype=float)  # (seeds, tasks)


def summarise(scores: dict[str, list[dict[str, dict[str, list[float]]]]]) -> dict[str, Any]:
    """Accuracy, answerability and the unsupported share per arm and reading; the paired differences
    four_cell - answer_only (the paper's direction: + for accuracy and answerability)."""
    measures: dict[str, dict[str, dict[str, Any]]] = {}
    for arm in ARMS:
        measures[arm] = {}
        for reading in READINGS:
            cell: dict[str, report.Interval | None] = {
                m: report.stratified_bootstrap(_matrix(scores[arm], reading, m)) for m in MEASURES
            }
            cell["unsupported_share"] = report.stratified_ratio(
                _matrix(scores[arm], reading, "unsupported"), _matrix(scores[arm], reading, "correct")
            )
            measures[arm][reading] = cell
    differences: dict[str, dict[str, Any]] = {}
    for reading in READINGS:
        differences[reading] = {}
        for m in MEASURES:
            diff = report.paired_difference(
                _matrix(scores["four_cell"], reading, m), _matrix(scores["answer_only"], reading, m)
            )
            differences[reading][m] = {"difference": diff, "direction": report.direction(diff, +1)}
    return {
        "measures": measures,
        "differences": differences,
        "per_task": scores,
        "paper": PAPER,
    }


def plot(out: Path, args: Args, curves: dict[str, dict[int, list[dict[str, float]]]]) -> None:
    """``curves.png``: training accuracy and answerability per step for both arms, a moving window of
    ``smooth`` steps, the band a 95% interval over seeds."""
    series: dict[str, dict[float, report.Interval]] = {}
    for arm in TRAINED_ARMS:
        for key in MEASURES:
            rows = [[r[key] for r in seed_rows] for seed_rows in curves[arm].values()]
            width = min(len(r) for r in rows)
            points = {}
            for end in range(args.smooth, width + 1):
                window = np.array([r[end - args.smooth : end] for r in rows])  # (seeds, smooth)
                points[float(end - 1)] = report.stratified_bootstrap(window.mean(axis=1))
            series[f"{arm}: {key}"] = points
    report.plot_arms(
        out / "curves.png",
        series,
        xlabel="GRPO step",
        ylabel="share of the step's episodes",
        title="MemoryQA-v0 training episodes: accuracy and memory-only answerability",
    )


def _pct(interval: report.Interval | None) -> str:
    if interval is None:
        return "n/a (no correct answers)"
    return f"{100 * interval.mean:.1f}% [{100 * interval.low:.1f}, {100 * interval.high:.1f}]"


def section(summary: dict[str, Any], png: str | None = None) -> str:
    """The benchmarks/README.md section: the measures per arm and reading, the differences, a reading."""
    measures = summary["measures"]
    columns = ["arm", "reading", "accuracy", "memory-only answerable", "correct but not answerable"]
    rows = [
        {
            "arm": arm,
            "reading": "whole document" if reading == "whole" else "gold pages only",
            "accuracy": _pct(measures[arm][reading]["accuracy"]),
            "memory-only answerable": _pct(measures[arm][reading]["answerable"]),
            "correct but not answerable": _pct(measures[arm][reading]["unsupported_share"]),
        }
        for arm in ARMS
        for reading in READINGS
    ]
    rows.append(
        {
            "arm": "paper (AWM summary)",
            "reading": "gold pages",
            "accuracy": "four-cell +2.3 to +2.7 points",
            "memory-only answerable": "",
            "correct but not answerable": "42.5%",
        }
    )
    diff_columns = ["four_cell − answer_only", "accuracy", "memory-only answerable"]
    diff_rows = [
        {
            diff_columns[0]: "whole document" if reading == "whole" else "gold pages only",
            **{
                label: f"{_pct(d[m]['difference'])} ({d[m]['direction']})"
                for label, m in zip(diff_columns[1:], MEASURES, strict=True)
            },
        }
        for reading, d in summary["differences"].items()
    ]
    run = summary.get("setting") or {}
    skimmer = run.get("policy") == "skimmer"
    budget = (
        f"Run: {run.get('seeds')} seeds × {run.get('skimmer_steps')} GRPO steps of "
        f"{run.get('skimmer_tasks_per_step')} tasks × G={run.get('group_size')} per arm of the learned "
        f"skimmer (`--policy skimmer`, `papergym.baselines.memory_skimmer`: softmax keep/drop rows over "
        f"generic statement features and an answer-mode row, lr {run.get('skimmer_lr')}; not an LM, because "
        "the tiny LM does not copy values off a page, see \"Tiny-LM copying\"); the base is the untrained "
        "skimmer (every statement kept with probability 1/2)"
        if skimmer else
        f"Run: {run.get('seeds')} seeds × {run.get('steps')} GRPO steps of {run.get('prompts_per_step')} "
        f"tasks × G={run.get('group_size')} per arm (lr {run.get('lr')}, ≤ {run.get('max_new_tokens')} "
        f"tokens per action) from `--model {run.get('model')}`"
        + (f" (SFT: {run.get('sft_steps')} steps on {run.get('sft_episodes')} oracle episodes)"
           if run.get("model") == "tiny" else "")
    ) + (
        f"; evaluation: {run.get('eval_tasks')} held-out tasks × {run.get('eval_samples')} samples per "
        f"reading; env kwargs `{' '.join(run.get('env_kw', []))}`."
        + (f" {run['note']}" if run.get("note") else "")
    )  # fmt: skip
    parts = [
        "### AWM: four-cell reward vs answer-only GRPO (`papergym reproduce awm"
        + (" --policy skimmer`)" if skimmer else "`)"),
        budget,
        "Held-out MemoryQA-v0 tasks, sampled at temperature 1; 95% stratified bootstrap over seeds × tasks "
        "(the last column: the share of correct answers, its interval from the same resamples; the base is "
        "evaluated once). Memory-only answerable: the env's extractive reader, given only the question and "
        "the final memory (no page), returns the gold answer; an episode cut before its answer counts as "
        "neither correct nor answerable.",
        report.markdown_table(rows, columns),
        "Paired differences (paper direction: + for both; the verdict from the interval):",
        report.markdown_table(diff_rows, diff_columns),
    ]
    if png:
        parts.append(f"![AWM learning curves]({png})")
    parts.append(reading(summary))
    return "\n\n".join(parts)


def reading(summary: dict[str, Any]) -> str:
    """A plain statement of what reproduced, read from the intervals."""
    measures, diffs = summary["measures"], summary["differences"]
    share = {arm: measures[arm]["gold"]["unsupported_share"] for arm in ARMS}
    acc, ans = diffs["whole"]["accuracy"], diffs["whole"]["answerable"]
    shares = ", ".join(f"{arm} {_pct(share[arm])}" for arm in ARMS)
    parts = [
        f"With gold pages only, the share of correct answers whose memory cannot support them is: {shares} "
        "(paper 42.5%). In this env the answer is written from the memory alone, so a correct answer "
        "without an answerable memory is a guess that happened to be right (a guessable question's prior "
        "answer, or a lucky number or name).",
        f"Four-cell minus answer-only on the whole document: accuracy {_pct(acc['difference'])} "
        f"(paper +2.3 to +2.7 points): **{acc['direction']}**; memory-only answerability "
        f"{_pct(ans['difference'])}: **{ans['direction']}** (the paper's mechanism predicts a rise).",
    ]
    training = summary.get("training") or {}
    if training:
        shares = "; ".join(
            f"{arm}: accuracy {_pct(t['accuracy'])}, answerable {_pct(t['answerable'])}"
            for arm, t in training.items()
        )
        parts.append(
            f"Training episodes (mean over steps, interval over seeds): {shares}. Where no memory is "
            "answerable the four-cell reward is 0.5 × the answer-only outcome plus the same format term, so "
            "after GRPO's per-group normalisation the two arms' advantages nearly coincide; the arms can "
            "differ only through groups holding an answerable memory."
        )
        gap = summary.get("training_difference") or {}
        if gap:
            parts.append(
                f"Four-cell minus answer-only in the training episodes (each seed's mean over its steps, "
                f"paired by seed): accuracy {_pct(gap['accuracy'])}, answerable {_pct(gap['answerable'])}."
            )
        if all(t["answerable"].high == 0.0 for t in training.values()):
            parts.append(
                "No training episode of either arm left an answerable memory: the mechanism had nothing to "
                "act on, and this run cannot test the claim."
            )
    if all(measures[arm][r]["answerable"].high == 0.0 for arm in ARMS for r in READINGS):
        parts.append(
            "Plainly: no held-out memory of any arm was answerable, so the policy never reached the regime "
            "the claim is about; this run neither supports nor refutes it (it needs a base that writes "
            "answerable memories: a longer warm start or `--model DIR`)."
        )
    per_task = summary.get("per_task") or {}
    if set(TRAINED_ARMS) <= set(per_task) and per_task["answer_only"] == per_task["four_cell"]:
        parts.append(
            "The two arms' held-out samples scored identically, task by task and seed by seed (the same "
            "sampling seeds, and policies that barely differ)."
        )
    return " ".join(parts)
