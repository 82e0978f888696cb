"""``papergym reproduce jzero``: J-Zero's judge with structural labels vs self-scored labels vs a fixed judge.

The claim (J-Zero, papers/training.md §1.1): a challenger, a solver and a judge co-evolve; the judge is
trained with a Bradley–Terry loss on *structural* preference pairs (role asymmetry, subtask
amplification) whose labels are fixed by construction. On Qwen3-4B it gains +9.47 on verifiable and
+11.23 on non-verifiable domains over the base model, 4.74 beyond R-Zero, and keeps improving for 10
iterations while the baseline degrades after 2.

Arms (one `papergym.baselines.jzero` loop each, same seeds, init, data and budget; `check_arms`):

- ``structural``: the judge is trained on the structural pairs, labelled by construction (J-Zero);
- ``self_scored``: the same pairs relabelled by the judge's own scores (``judge_labels="self_scored"``,
  the self-reinforcing ablation of §1.6);
- ``fixed_judge``: the judge is never updated (``env_kw=['trainable={"judge": false}']``): the solver and
  challenger co-evolve against the judge's initial preferences, the R-Zero-style control in which no
  judge learns (R-Zero itself has no judge; SCOPE (§1.5) uses a frozen initial model as its judge).
- ``role_only`` and ``subtask_only``: the structural arm with one pair construction
  (``env_kw=['pair_kinds=["role_asymmetry"]']`` or ``["subtask_amplification"]``): the ablation of which
  pair kind carries the structural arm's held-out gain (the subtask pairs are built from the constraint
  checks; the role-asymmetry pairs are the only route by which the rubric's signal can reach the judge
  without them).

The loop trains on a mixture of the open-ended ``writing`` domain and the verifiable ``math`` domain of
``papergym/SelfPlay-v0``. After every iteration (and before the first) the solver answers held-out tasks
it never trains on, and the driver scores them:

- **open-ended: `HeldOutRubric`** (defined here, before any run; no agent, reward or pair reads it). It
  measures topic coverage (distinct words of the brief's topic vocabulary the answer uses, excluding
  every word a constraint of the task names, over ``coverage_target``, capped at 1) and lexical variety
  (the moving-average type-token ratio over ``window``-word windows, which a repeated word or a padded
  filler tail lowers and which does not grow or shrink with length the way a plain type-token ratio
  does). It is independent of the constraint checks the subtask-amplification pairs are built from: it
  never calls `Constraint.check`, reads no constraint's number or ending, gives nothing for length, and
  leaves out the words the constraints name. The judge's labels cannot restate it: structural labels
  come from constraint checks and from "the challenger's privileged reference beats a blind answer"; the
  only way a structurally-trained judge can raise this rubric is by having learned, from the reference
  side of the role-asymmetry pairs, what a varied on-topic text looks like. Env's own
  ``hidden_quality`` (half constraint satisfaction: what the old ``benchmarks/selfplay_quality.py``
  reported) and the share of constraints met are recorded beside it as label-aligned measures. A limit
  of that independence: some edits the pairs are built with (padding with filler to break
  ``max_words``, truncation to break ``min_words``) also lower the variety term, so the subtask pairs
  can carry some of the rubric's signal besides the role-asymmetry references.
- **verifiable**: exact-match accuracy on held-out math problems (the env's checker). This half cannot be
  tested here, for two reasons the section states. In a verifiable round neither the solver's reward
  (exact match against the challenger's reference) nor the challenger's (the solvers' agreement) reads the
  judge, so with separate role policies the judge's labels cannot move this measure at all; J-Zero's
  verifiable gain would have to come through roles that share weights, which the summary does not say
  (training.md §1.2). And the small solver can only copy one of the numbers in the task
  (`SolverPolicy`), so its ceiling is the share of problems whose answer appears in the problem text
  (about 3% of math problems, none of the 32 held-out ones).

The default run (5 seeds x 5 arms x 10 iterations) took 2 min 28 s wall (128 s CPU) on the shared 2-core
machine beside two single-core jobs; ``--smoke`` about 5 s.

Policies: the small GRPO-trained softmax challenger and solver of `papergym.baselines.jzero_policies` and
the linear `BTJudge`. They are not language models: a tiny LM co-evolving three roles does not fit the
CPU budget, and the loop's roles cannot take an HF checkpoint, so ``--model DIR`` is refused.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from papergym.baselines import jzero
from papergym.baselines.jzero_policies import Sample
from papergym.baselines.run import set_threads
from papergym.core import info_keys as K
from papergym.envs.selfplay.selfplay_env import raw_env
from papergym.envs.selfplay.writing import Brief, Constraint, words
from papergym.reproduce import report
from papergym.reproduce.driver import ReproArgs, check_arms

logger = logging.getLogger(__name__)

NAME = "jzero"
ARMS = ("structural", "self_scored", "fixed_judge", "role_only", "subtask_only")
REFERENCE = "structural"
FIXED_JUDGE = 'trainable={"judge": false}'
PAIR_KIND_ABLATIONS = {
    "role_only": 'pair_kinds=["role_asymmetry"]',
    "subtask_only": 'pair_kinds=["subtask_amplification"]',
}
"""The structural arm with one pair construction each (env kwargs of ``papergym/SelfPlay-v0``)."""
MECHANISM = {
    "self_scored": ("judge_labels",),
    "fixed_judge": ("env_kw",),
    **{arm: ("env_kw",) for arm in PAIR_KIND_ABLATIONS},
}
HELDOUT_SEED = 3_000_000
"""Seeds of the held-out tasks (the loop draws its training seeds below 2**31 from its own generator,
and its own evaluation uses 1,000,000 + i)."""
PAPER = {"verifiable": 9.47, "open_ended": 11.23, "beyond_rzero": 4.74, "baseline_peak_iteration": 2}
"""J-Zero, Qwen3-4B (training.md §1.1): gains over the base in points on verifiable and non-verifiable
benchmarks, the margin over R-Zero, and the iteration after which the baseline degrades."""


@dataclass(frozen=True)
class HeldOutRubric:
    """The held-out open-ended quality of an answer in [0, 1] (see the module docstring for why it is
    independent of the pair labels): ``(coverage + variety) / 2``; an empty answer scores 0.

    Attributes:
        coverage_target: distinct topic words (not named by a constraint) for full coverage (inferred).
        window: the moving type-token ratio's window in words (inferred).

    >>> from papergym.envs.selfplay.writing import TOPICS
    >>> brief = Brief("river", TOPICS["river"], "", ())
    >>> rubric = HeldOutRubric()
    >>> text = "the river current by the old bridge"
    >>> round(rubric(text, brief, ()), 3), round(rubric("river river river", brief, ()), 3)
    (0.929, 0.333)
    >>> round(rubric(text, brief, (Constraint("include", "bridge"),)), 3)  # a named word is no coverage
    0.762
    """

    coverage_target: int = 3
    window: int = 10

    def __call__(self, answer: str, brief: Brief, constraints: tuple[Constraint, ...]) -> float:
        ws = words(answer)
        if not ws:
            return 0.0
        named = {c.arg for c in constraints}
        topical = set(brief.vocabulary) - named
        coverage = min(1.0, len(set(ws) & topical) / self.coverage_target)
        return 0.5 * coverage + 0.5 * moving_type_token_ratio(ws, self.window)


def moving_type_token_ratio(ws: list[str], window: int) -> float:
    """Mean distinct-word share over every ``window``-word window (the whole text when it is shorter).

    >>> moving_type_token_ratio(["a", "b", "a", "b"], 2), moving_type_token_ratio(["a", "a"], 5)
    (1.0, 0.5)
    """
    if len(ws) <= window:
        return len(set(ws)) / len(ws)
    return float(np.mean([len(set(ws[i : i + window])) / window for i in range(len(ws) - window + 1)]))


@dataclass
class Args(ReproArgs):
    """J-Zero's structural judge labels vs self-scored labels vs a fixed judge (training.md §1)."""

    seeds: int = 5
    """Training seeds per arm."""
    steps: int | None = 10
    """Co-evolution iterations per arm (the paper's horizon is 10)."""
    domains: tuple[str, ...] = ("writing", "math")
    """The training mixture: the open-ended and a verifiable domain."""
    briefs: int = 8
    """Distinct materials per challenger step (the trainer's default)."""
    challenger_group: int = 4
    """Challenger samples per material (the trainer's default)."""
    group_size: int = 8
    """G, the solver's answers per task (the trainer's default)."""
    loop_eval_tasks: int = 16
    """The loop's own evaluation tasks (env hidden quality, judge agreement)."""
    probes: int = 12
    """The loop's probe texts per task (judge agreement)."""
    heldout_writing: int = 32
    """Held-out open-ended tasks scored with `HeldOutRubric`."""
    heldout_math: int = 32
    """Held-out math problems (exact match)."""
    heldout_samples: int = 8
    """Solver samples per held-out task."""


