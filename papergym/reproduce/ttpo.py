"""``papergym reproduce ttpo``: label-free TTPO vs TTRL vs true-label OPSD at test time (training.md §4).

The claim (TTPO summary, papers/training.md §4.1): on hard problems a majority-vote pseudo-label is wrong
about 85% of the time, yet about 79% of the rollouts that disagree with it are wrong too; so TTPO, which
distils the agreeing rollouts softly and penalises only the confident tokens of the disagreeing ones,
improves without labels (Qwen3-1.7B: 38.0 → 45.2 on five competition benchmarks) and matches or beats
OPSD, on-policy self-distillation from a teacher shown the true label.

Setting (decided before any arm ran, from the base's pseudo-label error alone): `papergym/TestTime-v0`,
``domain="arith"`` at ``difficulty=1`` (a sum or difference of two numbers in 0..9), its fixed set of
``n_problems`` test problems. The base is the tiny LM SFT-warmed on oracle answers of
`papergym/Reasoning-v0` ``domain="arith"`` at the same level, **train split**. The TestTime set is the test
split: the two draw task indices from disjoint seed streams, so no test *task* is an SFT task; but level 1
has only 200 distinct expressions, so every test *expression* also occurs among the SFT demonstrations
(`sft_overlap` measures it; results.json and the README section report it). The base has thus seen these
problems with their answers in SFT and still gets most of them wrong; all arms share that base.

How the level and the SFT budget were chosen (a calibration run of `papergym.baselines.sft` with a
checkpoint every 100 steps, each scored by the base's majority vote over 8 samples on the 64 TestTime
problems; no arm had been trained): at level 3 the SFT loss stayed on its plateau (no arithmetic learnt)
for 420 steps, so the base answered nothing right; at level 1 the pseudo-label error after 100..600 steps
was 92, 91, 89, 78, 84 and 78%. The rule, fixed beforehand, took the budget whose error is closest to the
paper's ≈85% within (50%, 95%): 500 steps (84%; sampled accuracy 14%, disagree-set error 90%).

Arms (`papergym.baselines.ttpo`, one config each, differing only in ``objective``; same base, seeds,
steps, group size, learning rate): ``ttrl`` (majority-vote GRPO), ``ttpo`` (agree → weighted forward-KL
distillation from the frozen base shown the pseudo-label, disagree → confident-token GRPO penalty) and
``opsd`` (every rollout distilled by the same forward KL from the frozen base shown the TRUE label, the
only arm whose updates read ``info["hidden_label"]``). Per step the trainer logs the pseudo-label error
and the disagree-set error (`papergym.baselines.ttpo.label_diagnostics`); after training each arm is
scored on the TestTime problems: sampled accuracy (pass@1 at temperature 1 from ``eval_samples`` samples
per problem), majority-vote accuracy over those samples, and greedy accuracy, each with a stratified
bootstrap interval over (seed, problem).
"""

from __future__ import annotations

import dataclasses
import logging
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from papergym.baselines import ttpo
from papergym.baselines.policy import PolicyModel, completion_logits, load_policy
from papergym.baselines.rollout import run_episodes
from papergym.baselines.run import make_envs, parse_kwargs, read_metrics, set_threads
from papergym.core import info_keys as K
from papergym.core.errors import require
from papergym.core.trajectory import member_seed
from papergym.credit.majority_vote import MajorityVoteReward
from papergym.envs.reasoning.reasoning_env import canonical_answer
from papergym.reproduce import report
from papergym.reproduce.driver import WarmStartArgs, check_arms, warm_base
from papergym.reproduce.evaluation import pass_at_k_matrix, sample_tasks

logger = logging.getLogger(__name__)

