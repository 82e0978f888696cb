"""``papergym reproduce cafe``: CAFE's agent–critic co-evolution on `papergym/SearchCritic-v0` (envs.md §3).

The claim (CAFE, arXiv 2608.24794, envs.md §3.4): one model playing both the search agent and the critic it
may ask for feedback, trained with the call-skip reward (β·C·û − γ·[n_fb−1]₊), feedback-aware advantage
shaping and alternating RDPO updates of the critic role, beats GRPO (Avg EM 52.5 vs 49.7; 2Wiki 84.0), lowers
the answer hallucination rate (GRPO 17.63% → CAFE 12.60%; base 29.88%), and its last critic helps its last
agent more than the SFT critic does (84.0 vs 80.6 on 2Wiki).

Setting: SearchCritic-v0 (2WikiMultihopQA-style questions over a generated encyclopedia, ``n_passages=2000``),
the tiny LM, SFT-warmed on oracle demonstrations and then on recovery data (`papergym.baselines.recovery`:
its own failed rollouts repaired with an inserted feedback request, the oracle critic's feedback and the
oracle's continuation; CAFE's Stage I), so the agent knows the request action and the critic role has been
taught to write feedback. That model is the SFT agent and the SFT critic of every arm (``--model DIR``:
used as is for both, no SFT). Each arm trains from it for ``rounds`` × ``steps`` GRPO steps (same tasks,
seeds and budget):

- ``grpo_nofb``: GRPO, the env's feedback budget 0 (requests are refused);
- ``grpo_fb``: GRPO with the feedback action, the policy itself as the critic (weights shared), the outcome
  reward;
- ``cafe``: as ``grpo_fb`` plus the CFE reward, the shaping hook and, after each round, an RDPO update of
  the critic role on the pairs of that round's last ``rdpo_window`` steps (CAFE: 100 online steps × 1 RDPO,
  5 rounds);
- ``agent_only`` (CAFE's one-sided ablation): as ``cafe``, but the critic is a frozen copy of the SFT model
  (``policy_roles critic=BASE``) and there is no RDPO: only the agent learns;
- ``critic_only``: as ``cafe``, but the agent stays the SFT model (GRPO with ``updates_per_batch=0``: it
  samples and scores only) while the critic, a separate copy, is RDPO-updated after each round on the
  pairs of the frozen agent's rollouts with it: only the critic learns (paper, 2Wiki mean of EM and F1:
  critic-only 67.7 → 71.3, agent-only peaks at 84.2 and ends at 83.6, alternating 86.6).

Each arm's last model is evaluated greedily on ``eval_tasks`` held-out test questions, agent and critic
being that model: EM, token F1, success (EM with the gold chain retrieved), request rate, request–skip gap
and the answer hallucination rate, defined here as the share of episodes that end in a confident wrong
answer: an answer that matches no gold answer and occurs in no retrieved passage (abstentions, i.e. no
answer before the turn limit, and wrong answers copied from a retrieved passage are not hallucinations;
so the rate is not 1 − success). The critic-generation check plays CAFE's last agent with its last critic
and with the SFT critic. Intervals: stratified bootstrap over (seed, task) (`papergym.reproduce.report`).

``--policy hopper`` (`papergym.reproduce.cafe_hopper`) trains the agent-side arms (``grpo_nofb``,
``grpo_fb``, ``cafe`` without RDPO) on a learned non-LM search policy instead,
`papergym.baselines.search_hopper.HopperPolicy`, with the env's oracle critic: the tiny LM never completes
a search chain on a CPU budget, so none of its rewards varies with a request; the hopper copies names by
construction and learns the plan. Its README section is ``cafe-hopper``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from papergym.baselines import grpo, rdpo, sft
from papergym.baselines.hint_critic import CRITIC_HEADS
from papergym.baselines.run import set_threads
from papergym.credit.feedback import rdpo_pairs
from papergym.reproduce import cafe_critic, cafe_hopper, report
from papergym.reproduce.cafe_eval import (
    METRICS,
    EpisodeRecord,
    base_rollouts,
    claims_table,
    evaluate,
    metric_table,
    plot_training,
    request_skip_gap,
    training_feedback,
)
from papergym.reproduce.driver import (
    WarmStartArgs,
    check_arms,
    differing_fields,
    grpo_config,
    publish,
    warm_base,
)

logger = logging.getLogger(__name__)

NAME = "cafe"
ARMS = ("grpo_nofb", "grpo_fb", "cafe", "agent_only", "critic_only")
REFERENCE = "grpo_fb"
CFE_FIELDS = ("group_reward", "advantage_hook")
MECHANISM = {
    "grpo_nofb": ("env_kw",),
    "cafe": (*CFE_FIELDS, "rdpo"),
    "agent_only": (*CFE_FIELDS, "policy_roles"),
    "critic_only": (*CFE_FIELDS, "policy_roles", "updates_per_batch", "rdpo"),
}
"""Against GRPO with feedback: no feedback is the env's budget 0; CAFE adds the CFE reward, the shaping hook
and the RDPO stages (an ``rdpo`` entry means an RDPO stage, present or absent); the one-sided ablations
play the critic from a separate checkpoint (``policy_roles``), and critic-only freezes the agent."""
PAPER = {
    "em": {"grpo": 49.7, "cafe": 52.5, "cafe_2wiki": 84.0},
    "hallucination": {"base": 29.88, "grpo": 17.63, "cafe": 12.60},
    "critic_check": {"last_critic": 84.0, "sft_critic": 80.6},
}
"""CAFE's numbers (envs.md §3.4, 7B): Avg EM over 7 sets, hallucination rates (%), and the critic-generation
check on 2Wiki (mean of EM and F1)."""
CFE = {"group_reward": "feedback_request", "advantage_hook": "feedback_shaping"}
PARALLEL = True
"""``--workers`` runs the hopper paths' (seed, arm) jobs side by side (`train_arms`); the LM path's rounds
chain checkpoints in one process and refuse it."""


@dataclass
class Args(WarmStartArgs):
    """CAFE vs GRPO with and without feedback (envs.md §3)."""

    env: str = "papergym/SearchCritic-v0"
    """The env every arm trains and is evaluated on."""
    env_kw: list[str] = field(default_factory=lambda: ["n_passages=2000"])
    """Its kwargs (a 2,000-passage world: CPU scale, inferred)."""
    max_new_tokens: int = 80
    """Token budget of one agent action (the oracle's longest is about 65)."""
    sft_episodes: int = 500
    """Oracle demonstrations of the SFT warm start."""
    sft_steps: int = 100
    """SFT optimizer steps."""
    sft_batch: int = 8
    """SFT batch size."""
    recovery_rollouts: int = 32
    """Rollouts of the warm-started agent on training tasks whose failures are repaired (Stage I)."""
    recovery_steps: int = 20
    """Optimizer steps of the recovery SFT (recovery contexts mixed with fresh oracle demonstrations)."""
    recovery_lr: float = 1e-3
    """Recovery SFT learning rate (inferred)."""
    rounds: int = 2
    """Alternation rounds: online GRPO steps, then (CAFE) one RDPO update (CAFE: 5)."""
    steps: int | None = None
    """GRPO steps per round (None: 4; CAFE: 100)."""
    prompts_per_step: int = 4
    """GRPO tasks per step."""
    group_size: int = 4
    """GRPO rollouts per task (CAFE: 8; fewer to fit the CPU budget)."""
    grpo_lr: float = 1e-4
    """GRPO learning rate (CAFE: 1e-6 for 7B; inferred for the tiny LM)."""
    kl_beta: float = 0.001
    """KL loss coefficient (CAFE: 0.001)."""
    max_turns: int = 10
    """Actions per episode (the oracle needs 2-5; a request adds one; inferred, to bound CPU time)."""
    critic_tokens: int = 48
    """Token budget of one critic reply (inferred)."""
    rdpo_window: int = 3
    """The last GRPO steps of a round whose rollouts give RDPO's pairs (CAFE: the latest rollouts)."""
    rdpo_lr: float = 1e-4
    """RDPO learning rate (CAFE: 2e-7 for 7B; inferred for the tiny LM)."""
    rdpo_epochs: int = rdpo.RDPO_EPOCHS
    """RDPO epochs (CAFE: 2)."""
    eval_tasks: int = 30
    """Held-out test questions per evaluation (greedy)."""
    note: str = ""
    """A line printed at the top of the section (e.g. that this is a reduced run, and why)."""
    policy: str = "lm"
    """``lm``: the tiny LM (or ``--model DIR``) as above; ``hopper``: the learned non-LM search policy of
    `papergym.baselines.search_hopper` (`papergym.reproduce.cafe_hopper`: the agent-side arms only, the
    env's oracle critic, no warm start), with the ``hopper_*`` fields, ``env``/``env_kw``, ``max_turns``,
    ``eval_tasks`` and ``seeds``."""
    hopper_steps: int = 60
    """GRPO steps per arm of the hopper."""
    hopper_tasks_per_step: int = 8
    """Tasks per hopper GRPO step."""
    hopper_group_size: int = 8
    """Rollouts per task of the hopper (CAFE: 8)."""
    hopper_lr: float = 0.1
    """Adam step size on the hopper's logits (inferred, as the J-Zero policies')."""
    hopper_eval_samples: int = 4
    """Sampled episodes per held-out question of the hopper's evaluation."""
    hopper_critic: str = "oracle"
    """The hopper's critic: ``oracle`` (the env's; the agent-side arms) or ``learned``
    (`papergym.reproduce.cafe_critic`: the hopper's own rows play the critic, RDPO, the one-sided
    ablations and the critic-generation check; README key ``cafe-critic``)."""
    hopper_rdpo_every: int = 12
    """Learned critic: GRPO steps per RDPO update (CAFE: 100 online steps × 1 RDPO, 5 rounds; here
    5 rounds of the default 60 steps)."""
    hopper_rdpo_steps: int = 20
    """Learned critic: DPO steps per RDPO update (inferred)."""
    hopper_critic_demos: int = 40
    """Learned critic: oracle-critic episodes its rows are first cloned from (the SFT critic)."""
    hopper_critic_rows: str = "own"
    """Learned critic: ``own`` (its own rows) or ``shared`` (the agent's ``read`` rows: one set of
    parameters for both roles; README key ``cafe-critic-shared``)."""


SMOKE: dict[str, Any] = {
    "seeds": 2,
    "rounds": 1,
    "steps": 1,
    "prompts_per_step": 1,
    "group_size": 2,
    "max_new_tokens": 8,
    "critic_tokens": 4,
    "max_turns": 3,
    "rdpo_window": 1,
    "eval_tasks": 2,
    "sft_episodes": 4,
    "sft_steps": 1,
    "sft_batch": 2,
    "recovery_rollouts": 2,
    "recovery_steps": 1,
    "env_kw": ["n_passages=300"],
    "hopper_steps": 2,
    "hopper_tasks_per_step": 2,
    "hopper_group_size": 2,
    "hopper_eval_samples": 1,
    "hopper_rdpo_every": 1,
    "hopper_critic_demos": 4,
}
"""``--smoke``: the same code path on a minimal budget."""


def steps_per_round(args: Args) -> int:
    return 4 if args.steps is None else args.steps


def _grpo(args: Args, *, model: str, out: Path, seed: int, arm: str, critic: str | None = None) -> grpo.Args:
    """A round's GRPO stage; ``critic`` is a frozen critic checkpoint (None: the policy plays it)."""
    env_kw = [*args.env_kw, "feedback_budget=0"] if arm == "grpo_nofb" else list(args.env_kw)
    mechanism: dict[str, Any] = dict(CFE) if arm in ("cafe", "agent_only", "critic_only") else {}
    if arm == "critic_only":
        mechanism["updates_per_batch"] = 0
    return grpo_config(
        args, model=model, out=out, seed=seed, steps=steps_per_round(args), lr=args.grpo_lr, env_kw=env_kw,
        beta=args.kl_beta, policy_roles=["critic" if critic is None else f"critic={critic}"],
        role_tokens=args.critic_tokens, max_turns=args.max_turns, **mechanism,
    )  # fmt: skip


def _rdpo(args: Args, *, model: str, out: Path, seed: int) -> rdpo.Args:
    return rdpo.Args(
        env=args.env, env_kw=list(args.env_kw), model=model, out=str(out), seed=seed,
        max_new_tokens=args.max_new_tokens, max_turns=args.max_turns, critic_tokens=args.critic_tokens,
        epochs=args.rdpo_epochs,
        lr=args.rdpo_lr, checkpoint_every=0, progress=False, threads=args.threads, device=args.device,
        micro_batch=args.micro_batch,
    )  # fmt: skip


def arm_configs(args: Args, base: str, seed: int) -> dict[str, list[Any]]:
    """Each arm's stages for one seed, in order: per round a GRPO stage (and for CAFE and critic-only an
    RDPO stage), each starting from the previous stage's final model (critic-only: the agent stays
    ``base``, the critic moves); round ``r`` draws its tasks from seed ``seed·1000 + r``."""
    out = Path(args.out) / f"seed{seed}"
    configs: dict[str, list[Any]] = {}
    for arm in ARMS:
        stages: list[Any] = []
        model, critic = base, None if arm in ("grpo_nofb", "grpo_fb", "cafe") else base
        for r in range(args.rounds):
            stage_seed = seed * 1000 + r
            where = out / arm / f"round{r}"
            stages.append(_grpo(args, model=model, out=Path(f"{where}-grpo"), seed=stage_seed, arm=arm,
                                critic=critic))  # fmt: skip
            if arm != "critic_only":
                model = str(Path(stages[-1].out) / "final")
            if arm in ("cafe", "critic_only"):
                trained = model if arm == "cafe" else str(critic)
                stages.append(_rdpo(args, model=trained, out=Path(f"{where}-rdpo"), seed=stage_seed))
                if arm == "cafe":
                    model = str(Path(stages[-1].out) / "final")
                else:
                    critic = str(Path(stages[-1].out) / "final")
        configs[arm] = stages
    return configs


def evaluated_pair(arm: str, final: str, base: str) -> tuple[str, str]:
    """The (agent, critic) checkpoints an arm is evaluated with: its last model in both roles, but the
    one-sided ablations pair the learned role with the SFT model in the other."""
    if arm == "agent_only":
        return final, base
    if arm == "critic_only":
        return base, final
    return final, final


def check_rounds(configs: dict[str, list[Any]], rounds: int) -> None:
    """`check_arms` on the first round, and every later round equal to the first but for its starting
    model."""
    per_round = {
        arm: [s for s in stages if s.out.split("round")[-1].startswith("0-")]
        for arm, stages in configs.items()
    }
    check_arms(per_round, REFERENCE, MECHANISM)
    for arm, stages in configs.items():
        for stage in stages:
            first = next(s for s in per_round[arm] if type(s) is type(stage))
            extra = differing_fields(stage, first) - {"model"}
            if arm == "critic_only":
                extra -= {"policy_roles"}  # its critic checkpoint moves from round to round
            if extra:
                raise AssertionError(f"arm {arm!r}: a later round differs from the first in {sorted(extra)}")
    if any(len([s for s in v if isinstance(s, grpo.Args)]) != rounds for v in configs.values()):
        raise AssertionError("every arm must run one GRPO stage per round")


def recovery_base(args: Args, warm: str) -> tuple[str, dict[str, Any]]:
    """CAFE's Stage I on the warm start: its failed training rollouts repaired (`papergym.baselines.recovery`)
    and SFT on them mixed with fresh oracle demonstrations. ``--model DIR`` is used as is."""
    if args.model != "tiny":
        return args.model, {"repairs": 0, "note": "--model DIR: no SFT"}
    from papergym.baselines.recovery import build_recovery, training_contexts

    out = Path(args.out) / "recovery-sft"
    trajs, make_env, policy = base_rollouts(args, warm, tasks=args.recovery_rollouts, seed=7)
    repairs = build_recovery(policy, make_env, [t for t in trajs if not t.success])
    config = sft.Args(
        env=args.env, env_kw=list(args.env_kw), model=warm, out=str(out), seed=1,
        episodes=max(len(repairs), 1) * 2, steps=args.recovery_steps, batch_size=args.sft_batch,
        lr=args.recovery_lr, progress=False, threads=args.threads, device=args.device,
        micro_batch=args.micro_batch,
    )  # fmt: skip
    sft.main(config, extra=training_contexts(repairs))
    info = {"rollouts": len(trajs), "failed": sum(not t.success for t in trajs), "repairs": len(repairs)}
    return str(out / "final"), info


def _train(args: Args, stages: Sequence[Any]) -> tuple[str, list[dict[str, float]], list[dict[str, Any]]]:
    """Run an arm's stages; its final model, per-step training curve and RDPO results."""
    curve: list[dict[str, float]] = []
    rdpo_results: list[dict[str, Any]] = []
    recent: list[list[Any]] = []
    for stage in stages:
        if isinstance(stage, grpo.Args):
            recent.clear()

            def on_step(
                step: int, metrics: dict[str, Any], episodes: list[Any], g: int = stage.group_size
            ) -> None:
                trajs = [e.trajectory for e in episodes]
                groups = [trajs[i : i + g] for i in range(0, len(trajs), g)]
                recent.append(groups)
                curve.append({"step": float(len(curve)), **training_feedback(trajs, metrics)})

            grpo.main(stage, on_step=on_step)
        else:
            window = [g for step in recent[-args.rdpo_window :] for g in step]
            pairs = [p for g in window for p in rdpo_pairs(g)]
            result = rdpo.main(stage, pairs=pairs)
            rdpo_results.append({k: result.get(k) for k in ("pairs", "first", "last")})
        final = str(Path(stage.out) / "final")
    return final, curve, rdpo_results


def run(args: Args) -> dict[str, Any]:
    """Warm-start, train every arm on every seed, evaluate and write the report (module docstring)."""
    set_threads(args.threads)
    if args.policy == "hopper":
        if args.model != "tiny":
            raise ValueError("--policy hopper trains the hopper from scratch; it takes no --model")
        if args.hopper_critic not in ("oracle", "learned"):
            raise ValueError(f"--hopper-critic must be 'oracle' or 'learned', got {args.hopper_critic!r}")
        if args.hopper_critic_rows not in CRITIC_HEADS:
            raise ValueError(
                f"--hopper-critic-rows must be one of {sorted(CRITIC_HEADS)}, got {args.hopper_critic_rows!r}"
            )
        return cafe_critic.run(args) if args.hopper_critic == "learned" else cafe_hopper.run(args)
    if args.policy != "lm":
        raise ValueError(f"--policy must be 'lm' or 'hopper', got {args.policy!r}")
    if args.workers != 1:
        raise ValueError("the LM path trains its arms in one process; --workers applies to --policy hopper")
    out = Path(args.out)
    (out / "progress.jsonl").unlink(missing_ok=True)  # a fresh run starts a fresh log
    warm = warm_base(args)
    base, recovery = recovery_base(args, warm)
    records: dict[str, list[list[EpisodeRecord]]] = {a: [] for a in (*ARMS, "sft_critic")}
    curves: dict[str, dict[int, list[dict[str, float]]]] = {a: {} for a in ARMS}
    rdpo_log: dict[int, list[dict[str, Any]]] = {}
    base_records = evaluate(args, base, base, budget=1)
    progress(out, "base", -1, base_records, recovery=recovery)
    for seed in range(args.seeds):
        configs = arm_configs(args, base, seed)
        check_rounds(configs, args.rounds)
        for arm, stages in configs.items():
            final, curves[arm][seed], log = _train(args, stages)
            if arm == "cafe":
                rdpo_log[seed] = log
                records["sft_critic"].append(evaluate(args, final, base, budget=1))
                progress(out, "sft_critic", seed, records["sft_critic"][-1], rdpo=log)
            agent, critic = evaluated_pair(arm, final, base)
            records[arm].append(evaluate(args, agent, critic, budget=0 if arm == "grpo_nofb" else 1))
            progress(out, arm, seed, records[arm][-1])
    records["base"] = [base_records] * args.seeds
    summary = summarise(records)
    summary |= {
        "recovery": recovery,
        "rdpo": rdpo_log,
        "paper": PAPER,
        "budget_steps": args.rounds * steps_per_round(args),
        "setting": setting(args),
        "note": args.note,
    }
    report.write_results(out, name=NAME, args=args, curves=curves, summary=summary)
    plot_training(out, curves, title="SearchCritic-v0")
    publish(out, NAME, section(summary), args.write)
    summary["out"] = str(out)
    return summary


def progress(out: Path, arm: str, seed: int, recs: list[EpisodeRecord], **extra: Any) -> None:
    """Append one evaluation's means to ``out/progress.jsonl`` as the run goes (a run stopped early keeps
    what it measured)."""
    means = {m: float(np.mean([getattr(r, m) for r in recs])) for m in METRICS}
    out.mkdir(parents=True, exist_ok=True)
    with (out / "progress.jsonl").open("a") as f:
        f.write(json.dumps({"arm": arm, "seed": seed, "n": len(recs), **means, **extra}, default=str) + "\n")


def _matrix(per_seed: list[list[EpisodeRecord]], metric: str) -> np.ndarray:
    return np.array([[getattr(r, metric) for r in seed] for seed in per_seed], dtype=float)


def summarise(records: dict[str, list[list[EpisodeRecord]]]) -> dict[str, Any]:
    """Per arm and metric a stratified bootstrap interval; the paired differences the paper's claims need."""
    table = {
        arm: {m: report.stratified_bootstrap(_matrix(recs, m)) for m in METRICS}
        for arm, recs in records.items()
    }
    gaps = {
        arm: request_skip_gap((r.requested, r.success) for seed in recs for r in seed)
        for arm, recs in records.items()
    }

    def diff(a: str, b: str, metric: str) -> report.Interval:
        return report.paired_difference(_matrix(records[a], metric), _matrix(records[b], metric))

    claims = {
        "em_cafe_minus_grpo_fb": (diff("cafe", "grpo_fb", "em"), +1),
        "em_cafe_minus_grpo_nofb": (diff("cafe", "grpo_nofb", "em"), +1),
        "hallucination_cafe_minus_grpo_fb": (diff("cafe", "grpo_fb", "hallucinated"), -1),
        "hallucination_cafe_minus_base": (diff("cafe", "base", "hallucinated"), -1),
        "em_last_critic_minus_sft_critic": (diff("cafe", "sft_critic", "em"), +1),
        "em_cafe_minus_agent_only": (diff("cafe", "agent_only", "em"), +1),
        "em_cafe_minus_critic_only": (diff("cafe", "critic_only", "em"), +1),
    }
    verdicts = {
        k: {"difference": d, "paper_sign": s, "direction": report.direction(d, s)}
        for k, (d, s) in claims.items()
    }
    return {"metrics": table, "request_skip_gap": gaps, "claims": verdicts}


def section(summary: dict[str, Any]) -> str:
    """The benchmarks/README.md section: the metric table, the claims beside the paper and a reading."""
    if summary.get("policy") in ("hopper", "hopper-learned-critic"):
        raise ValueError(
            "a --policy hopper run's section is written by its run (cafe_hopper.section, cafe_critic.section)"
        )
    table = metric_table(summary["metrics"], ("base", *ARMS, "sft_critic"))
    paper = {
        "em_cafe_minus_grpo_fb": "+2.8 (52.5 vs 49.7 Avg EM)",
        "em_cafe_minus_grpo_nofb": "+2.8 (vs GRPO)",
        "hallucination_cafe_minus_grpo_fb": "−5.0 pts (12.60% vs 17.63%)",
        "hallucination_cafe_minus_base": "−17.3 pts (12.60% vs 29.88%)",
        "em_last_critic_minus_sft_critic": "+3.4 (84.0 vs 80.6)",
        "em_cafe_minus_agent_only": "+3.0 (2Wiki EM/F1 mean: 86.6 vs 83.6 at the end)",
        "em_cafe_minus_critic_only": "+15.3 (86.6 vs 71.3)",
    }
    claims = claims_table(summary["claims"], paper)
    gaps = ", ".join(
        f"{arm} {'n/a' if g is None else f'{g:+.3f}'}" for arm, g in summary["request_skip_gap"].items()
    )
    paper_line = (
        "Paper (CAFE, 7B, envs.md §3.4): Avg EM GRPO 49.7 → CAFE 52.5 (2Wiki 84.0); hallucination base "
        "29.88%, GRPO 17.63%, CAFE 12.60%; last critic vs SFT critic with the last agent 84.0 vs 80.6; "
        "one-sided training on 2Wiki (mean of EM and F1): critic-only 67.7 → 71.3, agent-only peaks at "
        "84.2 and ends at 83.6, alternating 86.6."
    )
    head = [f"**{summary['note']}**"] if summary.get("note") else []
    return "\n\n".join([
        "### CAFE agent–critic co-evolution (`papergym reproduce cafe`)", *head,
        f"Setting: {summary.get('setting', '')}.",
        "Held-out SearchCritic-v0 questions, greedy; `sft_critic` is CAFE's last agent with the SFT critic, "
        "`agent_only` its trained agent with the SFT critic, `critic_only` the SFT agent with its trained "
        "critic "
        "(95% stratified bootstrap over seeds × tasks; hallucination = a wrong answer found in no retrieved "
        "passage, over all episodes; abstentions are not hallucinations):",
        table, claims, paper_line, f"Request–skip success gap at evaluation (pooled): {gaps}.",
        reading(summary),
    ])  # fmt: skip


def setting(args: Args) -> str:
    """The run's budget in one line (the section's provenance; every flag is in results.json)."""
    return (
        f"{args.seeds} seeds; SFT {args.sft_steps} steps × {args.sft_batch} on {args.sft_episodes} oracle "
        f"episodes, recovery SFT {args.recovery_steps} steps on {args.recovery_rollouts} rollouts' repairs; "
        f"{args.rounds} rounds × {steps_per_round(args)} GRPO steps × {args.prompts_per_step} prompts × "
        f"{args.group_size} rollouts (RDPO after each round for CAFE); {args.eval_tasks} test questions; "
        f"model {args.model}"
    )


def reading(summary: dict[str, Any]) -> str:
    """A plain statement of what reproduced, read from the intervals."""
    claims = summary["claims"]
    parts = []
    if all(m["answered"].high == 0 and m["requested"].high == 0 for m in summary["metrics"].values()):
        parts.append(
            "**No arm answered a single held-out question or requested feedback**: at this budget the "
            "SFT-warmed model never answers or asks within the turn limit, so there was no outcome signal to "
            "learn from (the rollouts' only reward variance was the format penalty) and every comparison "
            "below is empty. This run says nothing about CAFE either way; it shows the pipeline running end "
            "to end."
        )
    parts += [f"{k.replace('_', ' ')}: {v['direction']} ({v['difference']})." for k, v in claims.items()]
    rec = summary["recovery"]
    parts.append(f"Recovery SFT: {rec.get('repairs', 0)} repaired failures of {rec.get('failed', 0)}.")
    pairs = [r["pairs"] for log in summary["rdpo"].values() for r in log]
    parts.append(f"RDPO pairs per round: {pairs or 'none'}.")
    return " ".join(parts)


def replace_args(args: Args, **changes: Any) -> Args:
    """``args`` with ``changes`` (tests)."""
    return replace(args, **changes)