SMOKE: dict[str, Any] = {
    "seeds": 2,
    "steps": 2,
    "briefs": 2,
    "challenger_group": 2,
    "group_size": 2,
    "loop_eval_tasks": 2,
    "probes": 3,
    "heldout_writing": 3,
    "heldout_math": 3,
    "heldout_samples": 2,
}


def arm_configs(args: Args, seed: int) -> dict[str, jzero.Args]:
    """Each arm's trainer config for one seed."""
    out = Path(args.out) / f"seed{seed}"

    def config(arm: str, judge_labels: str, env_kw: list[str]) -> jzero.Args:
        return jzero.Args(
            out=str(out / arm),
            seed=seed,
            iterations=args.steps or 1,
            briefs=args.briefs,
            challenger_group=args.challenger_group,
            group_size=args.group_size,
            judge_labels=judge_labels,  # type: ignore[arg-type]
            domains=tuple(args.domains),
            eval_tasks=args.loop_eval_tasks,
            probes=args.probes,
            env_kw=env_kw,
            progress=False,
            threads=args.threads,
        )

    return {
        "structural": config("structural", "structural", []),
        "self_scored": config("self_scored", "self_scored", []),
        "fixed_judge": config("fixed_judge", "structural", [FIXED_JUDGE]),
        **{arm: config(arm, "structural", [kw]) for arm, kw in PAIR_KIND_ABLATIONS.items()},
    }


