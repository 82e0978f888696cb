"""The ``--policy hopper --hopper-critic learned`` path of ``papergym reproduce cafe``: CAFE's critic side
(RDPO, the alternation, the critic-generation check, the one-sided ablations) on the learned search hopper.

The critic is `papergym.baselines.hint_critic.HintCritic`: the hopper's own parameters (its ``hint`` rows)
play the critic, which reads the episode as the agent does and names the next passage to fetch, or says to
answer. It never sees the gold chain. Every arm starts from the same "SFT critic": the hint rows cloned from
the env's oracle critic's hints on ``hopper_critic_demos`` episodes of the untrained agent (CAFE's Stage I
trains the critic role on a stronger model's feedback); the agent's rows start uniform, as on the
``cafe-hopper`` path.

Arms (same tasks, seeds and GRPO budget; they differ only in `MECHANISM`, checked by `check_arms`):

- ``grpo_nofb``: the env's feedback budget 0;
- ``agent_only``: GRPO with the learned critic answering requests, the critic never updated (CAFE's
  agent-only ablation; the reference);
- ``coevolve``: as ``agent_only`` plus an RDPO update of the critic rows every ``hopper_rdpo_every`` steps on
  the pairs of those steps' rollouts (CAFE's alternation of online steps and one RDPO update);
- ``cafe``: ``coevolve`` plus CAFE's agent-side credit (the CFE reward and the feedback shaping);
- ``critic_only``: RDPO rounds on the rollouts of an agent that is never updated (CAFE's critic-only
  ablation).

Measures, on ``eval_tasks`` held-out questions × ``hopper_eval_samples`` sampled episodes: EM, F1, success,
request rate, answer hallucination, answered (`base`: the untrained agent with the SFT critic); the
critic-generation check: each RDPO arm's last agent with its last critic minus the same agent with the SFT
critic (paper: 84.0 vs 80.6 EM on 2Wiki); the critic's agreement with the oracle (its mean probability of
giving the oracle's hint on held-out inputs); and the RDPO pairs each round found and used.
"""

from __future__ import annotations

import copy
import dataclasses
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from papergym.baselines import hint_critic as hc
from papergym.reproduce import report
from papergym.reproduce.cafe_eval import (
    EVAL_SEED,
    METRICS,
    claims_table,
    metric_table,
)
from papergym.reproduce.cafe_hopper import (
    CFE,
    NO_FEEDBACK,
    env_kw,
    evaluate,
    hopper_config,
    score_matrix,
    write_report,
)
from papergym.reproduce.driver import train_arms

if TYPE_CHECKING:
    from papergym.reproduce.cafe import Args

KEY = "cafe-critic"
"""The README section of this path (``cafe-critic-shared`` with ``--hopper-critic-rows shared``)."""
ARMS = ("grpo_nofb", "agent_only", "coevolve", "cafe", "critic_only")
REFERENCE = "agent_only"
RDPO_ARMS = ("coevolve", "cafe", "critic_only")
MECHANISM = {
    "grpo_nofb": ("env_kw",),
    "coevolve": ("rdpo_every",),
    "cafe": ("rdpo_every", "group_reward", "advantage_hook"),
    "critic_only": ("rdpo_every", "update_agent"),
}
"""Against the agent-only arm: no feedback is the env's budget 0; co-evolution adds the critic's RDPO
rounds; CAFE adds its agent-side credit to them; critic-only runs the RDPO rounds with the agent frozen."""


def arm_configs(args: Args, seed: int) -> dict[str, hc.Args]:
    """Each arm's config for one seed."""
    config = hopper_config(
        args,
        seed,
        hc.Args,
        rdpo_steps=args.hopper_rdpo_steps,
        rdpo_lr=args.hopper_lr,
        critic_demos=args.hopper_critic_demos,
        critic_rows=args.hopper_critic_rows,
    )
    coevolve = dataclasses.replace(config, rdpo_every=args.hopper_rdpo_every)
    return {
        "grpo_nofb": dataclasses.replace(config, env_kw=[*config.env_kw, NO_FEEDBACK]),
        "agent_only": config,
        "coevolve": coevolve,
        "cafe": dataclasses.replace(
            coevolve, group_reward=CFE["group_reward"], advantage_hook=CFE["advantage_hook"]
        ),
        "critic_only": dataclasses.replace(coevolve, update_agent=False),
    }


def key(args: Args) -> str:
    """The README section of the run: `KEY`, suffixed ``-shared`` when the critic reads the agent's rows."""
    return KEY if args.hopper_critic_rows == "own" else f"{KEY}-{args.hopper_critic_rows}"


