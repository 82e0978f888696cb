"""``papergym reproduce iapo``: GRPO with flat credit vs GRPO with IAPO's influence credit (envs.md §4).

The claim (IAPO, papers/envs.md §4.3): at equal reward, sampling and loss, spreading each trajectory's
GRPO advantage over its actions by a signed influence graph (`papergym.credit.influence`) beats flat
credit: Qwen3-8B on tau²-bench telecom 21.74 → 39.93 pass^1, domain macro 29.61 → 42.18, with
function calling not hurt (BFCL-v4 multi-turn 39.04 → 39.36).

Setting (fixed before any arm ran): `papergym/ServiceAgent-v0` per domain of ``domains`` (telecom only by
default: the paper's largest gain, and retail's longer episodes do not fit the CPU budget), generated
tasks, the scripted user, ``prompt="compact"`` (the tools as one line each, no policy text: the full
telecom prompt is ~2.5k tokens and its episodes up to ~5k, past the tiny LM's 4096-token context) and
``max_steps = max_turns`` (IAPO: at most 30 turns). The base is the tiny LM SFT-warmed on the oracle's
demonstrations of the domain's train split (or ``--model DIR`` as is), one base per domain for every arm
and seed. Arms, each `papergym.baselines.grpo` from that base with the same seeds, tasks, steps, group
shape and learning rate, differing only in the advantage hook (`MECHANISM`, checked by `check_arms`):

- ``grpo``: flat credit (one advantage over every action token);
- ``iapo``: ``--advantage-hook influence``: `InfluenceAdvantage` with the rule annotator
  (`ProvenanceAnnotator`, exact edges from the env's ``info["provenance"]``), β₊ = 0.05, c = 0.25;
- ``iapo_noisy``: the same hook with ``noise = ρ``: `NoisyAnnotator` drops each edge with probability ρ and
  adds as many spurious ones (``--noise``, ρ = 0.2 by default, inferred: envs.md §4.4 names the probe but
  no rate; a stand-in for an imperfect model annotator, whose edge F1 IAPO reports as ≈ 0.87).

Each arm checkpoints every ``eval_every`` steps; the base and every checkpoint are scored on the same
``eval_tasks`` held-out test tasks with ``eval_samples`` samples each (temperature 1): success (tau²'s
reward = 1) and the function-call success rate (the share of tool calls the env executed without an
error). Reported: the learning curves, the final gap to ``grpo`` with stratified-bootstrap intervals over
(seed, task), and the direction read from the intervals. The trainers do all training; this module only
configures, evaluates and reports.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from papergym.baselines import grpo
from papergym.baselines.run import read_metrics, set_threads
from papergym.reproduce import iapo_menu, report
from papergym.reproduce.driver import (
    SMOKE_WARM_START,
    WarmStartArgs,
    evaluate_model,
    grpo_config,
    publish,
    train_arms,
    warm_base,
)
from papergym.reproduce.evaluation import TaskSamples, cached_scores, pass_at_k_matrix
from papergym.reproduce.menu_args import MENU_SMOKE, MenuRunArgs, menu_policy

logger = logging.getLogger(__name__)

NAME = "iapo"
ARMS = ("grpo", "iapo", "iapo_noisy")
PARALLEL = True
"""``--workers`` runs the (seed, arm) jobs side by side (`train_arms`)."""
REFERENCE = "grpo"
MECHANISM = {"iapo": ("advantage_hook",), "iapo_noisy": ("advantage_hook", "advantage_hook_kw")}
"""Against flat-credit GRPO: IAPO adds the influence hook; the noisy arm also sets the hook's noise rate."""
EVAL_SEED = 3 * 10**6
"""The first held-out task seed (test split; a stream apart from every training seed)."""
NOISE_RATE = 0.2
"""ρ of the noisy-annotator arm (inferred; see the module docstring)."""
DEFAULT_STEPS = 12
"""GRPO steps per arm by default (the budget; inferred)."""
ACTION_TOKENS = {"telecom": 64, "retail": 160, "airline": 320}
"""Each domain's default action budget: the oracle's longest action in 150 episodes is 53 tiny-LM tokens in
telecom, 118 in retail (an order edit with item ids) and 230 in airline (a booking with passengers; every
digit is one token), and a shorter budget cuts the call off unclosed
(`tests/reproduce/test_action_budgets.py`)."""
PAPER = iapo_menu.PAPER
"""IAPO's Qwen3-8B pass^1 per domain and macro (envs.md §4.3, Tables 1-2)."""
PAPER_FUNCTION_CALLS = {"grpo": 0.3904, "iapo": 0.3936}
"""BFCL-v4 multi-turn accuracy, GRPO vs IAPO (Table 1): the paper's "function calling not hurt"."""


