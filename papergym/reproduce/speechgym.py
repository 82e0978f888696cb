"""``papergym reproduce speechgym``: outcome-only GRPO vs GRPO + SpeechGym's process reward (envs.md §2).

The claim (SpeechGym, arXiv 2608.26432; papers/envs.md §2.1, from the abstract and third-party digests):
on speech, a binary outcome starves GRPO of gradient (only 16% of groups have reward variance, 84% are
all-zero); a per-turn process reward of +0.1 per successful tool call restores variance to 99.6% of
groups, and the trained agent succeeds more, performs fewer unauthorized writes (23% -> 10%) and falls
into fewer dead loops (14% -> 5%); it transfers to an independent voice benchmark (tau-Voice pass@1
24% -> 53%).

Setting: `papergym/VoiceService-v0` (retail, generated tasks, scripted user) on its ``simulated`` channel
(the confusion channel calibrated on Piper -> Whisper), with ``prompt="compact"`` (the service prompt's
tool schemas and policy do not fit the tiny LM's 4096-token context), ``format_penalty=0`` (the paper's
reward has no format term, so the reference arm's reward is the outcome alone) and ``max_steps=16``
(the HearingOracle needs at most about 14 steps with its retries; a longer budget only lets a failing
policy spend CPU). The policy is the tiny LM SFT-warmed on `HearingOracle` demonstrations on that
channel: the oracle's procedure with slot values as heard, asking the user to repeat after a failed
call, so the demonstrations never use a value the agent could not have heard (the privileged oracle
would teach it to write values that are not in its context). Two arms train from that one base with the
same seeds, tasks, sampling and budget (`papergym.baselines.grpo`, DeepSeekMath defaults):

- ``outcome``: GRPO on the env's reward (tau2's outcome check);
- ``process``: the same, each training env wrapped in `papergym.wrappers.ProcessReward` (+0.1 per step
  whose tool call executed, read from the call's ``ok`` flag).

Measured: per training step, the share of groups with nonzero variance of the reward each arm trains
on, and, on the same episodes, of the outcome term alone and of outcome + process (so both arms show
both); held-out success (simulated channel, test tasks) of the base and both arms; unauthorized writes
and dead loops per held-out episode (defined in `papergym.reproduce.service_measures`); and, on a few
episodes, the simulated-trained policies on the real speech channels (``transcript``: Piper TTS ->
Whisper ASR both ways; ``audio``: the waveform observation, of which a text LM reads only the marker).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from papergym.baselines import grpo
from papergym.baselines.rollout import Episode
from papergym.baselines.run import read_metrics, set_threads
from papergym.core.trajectory import Trajectory
from papergym.reproduce import report
from papergym.reproduce import service_measures as sm
from papergym.reproduce.driver import (
    SMOKE_WARM_START,
    WarmStartArgs,
    evaluate_model,
    grpo_config,
    publish,
    train_arms,
    warm_base,
)

NAME = "speechgym"
ARMS = ("base", "outcome", "process")
TRAINED_ARMS = ("outcome", "process")
PARALLEL = True
"""``--workers`` runs the (seed, arm) jobs side by side (`train_arms`)."""
REFERENCE = "outcome"
MECHANISM = {"process": ("env_wrapper",)}
"""The process arm differs from outcome-only GRPO only in the training envs' `ProcessReward` wrapper."""
PROCESS_WRAPPER = "process_reward"
"""`papergym.wrappers.WRAPPERS`' name of `ProcessReward` (+0.1 per successful tool call)."""
DEFAULT_STEPS = 8
"""GRPO steps per arm and seed (inferred: what the 20-minute CPU budget allows, see Args)."""
EVAL_SEED = 10**6
"""The first held-out task seed (test split); the transfer runs use the first of the same tasks."""
BEHAVIOURS = ("success", "unauthorized_writes", "dead_loops")
"""Per held-out episode: what the summary gives intervals for."""
CURVE_KEYS = ("nonzero_variance_share", "reward", "success", "turns")
"""The trainer's per-step metrics kept in the curves (beside the measures of `step_measures`)."""
PAPER = {
    "variance_share": {"outcome": 0.16, "process": 0.996},
    "unauthorized_writes": {"before": 0.23, "after": 0.10},
    "dead_loops": {"before": 0.14, "after": 0.05},
    "tau_voice_pass1": {"before": 0.24, "after": 0.53},
}
"""SpeechGym's numbers (envs.md §2.1, third-party digests of the paper): groups with gradient, the two
behaviours' rates before and after training, and the voice-benchmark transfer."""


