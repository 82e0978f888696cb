"""The ``--policy menu`` path of ``papergym reproduce iapo``: flat vs influence credit on a learned non-LM
service agent.

Why a non-LM policy (DESIGN.md §Reproductions allows one where an LM cannot learn the task on a CPU): on
the tiny LM, GRPO barely moves its warm start at any budget this machine allows (the LM path's section), so
no credit rule has learning to speed up. A menu policy (`papergym.baselines.menu_grpo`: the retail menu
`papergym.baselines.retail_menu`, the telecom menu `papergym.baselines.telecom_menu`) forms well-formed
calls by construction and learns, in minutes, which question, read, instruction, write or closing a turn
should make; its turns are the actions IAPO's influence graph weighs. One domain per run (``--domains``,
one of `papergym.baselines.menu_grpo.MENUS`; default telecom, the paper's largest gain: 8B GRPO 21.74 →
IAPO 39.93; retail 44.31 → 56.88); each domain has its own README section (`section_key`).

Setting: `papergym/ServiceAgent-v0` in that domain, chat observations, ``format_penalty=0`` (the menu
cannot write a malformed action; IAPO's reward is the task outcome), ``max_steps = max_turns`` (IAPO: 30).
Warm start: behaviour cloning on ``menu_demos`` episodes of the env's oracle (the same for every arm and
seed). Arms, the same GRPO budget, tasks and seeds, differing only in `MECHANISM` (checked by
`check_arms`): ``grpo`` (flat credit: one advantage per episode), ``iapo`` (`InfluenceAdvantage`, the rule
annotator reading the env's provenance, β₊ = 0.05, c = 0.25, one weight per turn: every turn is one
action), ``iapo_noisy`` (the same with ``noise = ρ``) and ``iapo_shuffled`` (a control of ours: IAPO's
weights permuted across each episode's turns, `InfluenceAdvantage`'s ``shuffle``: the same spread of
weights without the graph's assignment to turns). Measured: held-out success on ``eval_tasks`` test
tasks × ``menu_eval_samples`` sampled episodes, the function-call success rate (tool calls executed without
an error / tool calls), and training success averaged over the steps (how fast each arm learns), paired by
seed against ``grpo``.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from papergym.baselines import menu_grpo
from papergym.core import info_keys as K
from papergym.core.trajectory import Trajectory
from papergym.reproduce import report
from papergym.reproduce.driver import publish, train_arms

if TYPE_CHECKING:
    from papergym.reproduce.iapo import Args

ARMS = ("grpo", "iapo", "iapo_noisy", "iapo_shuffled")
REFERENCE = "grpo"
MECHANISM = {
    "iapo": ("advantage_hook",),
    "iapo_noisy": ("advantage_hook", "advantage_hook_kw"),
    "iapo_shuffled": ("advantage_hook", "advantage_hook_kw"),
}
"""Against flat-credit GRPO: IAPO adds the influence hook; the noisy arm also sets the hook's noise rate, the
shuffled control its ``shuffle``."""
EVAL_SEED = 3 * 10**6
"""The first held-out task seed (test split), as the LM path's."""
PAPER: dict[str, dict[str, float]] = {
    "telecom": {"grpo": 0.2174, "iapo": 0.3993},
    "retail": {"grpo": 0.4431, "iapo": 0.5688},
    "airline": {"grpo": 0.2278, "iapo": 0.2972},
    "macro": {"grpo": 0.2961, "iapo": 0.4218},
}
"""IAPO's Qwen3-8B pass^1 (envs.md §4.3, Tables 1-2); no noisy-annotator number is given (both paths')."""
MEASURES = ("success", "calls", "calls_ok")


def menu_domain(args: Args) -> str:
    """The run's one domain (``--domains``), which must have a menu.

    Raises:
        ValueError: several domains, or one without a menu.
    """
    if len(args.domains) != 1 or args.domains[0] not in menu_grpo.MENUS:
        raise ValueError(
            f"--policy menu runs one domain with a menu ({sorted(menu_grpo.MENUS)}); "
            f"got --domains {args.domains}"
        )
    return args.domains[0]


