"""CAFE's credit mechanisms for requestable feedback (papers/envs.md §3.3).

- `FeedbackRequestReward` (a `GroupReward`): the CFE reward R_i = r_i + β·C_i·û(x) − γ·[n_fb,i − 1]₊,
  β = 0.5, γ = 0.05, where C_i = 1[n_fb,i > 0] and the call-skip gap û(x) is the success rate of the
  members that requested feedback minus that of those that skipped, on the same prompt; with only one
  route in the group it falls back to the batch-level gap, then to 0.
- `FeedbackAdvantageShaping` (an `AdvantageHook`): for a requesting rollout with A > 0 and
  g = clip(û, 0, b) > 0 (b = 0.5), actions before the request get max(A − λ·g, 0), the request turn A,
  actions after the feedback A + λ·g (λ = 0.5).
- `rdpo_pairs`: RDPO's preference pairs on the critic's feedback: a successful and a failed rollout of the
  same prompt that both requested feedback, whose pre-request prefixes have token-set Jaccard >= 0.7.
- `feedback_metrics`: answer hallucination rate, request rate and request-skip success gap.

Every quantity is read from the env's ``info["segments"]``, ``info["checks"]`` and the trajectories'
success, never from a gold label.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from papergym.core import info_keys as K
from papergym.core.trajectory import Trajectory

BETA = 0.5
"""CAFE's weight of the call-skip gap in the request reward (envs.md §3.3)."""
GAMMA = 0.05
"""CAFE's penalty per request beyond the first (envs.md §3.3)."""
LAMBDA = 0.5
"""CAFE's shaping strength λ (envs.md §3.3)."""
GAP_BOUND = 0.5
"""CAFE's clip bound b on the gap used for shaping (envs.md §3.3)."""
JACCARD_THRESHOLD = 0.7
"""CAFE's minimum token-set Jaccard of RDPO prefixes (envs.md §3.3)."""
_TOKEN = re.compile(r"\w+")


def _segments(traj: Trajectory) -> Mapping[str, Any]:
    return traj.final_info.get(K.SEGMENTS) or {}


def n_requests(traj: Trajectory) -> int:
    """How many times the trajectory requested feedback (n_fb), budget-refused requests included."""
    return int(_segments(traj).get("n_requests", 0))


def requested(traj: Trajectory) -> bool:
    """C_i: whether the trajectory requested feedback at least once."""
    return n_requests(traj) > 0


def _gap(trajectories: Sequence[Trajectory]) -> float | None:
    calls = [t.success for t in trajectories if requested(t)]
    skips = [t.success for t in trajectories if not requested(t)]
    if not calls or not skips:
        return None
    return sum(calls) / len(calls) - sum(skips) / len(skips)


def call_skip_gap(group: Sequence[Trajectory], batch: Sequence[Sequence[Trajectory]] = ()) -> float:
    """û(x): success rate of the requesting members minus that of the skipping ones.

    Falls back to the gap over the whole batch when the group has only one route, then to 0.

    >>> from papergym.core.trajectory import Step, Trajectory
    >>> def t(req, ok):
    ...     info = {"segments": {"n_requests": req}}
    ...     return Trajectory("q", 0, [Step("", "", float(ok), info)], success=ok)
    >>> call_skip_gap([t(1, True), t(1, False), t(0, False), t(0, False)])
    0.5
    >>> call_skip_gap([t(1, True)], batch=[[t(1, True)], [t(0, False)]]), call_skip_gap([t(1, True)])
    (1.0, 0.0)
    """
    gap = _gap(group)
    if gap is None:
        gap = _gap([t for g in batch for t in g])
    return 0.0 if gap is None else gap


class FeedbackRequestReward:
    """CAFE's CFE reward, a `GroupReward`: R_i = r_i + β·C_i·û(x) − γ·[n_fb,i − 1]₊.

    Args:
        beta: weight of the call-skip gap (CAFE: 0.5).
        gamma: penalty per request beyond the first (CAFE: 0.05).

    r_i is the trajectory's return (the env's ``outcome``, plus any format penalties). The gap used
    for the latest group is kept in ``last_gap``.
    """

    def __init__(self, *, beta: float = BETA, gamma: float = GAMMA) -> None:
        if beta < 0 or gamma < 0:
            raise ValueError(f"beta and gamma must be >= 0, got {beta}, {gamma}")
        self.beta = float(beta)
        self.gamma = float(gamma)
        self.last_gap = 0.0

    def __call__(
        self, group: Sequence[Trajectory], *, batch: Sequence[Sequence[Trajectory]] = ()
    ) -> list[float]:
        gap = self.last_gap = call_skip_gap(group, batch)
        return [
            t.total_reward + self.beta * float(requested(t)) * gap - self.gamma * max(n_requests(t) - 1, 0)
            for t in group
        ]