@dataclass
class Args(WarmStartArgs):
    """Outcome-only GRPO vs GRPO + process reward on VoiceService-v0's simulated channel."""

    env: str = "papergym/VoiceService-v0"
    """The env every arm trains and is evaluated on."""
    env_kw: list[str] = field(
        default_factory=lambda: ["channel=simulated", "prompt=compact", "format_penalty=0", "max_steps=16"]
    )
    """The simulated speech channel, the compact prompt, no format term, 16 steps (module docstring)."""
    max_new_tokens: int = 128
    """Token budget of one action: the demonstrator's longest action (an order edit with item ids) is 94
    tiny-LM tokens, as every digit is one (48 cut most calls off unclosed; benchmarks/README.md, "Tiny-LM
    copying"; `tests/reproduce/test_action_budgets.py`)."""
    prompts_per_step: int = 2
    """GRPO tasks per step."""
    group_size: int = 8
    """GRPO rollouts per task (inferred; the paper does not give its group size)."""
    lr: float = 1e-4
    """GRPO's AdamW learning rate (inferred for the tiny LM)."""
    eval_tasks: int = 32
    """Held-out test tasks (simulated channel)."""
    eval_samples: int = 2
    """Attempts per held-out task (temperature 1)."""
    transfer_channels: list[str] = field(default_factory=lambda: ["transcript", "audio"])
    """Real speech channels the simulated-trained policies are evaluated on."""
    transfer_tasks: int = 3
    """Held-out tasks per transfer channel and model (one attempt each; real TTS and ASR are slow)."""
    transfer_seeds: int = 1
    """Training seeds whose policies are evaluated on the transfer channels."""
    sft_episodes: int = 400
    """HearingOracle demonstrations of the SFT warm start."""
    sft_steps: int = 60
    """SFT optimizer steps (chosen before any arm trained: see the README section)."""
    sft_batch: int = 8
    """SFT batch size (contexts of about 1,500 tokens)."""
    sft_demonstrator: str | None = "papergym.envs.voice.hearing_oracle:HearingOracle"
    """The demonstrations' policy: the oracle's procedure with values as heard (module docstring)."""


SMOKE: dict[str, Any] = {
    **SMOKE_WARM_START,
    "steps": 1,
    "eval_tasks": 2,
    "eval_samples": 1,
    "transfer_tasks": 1,
    "transfer_channels": ["transcript"],
    "sft_episodes": 4,
}
"""``--smoke``: the same code path on a minimal budget (one real-speech transfer episode per model)."""


def arm_configs(args: Args, base: str, seed: int) -> dict[str, grpo.Args]:
    """Each arm's GRPO config for one seed, starting from ``base``."""
    out = Path(args.out) / f"seed{seed}"
    steps = args.steps if args.steps is not None else DEFAULT_STEPS
    return {
        "outcome": grpo_config(args, model=base, out=out / "outcome", seed=seed, steps=steps, lr=args.lr),
        "process": grpo_config(
            args,
            model=base,
            out=out / "process",
            seed=seed,
            steps=steps,
            lr=args.lr,
            env_wrapper=PROCESS_WRAPPER,
        ),
    }


def step_measures(
    rows: list[dict[str, float]], group_size: int
) -> Callable[[int, dict[str, Any], list[Episode]], None]:
    """GRPO's ``on_step``: appends to ``rows``, per step, the variance shares of both rewards on that
    step's groups and the training episodes' behaviours (`papergym.reproduce.service_measures`)."""

    def on_step(step: int, metrics: dict[str, Any], episodes: list[Episode]) -> None:
        trajectories = [e.trajectory for e in episodes]
        shares = sm.group_shares(trajectories, group_size)
        behaviour = sm.mean_measures(trajectories)
        rows.append(
            {
                "step": float(step),
                "outcome_variance_share": shares.outcome,
                "process_variance_share": shares.process,
                **{f"train_{k}": v for k, v in behaviour.items()},
            }
        )

    return on_step