def section_key(domain: str, optimizer: str = "adam") -> str:
    """The README section of one domain's run (``-sgd`` appended for the plain-gradient optimizer).

    >>> section_key("telecom"), section_key("retail", "sgd")
    ('iapo-menu-telecom', 'iapo-menu-retail-sgd')
    """
    return f"iapo-menu-{domain}" + ("" if optimizer == "adam" else f"-{optimizer}")


def env_kw(args: Args) -> list[str]:
    """The domain, chat observations, no format term, IAPO's turn limit, and the driver's extra kwargs."""
    return [
        f"domain={menu_domain(args)}",
        "obs_mode=chat",
        "format_penalty=0",
        f"max_steps={args.max_turns}",
        *args.env_kw,
    ]


def arm_configs(args: Args, seed: int) -> dict[str, menu_grpo.Args]:
    """Each arm's menu GRPO config for one seed."""
    config = dataclasses.replace(args.menu_config(args.env, env_kw(args), seed), menu=menu_domain(args))
    iapo = dataclasses.replace(config, advantage_hook="influence")
    return {
        "grpo": config,
        "iapo": iapo,
        "iapo_noisy": dataclasses.replace(iapo, advantage_hook_kw=[f"noise={args.noise}"]),
        "iapo_shuffled": dataclasses.replace(iapo, advantage_hook_kw=["shuffle=true"]),
    }


def episode_measures(traj: Trajectory) -> dict[str, float]:
    """Success, tool calls and tool calls executed without an error, of one episode."""
    calls = [c for s in traj.steps for c in s.info.get(K.TOOL_CALLS) or []]
    return {
        "success": float(traj.success),
        "calls": float(len(calls)),
        "calls_ok": float(sum(c.get("ok") is True for c in calls)),
    }


def evaluate(args: Args, policy: menu_grpo.MenuAgent) -> dict[str, list[float]]:
    """Per held-out task, each measure averaged over ``menu_eval_samples`` sampled episodes (the sampling
    generator seeded the same for every policy)."""
    env = menu_grpo.make_env(args.env, env_kw(args))
    rng = np.random.default_rng(EVAL_SEED)
    per_task: list[list[dict[str, float]]] = []
    try:
        for task in range(args.eval_tasks):
            trajs = [
                menu_grpo.play(env, policy, rng, seed=EVAL_SEED + task, options={"split": "test"})[0]
                for _ in range(args.menu_eval_samples)
            ]
            per_task.append([episode_measures(t) for t in trajs])
    finally:
        env.close()
    return {key: [float(np.mean([m[key] for m in ms])) for ms in per_task] for key in MEASURES}


def train_and_score(
    args: Args, config: menu_grpo.Args
) -> tuple[list[dict[str, float]], dict[str, list[float]]]:
    """One (seed, arm) run: its training curve and its held-out scores (a `train_arms` job)."""
    rows: list[dict[str, float]] = []

    def on_step(step: int, metrics: dict[str, float], trajs: list[Trajectory]) -> None:
        rows.append({"step": float(step), **metrics})

    policy = menu_grpo.train(config, on_step=on_step)
    return rows, evaluate(args, policy)


def run(args: Args) -> dict[str, Any]:
    """Train every arm on every seed, evaluate them and the warm start, write the report."""
    out, domain = Path(args.out), menu_domain(args)
    base = evaluate(args, menu_grpo.warm_policy(arm_configs(args, 0)["grpo"]))
    held: dict[str, list[dict[str, list[float]]]] = {"base": [base] * args.seeds}
    curves: dict[str, dict[int, list[dict[str, float]]]] = {arm: {} for arm in ARMS}
    for seed, arm, _, (curve, scores) in train_arms(
        partial(train_and_score, args), partial(arm_configs, args), args, REFERENCE, MECHANISM
    ):
        curves[arm][seed] = curve
        held.setdefault(arm, []).append(scores)
    summary = summarise(held, curves, domain)
    summary["setting"] = setting(args)
    key = section_key(domain, args.menu_optimizer)
    report.write_results(out, name=key, args=args, curves=curves, summary=summary)
    plot(out, curves, domain)
    publish(out, key, section(summary), args.write)
    summary["out"] = str(out)
    return summary


