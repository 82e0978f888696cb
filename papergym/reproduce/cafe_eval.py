"""What ``papergym reproduce cafe`` measures: per-episode EM, F1, success, requests and hallucinations of an
agent playing with a given critic, and the feedback metrics of each training step.

The answer hallucination rate counts episodes that end in a confident wrong answer: an answer that matches
no gold answer (after SQuAD normalisation) and occurs in no passage the agent retrieved
(``checks["grounded"]``). Episodes without an answer (abstentions: the turn limit ran out) and wrong answers
copied from a retrieved passage are not hallucinations, so the rate is not 1 − success.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from papergym.baselines.policy import PolicyChatModel, PolicyModel, load_policy
from papergym.baselines.rollout import run_episodes
from papergym.baselines.run import make_envs, parse_kwargs
from papergym.core import info_keys as K
from papergym.core.trajectory import Trajectory, member_seed
from papergym.credit.feedback import feedback_metrics, requested
from papergym.reproduce import report

EVAL_SEED = 10**6
"""The first held-out task seed (test split)."""
METRICS = ("em", "f1", "success", "requested", "hallucinated", "answered")
"""The per-episode measures of `EpisodeRecord`."""
BATCH = 25
"""Episodes played in lockstep."""


class EvalArgs(Protocol):
    """What the evaluation reads from the driver's args."""

    env: str
    env_kw: list[str]
    device: str
    max_new_tokens: int
    max_turns: int
    critic_tokens: int
    eval_tasks: int


@dataclass(frozen=True)
class EpisodeRecord:
    """One evaluation episode, as numbers (1.0 / 0.0 for the booleans).

    Attributes:
        em: the answer matches a gold answer.
        f1: token F1 of the answer (0 without one).
        success: the env's success (EM with the gold evidence chain retrieved).
        requested: feedback was requested.
        hallucinated: a wrong answer found in no retrieved passage.
        answered: the episode ended with an answer.
    """

    em: float
    f1: float
    success: float
    requested: float
    hallucinated: float
    answered: float


def record(traj: Trajectory) -> EpisodeRecord:
    """The `EpisodeRecord` of a finished trajectory."""
    checks = traj.final_info.get(K.CHECKS) if traj.steps else None
    answered = checks is not None
    em = bool(checks and checks.get("exact_match"))
    hallucinated = answered and not em and not bool(checks and checks.get("grounded"))
    return EpisodeRecord(
        em=float(em),
        f1=float(checks.get("f1", 0.0)) if checks else 0.0,
        success=float(traj.success),
        requested=float(requested(traj)),
        hallucinated=float(hallucinated),
        answered=float(answered),
    )


def evaluate(args: EvalArgs, agent: str, critic: str, *, budget: int) -> list[EpisodeRecord]:
    """``agent`` (a checkpoint) plays ``eval_tasks`` held-out questions greedily with ``critic`` (a
    checkpoint; the same path: one model in both roles) answering its requests greedily; feedback budget
    ``budget``."""
    policy = load_policy(agent, device=args.device)
    policy.model.eval()
    critic_policy = policy if critic == agent else load_policy(critic, device=args.device)
    kwargs = parse_kwargs(args.env_kw) | {
        "feedback_budget": budget,
        "critic": PolicyChatModel(critic_policy, max_tokens=args.critic_tokens),
    }
    envs = make_envs(args.env, kwargs, min(BATCH, args.eval_tasks))
    out: list[EpisodeRecord] = []
    try:
        for start in range(0, args.eval_tasks, len(envs)):
            seeds = [EVAL_SEED + j for j in range(start, min(args.eval_tasks, start + len(envs)))]
            episodes = run_episodes(
                policy,
                envs[: len(seeds)],
                seeds=seeds,
                sample_seed=member_seed(EVAL_SEED, start),
                options={"split": "test"},
                max_new_tokens=args.max_new_tokens,
                temperature=0.0,
                max_turns=args.max_turns,
            )
            out += [record(e.trajectory) for e in episodes]
    finally:
        for env in envs:
            env.close()
    return out