class HeldOut:
    """The held-out tasks and their scoring; the solver's sampling generator is seeded per (seed,
    iteration), so every arm's solver is scored on the same tasks with the same random numbers."""

    def __init__(self, args: Args, rubric: HeldOutRubric = HeldOutRubric()) -> None:
        self.args, self.rubric = args, rubric
        self.env = raw_env(domains=tuple(args.domains), group_size=max(2, args.heldout_samples))
        self.writing = [
            HELDOUT_SEED + i for i in range(args.heldout_writing if "writing" in args.domains else 0)
        ]
        self.math = [
            HELDOUT_SEED + 10_000 + i for i in range(args.heldout_math if "math" in args.domains else 0)
        ]

    def _answers(self, loop: jzero.JZeroLoop, rng: np.random.Generator) -> list[Sample]:
        prompt = self.env.observe("solver")
        return [loop.solver.act(prompt, rng) for _ in range(self.env.game.group_size)]

    def score(self, loop: jzero.JZeroLoop, seed: int, iteration: int) -> dict[str, list[float]]:
        """Per held-out task: the rubric's mean, the share of constraints met and the env's own hidden
        quality (open-ended), and the exact-match accuracy (math)."""
        rng = np.random.default_rng([HELDOUT_SEED, seed, iteration])
        out: dict[str, list[float]] = {"open_ended": [], "constraints_met": [], "env_quality": [], "math": []}
        for s in self.writing:
            self.env.reset(seed=s, options={"domain": "writing"})
            brief: Brief = self.env.game.round.material  # type: ignore[union-attr]
            self.env.step(jzero.fixed_challenge(brief)[1])
            constraints = self.env.game.round.constraints  # type: ignore[union-attr]
            texts = [a.text for a in self._answers(loop, rng)]
            out["open_ended"].append(float(np.mean([self.rubric(t, brief, constraints) for t in texts])))
            met = [np.mean([c.check(t) for c in constraints]) if constraints else 1.0 for t in texts]
            out["constraints_met"].append(float(np.mean(met)))
            out["env_quality"].append(float(np.mean([self.env.hidden_quality(t) for t in texts])))
        for s in self.math:
            self.env.reset(seed=s, options={"domain": "math"})
            self.env.step(loop.challenger.act(self.env.observe("challenger"), rng).text)
            for answer in self._answers(loop, rng):
                self.env.step(answer.text)
            self.env.step(self.env.judge_action())
            out["math"].append(float(np.mean(self.env.infos["solver"][K.SOLVER_REWARDS])))
        return out


