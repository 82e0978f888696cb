"""The ``--policy menu`` path of ``papergym reproduce speechgym``: SpeechGym's process reward on a learned
non-LM service agent.

Why a non-LM policy (DESIGN.md §Reproductions allows one where an LM cannot learn the task on a CPU): the
SFT-warmed tiny LM never makes a successful tool call (the LM path's section), so neither arm's reward
ever varies. `papergym.baselines.retail_menu.MenuPolicy` forms well-formed calls by construction, with
slot values as heard on the channel, and learns what to do: which question to ask, which lookup or write to
make, what to tell the user. It starts from a behaviour-cloning warm start on ``menu_demos``
`HearingOracle` episodes (the oracle's procedure with values as heard; the same warm start for both arms),
whose size was chosen for a base that succeeds rarely: the paper's regime, where 16% of outcome-only
groups carry gradient.

Arms (same warm start, tasks, seeds and GRPO budget; they differ only in `MECHANISM`, checked by
`check_arms`): ``outcome`` (GRPO on the env's reward, tau2's outcome check, no format term) and
``process`` (the training envs wrapped in `papergym.wrappers.ProcessReward`: +0.1 per step whose tool
call executed); and an ablation of ours, ``process_capped``: the same wrapper crediting at most
``menu_process_cap`` successful calls per episode (`ProcessReward`'s ``max_calls``), to tell whether what
the process arm learns comes from the reward for calls a task needs or from farming calls beyond them.
Measures as the LM path (`papergym.reproduce.speechgym_report`): the share of groups with
nonzero reward variance per step (the trained reward, and both rewards on the same episodes), held-out
success, unauthorized writes, dead loops and successful calls per episode on ``eval_tasks`` test tasks ×
``menu_eval_samples`` sampled episodes, and the simulated-trained policies on the ``transcript`` channel
(real Piper TTS -> Whisper ASR). The ``audio`` channel is not run: the menu policy reads text and has no
speech recogniser of its own. The demonstrator's own held-out success is reported as a reference.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from papergym.baselines import menu_grpo
from papergym.core.trajectory import Trajectory, rollout
from papergym.reproduce import report
from papergym.reproduce import service_measures as sm
from papergym.reproduce.driver import publish, train_arms
from papergym.reproduce.speechgym_report import plot, section, summarise

if TYPE_CHECKING:
    from papergym.reproduce.speechgym import Args

KEY = "speechgym-menu"
"""The README section of this path."""
COMMAND = "papergym reproduce speechgym --policy menu"
ARMS = ("outcome", "process", "process_capped")
REFERENCE = "outcome"
MECHANISM = {"process": ("wrapper",), "process_capped": ("wrapper", "wrapper_kw")}
"""The process arm differs from outcome-only GRPO only in the training envs' `ProcessReward` wrapper; the
ablation ``process_capped`` (ours) in that wrapper crediting at most ``menu_process_cap`` calls."""
PROCESS_WRAPPER = "process_reward"
EVAL_SEED = 10**6
"""The first held-out task seed (test split), as the LM path's."""
MEASURES = ("success", "unauthorized_writes", "dead_loops", "successful_calls", "turns")
TEXT_CHANNELS = ("transcript", "simulated", "text")
"""Channels whose observations the menu policy can read (chat text)."""


def env_kw(args: Args, channel: str | None = None) -> list[str]:
    """The driver's env kwargs with chat observations (and ``channel`` in place of the driver's)."""
    kw = [k for k in args.env_kw if not k.startswith("obs_mode=")]
    if channel is not None:
        kw = [k for k in kw if not k.startswith("channel=")] + [f"channel={channel}"]
    return [*kw, "obs_mode=chat"]


def arm_configs(args: Args, seed: int) -> dict[str, menu_grpo.Args]:
    """Each arm's menu GRPO config for one seed."""
    config = args.menu_config(args.env, env_kw(args), seed)
    process = dataclasses.replace(config, wrapper=PROCESS_WRAPPER)
    return {
        "outcome": config,
        "process": process,
        "process_capped": dataclasses.replace(process, wrapper_kw=[f"max_calls={args.menu_process_cap}"]),
    }