@dataclass
class Args(WarmStartArgs, MenuRunArgs):
    """GRPO with flat vs influence credit on ServiceAgent-v0 (envs.md §4); the setting is the module
    docstring's. ``env_kw`` holds extra kwargs for every domain (domain, prompt and max_steps are set
    from ``domains``, ``prompt`` and ``max_turns``)."""

    env: str = "papergym/ServiceAgent-v0"
    """The env every arm trains and is evaluated on."""
    env_kw: list[str] = field(default_factory=list)
    """Extra ServiceAgent-v0 kwargs as key=value, for every domain."""
    domains: list[str] = field(default_factory=lambda: ["telecom"])
    """The domains, each with its own warm start and arms (telecom: the paper's largest gain)."""
    prompt: str = "compact"
    """ServiceAgent-v0's ``prompt`` (compact: the tiny LM's context; see the module docstring)."""
    max_turns: int = 30
    """The env's ``max_steps`` (IAPO: at most 30 turns)."""
    family_key: str = "domain"
    """The reset-info key of a task's family (the domain)."""
    steps: int | None = DEFAULT_STEPS
    """GRPO steps per arm."""
    prompts_per_step: int = 2
    """Tasks per GRPO step (inferred, CPU budget)."""
    group_size: int = 4
    """Rollouts per task (IAPO: 16; inferred, CPU budget)."""
    max_new_tokens: int = 0
    """Token budget of one action; 0: the domain's `ACTION_TOKENS`."""
    lr: float = 1e-4
    """GRPO's AdamW learning rate of every arm (inferred for the tiny LM, as es-vs-grpo's)."""
    noise: float = NOISE_RATE
    """ρ of the ``iapo_noisy`` arm's `NoisyAnnotator` (inferred)."""
    eval_every: int = 4
    """Steps between the checkpoints scored for the learning curves."""
    eval_tasks: int = 16
    """Held-out test tasks per domain."""
    eval_samples: int = 2
    """Samples per held-out task (temperature 1)."""
    sft_episodes: int = 300
    """Oracle demonstrations of the SFT warm start, per domain (with --model DIR: no SFT)."""
    sft_steps: int = 120
    """SFT optimizer steps."""
    sft_batch: int = 8
    """SFT batch size (whole episodes of ~1.4k tokens)."""
    policy: str = "lm"
    """``lm``: the tiny LM (or ``--model DIR``) as above; ``menu``: the learned non-LM menu policy of
    `papergym.baselines.menu_grpo` on the one domain of ``domains`` (retail or telecom;
    `papergym.reproduce.iapo_menu`), with the ``menu_*`` fields, ``seeds``, ``eval_tasks``, ``max_turns``,
    ``noise``, ``env_kw`` and ``workers``. Its README section is ``iapo-menu-<domain>``."""
    resume: bool = False
    """Continue every arm from its newest checkpoint under ``out`` (`papergym.baselines.grpo`'s resume:
    arms checkpoint every ``eval_every`` steps, so a finished run goes on to a larger ``--steps`` or more
    ``--seeds``, ending where one unbroken run would); the warm start is cached either way, and so are the
    held-out scores of the checkpoints already scored (``heldout_scores.jsonl`` in each arm's directory)."""