NAME = "ttpo"
ARMS = ("base", "ttrl", "ttpo", "opsd")
TRAINED_ARMS = ("ttrl", "ttpo", "opsd")
REFERENCE = "ttpo"
MECHANISM = {"ttrl": ("objective",), "opsd": ("objective",)}
"""Against TTPO: TTRL and OPSD change the objective and nothing else."""
EVAL_SEED = 2 * 10**6
"""Seeds the held-out sampling (a stream apart from every training seed)."""
CURVE_KEYS = ("pseudo_label_error", "disagree_error", "accuracy", "majority_ratio", "reward_accuracy", "loss")
"""The per-step trainer metrics kept in ``results.json`` curves."""
PAIRS = (("ttpo", "base"), ("ttpo", "opsd"), ("ttpo", "ttrl"), ("ttrl", "base"), ("opsd", "base"))
"""The paired differences reported (treatment, control)."""
LABEL_KEYS = ("pseudo_label_error", "disagree_error")
DEFAULT_STEPS = 40
"""Test-time training steps per arm by default (the budget; inferred)."""
PAPER = {"pseudo_label_error": 0.85, "disagree_error": 0.79, "base": 0.380, "ttpo": 0.452}
"""The summary's numbers (training.md §4.1): 85% wrong pseudo-labels, 79% wrong disagreeing rollouts,
Qwen3-1.7B 38.0% → 45.2% averaged over five competition benchmarks; TTPO ≥ OPSD (no number given)."""


@dataclass
class Args(WarmStartArgs):
    """TTPO vs TTRL vs OPSD on a fixed test set (training.md §4); the setting is the module docstring's.

    The SFT warm start is `warm_base`'s, on ``env`` (Reasoning-v0's train split) at the test level: the
    arms themselves train and are scored on papergym/TestTime-v0, built from ``domain``, ``difficulty`` and
    ``n_problems``, not from ``env`` / ``env_kw``."""

    env: str = "papergym/Reasoning-v0"
    """The SFT demonstrations' env (train split); the arms use papergym/TestTime-v0."""
    env_kw: list[str] = field(default_factory=list)
    """Extra kwargs of the SFT env (its domain and level are --domain and --difficulty)."""
    family_key: str = "domain"
    """Unused: every TestTime-v0 problem is of one domain (kept from `WarmStartArgs`)."""
    domain: str = "arith"
    """The TestTime-v0 / SFT domain."""
    difficulty: int = 1
    """The level of every problem (chosen from the base's pseudo-label error; see the module docstring)."""
    n_problems: int = 64
    """The fixed test set's size (TestTime-v0's default, an AIME-sized set)."""
    steps: int | None = DEFAULT_STEPS
    """Test-time training steps per arm."""
    prompts_per_step: int = 8
    """Problems per step."""
    group_size: int = 8
    """Rollouts per problem (the votes; URLVR's TTRL script: n = 8)."""
    lr: float = 1e-4
    """AdamW learning rate of every arm (inferred for the tiny LM, as es-vs-grpo's GRPO)."""
    max_new_tokens: int = 12
    """Token budget of one answer (``\\boxed{105}`` and a stop token are under 10)."""
    eval_samples: int = 16
    """Samples per problem at temperature 1 for sampled accuracy and the majority vote."""
    eval_batch: int = 128
    """Episodes per batch at evaluation."""
    sft_steps: int = 500
    """SFT optimizer steps (chosen from the base's pseudo-label error; see the module docstring)."""
    smooth: int = 5
    """Steps per point of the learning-curve figure (a moving window)."""
    ttpo_kw: list[str] = field(default_factory=list)
    """Further `papergym.baselines.ttpo.Args` fields as ``key=value``, applied to every arm alike."""


SMOKE: dict[str, Any] = {
    "seeds": 2,
    "steps": 2,
    "n_problems": 4,
    "prompts_per_step": 2,
    "group_size": 3,
    "max_new_tokens": 12,
    "eval_samples": 3,
    "eval_batch": 16,
    "sft_episodes": 16,
    "sft_steps": 2,
    "sft_batch": 4,
    "smooth": 1,
}
"""``--smoke``: the same code path on a minimal budget."""


