"""``papergym reproduce prefix``: GRPO vs GRPO with foreign or same-family small-model prefixes (§2).

The claim (PKU prefix-perturbation paper, papers/training.md §2): RLVR narrows the policy, so pass@128
falls below the base (72.15 → 67.76); starting 20% of the rollouts from a *foreign* small model's
reasoning prefix (cut where its entropy drops most) recovers most of it (70.71), while prefixes from a
*same-family* small model help nothing.

Setting (decided before any arm ran): the task distribution of ``es-vs-grpo`` (Countdown-lite and arith
at level 1, `papergym/MultiDomain-v0`; Countdown-lite has several solutions per task, so breadth can
matter at large k) and its SFT-warmed tiny LM as the target (the same cached warm start). The two prefix
models are trained on the same oracle demonstrations with a third of the target's SFT steps (small
models are weaker):

- ``same``: the target's own family: the same architecture, tokenizer and initial weights;
- ``foreign``: another family: a narrower, shallower network, another initial seed and a tokenizer with
  half the vocabulary (so its text is re-tokenized for the policy, as across real model families).

Arms, from one base with the same seeds and budget: ``grpo`` (no prefixes), ``grpo_foreign`` and
``grpo_same`` (``prefix_model`` set, p = 0.2, masked prefix loss), plus the untrained ``base``. The
prefix-target similarity is the geometric-mean probability the target gives a prefix model's sampled
answer tokens on held-out prompts. The trainer (`papergym.baselines.grpo` with `papergym.baselines.prefix`)
does all training; this module only configures, evaluates and reports.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from papergym.baselines import grpo
from papergym.baselines.run import set_threads
from papergym.core.errors import require
from papergym.reproduce import report
from papergym.reproduce.driver import (
    SMOKE_WARM_START,
    WarmStartArgs,
    check_arms,
    evaluate_model,
    grpo_config,
    publish,
    warm_base,
)
from papergym.reproduce.es_vs_grpo import ks_for
from papergym.reproduce.evaluation import TaskSamples, pass_at_k_matrix

logger = logging.getLogger(__name__)

NAME = "prefix"
ARMS = ("base", "grpo", "grpo_foreign", "grpo_same")
TRAINED_ARMS = ("grpo", "grpo_foreign", "grpo_same")
REFERENCE = "grpo"
MECHANISM = {"grpo_foreign": ("prefix_model",), "grpo_same": ("prefix_model",)}
EVAL_SEED = 10**6
PAPER = {"base": 72.15, "grpo": 67.76, "grpo_foreign": 70.71, "k": 128}
"""The paper's pass@128 (training.md §2): base 72.15, RLVR 67.76, foreign prefixes 70.71; same-family
prefixes no better than RLVR."""


@dataclass
class Args(WarmStartArgs):
    """GRPO with and without small-model prefixes (training.md §2)."""

    env: str = "papergym/MultiDomain-v0"
    """The task distribution (es-vs-grpo's)."""
    env_kw: list[str] = field(default_factory=lambda: ['domains=["countdown", "arith"]', "difficulty=1"])
    """Countdown-lite and arith, level 1, drawn uniformly per episode."""
    steps: int | None = 64
    """GRPO steps per arm."""
    prompts_per_step: int = 4
    """GRPO tasks per step."""
    group_size: int = 8
    """GRPO rollouts per task."""
    grpo_lr: float = 1e-4
    """GRPO's learning rate (the same as es-vs-grpo's)."""
    prefix_prob: float = 0.2
    """Share of rollouts started from a prefix (the paper's 20%)."""
    prefix_sft_fraction: float = 1 / 3
    """The prefix models' SFT steps as a fraction of the target's (inferred: small models are weaker)."""
    foreign_hidden: int = 96
    """The foreign prefix model's width (the target's is 128)."""
    foreign_layers: int = 3
    """The foreign prefix model's depth (the target's is 4)."""
    foreign_vocab: int = 2048
    """The foreign tokenizer's vocabulary (the target's is 4096)."""
    eval_tasks: int = 32
    """Held-out test tasks (32 × 128 samples per model keeps the default run near DESIGN's CPU budget)."""
    eval_samples: int = 128
    """Samples per held-out task (pass@k up to 128)."""
    similarity_prompts: int = 64
    """Held-out prompts for the prefix-target similarity."""


SMOKE: dict[str, Any] = {**SMOKE_WARM_START, "steps": 1, "similarity_prompts": 2, "prefix_prob": 0.5}


def prefix_models(args: Args) -> dict[str, str]:
    """``{"same": dir, "foreign": dir}``: the two SFT-warmed small prefix models."""
    steps = max(1, round(args.sft_steps * args.prefix_sft_fraction))
    foreign_init = Path(args.out).parent / (
        f"foreign-init-h{args.foreign_hidden}-l{args.foreign_layers}-v{args.foreign_vocab}"
    )
    if not (foreign_init / "config.json").exists():
        from papergym.baselines.tiny import build_tiny

        build_tiny(
            foreign_init,
            hidden=args.foreign_hidden,
            layers=args.foreign_layers,
            vocab_size=args.foreign_vocab,
            seed=1,
        )
    return {
        "same": warm_base(args, model="tiny", seed=0, steps=steps),
        "foreign": warm_base(args, model=str(foreign_init), seed=1, steps=steps),
    }


def arm_configs(args: Args, base: str, seed: int, prefixes: dict[str, str]) -> dict[str, Any]:
    """Each trained arm's GRPO config for one seed."""
    out = Path(args.out) / f"seed{seed}"

    def config(arm: str, prefix_model: str | None) -> grpo.Args:
        return grpo_config(
            args,
            model=base,
            out=out / arm,
            seed=seed,
            steps=args.steps or 1,
            lr=args.grpo_lr,
            prefix_model=prefix_model,
            prefix_prob=args.prefix_prob,
            prefix_tokens=args.max_new_tokens,
        )

    return {
        "grpo": config("grpo", None),
        "grpo_foreign": config("grpo_foreign", prefixes["foreign"]),
        "grpo_same": config("grpo_same", prefixes["same"]),
    }


def similarity(args: Args, target: str, prefix_model: str) -> float:
    """The geometric-mean probability the target assigns to a prefix model's sampled answer tokens on
    held-out prompts (1.0: the target would write the same tokens with certainty)."""
    import gymnasium as gym
    import numpy as np

    from papergym.baselines.policy import completion_logprobs, load_policy, sample
    from papergym.baselines.run import parse_kwargs

    prefix, policy = load_policy(prefix_model, device=args.device), load_policy(target, device=args.device)
    env = gym.make(args.env, **parse_kwargs(args.env_kw))
    texts = [env.reset(seed=EVAL_SEED + 10_000 + i)[0] for i in range(args.similarity_prompts)]
    env.close()
    prompts = [prefix.encode_chat([{"role": "user", "content": t}]) for t in texts]
    out = sample(prefix, prompts, seed=EVAL_SEED, max_new_tokens=args.max_new_tokens, temperature=1.0)
    answers = [prefix.decode([t for t in row if t not in prefix.stop_ids]) for row in out.tokens]
    targets = [policy.encode_chat([{"role": "user", "content": t}]) for t in texts]
    completions = [policy.encode(a) for a in answers]
    keep = [i for i, c in enumerate(completions) if c]
    if not keep:
        return 0.0
    torch = require("torch", "llm")
    with torch.no_grad():
        logp, mask = completion_logprobs(policy, [targets[i] for i in keep], [completions[i] for i in keep])
    return float(np.exp(float((logp * mask).sum()) / max(1.0, float(mask.sum()))))


def run(args: Args) -> dict[str, Any]:
    """Train every arm on every seed, evaluate pass@k up to ``eval_samples`` and write the report."""
    set_threads(args.threads)
    out = Path(args.out)
    base = warm_base(args)
    prefixes = prefix_models(args)
    seeds = list(range(args.seeds))
    samples: dict[str, list[list[TaskSamples]]] = {"base": [_evaluate(args, base)] * len(seeds)}
    curves: dict[str, dict[int, list[dict[str, float]]]] = {arm: {} for arm in TRAINED_ARMS}
    for seed in seeds:
        configs = arm_configs(args, base, seed, prefixes)
        check_arms(configs, REFERENCE, MECHANISM)
        for arm, config in configs.items():
            grpo.main(config)
            samples.setdefault(arm, []).append(_evaluate(args, str(Path(config.out) / "final")))
            curves[arm][seed] = _curve(Path(config.out) / "metrics.jsonl")
    ks = ks_for(args.eval_samples)
    pass_at = {
        arm: {k: report.stratified_bootstrap(pass_at_k_matrix(samples[arm], k)) for k in ks} for arm in ARMS
    }
    top = ks[-1]
    differences = {
        f"{arm} - base": report.paired_difference(
            pass_at_k_matrix(samples[arm], top), pass_at_k_matrix(samples["base"], top)
        )
        for arm in TRAINED_ARMS
    }
    differences |= {
        f"{arm} - grpo": report.paired_difference(
            pass_at_k_matrix(samples[arm], top), pass_at_k_matrix(samples["grpo"], top)
        )
        for arm in ("grpo_foreign", "grpo_same")
    }
    summary: dict[str, Any] = {
        "pass_at_k": pass_at,
        "differences_at_max_k": differences,
        "verdicts": {
            "grpo below base at max k": report.direction(differences["grpo - base"], -1),
            "foreign prefixes above grpo": report.direction(differences["grpo_foreign - grpo"], +1),
            "same-family prefixes no different from grpo": report.direction(
                differences["grpo_same - grpo"], 0
            ),
        },
        "similarity": {name: similarity(args, base, path) for name, path in prefixes.items()},
        "prefix_models": prefixes,
        "paper": PAPER,
    }
    report.write_results(out, name=NAME, args=args, curves=curves, summary=summary)
    report.plot_arms(
        out / "pass_at_k.png",
        {arm: {float(k): v for k, v in pass_at[arm].items()} for arm in ARMS},
        xlabel="k",
        ylabel="pass@k",
        title="Countdown-lite + arith: GRPO with and without prefixes",
        log_x=True,
    )
    publish(out, NAME, section(summary), args.write)
    summary["out"] = str(out)
    return summary


def _evaluate(args: Args, model: str) -> list[TaskSamples]:
    return evaluate_model(args, model, tasks=args.eval_tasks, samples=args.eval_samples, seed=EVAL_SEED)


def _curve(path: Path) -> list[dict[str, float]]:
    from papergym.baselines.run import read_metrics

    keep = ("step", "reward", "success", "prefix_share", "drift_l2", "kl")
    return [{k: float(r[k]) for k in keep if isinstance(r.get(k), (int, float))} for r in read_metrics(path)]


def section(summary: dict[str, Any]) -> str:
    """The benchmarks/README.md section: pass@k per arm, differences at the largest k, similarity, reading."""
    pass_at = summary["pass_at_k"]
    ks = sorted(next(iter(pass_at.values())))
    shown = [k for k in ks if k in (1, 8, 32, ks[-1])]
    rows = [{"arm": arm, **{f"pass@{k}": str(pass_at[arm][k]) for k in shown}} for arm in ARMS]
    paper = {"base": "72.15", "grpo": "67.76", "grpo_foreign": "70.71", "grpo_same": "≈ grpo"}
    for row in rows:
        row[f"paper pass@{PAPER['k']}"] = paper[row["arm"]]
    table = report.markdown_table(rows, ["arm", *[f"pass@{k}" for k in shown], f"paper pass@{PAPER['k']}"])
    diffs = report.markdown_table(
        [
            {"difference": name, f"pass@{ks[-1]}": str(v)}
            for name, v in summary["differences_at_max_k"].items()
        ],
        ["difference", f"pass@{ks[-1]}"],
    )
    sim = ", ".join(f"{name} {value:.3g}" for name, value in summary["similarity"].items())
    verdicts = "; ".join(f"{claim}: **{verdict}**" for claim, verdict in summary["verdicts"].items())
    return "\n\n".join(
        [
            "### Prefix perturbation (`papergym reproduce prefix`)",
            "pass@k on held-out Countdown-lite + arith tasks (95% stratified bootstrap over seeds × tasks):",
            table,
            diffs,
            f"Prefix-target similarity (target's geometric-mean probability of the prefix tokens): {sim}.",
            f"Direction, read from the intervals: {verdicts}.",
        ]
    )