def held_out_hints(args: Args) -> list[Any]:
    """The oracle's hints on held-out inputs: `hint_critic.oracle_hints` on ``eval_tasks`` test-split
    episodes of the untrained agent."""
    head = hc.CRITIC_HEADS[args.hopper_critic_rows]
    return hc.oracle_hints(
        args.env, env_kw(args), episodes=args.eval_tasks, seed=EVAL_SEED, split="test", head=head
    )


def train_and_score(args: Args, hints: list[Any], config: hc.Args) -> dict[str, Any]:
    """One (seed, arm) run (a `train_arms` job): its curve, RDPO log, held-out evaluation with its own
    critic, and for an RDPO arm the same agent with the SFT critic; the critic's agreement with the
    oracle on ``hints`` (`held_out_hints`)."""
    rows: list[dict[str, float]] = []

    def on_step(step: int, metrics: dict[str, float], policy: Any) -> None:
        keys = ("success", "request_rate", "call_skip_gap", "loss")
        rows.append({"step": float(step), **{k: metrics[k] for k in keys}})

    start = hc.warm_critic(config)
    sft = copy.deepcopy(start.heads)  # the SFT critic, kept for the critic-generation check
    policy, log = hc.train(config, on_step=on_step, policy=start)
    budget = 0 if NO_FEEDBACK in config.env_kw else 1
    result: dict[str, Any] = {
        "curve": rows,
        "rdpo": log,
        "eval": evaluate(args, policy, budget=budget, critic=hc.HintCritic(policy.heads, config.critic_head)),
        "agreement": hc.agreement(policy.heads, hints),
    }
    if config.rdpo_every:
        sft_critic = hc.HintCritic(sft, config.critic_head)
        result["eval_sft_critic"] = evaluate(args, policy, budget=1, critic=sft_critic)
    return result


def run(args: Args) -> dict[str, Any]:
    """Train every arm on every seed, evaluate them and the untrained agent, write the report."""
    configs = partial(arm_configs, args)
    reference = configs(0)[REFERENCE]
    sft = hc.warm_critic(reference)
    hints = held_out_hints(args)
    base = evaluate(args, sft, budget=1, critic=hc.HintCritic(sft.heads, reference.critic_head))
    results: dict[str, list[dict[str, Any]]] = {"base": [{"eval": base} for _ in range(args.seeds)]}
    for _, arm, _, result in train_arms(
        partial(train_and_score, args, hints), configs, args, REFERENCE, MECHANISM
    ):
        results.setdefault(arm, []).append(result)
    curves = {arm: dict(enumerate(r["curve"] for r in results[arm])) for arm in ARMS}
    summary = summarise(results, sft_agreement=hc.agreement(sft.heads, hints))
    summary["setting"] = setting(args)
    summary["critic_rows"] = args.hopper_critic_rows
    return write_report(args, key(args), curves, summary, section(summary), title="hopper, learned critic")


def summarise(results: dict[str, list[dict[str, Any]]], *, sft_agreement: list[float]) -> dict[str, Any]:
    """Per arm and metric an interval; the claims' paired differences (by seed and task); the critic's
    agreement with the oracle; the RDPO pair counts per round (mean over seeds)."""
    evals = {arm: [r["eval"] for r in rs] for arm, rs in results.items()}
    table = {
        arm: {m: report.stratified_bootstrap(score_matrix(ev, m)) for m in METRICS}
        for arm, ev in evals.items()
    }

    def em(arm: str, key: str = "eval") -> np.ndarray:
        return score_matrix([r[key] for r in results[arm]], "em")

    claims = {
        "em_coevolve_minus_agent_only": report.paired_difference(em("coevolve"), em("agent_only")),
        "em_cafe_minus_agent_only": report.paired_difference(em("cafe"), em("agent_only")),
        "em_critic_only_minus_base": report.paired_difference(em("critic_only"), em("base")),
        **{
            f"em_{arm}_last_critic_minus_sft_critic": report.paired_difference(
                em(arm), em(arm, "eval_sft_critic")
            )
            for arm in ("coevolve", "cafe")
        },
    }
    agreement = {
        arm: report.stratified_bootstrap([r["agreement"] for r in results[arm]]) if sft_agreement else None
        for arm in ARMS
    }
    rounds: dict[str, list[dict[str, float]]] = {}
    for arm in RDPO_ARMS:
        logs = [r["rdpo"] for r in results[arm]]
        rounds[arm] = [
            {k: float(np.mean([log[i][k] for log in logs])) for k in logs[0][i]} for i in range(len(logs[0]))
        ]
    return {
        "policy": "hopper-learned-critic",
        "metrics": table,
        "claims": {
            k: {"difference": d, "paper_sign": 1, "direction": report.direction(d, 1)}
            for k, d in claims.items()
        },
        "agreement": agreement,
        "sft_agreement": report.stratified_bootstrap(sft_agreement) if sft_agreement else None,
        "rdpo_rounds": rounds,
    }