def env_kw(args: Args) -> list[str]:
    """The TestTime-v0 kwargs of every arm."""
    return [f"domain={args.domain}", f"difficulty={args.difficulty}", f"n_problems={args.n_problems}"]


def sft_env_kw(args: Args) -> list[str]:
    """The SFT demonstrations' ``env`` kwargs (train split, the test level)."""
    return [f"domain={args.domain}", f"difficulty={args.difficulty}", *args.env_kw]


def arm_configs(args: Args, base: str, seed: int) -> dict[str, ttpo.Args]:
    """Each arm's `papergym.baselines.ttpo` config for one seed, starting from ``base``."""
    out = Path(args.out) / f"seed{seed}"
    extra = parse_kwargs(args.ttpo_kw)
    return {
        arm: ttpo.Args(
            env="papergym/TestTime-v0",
            env_kw=env_kw(args),
            model=base,
            out=str(out / arm),
            objective=arm,  # type: ignore[arg-type]
            steps=args.steps if args.steps is not None else DEFAULT_STEPS,
            prompts_per_step=args.prompts_per_step,
            group_size=args.group_size,
            max_new_tokens=args.max_new_tokens,
            lr=args.lr,
            seed=seed,
            checkpoint_every=0,
            progress=False,
            device=args.device,
            threads=args.threads,
            **extra,
        )
        for arm in TRAINED_ARMS
    }


def task_ids(args: Args) -> list[str]:
    """The TestTime problem set's task ids (the first ``n_problems`` test tasks at the level)."""
    return [f"{args.domain}/test/L{args.difficulty}/{i}" for i in range(args.n_problems)]


def _expression(prompt: str) -> str:
    """A problem's expression (``"23 + 5"``), its phrasing aside."""
    found = re.search(r"-?\d+ \S -?\d+", prompt)
    return found.group(0) if found else prompt


def sft_overlap(args: Args) -> dict[str, Any]:
    """How much of the TestTime set the SFT demonstrations contain.

    The demonstrations are rebuilt as `papergym.baselines.sft` draws them (episode ``i`` resets with seed
    ``member_seed(0, i) % 2**31`` on the train split). Returns the shared task ids (always none: train and
    test are disjoint streams) and the share of test problems whose expression also occurs in SFT.
    """
    env = gym.make(args.env, **parse_kwargs(sft_env_kw(args)))
    sft_ids, sft_expressions = set(), set()
    for i in range(args.sft_episodes):
        env.reset(seed=member_seed(0, i) % 2**31)
        sft_ids.add(env.unwrapped.task.task_id)  # type: ignore[attr-defined]
        sft_expressions.add(_expression(env.unwrapped.problem.prompt))  # type: ignore[attr-defined]
    test = []
    for task_id in task_ids(args):
        env.reset(seed=0, options={"task_id": task_id})
        test.append((task_id, _expression(env.unwrapped.problem.prompt)))  # type: ignore[attr-defined]
    env.close()
    return {
        "shared_task_ids": sum(t in sft_ids for t, _ in test),
        "test_expressions_seen_in_sft": sum(e in sft_expressions for _, e in test) / len(test),
        "sft_distinct_expressions": len(sft_expressions),
    }