def run(args: Args) -> dict[str, Any]:
    """Train every arm on every seed, score the held-out tasks after every iteration, write the report."""
    if args.model != "tiny":
        raise ValueError(
            "jzero's roles are small softmax policies and a linear Bradley-Terry judge; none can take an HF "
            f"checkpoint, so --model {args.model} has no role to play (run with --model tiny)"
        )
    set_threads(args.threads)
    out = Path(args.out)
    heldout = HeldOut(args)
    curves: dict[str, dict[int, list[dict[str, Any]]]] = {arm: {} for arm in ARMS}
    for seed in range(args.seeds):
        configs = arm_configs(args, seed)
        check_arms(configs, REFERENCE, MECHANISM)
        for arm, config in configs.items():
            curves[arm][seed] = _train_and_score(config, heldout)
            logger.info("jzero %s seed %d done", arm, seed)
    summary = summarise(curves, args)
    report.write_results(out, name=NAME, args=args, curves=curves, summary=summary)
    pngs = [
        report.plot_arms(
            out / f"jzero_{domain}.png",
            {arm: {float(k): v for k, v in summary[domain][arm].items()} for arm in ARMS},
            xlabel="iteration (0 = before training)",
            ylabel=ylabel,
            title=f"J-Zero: the solver's held-out {domain.replace('_', '-')} quality",
        )
        for domain, ylabel in (("open_ended", "HeldOutRubric quality"), ("verifiable", "exact match"))
    ]
    table = section(summary, args)
    (out / "table.md").write_text(table + "\n")
    if args.write:
        for png in pngs:
            shutil.copyfile(png, Path(args.write).parent / png.name)
        report.write_readme_section(args.write, NAME, table)
    summary["out"] = str(out)
    return summary


def _train_and_score(config: jzero.Args, heldout: HeldOut) -> list[dict[str, Any]]:
    """`train_arm` with the held-out scores of each iteration merged into its row."""
    loop = jzero.build_loop(config)
    quality, agreement = loop.evaluate()
    rows: list[dict[str, Any]] = []
    for k in range(config.iterations + 1):
        if k:
            stats = loop.iteration()
            row: dict[str, Any] = {
                "env_quality_loop": stats.hidden_quality,
                "judge_agreement": stats.judge_agreement,
                "kept_tasks": stats.kept_tasks,
                "judge_pairs": stats.judge_pairs,
                "solver_reward": stats.solver_reward,
                "challenger_reward": stats.challenger_reward,
            }
        else:
            row = {"env_quality_loop": quality, "judge_agreement": agreement}
        scores = heldout.score(loop, config.seed, k)
        row = {"iteration": k, **row, **{f"{name}_tasks": v for name, v in scores.items()}}
        row |= {name: float(np.mean(v)) if v else 0.0 for name, v in scores.items()}
        rows.append(row)
    return rows


def _matrix(curves: dict[str, dict[int, list[dict[str, Any]]]], arm: str, k: int, key: str) -> np.ndarray:
    """``(seeds, tasks)`` scores of ``arm`` at iteration ``k``."""
    return np.asarray([rows[k][f"{key}_tasks"] for _, rows in sorted(curves[arm].items())])