class FeedbackAdvantageShaping:
    """CAFE's feedback-aware advantage shaping, an `AdvantageHook`.

    For a rollout that requested feedback, with advantage A > 0 and g = clip(û, 0, bound) > 0 (û from
    ``group``, or ``batch`` when the group has one route: the estimate the CFE reward uses): steps before
    the request get max(A − λ·g, 0), the request step A, steps after it A + λ·g.
    Every other rollout keeps A on every step.

    Args:
        lam: λ (CAFE: 0.5).
        bound: b, the clip bound of the gap (CAFE: 0.5).
    """

    def __init__(self, *, lam: float = LAMBDA, bound: float = GAP_BOUND) -> None:
        if lam < 0 or bound < 0:
            raise ValueError(f"lam and bound must be >= 0, got {lam}, {bound}")
        self.lam = float(lam)
        self.bound = float(bound)

    def __call__(
        self,
        traj: Trajectory,
        advantage: float,
        *,
        action_lengths: Sequence[int],
        group: Sequence[Trajectory] = (),
        batch: Sequence[Sequence[Trajectory]] = (),
    ) -> list[float]:
        n = len(traj.steps)
        if len(action_lengths) != n:
            raise ValueError(f"action_lengths has {len(action_lengths)} entries for {n} steps")
        request_step = _segments(traj).get("request_step")
        g = min(max(call_skip_gap(group, batch), 0.0), self.bound)
        if request_step is None or request_step < 0 or advantage <= 0 or g <= 0:
            return [float(advantage)] * n
        shift = self.lam * g
        return [
            max(advantage - shift, 0.0)
            if i < request_step
            else advantage
            if i == request_step
            else advantage + shift
            for i in range(n)
        ]


@dataclass(frozen=True)
class RDPOPair:
    """One DPO pair on the critic's feedback.

    Attributes:
        prompt: the shared context: the task text and the successful rollout's history up to its request.
        chosen: the feedback of the successful rollout (f⁺).
        rejected: the feedback of the failed rollout (f⁻).
        similarity: token-set Jaccard of the two pre-request prefixes.
        question: the question the critic was given on the successful rollout ("" when not recorded).
        trajectory: the messages the critic was given there (the successful history up to its request);
            with ``question``, the critic's input, so the critic role is trained on what it saw.
    """

    prompt: str
    chosen: str
    rejected: str
    similarity: float
    question: str = ""
    trajectory: tuple[Mapping[str, str], ...] = ()


def jaccard(a: str, b: str) -> float:
    """Token-set Jaccard similarity of two texts (lowercased word tokens); 1.0 for two empty texts.

    >>> jaccard("search Tek city", "search tek town")
    0.5
    """
    x, y = set(_TOKEN.findall(a.lower())), set(_TOKEN.findall(b.lower()))
    return 1.0 if not x and not y else len(x & y) / len(x | y)


def _task_text(traj: Trajectory) -> str:
    obs = traj.steps[0].observation if traj.steps else ""
    if isinstance(obs, str):
        return obs
    return "\n".join(
        str(m.get("content", "")) for m in obs if isinstance(m, Mapping) and m.get("role") != "system"
    )


def rdpo_pairs(group: Sequence[Trajectory], *, threshold: float = JACCARD_THRESHOLD) -> list[RDPOPair]:
    """RDPO's pairs: (successful, failed) members of one prompt's group that both got feedback and whose
    pre-request prefixes have token-set Jaccard >= ``threshold``. CAFE also filters pairs with an LLM judge;
    that step is left to the caller."""
    fed = [t for t in group if _segments(t).get("feedback") is not None]
    pairs = []
    for good in (t for t in fed if t.success):
        for bad in (t for t in fed if not t.success):
            sg, sb = _segments(good), _segments(bad)
            sim = jaccard(sg["prefix"], sb["prefix"])
            if sim >= threshold:
                prompt = f"{_task_text(good)}\n\n{sg['prefix']}".strip()
                seen = sg.get("critic_input") or {}
                history = tuple(dict(m) for m in seen.get("trajectory", ()))
                question = str(seen.get("question", ""))
                pairs.append(RDPOPair(prompt, sg["feedback"], sb["feedback"], sim, question, history))
    return pairs


@dataclass(frozen=True)
class FeedbackMetrics:
    """CAFE's behaviour metrics over a set of trajectories.

    Attributes:
        n: trajectories.
        success_rate: share solved.
        request_rate: share that requested feedback.
        request_skip_gap: success rate of requesters minus skippers (NaN with only one route).
        hallucination_rate: among answered trajectories, the share whose answer is wrong and occurs in no
            retrieved passage (inferred reading of CAFE's "answer hallucination").
    """

    n: int
    success_rate: float
    request_rate: float
    request_skip_gap: float
    hallucination_rate: float


def feedback_metrics(trajectories: Sequence[Trajectory]) -> FeedbackMetrics:
    """The metrics of `FeedbackMetrics` (raises ``ValueError`` on an empty list)."""
    if not trajectories:
        raise ValueError("feedback_metrics needs at least one trajectory")
    n = len(trajectories)
    answered = [t.final_info[K.CHECKS] for t in trajectories if K.CHECKS in t.final_info]
    hallucinated = sum(1 for c in answered if not c.get("exact_match") and not c.get("grounded"))
    gap = _gap(trajectories)
    return FeedbackMetrics(
        n=n,
        success_rate=sum(t.success for t in trajectories) / n,
        request_rate=sum(requested(t) for t in trajectories) / n,
        request_skip_gap=math.nan if gap is None else gap,
        hallucination_rate=hallucinated / len(answered) if answered else math.nan,
    )