def evaluate(kw: list[str], env_id: str, play: Any, *, tasks: int, samples: int) -> dict[str, list[float]]:
    """Per held-out task, each measure averaged over ``samples`` episodes of ``play(env, rng, seed)``
    (test split from `EVAL_SEED`, the sampling generator seeded the same for every policy)."""
    env = menu_grpo.make_env(env_id, kw)
    rng = np.random.default_rng(EVAL_SEED)
    per_task: list[list[dict[str, float]]] = []
    try:
        for task in range(tasks):
            trajs = [play(env, rng, EVAL_SEED + task) for _ in range(samples)]
            per_task.append([sm.episode_measures(t) for t in trajs])
    finally:
        env.close()
    return {key: [float(np.mean([m[key] for m in ms])) for ms in per_task] for key in MEASURES}


def _menu_player(policy: menu_grpo.MenuAgent) -> Any:
    def play(env: Any, rng: np.random.Generator, seed: int) -> Trajectory:
        return menu_grpo.play(env, policy, rng, seed=seed, options={"split": "test"})[0]

    return play


def _oracle_play(env: Any, rng: np.random.Generator, seed: int) -> Trajectory:
    from papergym.envs.voice.hearing_oracle import HearingOracle

    return rollout(env, HearingOracle(), seed=seed, options={"split": "test"})


def scores(args: Args, policy: menu_grpo.MenuAgent, seed: int) -> dict[str, Any]:
    """A policy's held-out scores on the simulated channel and, for the first ``transfer_seeds`` training
    seeds, on the real text channels of ``transfer_channels``."""
    play = _menu_player(policy)
    out: dict[str, Any] = {
        "simulated": evaluate(
            env_kw(args), args.env, play, tasks=args.eval_tasks, samples=args.menu_eval_samples
        )
    }
    if seed < args.transfer_seeds:
        for channel in transfer_channels(args):
            out[channel] = evaluate(
                env_kw(args, channel), args.env, play, tasks=args.transfer_tasks, samples=1
            )
    return out


def transfer_channels(args: Args) -> list[str]:
    """The transfer channels the menu can read (none when no training seed is transferred)."""
    return [c for c in args.transfer_channels if c in TEXT_CHANNELS] if args.transfer_seeds > 0 else []


def train_and_score(args: Args, config: menu_grpo.Args) -> tuple[list[dict[str, float]], dict[str, Any]]:
    """One (seed, arm) run: its learning curve and its held-out scores (a `train_arms` job)."""
    rows: list[dict[str, float]] = []

    def on_step(step: int, metrics: dict[str, float], trajs: list[Trajectory]) -> None:
        shares = sm.group_shares(trajs, config.group_size)
        rows.append(
            {
                "step": float(step),
                **metrics,
                "nonzero_variance_share": sm.return_share(trajs, config.group_size),
                "outcome_variance_share": shares.outcome,
                "process_variance_share": shares.process,
                **{f"train_{k}": v for k, v in sm.mean_measures(trajs).items()},
            }
        )

    policy = menu_grpo.train(config, on_step=on_step)
    return rows, scores(args, policy, config.seed)