SMOKE: dict[str, Any] = {
    **SMOKE_WARM_START,
    "steps": 2,
    "prompts_per_step": 1,
    "group_size": 2,
    "max_turns": 3,
    "eval_every": 1,
    "eval_tasks": 2,
    "eval_samples": 1,
    "sft_episodes": 2,
    **MENU_SMOKE,
}
"""``--smoke``: the same code path on a minimal budget."""


def domain_env_kw(args: Args, domain: str) -> list[str]:
    """The ServiceAgent-v0 kwargs of ``domain``'s arms, warm start and evaluation."""
    return [f"domain={domain}", f"prompt={args.prompt}", f"max_steps={args.max_turns}", *args.env_kw]


def action_budget(max_new_tokens: int, domain: str) -> int:
    """``max_new_tokens`` where set, else ``domain``'s `ACTION_TOKENS`.

    Raises:
        ValueError: ``domain`` has no default budget and ``max_new_tokens`` is 0.
    """
    if max_new_tokens:
        return max_new_tokens
    if domain not in ACTION_TOKENS:
        raise ValueError(
            f"no default action budget for domain {domain!r} ({sorted(ACTION_TOKENS)}); pass --max-new-tokens"
        )
    return ACTION_TOKENS[domain]


def for_domain(args: Args, domain: str) -> Args:
    """``args`` with the env kwargs and action budget of ``domain`` (what `warm_base`, `grpo_config` and
    `evaluate_model` read)."""
    budget = action_budget(args.max_new_tokens, domain)
    return dataclasses.replace(args, env_kw=domain_env_kw(args, domain), max_new_tokens=budget)


def arm_configs(args: Args, base: str, seed: int, domain: str) -> dict[str, grpo.Args]:
    """Each arm's GRPO config for one domain and seed, starting from ``base``; every arm checkpoints
    every ``eval_every`` steps (the learning curves)."""
    out = Path(args.out) / domain / f"seed{seed}"
    steps = args.steps if args.steps is not None else DEFAULT_STEPS
    hooks: dict[str, dict[str, Any]] = {
        "grpo": {},
        "iapo": {"advantage_hook": "influence"},
        "iapo_noisy": {"advantage_hook": "influence", "advantage_hook_kw": [f"noise={args.noise}"]},
    }
    return {
        arm: dataclasses.replace(
            grpo_config(
                for_domain(args, domain),
                model=base,
                out=out / arm,
                seed=seed,
                steps=steps,
                lr=args.lr,
                **hook,
            ),
            checkpoint_every=args.eval_every,
            resume=args.resume,
        )
        for arm, hook in hooks.items()
    }


def checkpoints(config: grpo.Args) -> dict[int, str]:
    """``{step: model dir}`` of an arm's scored points: every ``eval_every`` steps and the final model."""
    out = Path(config.out)
    points = {
        step: str(out / "checkpoints" / f"step_{step}")
        for step in range(config.checkpoint_every, config.steps, config.checkpoint_every)
    }
    points[config.steps] = str(out / "final")
    return points


def _evaluate(args: Args, domain: str, model: str) -> list[TaskSamples]:
    return evaluate_model(
        for_domain(args, domain), model, tasks=args.eval_tasks, samples=args.eval_samples, seed=EVAL_SEED
    )