def curve(config: grpo.Args, measured: list[dict[str, float]]) -> list[dict[str, float]]:
    """An arm's per-step record: the trainer's metrics joined with `step_measures`' rows by step."""
    by_step = {int(r["step"]): r for r in measured}
    rows = []
    for record in read_metrics(Path(config.out) / "metrics.jsonl"):
        kept = {k: float(record[k]) for k in ("step", *CURVE_KEYS) if isinstance(record.get(k), (int, float))}
        rows.append({**kept, **by_step.get(int(record["step"]), {})})
    return rows


def evaluate(args: Args, model: str, *, tasks: int, samples: int) -> dict[str, list[float]]:
    """Per held-out task: success and the behaviours, each averaged over its ``samples`` attempts."""
    per_task: dict[int, list[dict[str, float]]] = {}

    def record(task: int, trajectory: Trajectory) -> None:
        per_task.setdefault(task, []).append(sm.episode_measures(trajectory))

    evaluate_model(args, model, tasks=tasks, samples=samples, seed=EVAL_SEED, on_episode=record)
    return {
        key: [float(np.mean([m[key] for m in per_task[j]])) for j in range(tasks)]
        for key in ("success", "unauthorized_writes", "dead_loops", "successful_calls", "turns")
    }


def transfer(args: Args, models: dict[str, str]) -> dict[str, dict[str, dict[str, list[float]]]]:
    """``{channel: {model name: per-task measures}}`` on the real speech channels (one attempt per task)."""
    results: dict[str, dict[str, dict[str, list[float]]]] = {}
    for channel in args.transfer_channels:
        env_kw = [kw for kw in args.env_kw if not kw.startswith("channel=")] + [f"channel={channel}"]
        shifted = dataclasses.replace(args, env_kw=env_kw, out=str(Path(args.out) / f"transfer-{channel}"))
        results[channel] = {
            name: evaluate(shifted, model, tasks=args.transfer_tasks, samples=1)
            for name, model in models.items()
        }
    return results


def train_and_score(args: Args, config: grpo.Args) -> tuple[list[dict[str, float]], dict[str, list[float]]]:
    """One (seed, arm) run: its learning curve (the trainer's metrics and `step_measures`) and its final
    model's held-out scores (a `train_arms` job)."""
    measured: list[dict[str, float]] = []
    grpo.main(config, on_step=step_measures(measured, args.group_size))
    final = str(Path(config.out) / "final")
    return curve(config, measured), evaluate(args, final, tasks=args.eval_tasks, samples=args.eval_samples)


def run(args: Args) -> dict[str, Any]:
    """Train both arms on every seed, evaluate them and write the report (see the module docstring)."""
    set_threads(args.threads)
    out = Path(args.out)
    base = warm_base(args)
    seeds = list(range(args.seeds))
    base_scores = evaluate(args, base, tasks=args.eval_tasks, samples=args.eval_samples)
    scores: dict[str, list[dict[str, list[float]]]] = {"base": [base_scores] * len(seeds)}
    curves: dict[str, dict[int, list[dict[str, float]]]] = {arm: {} for arm in TRAINED_ARMS}
    models: dict[str, str] = {"base": base}  # the transfer's policies
    first: dict[str, list[float]] = {"base": base_scores["success"][: args.transfer_tasks]}
    for seed, arm, config, (arm_curve, final_scores) in train_arms(
        partial(train_and_score, args), partial(arm_configs, args, base), args, REFERENCE, MECHANISM
    ):
        scores.setdefault(arm, []).append(final_scores)
        curves[arm][seed] = arm_curve
        if seed < args.transfer_seeds:
            models[f"{arm}, seed {seed}"] = str(Path(config.out) / "final")
            first[f"{arm}, seed {seed}"] = final_scores["success"][: args.transfer_tasks]
    summary = summarise(scores, curves)
    summary["setting"] = setting(args)
    report.write_results(out, name=NAME, args=args, curves=curves, summary=summary)  # before real speech
    summary["transfer"] = transfer(args, models)
    summary["simulated_first_tasks"] = first
    report.write_results(out, name=NAME, args=args, curves=curves, summary=summary)
    plot(out, curves)
    publish(out, NAME, section(summary), args.write)
    summary["out"] = str(out)
    return summary