def run(args: Args) -> dict[str, Any]:
    """Train both arms on every seed, evaluate them, the warm start and the demonstrator, write the report."""
    out = Path(args.out)
    warm = menu_grpo.warm_policy(arm_configs(args, 0)["outcome"])
    base = scores(args, warm, 0)
    held: dict[str, list[dict[str, list[float]]]] = {"base": [base["simulated"]] * args.seeds}
    curves: dict[str, dict[int, list[dict[str, float]]]] = {arm: {} for arm in ARMS}
    channels = transfer_channels(args)
    transfer: dict[str, dict[str, dict[str, list[float]]]] = {c: {"base": base[c]} for c in channels}
    first = {"base": base["simulated"]["success"][: args.transfer_tasks]}
    for seed, arm, _, (curve, result) in train_arms(
        partial(train_and_score, args), partial(arm_configs, args), args, REFERENCE, MECHANISM
    ):
        curves[arm][seed] = curve
        held.setdefault(arm, []).append(result["simulated"])
        if seed < args.transfer_seeds:
            name = f"{arm}, seed {seed}"
            first[name] = result["simulated"]["success"][: args.transfer_tasks]
            for channel in channels:
                transfer[channel][name] = result[channel]
    summary = summarise(held, curves)
    summary["setting"] = setting(args)
    summary["transfer"] = transfer
    summary["simulated_first_tasks"] = first
    summary["demonstrator"] = evaluate(env_kw(args), args.env, _oracle_play, tasks=args.eval_tasks, samples=1)
    report.write_results(out, name=KEY, args=args, curves=curves, summary=summary)
    plot(out, curves)
    publish(out, KEY, section(summary, describe(summary), command=COMMAND), args.write)
    summary["out"] = str(out)
    return summary


def setting(args: Args) -> dict[str, Any]:
    """The run's budget and warm start, for the section."""
    keys = ["seeds", "eval_tasks", "transfer_tasks", "transfer_seeds", "smoke", "env_kw"]
    return {
        "policy": "menu",
        **{k: getattr(args, k) for k in keys},
        **{k: v for k, v in vars(args).items() if k.startswith("menu_")},
        "skipped_channels": [c for c in args.transfer_channels if c not in TEXT_CHANNELS],
    }


def describe(summary: dict[str, Any]) -> str:
    """The setting paragraph: env, policy, warm start, arms, budget and the demonstrator's success."""
    run = summary["setting"]
    demonstrator = report.stratified_bootstrap(np.array([summary["demonstrator"]["success"]]))
    skipped = run["skipped_channels"]
    return (
        f"`papergym/VoiceService-v0` ({', '.join(f'`{kw}`' for kw in run['env_kw'])}, `obs_mode=chat`; "
        "retail, generated tasks, scripted user). Policy: the learned menu policy "
        "(`papergym.baselines.retail_menu`, not a language model: the tiny LM never makes a successful "
        "call, the LM path's section): well-formed calls with slot values as heard are given by its "
        "actions; which question, lookup, write or report to make is learned, in softmax rows chosen by "
        "the request's intent words and the conversation's progress. Warm start: behaviour cloning on "
        f"{run['menu_demos']} `HearingOracle` episodes ({run['menu_demo_steps']} steps), fixed before "
        "any arm trained, aiming at a base that succeeds rarely (the paper's regime: 16% of outcome-only "
        "groups carry gradient). The demonstrator itself (the task's procedure with values as heard, "
        "asking to repeat after a failed call) succeeds on "
        f"{100 * demonstrator.mean:.1f}% [{100 * demonstrator.low:.1f}, {100 * demonstrator.high:.1f}] of "
        "the same held-out tasks on this channel. The menu can complete status, tracking, count, gift-card "
        "balance, payment-method questions, cancellations, payment changes, returns, refusals and "
        "transfers; exchanges, item and address edits and sums are beyond its arguments (a ceiling below "
        "the demonstrator's, the same for both arms). Arms: outcome-only GRPO vs the same with "
        "`ProcessReward` (+0.1 per step whose tool call executed), and an ablation of ours, "
        f"`process_capped`: the same reward crediting at most {run['menu_process_cap']} successful calls per "
        "episode (`ProcessReward(max_calls=...)`; inferred: the calls a task of the menu's kinds needs); "
        "same warm start, seeds, tasks and sampling. "
        f"Budget: {run['seeds']} seeds × {run['menu_steps']} steps × "
        f"{run['menu_tasks_per_step']} tasks × {run['menu_group_size']} rollouts, lr {run['menu_lr']:g}; "
        f"held-out {run['eval_tasks']} test tasks × {run['menu_eval_samples']} sampled episode(s); transfer "
        f"{run['transfer_tasks']} tasks × 1 episode"
        + (
            f" (not on {', '.join(skipped)}: the menu policy reads text and has no speech recogniser)."
            if skipped
            else "."
        )
    )