def run(args: Args) -> dict[str, Any]:
    """Train every arm on every domain and seed, score the curves and write the report."""
    if menu_policy(args):
        return iapo_menu.run(args)
    set_threads(args.threads)
    out = Path(args.out)
    scored: dict[str, Any] = {}
    curves: dict[str, dict[int, list[dict[str, float]]]] = {}
    for domain in args.domains:
        base = warm_base(for_domain(args, domain))
        base_samples = _evaluate(args, domain, base)
        points: dict[str, dict[int, list[list[TaskSamples]]]] = {arm: {0: []} for arm in ARMS}
        for seed, arm, _, (curve, scores) in train_arms(
            partial(train_and_score, args, domain),
            partial(arm_configs, args, base, domain=domain),
            args,
            REFERENCE,
            MECHANISM,
        ):
            curves.setdefault(f"{domain}/{arm}", {})[seed] = curve
            points[arm][0].append(base_samples)
            for step, samples in scores.items():
                points[arm].setdefault(step, []).append(samples)
        scored[domain] = points
    summary = summarise(args, scored, curves)
    report.write_results(out, name=NAME, args=args, curves=curves, summary=summary)
    for domain in args.domains:
        report.plot_arms(
            out / f"curve_{domain}.png",
            {arm: {float(s): i for s, i in summary["domains"][domain]["curve"][arm].items()} for arm in ARMS},
            xlabel="GRPO step",
            ylabel="held-out success",
            title=f"ServiceAgent-v0 {domain}: flat vs influence credit",
        )
    publish(out, NAME, section(summary), args.write)
    summary["out"] = str(out)
    return summary


def train_and_score(
    args: Args, domain: str, config: grpo.Args
) -> tuple[list[dict[str, float]], dict[int, list[TaskSamples]]]:
    """One (seed, arm) run: train ``config`` and score each of its checkpoints on the held-out tasks
    (scores cached beside the arm's checkpoints, so a ``--resume`` re-scores only its new ones); returns
    its training curve and the scores by step (a `train_arms` job)."""
    grpo.main(config)
    scored = for_domain(args, domain)
    keys = ("env", "env_kw", "max_new_tokens", "family_key", "device", "eval_tasks", "eval_samples")
    settings = {key: getattr(scored, key) for key in keys} | {"seed": EVAL_SEED}
    scores = {
        step: cached_scores(
            Path(config.out) / "heldout_scores.jsonl",
            model,
            settings,
            partial(_evaluate, args, domain, model),
        )
        for step, model in checkpoints(config).items()
    }
    return training_curve(config), scores


def training_curve(config: grpo.Args) -> list[dict[str, float]]:
    """An arm's per-step training metrics (``metrics.jsonl``)."""
    keep = ("step", "reward", "success", "nonzero_variance_share", "loss", "turns", "invalid_rate", "kl")
    return [
        {k: float(r[k]) for k in keep if isinstance(r.get(k), (int, float))}
        for r in read_metrics(Path(config.out) / "metrics.jsonl")
    ]


def success_matrix(per_seed: list[list[TaskSamples]]) -> np.ndarray:
    """The ``(seeds, tasks)`` success rates (pass@1 over a task's samples)."""
    return pass_at_k_matrix(per_seed, 1)


def call_success(per_seed: list[list[TaskSamples]]) -> report.Interval | None:
    """The function-call success rate (tool calls without an error / tool calls), pooled per seed, with a
    bootstrap interval over seeds; None when no seed made a tool call."""
    rates = [
        sum(t.calls_ok for t in tasks) / sum(t.calls for t in tasks)
        for tasks in per_seed
        if sum(t.calls for t in tasks)
    ]
    return report.stratified_bootstrap(rates) if rates else None


