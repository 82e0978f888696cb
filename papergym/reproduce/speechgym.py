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
from papergym.reproduce import report, speechgym_menu
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
from papergym.reproduce.menu_args import MENU_SMOKE, MenuRunArgs, menu_policy
from papergym.reproduce.speechgym_report import ARMS as ARMS  # re-exported: the arms of both paths
from papergym.reproduce.speechgym_report import TRAINED_ARMS, plot, summarise
from papergym.reproduce.speechgym_report import section as report_section

NAME = "speechgym"
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
CURVE_KEYS = ("nonzero_variance_share", "reward", "success", "turns")
"""The trainer's per-step metrics kept in the curves (beside the measures of `step_measures`)."""


@dataclass
class Args(WarmStartArgs, MenuRunArgs):
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
    policy: str = "lm"
    """``lm``: the tiny LM (or ``--model DIR``) as above; ``menu``: the learned non-LM menu policy of
    `papergym.baselines.retail_menu` (`papergym.reproduce.speechgym_menu`: behaviour-cloned on
    ``menu_demos`` HearingOracle episodes, then both arms), with the ``menu_*`` fields, ``seeds``,
    ``eval_tasks``, ``transfer_tasks``, ``transfer_seeds`` and ``workers``. Its README section is
    ``speechgym-menu``."""
    menu_process_cap: int = 4
    """The ``process_capped`` ablation arm of the menu path (ours, inferred): `ProcessReward` crediting at
    most this many successful calls per episode (the calls a task of the menu's kinds needs: find the
    user, read the user, read the order, one write)."""


SMOKE: dict[str, Any] = {
    **SMOKE_WARM_START,
    "steps": 1,
    "eval_tasks": 2,
    "eval_samples": 1,
    "transfer_tasks": 1,
    "transfer_channels": ["transcript"],
    "sft_episodes": 4,
    **MENU_SMOKE,
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
    if menu_policy(args):
        return speechgym_menu.run(args)
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


def section(summary: dict[str, Any]) -> str:
    """The benchmarks/README.md section of an LM run (a ``--policy menu`` run writes its own)."""
    if summary["setting"].get("policy") == "menu":
        raise ValueError("a --policy menu run's section is written by its run (speechgym_menu.section)")
    return report_section(summary, describe(summary["setting"]))


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