def setting(args: Args) -> dict[str, Any]:
    """The run's budget and warm start, for the section (a smaller run than the default says so)."""
    keys = ["model", "seeds", "prompts_per_step", "group_size", "lr", "eval_tasks", "eval_samples"]
    keys += ["transfer_tasks", "transfer_seeds", "sft_episodes", "sft_steps", "sft_batch", "smoke"]
    keys += ["max_new_tokens"]
    return {
        **{k: getattr(args, k) for k in keys},
        "steps": args.steps if args.steps is not None else DEFAULT_STEPS,
        "env_kw": list(args.env_kw),
    }


def _matrix(scores: list[dict[str, list[float]]], key: str) -> np.ndarray:
    return np.array([s[key] for s in scores], dtype=float)  # (seeds, tasks)


def _steps_matrix(curves: dict[int, list[dict[str, float]]], key: str) -> np.ndarray:
    """``(seeds, steps)`` of a per-step measure (steps every seed logged)."""
    rows = [[r[key] for r in seed_rows if key in r] for seed_rows in curves.values()]
    width = min(len(r) for r in rows)
    return np.array([r[:width] for r in rows], dtype=float)


def summarise(
    scores: dict[str, list[dict[str, list[float]]]], curves: dict[str, dict[int, list[dict[str, float]]]]
) -> dict[str, Any]:
    """Variance shares per arm, held-out behaviours per arm, and the process − outcome differences."""
    shares = {
        arm: {
            key: report.stratified_bootstrap(_steps_matrix(curves[arm], key))
            for key in ("nonzero_variance_share", "outcome_variance_share", "process_variance_share")
        }
        for arm in TRAINED_ARMS
    }
    first_step = {
        key: float(np.mean(_steps_matrix(curves["outcome"], key)[:, 0]))
        for key in ("outcome_variance_share", "process_variance_share")
    }
    held_out = {
        arm: {b: report.stratified_bootstrap(_matrix(scores[arm], b)) for b in BEHAVIOURS} for arm in ARMS
    }
    differences: dict[str, dict[str, Any]] = {}
    for key, sign in (("success", +1), ("unauthorized_writes", -1), ("dead_loops", -1)):
        diff = report.paired_difference(_matrix(scores["process"], key), _matrix(scores["outcome"], key))
        differences[key] = {"difference": diff, "direction": report.direction(diff, sign)}
    return {
        "variance_share": shares,
        "first_step_shares": first_step,
        "held_out": held_out,
        "differences": differences,
        "per_task": scores,
        "paper": PAPER,
    }


def plot(out: Path, curves: dict[str, dict[int, list[dict[str, float]]]]) -> None:
    """``variance_share.png``: the share of groups with nonzero variance of each arm's training reward per
    step (band: 95% interval over seeds)."""
    series = {}
    for arm, label in (("outcome", "outcome-only GRPO"), ("process", "GRPO + process reward")):
        matrix = _steps_matrix(curves[arm], "nonzero_variance_share")
        series[label] = {float(s): report.stratified_bootstrap(matrix[:, s]) for s in range(matrix.shape[1])}
    report.plot_arms(
        out / "variance_share.png",
        series,
        xlabel="GRPO step",
        ylabel="groups with nonzero reward variance",
        title="VoiceService-v0, simulated channel (paper: 16% vs 99.6%)",
    )


def _pct(interval: report.Interval) -> str:
    return f"{100 * interval.mean:.1f}% [{100 * interval.low:.1f}, {100 * interval.high:.1f}]"


def _num(interval: report.Interval) -> str:
    return f"{interval.mean:.2f} [{interval.low:.2f}, {interval.high:.2f}]"