def setting(args: Args) -> dict[str, Any]:
    """The run's budget, for the section."""
    keys = ["seeds", "eval_tasks", "max_turns", "noise", "smoke"]
    return {
        "policy": "menu",
        "domain": menu_domain(args),
        "env_kw": env_kw(args),
        **{k: getattr(args, k) for k in keys},
        **{k: v for k, v in vars(args).items() if k.startswith("menu_")},
    }


def _matrix(per_seed: list[dict[str, list[float]]], key: str) -> np.ndarray:
    return np.array([s[key] for s in per_seed], dtype=float)  # (seeds, tasks)


def _training(curves: dict[int, list[dict[str, float]]]) -> list[float]:
    """Each seed's training success averaged over its steps."""
    return [float(np.mean([r["success"] for r in curves[s]])) for s in sorted(curves)]


def _call_success(per_seed: list[dict[str, list[float]]]) -> report.Interval | None:
    """Tool calls executed without an error / tool calls, pooled per seed, interval over seeds."""
    rates = [sum(s["calls_ok"]) / sum(s["calls"]) for s in per_seed if sum(s["calls"])]
    return report.stratified_bootstrap(rates) if rates else None


def summarise(
    held: dict[str, list[dict[str, list[float]]]],
    curves: dict[str, dict[int, list[dict[str, float]]]],
    domain: str,
) -> dict[str, Any]:
    """Per arm held-out success and function-call success; each arm's gaps to ``grpo`` (held out, and
    training success averaged over steps) and to the base, with their directions."""
    success = {
        arm: report.stratified_bootstrap(_matrix(per_seed, "success")) for arm, per_seed in held.items()
    }
    calls = {arm: _call_success(per_seed) for arm, per_seed in held.items()}
    gaps: dict[str, dict[str, Any]] = {}
    for arm in ARMS[1:]:
        final = report.paired_difference(_matrix(held[arm], "success"), _matrix(held[REFERENCE], "success"))
        speed = report.paired_difference(
            np.array(_training(curves[arm]))[:, None], np.array(_training(curves[REFERENCE]))[:, None]
        )
        gaps[arm] = {
            "final": final,
            "direction": report.direction(final, +1),
            "training": speed,
            "training_direction": report.direction(speed, +1),
        }
    over_base = {
        arm: report.paired_difference(_matrix(held[arm], "success"), _matrix(held["base"], "success"))
        for arm in ARMS
    }
    training = {arm: report.stratified_bootstrap(_training(curves[arm])) for arm in ARMS}
    return {
        "success": success,
        "function_calls": calls,
        "gaps": gaps,
        "over_base": over_base,
        "training_success": training,
        "per_task": held,
        "paper": PAPER[domain],
    }


def plot(out: Path, curves: dict[str, dict[int, list[dict[str, float]]]], domain: str) -> None:
    """``training_success.png``: each arm's training success per step (band: 95% interval over seeds)."""
    series = {}
    for arm in ARMS:
        rows = [[r["success"] for r in curves[arm][s]] for s in sorted(curves[arm])]
        matrix = np.array([r[: min(map(len, rows))] for r in rows])
        series[arm] = {float(s): report.stratified_bootstrap(matrix[:, s]) for s in range(matrix.shape[1])}
    report.plot_arms(
        out / "training_success.png",
        series,
        xlabel="GRPO step",
        ylabel="training success",
        title=f"ServiceAgent-v0 {domain}, learned menu policy",
    )