def summarise(curves: dict[str, dict[int, list[dict[str, Any]]]], args: Args) -> dict[str, Any]:
    """Intervals per arm and iteration, the paired differences the claims are about, and the verdicts."""
    last = args.steps or 1
    mid = min(int(PAPER["baseline_peak_iteration"]), last)
    keys = {"open_ended": "open_ended", "verifiable": "math", "constraints_met": "constraints_met"}
    intervals = {
        name: {
            arm: {k: report.stratified_bootstrap(_matrix(curves, arm, k, key)) for k in range(last + 1)}
            for arm in ARMS
        }
        for name, key in keys.items()
    }

    def diff(arm: str, k: int, other: str, j: int, key: str) -> report.Interval:
        return report.paired_difference(_matrix(curves, arm, k, key), _matrix(curves, other, j, key))

    differences = {
        **{
            f"open-ended, {arm}: iteration {last} - init": diff(arm, last, arm, 0, "open_ended")
            for arm in ARMS
        },
        **{f"verifiable, {arm}: iteration {last} - init": diff(arm, last, arm, 0, "math") for arm in ARMS},
        f"open-ended, structural - fixed_judge at {last}": diff(
            "structural", last, "fixed_judge", last, "open_ended"
        ),
        f"open-ended, structural - self_scored at {last}": diff(
            "structural", last, "self_scored", last, "open_ended"
        ),
        f"verifiable, structural - fixed_judge at {last}": diff(
            "structural", last, "fixed_judge", last, "math"
        ),
        **{
            f"open-ended, structural - {arm} at {last}": diff("structural", last, arm, last, "open_ended")
            for arm in PAIR_KIND_ABLATIONS
        },
        **{
            f"open-ended, {arm}: iteration {last} - iteration {mid}": diff(arm, last, arm, mid, "open_ended")
            for arm in ("fixed_judge", "self_scored")
        },
    }
    claims = {
        "open-ended: structural gains over init": (
            f"open-ended, structural: iteration {last} - init",
            +1,
            "+11.23 (non-verifiable, over base)",
        ),
        "verifiable: structural gains over init": (
            f"verifiable, structural: iteration {last} - init",
            +1,
            "+9.47 (verifiable, over base)",
        ),
        "open-ended: structural beyond the fixed judge": (
            f"open-ended, structural - fixed_judge at {last}",
            +1,
            "+4.74 (beyond R-Zero)",
        ),
        "open-ended: structural beyond self-scored labels": (
            f"open-ended, structural - self_scored at {last}",
            +1,
            "> 0 (§1.7, inferred)",
        ),
        f"open-ended: fixed judge falls after iteration {mid}": (
            f"open-ended, fixed_judge: iteration {last} - iteration {mid}",
            -1,
            "< 0 (baseline degrades after 2)",
        ),
        f"open-ended: self-scored falls after iteration {mid}": (
            f"open-ended, self_scored: iteration {last} - iteration {mid}",
            -1,
            "< 0 (§1.7, inferred)",
        ),
    }
    verdicts = {claim: report.direction(differences[name], sign) for claim, (name, sign, _) in claims.items()}
    table = [
        {
            "claim": claim,
            "difference": name,
            "ours": differences[name],
            "paper": paper,
            "direction": verdicts[claim],
        }
        for claim, (name, _, paper) in claims.items()
    ]
    ablations = [
        {
            "arm": arm,
            "pairs": PAIR_KIND_ABLATIONS.get(arm, "both kinds"),
            "gain": differences[f"open-ended, {arm}: iteration {last} - init"],
            "structural minus": differences.get(f"open-ended, structural - {arm} at {last}"),
        }
        for arm in ("structural", *PAIR_KIND_ABLATIONS)
    ]
    means = {
        key: {
            arm: [
                float(np.mean([rows[k].get(key, 0.0) for rows in curves[arm].values()]))
                for k in range(last + 1)
            ]
            for arm in ARMS
        }
        for key in ("env_quality_loop", "judge_agreement", "kept_tasks")
    }
    return {
        **intervals,
        "differences": differences,
        "claims": table,
        "verdicts": verdicts,
        "ablations": ablations,
        "loop_means": means,
        "paper": PAPER,
    }