def section(summary: dict[str, Any]) -> str:
    """The benchmarks/README.md section: variance shares, held-out behaviours, transfer and a reading."""
    shares, held = summary["variance_share"], summary["held_out"]
    variance = report.markdown_table(
        [
            {
                "arm": arm,
                "trained reward": _pct(shares[arm]["nonzero_variance_share"]),
                "outcome term alone": _pct(shares[arm]["outcome_variance_share"]),
                "outcome + 0.1 per successful call": _pct(shares[arm]["process_variance_share"]),
                "paper": f"{100 * PAPER['variance_share'][arm]:.1f}%",
            }
            for arm in TRAINED_ARMS
        ],
        ["arm", "trained reward", "outcome term alone", "outcome + 0.1 per successful call", "paper"],
    )
    behaviour = report.markdown_table(
        [
            {
                "policy": arm,
                "success": _pct(held[arm]["success"]),
                "unauthorized writes / episode": _num(held[arm]["unauthorized_writes"]),
                "dead loops / episode": _num(held[arm]["dead_loops"]),
                "successful calls / episode": _num(_calls(summary, arm)),
            }
            for arm in ARMS
        ]
        + [
            {
                "policy": "paper (before -> after)",
                "success": "tau-Voice pass@1 24% -> 53%",
                "unauthorized writes / episode": "23% -> 10% of episodes",
                "dead loops / episode": "14% -> 5% of episodes",
                "successful calls / episode": "",
            }
        ],
        [
            "policy",
            "success",
            "unauthorized writes / episode",
            "dead loops / episode",
            "successful calls / episode",
        ],
    )
    rows = []
    first = summary["simulated_first_tasks"]
    for name in first:
        row = {"policy": name, "simulated": _rate(first[name])}
        for channel, by_model in summary["transfer"].items():
            row[channel] = _rate(by_model[name]["success"])
        rows.append(row)
    channels = list(summary["transfer"])
    transfer_table = report.markdown_table(rows, ["policy", "simulated", *channels])
    return "\n\n".join(
        [
            "### SpeechGym: process reward vs outcome-only GRPO (`papergym reproduce speechgym`)",
            describe(summary["setting"]),
            "Share of GRPO groups with nonzero reward variance, over every training step (95% stratified "
            "bootstrap over seeds × steps); the last two columns score the same episodes both ways:",
            variance,
            "Held-out test tasks on the simulated channel (95% stratified bootstrap over seeds × tasks):",
            behaviour,
            "Definitions (`papergym.reproduce.service_measures`, from the calls' structured `ok` flags): an "
            "**unauthorized write** is an executed call of a write tool that matches none of the task's gold "
            "actions (tau2's rule: same tool, equal compared arguments), i.e. a database change the task did "
            f"not ask for; a **dead loop** is a run of at least {sm.DEAD_LOOP_LENGTH} consecutive identical "
            "agent actions (one per run); a **successful call** is a step whose tool call executed (what the "
            "process term pays 0.1 for). The paper reports the share of episodes with each behaviour; ours "
            "are counts per episode (equal to that share while each happens at most once).",
            "Transfer: the simulated-trained policies on the real speech channels, success on the first "
            "held-out tasks (one attempt each; the simulated column is the same tasks' success above):",
            transfer_table,
            reading(summary),
        ]
    )


def _calls(summary: dict[str, Any], arm: str) -> report.Interval:
    """Held-out successful tool calls per episode of ``arm`` (what the process term pays for)."""
    return report.stratified_bootstrap(_matrix(summary["per_task"][arm], "successful_calls"))