def base_rollouts(
    args: EvalArgs, model: str, *, tasks: int, seed: int
) -> tuple[list[Trajectory], Callable[[], gym.Env], PolicyModel]:
    """``model`` plays ``tasks`` training questions (temperature 1, the env's oracle critic): CAFE Stage I's
    "base agent's rollouts". Returns them, a factory of the env (whose critic is the recovery teacher) and
    the policy."""
    policy = load_policy(model, device=args.device)
    kwargs = parse_kwargs(args.env_kw)

    def make_env() -> gym.Env:
        return gym.make(args.env, **kwargs)

    envs = [make_env() for _ in range(min(BATCH, tasks))]
    trajs: list[Trajectory] = []
    try:
        for start in range(0, tasks, len(envs)):
            n = min(len(envs), tasks - start)
            episodes = run_episodes(
                policy,
                envs[:n],
                seeds=[member_seed(seed, start + j) % 2**31 for j in range(n)],
                sample_seed=member_seed(seed + 1, start),
                options={"split": "train"},
                max_new_tokens=args.max_new_tokens,
                temperature=1.0,
                max_turns=args.max_turns,
            )
            trajs += [e.trajectory for e in episodes]
    finally:
        for env in envs:
            env.close()
    return trajs, make_env, policy


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def training_feedback(trajs: list[Trajectory], metrics: Mapping[str, Any]) -> dict[str, Any]:
    """One GRPO step's curve point: its reward and success and CAFE's feedback metrics of its rollouts."""
    m = feedback_metrics(trajs)
    return {
        "reward": float(metrics["reward"]),
        "success": float(metrics["success"]),
        "invalid_rate": float(metrics["invalid_rate"]),
        "request_rate": m.request_rate,
        "request_skip_gap": _finite(m.request_skip_gap),
        "hallucination_answered": _finite(m.hallucination_rate),
    }


METRIC_LABELS = {
    "em": "EM",
    "f1": "F1",
    "success": "success",
    "requested": "request rate",
    "hallucinated": "hallucination",
    "answered": "answered",
}
"""The column title of each of `METRICS` in a README table."""


def metric_table(metrics: Mapping[str, Mapping[str, Any]], arms: Iterable[str]) -> str:
    """The markdown table of every metric's interval, one row per arm."""
    rows = [{"arm": arm, **{METRIC_LABELS[m]: str(metrics[arm][m]) for m in METRICS}} for arm in arms]
    return report.markdown_table(rows, ["arm", *(METRIC_LABELS[m] for m in METRICS)])


def claims_table(claims: Mapping[str, Mapping[str, Any]], paper: Mapping[str, str]) -> str:
    """The markdown table of the claims: our interval, the paper's number, the direction."""
    rows = [
        {"claim": k, "ours (95% CI)": str(v["difference"]), "paper": paper[k], "direction": v["direction"]}
        for k, v in claims.items()
    ]
    return report.markdown_table(rows, ["claim", "ours (95% CI)", "paper", "direction"])


TRAINING_PNGS = {"success": "training_success.png", "request_rate": "request_rate.png"}
"""The training curves both CAFE paths plot, and their files."""


def request_skip_gap(routes: Iterable[tuple[float, float]]) -> float | None:
    """The pooled success of requesting episodes minus that of skipping ones, from ``(requested,
    success)`` pairs (None when every episode took one route).

    >>> request_skip_gap([(1, 1), (1, 0), (0, 0)]), request_skip_gap([(0, 1)])
    (0.5, None)
    """
    pairs = list(routes)
    asked = [ok for req, ok in pairs if req]
    skipped = [ok for req, ok in pairs if not req]
    return float(np.mean(asked) - np.mean(skipped)) if asked and skipped else None


def plot_training(
    out: Path, curves: Mapping[str, Mapping[int, list[dict[str, float]]]], *, title: str
) -> None:
    """Training success and request rate per step, mean over seeds with a 95% interval (`TRAINING_PNGS`)."""
    for key, png in TRAINING_PNGS.items():
        series = {}
        for arm, per_seed in curves.items():
            steps = min((len(c) for c in per_seed.values()), default=0)
            series[arm] = {
                float(i): report.stratified_bootstrap([[c[i][key]] for c in per_seed.values()])
                for i in range(steps)
            }
        report.plot_arms(
            out / png, series, xlabel="GRPO step", ylabel=key.replace("_", " "), title=f"{title}: {key}"
        )