def section(summary: dict[str, Any], args: Args) -> str:
    """The benchmarks/README.md section: curves per arm, the differences with the paper beside, verdicts."""
    last = args.steps or 1
    rows = []
    for k in range(last + 1):
        row: dict[str, Any] = {"iteration": "init" if k == 0 else k}
        for arm in ARMS:
            row[f"open-ended, {arm}"] = str(summary["open_ended"][arm][k])
        rows.append(row)
    curve = report.markdown_table(rows, ["iteration", *[f"open-ended, {arm}" for arm in ARMS]])
    final = []
    for arm in ARMS:
        loop = summary["loop_means"]
        final.append(
            {
                "arm": arm,
                "verifiable init": str(summary["verifiable"][arm][0]),
                f"verifiable {last}": str(summary["verifiable"][arm][last]),
                f"constraints met {last}": str(summary["constraints_met"][arm][last]),
                f"env hidden quality {last}": loop["env_quality_loop"][arm][last],
                f"judge agreement {last}": loop["judge_agreement"][arm][last],
            }
        )
    side = report.markdown_table(final, list(final[0]))
    claims = [
        {**row, "ours": str(row["ours"]), "direction": f"**{row['direction']}**"} for row in summary["claims"]
    ]
    diffs = report.markdown_table(claims, ["claim", "difference", "ours", "paper", "direction"])
    ablation = report.markdown_table(
        [
            {
                "arm": row["arm"],
                "judge's pairs": f"`{row['pairs']}`" if row["arm"] in PAIR_KIND_ABLATIONS else row["pairs"],
                f"open-ended, iteration {last} - init": str(row["gain"]),
                f"structural - arm at {last}": "—"
                if row["structural minus"] is None
                else str(row["structural minus"]),
            }
            for row in summary["ablations"]
        ],
        ["arm", "judge's pairs", f"open-ended, iteration {last} - init", f"structural - arm at {last}"],
    )
    return "\n\n".join(
        [
            "### J-Zero judge labels (`papergym reproduce jzero`)",
            f"Held-out open-ended quality (`HeldOutRubric`: topic coverage without the words the constraints "
            "name, and moving type-token ratio; no pair, reward or agent reads it) of the solver's answers "
            f"to {args.heldout_writing} held-out writing tasks x {args.heldout_samples} samples, per "
            f"iteration, {args.seeds} seeds, 95% stratified bootstrap over seeds x tasks:",
            curve,
            f"Verifiable (exact match on {args.heldout_math} held-out math problems x {args.heldout_samples} "
            "samples), and the label-aligned measures: share of the task's constraints met, the env's own "
            "hidden quality (half constraint satisfaction) and the judge's concordance with it on the loop's "
            "probe texts (means over seeds):",
            side,
            "In a verifiable round neither the solver's reward (exact match against the challenger's "
            "reference) nor the challenger's (the solvers' agreement) reads the judge, so with separate role "
            "policies the judge's labels cannot move the verifiable column, whatever the solver could learn; "
            "J-Zero's verifiable gain would need roles that share weights (the summary does not say whether "
            "they do). The softmax solver here can also only copy a number from the task"
            + (
                ", and no held-out answer is one: the column is 0 for every arm."
                if all(i.high == 0.0 for per_arm in summary["verifiable"].values() for i in per_arm.values())
                else "."
            ),
            "The claims, our paired differences (95% stratified bootstrap; the paper's numbers are benchmark "
            "points on Qwen3-4B, so only their sign compares) and the direction read from the intervals:",
            diffs,
            "Ablation (no paper number): which pair construction carries the structural arm's open-ended "
            "gain; each arm's judge trains on one kind of structural pair, everything else as `structural`:",
            ablation,
        ]
    )