def summarise(
    args: Args, scored: dict[str, Any], curves: dict[str, dict[int, list[dict[str, float]]]]
) -> dict[str, Any]:
    """Per domain: the curves, the final success and function-call success per arm, each arm's final gap
    to ``grpo`` with its direction against the paper (IAPO better: +1), and the share of training groups
    whose rewards differed (the only groups with a nonzero advantage, where the hook can act)."""
    domains: dict[str, Any] = {}
    for domain, points in scored.items():
        final = max(points[REFERENCE])
        gaps = {}
        for arm in ARMS[1:]:
            gap = report.paired_difference(
                success_matrix(points[arm][final]), success_matrix(points[REFERENCE][final])
            )
            gaps[arm] = {"difference": gap, "direction": report.direction(gap, +1)}
        gains = {  # did GRPO learn at all: each arm's final model against the base, paired per seed x task
            arm: report.paired_difference(success_matrix(points[arm][final]), success_matrix(points[arm][0]))
            for arm in ARMS
        }
        domains[domain] = {
            "curve": {
                arm: {step: report.stratified_bootstrap(success_matrix(m)) for step, m in sorted(p.items())}
                for arm, p in points.items()
            },
            "final_step": final,
            "success": {arm: report.stratified_bootstrap(success_matrix(points[arm][final])) for arm in ARMS},
            "function_calls": {arm: call_success(points[arm][final]) for arm in ARMS},
            "calls_per_episode": {
                arm: float(
                    np.mean(
                        [
                            sum(t.calls for t in tasks) / sum(t.n for t in tasks)
                            for tasks in points[arm][final]
                        ]
                    )
                )
                for arm in ARMS
            },
            "varied_groups": {
                arm: float(
                    np.mean(
                        [
                            row.get("nonzero_variance_share", 0.0)
                            for rows in curves.get(f"{domain}/{arm}", {}).values()
                            for row in rows
                        ]
                        or [0.0]
                    )
                )
                for arm in ARMS
            },
            "base_success": report.stratified_bootstrap(success_matrix(points[REFERENCE][0])),
            "gap_vs_grpo": gaps,
            "gain_vs_base": gains,
        }
    return {
        "domains": domains,
        "noise": args.noise,
        "paper": PAPER,
        "paper_function_calls": PAPER_FUNCTION_CALLS,
        "setting": setting(args),
    }


SETTING_KEYS = (
    *("model", "seeds", "steps", "prompts_per_step", "group_size", "lr", "eval_tasks", "eval_samples"),
    *("max_turns", "max_new_tokens", "sft_episodes", "sft_steps", "sft_batch", "prompt", "domains"),
)
"""The arguments the section's setting paragraph states (`report.read_summary` supplies them for a
results.json written before the summary carried them)."""


def setting(args: Args) -> dict[str, Any]:
    """The run's budget and warm start, for the section."""
    return {k: getattr(args, k) for k in SETTING_KEYS}


def describe(run: dict[str, Any], domains: list[str]) -> str:
    """The setting paragraph: warm start, action budgets, arms' budget and held-out evaluation."""
    budgets = ", ".join(f"{d} {action_budget(run['max_new_tokens'], d)}" for d in domains)
    default = Args()
    cut = [k for k in ("seeds", "steps", "eval_tasks", "eval_samples") if run[k] < getattr(default, k)]
    smaller = (
        f" (**smaller than the default run** in {', '.join(cut)}: "
        + ", ".join(f"{k} {getattr(default, k)}" for k in cut)
        + ")."
        if cut
        else "."
    )
    warm = (
        f"the tiny LM SFT-warmed on {run['sft_episodes']} oracle demonstrations per domain "
        f"({run['sft_steps']} steps of {run['sft_batch']} episodes)"
        if run["model"] == "tiny"
        else f"`{run['model']}` as is"
    )
    return (
        f"Run: `ServiceAgent-v0` (`prompt={run['prompt']}`, `max_steps={run['max_turns']}`), policy {warm}; "
        f"action budget in tokens: {budgets}. Each arm: {run['seeds']} seeds × {run['steps']} GRPO steps × "
        f"{run['prompts_per_step']} tasks × {run['group_size']} rollouts, lr {run['lr']:g}; held-out "
        f"{run['eval_tasks']} test tasks × {run['eval_samples']} samples at temperature 1" + smaller
    )


def _opt(value: report.Interval | None) -> str:
    return "n/a (no tool calls)" if value is None else str(value)