def setting(args: Args) -> str:
    """The run's budget in one line (every flag is in results.json)."""
    return (
        f"{args.seeds} seeds; `{args.env}` ({', '.join(env_kw(args))}); {args.hopper_steps} GRPO steps "
        f"× {args.hopper_tasks_per_step} tasks × {args.hopper_group_size} episodes per arm, "
        f"lr {args.hopper_lr}; "
        f"RDPO every {args.hopper_rdpo_every} steps ({args.hopper_rdpo_steps} DPO steps); SFT critic from "
        f"{args.hopper_critic_demos} oracle-critic episodes; {args.eval_tasks} test questions × "
        f"{args.hopper_eval_samples} sampled episodes"
    )


PAPER = {
    "em_coevolve_minus_agent_only": "alternating 86.6 vs agent-only 83.6 (2Wiki, mean of EM and F1)",
    "em_cafe_minus_agent_only": "alternating 86.6 vs agent-only 83.6 (2Wiki, mean of EM and F1)",
    "em_critic_only_minus_base": "critic-only 67.7 → 71.3",
    "em_coevolve_last_critic_minus_sft_critic": "last critic 84.0 vs SFT critic 80.6 EM (2Wiki)",
    "em_cafe_last_critic_minus_sft_critic": "last critic 84.0 vs SFT critic 80.6 EM (2Wiki)",
}


def section(summary: dict[str, Any]) -> str:
    """The benchmarks/README.md section of a learned-critic run."""
    table = metric_table(summary["metrics"], ("base", *ARMS))
    claims = claims_table(summary["claims"], PAPER)
    agreement = ", ".join(f"{arm} {a or 'n/a'}" for arm, a in summary["agreement"].items())
    rounds = "; ".join(
        f"{arm}: " + ", ".join(f"{r['found']:.1f}/{r['used']:.1f}" for r in rs)
        for arm, rs in summary["rdpo_rounds"].items()
    )
    shared = summary.get("critic_rows", "own") == "shared"
    png = "cafe_critic_shared_training_success.png" if shared else "cafe_critic_training_success.png"

    flag = " --hopper-critic-rows shared" if shared else ""
    rows = (
        "the agent's own `read` rows, shared: cloned from the oracle critic's hints (which moves the agent's "
        "reading too), then moved by the agent's GRPO and the critic's RDPO alike"
        if shared
        else "the hopper's own `hint` rows, cloned from the oracle critic's hints, then RDPO"
    )
    return "\n\n".join(
        [
            "### CAFE's critic side on a learned search policy "
            f"(`papergym reproduce cafe --policy hopper --hopper-critic learned{flag}`)",
            f"Setting: {summary.get('setting', '')}. Agent: `papergym.baselines.search_hopper`; critic: "
            f"`papergym.baselines.hint_critic` ({rows}); `base` is the untrained agent with that SFT critic.",
            "Held-out SearchCritic-v0 questions (per-task means of sampled episodes; 95% stratified "
            "bootstrap over seeds × tasks):",
            table,
            claims,
            f"The critic's agreement with the oracle on held-out inputs (its mean probability of giving the "
            f"oracle's hint; n/a: no held-out input left the critic a choice): SFT critic "
            f"{summary['sft_agreement'] or 'n/a'}; last critics {agreement}.",
            "RDPO pairs per round, found / used (mean over seeds; a pair is dropped when both sides gave the "
            f"same hint or the rejected hint cannot be said on the chosen input): {rounds}.",
            f"![learned-critic training success]({png})",
            reading(summary),
        ]
    )


def reading(summary: dict[str, Any]) -> str:
    """A plain statement of what the run shows, read from the intervals."""
    metrics = summary["metrics"]
    em = ", ".join(f"{arm} {metrics[arm]['em'].mean:.3f}" for arm in ("base", *ARMS))
    asks = ", ".join(f"{arm} {metrics[arm]['requested'].mean:.2f}" for arm in ARMS)
    parts = [f"Held-out EM: {em}; request rate: {asks}."]
    parts += [
        f"{k.replace('_', ' ')}: {v['direction']} ({v['difference']})." for k, v in summary["claims"].items()
    ]
    used = [r["used"] for rs in summary["rdpo_rounds"].values() for r in rs]
    if used and max(used) < 5:
        parts.append(
            f"RDPO had little to learn from: at most {max(used):.1f} usable pairs in a round "
            "(mean over seeds), "
            "so the critic rows barely move and every co-evolution claim rests on them."
        )
    return " ".join(parts)