def vote_scores(args: Args, policy: PolicyModel) -> dict[str, Any]:
    """Sampled scores of ``policy`` on every TestTime problem (``eval_samples`` each, temperature 1).

    Returns per-problem ``accuracy`` (correct samples / n) and ``majority`` (the vote is right), and the
    set's ``pseudo_label_error`` and ``disagree_error`` (`papergym.baselines.ttpo.label_diagnostics`).
    """
    n, ids = args.eval_samples, task_ids(args)
    jobs = [task_id for task_id in ids for _ in range(n)]
    per_batch = max(n, args.eval_batch // n * n)  # whole groups per batch
    envs = make_envs("papergym/TestTime-v0", parse_kwargs(env_kw(args)), min(per_batch, len(jobs)))
    reward_fn = MajorityVoteReward()
    groups, votes = [], []
    try:
        for start in range(0, len(jobs), len(envs)):
            chunk = jobs[start : start + len(envs)]
            episodes = run_episodes(
                policy,
                envs[: len(chunk)],
                seeds=[EVAL_SEED + start + m for m in range(len(chunk))],
                sample_seed=member_seed(EVAL_SEED, start),
                options=[{"task_id": t} for t in chunk],
                max_new_tokens=args.max_new_tokens,
            )
            for g in range(0, len(chunk), n):
                groups.append(episodes[g : g + n])
                votes.append(reward_fn.vote_rewards([e.trajectory for e in groups[-1]])[1])
    finally:
        for env in envs:
            env.close()
    truth = [group[0].trajectory.final_info.get(K.HIDDEN_LABEL) for group in groups]  # scoring only
    diagnostics = ttpo.label_diagnostics(groups, votes)
    return {
        "accuracy": [float(np.mean([e.trajectory.success for e in group])) for group in groups],
        "majority": [float(v.label is not None and v.label == t) for v, t in zip(votes, truth, strict=True)],
        **{k: diagnostics[k] for k in LABEL_KEYS},
    }


def hint_gain(args: Args, policy: PolicyModel) -> dict[str, Any]:
    """Whether the privileged teacher can use its hint: per problem, the log-prob of the oracle answer
    ``\\boxed{label}`` given the prompt plus the hint with the TRUE label, minus that given the prompt alone.

    OPSD's (and TTPO's agree-branch) signal exists only where this is positive: a model never trained on
    hints may ignore them. Returns the per-problem gains (nats), their mean and the share above zero.
    """
    torch = require("torch", "llm")
    hint = parse_kwargs(args.ttpo_kw).get("hint", ttpo.Args.hint)
    env = gym.make("papergym/TestTime-v0", **parse_kwargs(env_kw(args)))
    plain, hinted, answers = [], [], []
    for task_id in task_ids(args):
        observation, _ = env.reset(seed=0, options={"task_id": task_id})
        label = canonical_answer(env.unwrapped.problem.answer)  # type: ignore[attr-defined]
        plain.append(policy.encode_chat([{"role": "user", "content": observation}]))
        hinted.append(
            policy.encode_chat([{"role": "user", "content": observation + hint.format(answer=label)}])
        )
        answers.append([*policy.encode(f"\\boxed{{{label}}}"), policy.tokenizer.eos_token_id])
    env.close()
    logps = []
    with torch.no_grad():
        for prompts in (plain, hinted):
            logits, mask = completion_logits(policy, prompts, answers)  # (P, T, V), (P, T)
            tokens = torch.tensor([a + [0] * (mask.shape[1] - len(a)) for a in answers], device=logits.device)
            logp = torch.log_softmax(logits, dim=-1).gather(-1, tokens[..., None])[..., 0]  # (P, T)
            logps.append((logp * mask).sum(-1))
    gain = (logps[1] - logps[0]).tolist()
    return {
        "per_problem": gain,
        "mean": float(np.mean(gain)),
        "share_positive": float(np.mean(np.array(gain) > 0)),
    }


def evaluate(args: Args, model: str) -> dict[str, Any]:
    """`vote_scores` plus greedy accuracy per problem."""
    policy = load_policy(model, device=args.device)
    policy.model.eval()
    scores = vote_scores(args, policy)
    greedy = sample_tasks(
        policy,
        "papergym/TestTime-v0",
        parse_kwargs(env_kw(args)),
        tasks=args.n_problems,
        n=1,
        seed=EVAL_SEED,
        split="test",
        max_new_tokens=args.max_new_tokens,
        temperature=0.0,
        batch=args.eval_batch,
        task_ids=task_ids(args),
    )
    scores["greedy"] = pass_at_k_matrix([greedy], 1)[0].tolist()
    return scores


def curve(config: ttpo.Args) -> list[dict[str, float]]:
    """An arm's per-step training metrics (``metrics.jsonl``)."""
    return [
        {k: float(r[k]) for k in ("step", *CURVE_KEYS) if isinstance(r.get(k), (int, float))}
        for r in read_metrics(Path(config.out) / "metrics.jsonl")
    ]


def run(args: Args) -> dict[str, Any]:
    """Train every arm on every seed, evaluate them and write the report (see the module docstring)."""
    set_threads(args.threads)
    out = Path(args.out)
    base = warm_base(dataclasses.replace(args, env_kw=sft_env_kw(args)))
    overlap = sft_overlap(args) if args.model == "tiny" else None
    seeds = list(range(args.seeds))
    base_scores = evaluate(args, base)
    base_policy = load_policy(base, device=args.device)
    base_policy.model.eval()
    gain = hint_gain(args, base_policy)
    scores: dict[str, list[dict[str, Any]]] = {"base": [base_scores] * len(seeds)}
    curves: dict[str, dict[int, list[dict[str, float]]]] = {arm: {} for arm in TRAINED_ARMS}
    for seed in seeds:
        configs = arm_configs(args, base, seed)
        check_arms(configs, REFERENCE, MECHANISM)
        for arm, config in configs.items():
            ttpo.main(config)
            scores.setdefault(arm, []).append(evaluate(args, str(Path(config.out) / "final")))
            curves[arm][seed] = curve(config)
    summary = summarise(scores, curves)
    summary["sft_overlap"] = overlap
    summary["hint_gain"] = gain
    report.write_results(out, name=NAME, args=args, curves=curves, summary=summary)
    plot(out, args, curves)
    table = section(summary, png="ttpo_curves.png" if args.write else None)
    (out / "table.md").write_text(table + "\n")
    if args.write:
        shutil.copyfile(out / "curves.png", Path(args.write).parent / "ttpo_curves.png")
        report.write_readme_section(args.write, NAME, table)
    summary["out"] = str(out)
    return summary


def _matrix(scores: list[dict[str, Any]], key: str) -> np.ndarray:
    return np.array([s[key] for s in scores], dtype=float)  # (seeds, problems)


def _step_means(curves: dict[int, list[dict[str, float]]], key: str) -> list[float]:
    """One value per seed: the mean of ``key`` over that seed's logged steps (NaN steps skipped)."""
    means = []
    for rows in curves.values():
        values = [r[key] for r in rows if key in r and np.isfinite(r[key])]
        if values:
            means.append(float(np.mean(values)))
    return means


def _first_last(curves: dict[int, list[dict[str, float]]], key: str) -> dict[str, float]:
    """``key`` averaged over the first and the last quarter of the logged steps (and over seeds)."""
    first, last = [], []
    for rows in curves.values():
        values = [r[key] for r in rows if key in r]
        if values:
            q = max(1, len(values) // 4)
            first.append(float(np.mean(values[:q])))
            last.append(float(np.mean(values[-q:])))
    return {"first": float(np.mean(first)), "last": float(np.mean(last))} if first else {}


def summarise(
    scores: dict[str, list[dict[str, Any]]], curves: dict[str, dict[int, list[dict[str, float]]]]
) -> dict[str, Any]:
    """Accuracy per arm, the paired differences the claim is about, and the label statistics."""
    metrics = ("accuracy", "majority", "greedy")
    accuracy = {
        arm: {m: report.stratified_bootstrap(_matrix(scores[arm], m)) for m in metrics} for arm in ARMS
    }
    differences: dict[str, dict[str, Any]] = {}
    for a, b in PAIRS:  # the paper's direction is + for each (TTPO ≥ OPSD is read apart, in `reading`)
        differences[f"{a}-{b}"] = {}
        for m in metrics:
            diff = report.paired_difference(_matrix(scores[a], m), _matrix(scores[b], m))
            differences[f"{a}-{b}"][m] = {"difference": diff, "direction": report.direction(diff, +1)}
    labels = {
        "base": {k: scores["base"][0][k] for k in LABEL_KEYS},
        **{
            arm: {
                k: report.stratified_bootstrap(np.asarray(v)) if (v := _step_means(curves[arm], k)) else None
                for k in LABEL_KEYS
            }
            for arm in TRAINED_ARMS
        },
        "after": {
            arm: {k: float(np.mean([s[k] for s in scores[arm]])) for k in LABEL_KEYS} for arm in TRAINED_ARMS
        },
    }
    return {
        "accuracy": accuracy,
        "differences": differences,
        "labels": labels,
        "majority_ratio": {arm: _first_last(curves[arm], "majority_ratio") for arm in TRAINED_ARMS},
        "per_problem": {arm: [{m: s[m] for m in metrics} for s in scores[arm]] for arm in ARMS},
        "paper": PAPER,
    }


def plot(out: Path, args: Args, curves: dict[str, dict[int, list[dict[str, float]]]]) -> None:
    """``curves.png`` (rollout accuracy per step) and ``labels.png`` (pseudo-label error per step), a
    moving window of ``smooth`` steps, the band a 95% interval over seeds."""
    for key, png, ylabel in (
        ("accuracy", "curves.png", "rollout accuracy (true label)"),
        ("pseudo_label_error", "labels.png", "pseudo-label error"),
    ):
        series = {}
        for arm in TRAINED_ARMS:
            rows = [[r.get(key, np.nan) for r in seed_rows] for seed_rows in curves[arm].values()]
            width = min(len(r) for r in rows)
            points = {}
            for end in range(args.smooth, width + 1):
                window = np.array([r[end - args.smooth : end] for r in rows])  # (seeds, smooth)
                per_seed = np.nanmean(window, axis=1) if np.isfinite(window).any(axis=1).all() else None
                if per_seed is not None:
                    points[float(end - 1)] = report.stratified_bootstrap(per_seed)
            series[arm] = points
        report.plot_arms(
            out / png,
            series,
            xlabel="step",
            ylabel=ylabel,
            title=f"TestTime-v0 {args.domain} L{args.difficulty}",
        )


def _pct(interval: Any) -> str:
    if interval is None:
        return "n/a"
    if isinstance(interval, float):
        return f"{100 * interval:.1f}%" if np.isfinite(interval) else "n/a (no answers)"
    return f"{100 * interval.mean:.1f}% [{100 * interval.low:.1f}, {100 * interval.high:.1f}]"


def section(summary: dict[str, Any], png: str | None = None) -> str:
    """The benchmarks/README.md section: accuracy table, label statistics, differences and a reading."""
    acc = summary["accuracy"]
    paper = {"base": "38.0%", "ttpo": "45.2%", "ttrl": "", "opsd": "(TTPO ≥ OPSD)"}
    rows = [
        {"arm": arm, "sampled pass@1": _pct(acc[arm]["accuracy"]), "majority@n": _pct(acc[arm]["majority"]),
         "greedy": _pct(acc[arm]["greedy"]), "paper (1.7B, avg@5 benchmarks)": paper[arm]}
        for arm in ARMS
    ]  # fmt: skip
    columns = ["arm", "sampled pass@1", "majority@n", "greedy", "paper (1.7B, avg@5 benchmarks)"]
    labels = summary["labels"]
    label_columns = ["rollouts of", "pseudo-label error", "disagree-set error"]

    def label_row(name: str, values: dict[str, Any]) -> dict[str, str]:
        return dict(zip(label_columns, [name, *(_pct(values[k]) for k in LABEL_KEYS)], strict=True))

    label_rows = [
        label_row("base (eval samples)", labels["base"]),
        *[label_row(f"{arm} (training, mean over steps)", labels[arm]) for arm in TRAINED_ARMS],
        *[label_row(f"{arm} after training (eval samples)", labels["after"][arm]) for arm in TRAINED_ARMS],
        dict(zip(label_columns, ["paper", "≈85%", "≈79%"], strict=True)),
    ]
    diff_rows = [
        {"difference": name, **{m: f"{_pct(d[m]['difference'])} ({d[m]['direction']})" for m in d}}
        for name, d in summary["differences"].items()
    ]
    overlap = summary.get("sft_overlap")
    parts = [
        "### TTPO vs TTRL vs OPSD (`papergym reproduce ttpo`)",
        "Accuracy on the TestTime-v0 problem set after test-time training (95% stratified bootstrap over "
        "seeds × problems; the base is evaluated once):",
        report.markdown_table(rows, columns),
        report.markdown_table(label_rows, label_columns),
        "Paired differences (paper direction: +; verdict from the interval):",
        report.markdown_table(diff_rows, ["difference", "accuracy", "majority", "greedy"]),
    ]
    if overlap is not None:
        parts.append(
            f"SFT contamination check: {overlap['shared_task_ids']} test tasks are SFT tasks; "
            f"{overlap['test_expressions_seen_in_sft']:.0%} of the test problems' expressions also occur "
            f"among the {overlap['sft_distinct_expressions']} distinct SFT expressions (the level's space is "
            "small)."
        )
    gain = summary.get("hint_gain")
    if gain is not None:
        parts.append(
            "Can the privileged teacher use its hint? Shown the true label in its prompt, the base changes "
            f"the log-probability of the right answer by {gain['mean']:+.2f} nats on average (raises it on "
            f"{gain['share_positive']:.0%} of the problems); OPSD's signal, and TTPO's distillation signal, "
            "exist only where this is > 0."
        )
    if png:
        parts.append(f"![TTPO learning curves]({png})")
    parts.append(reading(summary))
    return "\n\n".join(parts)


def reading(summary: dict[str, Any]) -> str:
    """A plain statement of which claims reproduced, read from the intervals (sampled accuracy)."""
    d = summary["differences"]
    labels = summary["labels"]["base"]
    vs_base, vs_opsd, vs_ttrl = (d[k]["accuracy"] for k in ("ttpo-base", "ttpo-opsd", "ttpo-ttrl"))
    beats_or_matches = "matches" if vs_opsd["difference"].high >= 0 else "does not match"
    both_below = all(d[k]["accuracy"]["difference"].high < 0 for k in ("ttpo-base", "opsd-base"))
    consensus = {arm: v for arm, v in summary.get("majority_ratio", {}).items() if v}
    gain = summary.get("hint_gain")
    notes = []
    if consensus:
        moves = ", ".join(f"{arm} {v['first']:.2f} → {v['last']:.2f}" for arm, v in consensus.items())
        notes.append(
            f"Majority ratio, first → last quarter of training: {moves} (TTRL rewards consensus; a ratio "
            "near 0 means almost no rollout still writes an answer: the format is being unlearnt)."
        )
    if gain is not None and gain["mean"] <= 0:
        notes.append(
            f"The base cannot use a hint (a true label in its prompt lowers the right answer's log-prob by "
            f"{-gain['mean']:.2f} nats on average): it never saw one in SFT, so the privileged teacher of "
            "OPSD and of TTPO's agree branch passes on no label information, and what this setting tests "
            "is the penalty and vote mechanisms, not the paper's distillation."
        )
    if both_below:
        notes.append(
            "TTPO and OPSD both end below the base, so their comparison says little about the claim."
        )
    return " ".join(
        [
            f"The base's pseudo-labels are wrong on {labels['pseudo_label_error']:.0%} of the problems "
            f"(paper ≈85%) and {labels['disagree_error']:.0%} of the rollouts that disagree with them are "
            "wrong (paper ≈79%).",
            f"TTPO vs base: {_pct(vs_base['difference'])}, {vs_base['direction']} (paper +7.2 points).",
            f"TTPO vs true-label OPSD: {_pct(vs_opsd['difference'])}; the claim 'TTPO matches or beats OPSD' "
            f"{beats_or_matches} (TTPO not significantly below OPSD: {vs_opsd['difference'].high >= 0}).",
            f"TTPO vs TTRL: {_pct(vs_ttrl['difference'])}, {vs_ttrl['direction']}.",
            *notes,
        ]
    )