def _fmt(interval: report.Interval | None) -> str:
    return "—" if interval is None else f"{interval.mean:.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def section(summary: dict[str, Any]) -> str:
    """The benchmarks/README.md section: setting, per-arm table, the claims and a reading."""
    run, gaps, paper = summary["setting"], summary["gaps"], summary["paper"]
    domain = run.get("domain", "retail")  # runs before telecom had a menu were retail
    gain = 100 * (paper["iapo"] - paper["grpo"])
    optimizer = run.get("menu_optimizer", "adam")
    arms = [arm for arm in ARMS if arm in summary["success"]]  # runs before the shuffled control lack it
    flags = "" if optimizer == "adam" else f" --menu-optimizer {optimizer} --menu-lr {run['menu_lr']:g}"
    rows = [
        {
            "arm": arm,
            "held-out success": _fmt(summary["success"][arm]),
            "− base": "—" if arm == "base" else _fmt(summary["over_base"][arm]),
            "training success (mean over steps)": "—"
            if arm == "base"
            else _fmt(summary["training_success"][arm]),
            "function-call success": _fmt(summary["function_calls"][arm]),
            f"paper ({domain}, 8B)": f"{100 * paper[arm]:.2f}" if arm in paper else "—",
        }
        for arm in ("base", *arms)
    ]
    table = report.markdown_table(rows, list(rows[0]))
    claims = report.markdown_table(
        [
            {
                "claim": f"{arm} − grpo, {what}",
                "ours": _fmt(gaps[arm][key]),
                "paper": f"{gain:+.2f} ({domain} pass^1)"
                if arm == "iapo"
                else "— (a control of ours)"
                if arm == "iapo_shuffled"
                else "— (no number)",
                "direction": f"**{gaps[arm][direction]}**",
            }
            for arm in arms[1:]
            for what, key, direction in (
                ("held-out success", "final", "direction"),
                ("training success", "training", "training_direction"),
            )
        ],
        ["claim", "ours", "paper", "direction"],
    )
    setting_text = (
        f"`papergym/ServiceAgent-v0` ({', '.join(f'`{kw}`' for kw in run['env_kw'])}; generated {domain} "
        f"tasks, scripted user). Policy: the learned menu policy (`papergym.baselines.{domain}_menu`, not a "
        f"language model), behaviour-cloned on {run['menu_demos']} oracle episodes "
        f"({run['menu_demo_steps']} steps); arms: flat-credit GRPO, IAPO's influence credit (rule annotator "
        "from the env's provenance, β₊ = 0.05, c = 0.25, one weight per turn), the same with a noisy "
        f"annotator (ρ = {run['noise']})"
        + (
            " and a control of ours, IAPO's weights shuffled across each episode's turns"
            if "iapo_shuffled" in arms
            else ""
        )
        + ". Budget: {run['seeds']} seeds × {run['menu_steps']} steps × "
        f"{run['menu_tasks_per_step']} tasks × {run['menu_group_size']} rollouts, "
        f"{optimizer} at lr {run['menu_lr']:g}; "
        f"held-out {run['eval_tasks']} test tasks × {run['menu_eval_samples']} sampled episodes (95% "
        "stratified bootstrap over seeds × tasks; training success over seeds)."
    )
    iapo = gaps["iapo"]
    reading = (
        f"IAPO − flat GRPO on held-out success {_fmt(iapo['final'])}: **{iapo['direction']}** (paper, "
        f"{domain} 8B: {100 * paper['grpo']:.2f} → {100 * paper['iapo']:.2f}); "
        f"on training success averaged over the steps {_fmt(iapo['training'])}: "
        f"**{iapo['training_direction']}**. With the noisy annotator: held out "
        f"{_fmt(gaps['iapo_noisy']['final'])} (**{gaps['iapo_noisy']['direction']}**)"
        + (
            f"; with the weights shuffled across turns: {_fmt(gaps['iapo_shuffled']['final'])} "
            f"(**{gaps['iapo_shuffled']['direction']}**)"
            if "iapo_shuffled" in arms
            else ""
        )
        + f". Flat GRPO over the base: {_fmt(summary['over_base']['grpo'])}."
    )
    return "\n\n".join(
        [
            f"### IAPO: flat vs influence credit on a learned menu policy, {domain} "
            f"(`papergym reproduce iapo --policy menu --domains {domain}{flags}`)",
            setting_text,
            table,
            claims,
            reading,
        ]
    )