def describe(run: dict[str, Any]) -> str:
    """The setting paragraph: env, warm start (and why that budget), arms and budget of this run."""
    default = all(
        run[k] == v
        for k, v in {"seeds": 3, "steps": DEFAULT_STEPS, "eval_tasks": 32, "transfer_tasks": 3}.items()
    )
    warm = (
        f"the tiny LM SFT-warmed on {run['sft_episodes']} `HearingOracle` demonstrations on the simulated "
        f"channel ({run['sft_steps']} steps of {run['sft_batch']} contexts)"
        if run["model"] == "tiny"
        else f"`{run['model']}` as is"
    )
    defaults = Args()
    tokens = f", ≤ {run['max_new_tokens']} tokens per action" if "max_new_tokens" in run else ""
    budget = (
        "The warm-start budget was fixed before any arm trained, at what the 20-minute budget on 2 CPUs "
        "allows (SFT on ~1,500-token contexts is the dearest stage)"
        if (run["sft_episodes"], run["sft_steps"]) == (defaults.sft_episodes, defaults.sft_steps)
        else "The warm start is longer than the default run's (which never fills a call with the right "
        "values), fixed before any arm trained from its teacher-forced copying accuracy alone "
        '(benchmarks/README.md, "Tiny-LM copying")'
    )
    return (
        f"`papergym/VoiceService-v0` ({', '.join(f'`{kw}`' for kw in run['env_kw'])}; retail, generated "
        f"tasks, scripted user). Policy: {warm}{tokens}. {budget}, "
        "aiming at a base that succeeds rarely: the paper's regime, where only 16% of "
        "outcome-only groups carry gradient; the base's held-out success is the first row of the second "
        "table. The demonstrations fill slot values as heard and ask the user to repeat after a failed "
        "call; the privileged oracle would teach values the agent never heard. Arms: outcome-only GRPO "
        "vs the same with `ProcessReward` (+0.1 per step whose tool call executed, from the call's `ok` "
        f"flag); same base, seeds, tasks and sampling. Budget: {run['seeds']} seeds × {run['steps']} "
        f"steps × {run['prompts_per_step']} tasks × {run['group_size']} rollouts, lr {run['lr']:g}; "
        f"held-out {run['eval_tasks']} test tasks × {run['eval_samples']} attempts; transfer "
        f"{run['transfer_tasks']} tasks × 1 attempt"
        + (
            "."
            if default
            else f" (**smaller than the default run**: 3 seeds × {DEFAULT_STEPS} steps, 32 held-out tasks, "
            "3 transfer tasks)."
        )
    )


def _rate(values: list[float]) -> str:
    return f"{sum(values):g}/{len(values)}"


def reading(summary: dict[str, Any]) -> str:
    """A plain statement of what reproduced, read from the intervals."""
    shares, diffs, held = summary["variance_share"], summary["differences"], summary["held_out"]
    first = summary["first_step_shares"]
    outcome_share = shares["outcome"]["nonzero_variance_share"]
    process_share = shares["process"]["nonzero_variance_share"]
    more = process_share.low > outcome_share.high
    calls = {arm: _calls(summary, arm) for arm in ARMS}
    parts = []
    if process_share.high == 0 and all(c.high == 0 for c in calls.values()):
        parts.append(
            "**The mechanism could not act here.** No held-out episode of any policy made a single "
            "successful tool call, and the process arm's groups never varied: with no successful call the "
            "process term is 0 for every member, so both arms saw the same all-zero rewards, GRPO's "
            "advantages were 0 in every group, and the two arms trained identically. The warm start, "
            "fixed before the arms, is far weaker than the paper's regime needs (there 16% of outcome-only "
            "groups carry gradient and the process term finds a successful call in almost every group): "
            "its actions are fragments of the demonstrations, not well-formed calls with heard values. "
            "A policy that makes some successful calls (a longer SFT, or `--model DIR`) is the "
            "precondition of this comparison."
        )
    parts += [
        f"Gradient starvation: {_pct(outcome_share)} of outcome-only groups carried gradient (paper 16%), "
        f"{_pct(process_share)} with the process reward (paper 99.6%): "
        + ("**matches** in direction" if more else "**inconclusive** (the intervals overlap)")
        + f". On the base policy's own first-step groups (identical episodes in both arms) the outcome "
        f"term varied in {100 * first['outcome_variance_share']:.0f}% of groups and outcome + process in "
        f"{100 * first['process_variance_share']:.0f}%.",
        f"Held-out success: base {_pct(held['base']['success'])}, outcome-only "
        f"{_pct(held['outcome']['success'])}, process {_pct(held['process']['success'])}; process − "
        f"outcome {_pct(diffs['success']['difference'])}: **{diffs['success']['direction']}**.",
        "Unauthorized writes per episode, process − outcome "
        f"{_num(diffs['unauthorized_writes']['difference'])}: "
        f"**{diffs['unauthorized_writes']['direction']}**; dead loops "
        f"{_num(diffs['dead_loops']['difference'])}: **{diffs['dead_loops']['direction']}** "
        "(paper: both fall).",
    ]
    return " ".join(parts)