def section(summary: dict[str, Any]) -> str:
    """The benchmarks/README.md section: per domain the final success, gap and function-call success of
    each arm beside the paper's, the curve points, and a plain reading."""
    if summary.get("setting", {}).get("policy") == "menu":
        raise ValueError("a --policy menu run's section is written by its run (iapo_menu.section)")
    parts = ["### IAPO: flat vs influence credit (`papergym reproduce iapo`)"]
    if "setting" in summary:
        parts.append(describe(summary["setting"], list(summary["domains"])))
    for domain, d in summary["domains"].items():
        paper = summary["paper"].get(domain, {})
        rows = []
        for arm in ARMS:
            gap, gain = d["gap_vs_grpo"].get(arm), d.get("gain_vs_base", {}).get(arm)
            rows.append(
                {
                    "arm": arm,
                    f"held-out success, step {d['final_step']}": str(d["success"][arm]),
                    "gain over the base": "—" if gain is None else str(gain),
                    "gap to grpo": "—" if gap is None else str(gap["difference"]),
                    "direction": "—" if gap is None else gap["direction"],
                    "function-call success": _opt(d["function_calls"][arm]),
                    "tool calls / episode": f"{d['calls_per_episode'][arm]:.2f}",
                    "training groups with reward variance": f"{d['varied_groups'][arm]:.2f}",
                    "paper (Qwen3-8B pass^1)": f"{100 * paper[arm]:.2f}" if arm in paper else "—",
                }
            )
        columns = list(rows[0])
        curve_rows = [
            {"arm": arm, **{f"step {s}": f"{i.mean:.3f}" for s, i in d["curve"][arm].items()}} for arm in ARMS
        ]
        parts += [
            f"**{domain}** (base: {d['base_success']}; 95% stratified bootstrap over seeds × tasks):",
            report.markdown_table(rows, columns),
            "Held-out success along training (mean; intervals in results.json and the PNG):",
            report.markdown_table(curve_rows, list(curve_rows[0])),
        ]
    parts.append(reading(summary))
    return "\n\n".join(parts)


def _against_base(gain: report.Interval) -> str:
    where = "above the base" if gain.low > 0 else "below the base" if gain.high < 0 else "not apart from it"
    return f"{gain} ({where})"


def reading(summary: dict[str, Any]) -> str:
    """A plain statement per domain, read from the intervals."""
    out = []
    for domain, d in summary["domains"].items():
        gap, noisy = d["gap_vs_grpo"]["iapo"], d["gap_vs_grpo"]["iapo_noisy"]
        paper = summary["paper"].get(domain)
        claimed = f" (paper {100 * paper['grpo']:.2f} → {100 * paper['iapo']:.2f})" if paper else ""
        text = (
            f"{domain}: IAPO minus flat GRPO, held-out success {gap['difference']}{claimed}: "
            f"**{gap['direction']}**; with the noisy annotator (ρ = {summary['noise']}) "
            f"{noisy['difference']}: {noisy['direction']}."
        )
        if "gain_vs_base" in d:
            text += " Gain over the base at step {}: {}.".format(
                d["final_step"], "; ".join(f"{arm} {_against_base(d['gain_vs_base'][arm])}" for arm in ARMS)
            )
        if max(i.mean for arm in ARMS for i in d["curve"][arm].values()) == 0.0:
            text += (
                " No arm solved a held-out task at any point, the base included: a zero-success policy's "
                "rewards differ only by the format penalty (-0.1 per malformed action), so the comparison "
                "says nothing about credit for task success."
            )
        fc = d["function_calls"]
        if fc["grpo"] is not None and fc["iapo"] is not None:
            hurt = fc["iapo"].high < fc["grpo"].low
            text += (
                f" Function-call success {fc['grpo'].mean:.3f} (grpo) vs {fc['iapo'].mean:.3f} (iapo): "
                + (
                    "lower with IAPO (intervals apart)."
                    if hurt
                    else "not lower with IAPO (the paper: not hurt)."
                )
            )
        out.append(text)
    return " ".join(out)
