"""IAPO's influence-aware credit: a signed influence graph over a trajectory's actions (papers/envs.md §4.2).

From a finished trajectory an *annotator* extracts, per action, an error flag e_i, support-use edges
i →⁺ j (a_j consumes information supplied or elicited by a_i), failed-use edges i →⁻ j (a_j repeats an
error of a_i, uses its invalid output, or falls back because of it) and u_i^dir (unelicited user turns
a_i uses). Edges are accepted only under IAPO's three conditions: necessity (a specific information
unit, not a shared topic), explicit binding (bound to a concrete argument, branch or recovery action)
and source priority (the most comprehensive source, ties broken by the earliest; several sources only
for non-overlapping units). From the graph:

- φ_i⁺ = log(1 + d_i⁺ + d_i^in), φ_i⁻ = log(1 + e_i·(1 + d_i⁻ + d_i^in)), d^in = u^dir + in-degree⁺;
- m = exp(clip(z, −c, c)) with z the length-weighted z-score of φ, renormalised so Σ L_i·m_i = L;
- Â > 0: w_i = L·m_i⁺·exp(−β₊ψ_i⁻) / Σ_j L_j·m_j⁺·exp(−β₊ψ_j⁻), ψ⁻ = φ⁻ − φ̄⁻ (length-weighted mean);
  Â < 0: w_i = m_i⁻; Â = 0: zeros. Action i's tokens get Â·w_i.

So Σ_i L_i·Â·w_i = L·Â (mass conservation), w_i > 0 (sign preservation), and constant features give
w ≡ 1 (uniform fallback): IAPO's Props 1-3, tested in ``tests/credit/test_influence.py``.

Annotators: `ProvenanceAnnotator` (default) reads the service env's ``info["provenance"]`` (exact
value bindings: a CPU "oracle annotator"); `ModelGraphAnnotator` asks a `ModelAnnotator` on any
ChatModel (IAPO used a frozen Qwen3-32B at temperature 0) with `IAPO_ANNOTATOR_SYSTEM` /
`IAPO_ANNOTATOR_TEMPLATE`; `NoisyAnnotator` drops and adds edges at a rate for robustness studies.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from papergym.backends.model_roles import ModelAnnotator
from papergym.backends.protocols import ChatModel, Message
from papergym.core import info_keys as K
from papergym.core.errors import require
from papergym.core.trajectory import Trajectory

BETA_POS = 0.05
"""β₊, the discount of repaired-error steps on the positive branch (IAPO §4.3, ablation best)."""
CLIP = 0.25
"""c, the clip of the z-scored features (IAPO §4.3)."""
EPS = 1e-6
"""The ε added to the features' std (IAPO §4.2)."""


@dataclass
class InfluenceAnnotation:
    """What an annotator extracts from one trajectory (actions indexed 0..n-1).

    Attributes:
        n: the number of actions.
        errors: e_i per action.
        support: accepted support-use edges (i, j), i < j.
        failed: accepted failed-use edges (i, j), i < j.
        direct_user: u_i^dir per action (unelicited user turns it uses).
    """

    n: int
    errors: list[bool] = field(default_factory=list)
    support: list[tuple[int, int]] = field(default_factory=list)
    failed: list[tuple[int, int]] = field(default_factory=list)
    direct_user: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.errors = list(self.errors) or [False] * self.n
        self.direct_user = list(self.direct_user) or [0] * self.n
        if len(self.errors) != self.n or len(self.direct_user) != self.n:
            raise ValueError(f"errors and direct_user need {self.n} entries each")
        for i, j in (*self.support, *self.failed):
            if not 0 <= i < j < self.n:
                raise ValueError(f"edge ({i}, {j}) must satisfy 0 <= i < j < {self.n}")


@runtime_checkable
class InfluenceAnnotator(Protocol):
    """Extracts IAPO's influence annotation from a finished trajectory."""

    def __call__(self, traj: Trajectory) -> InfluenceAnnotation: ...


def influence_graph(annotation: InfluenceAnnotation) -> Any:
    """The signed influence graph as a ``networkx.MultiDiGraph``.

    Nodes are action indices with attributes ``error`` and ``direct_user``; edges carry ``sign`` (+1 for
    support-use, -1 for failed-use) and are keyed ``"support"`` / ``"failed"``.
    """
    nx = require("networkx", "credit")
    graph = nx.MultiDiGraph()
    for i in range(annotation.n):
        graph.add_node(i, error=bool(annotation.errors[i]), direct_user=int(annotation.direct_user[i]))
    for i, j in set(annotation.support):
        graph.add_edge(i, j, key="support", sign=1)
    for i, j in set(annotation.failed):
        graph.add_edge(i, j, key="failed", sign=-1)
    return graph


def features(graph: Any) -> tuple[list[float], list[float]]:
    """φ⁺ and φ⁻ of every node of an influence graph (IAPO §4.2)."""
    phi_pos, phi_neg = [], []
    for i in sorted(graph.nodes):
        d_pos = sum(1 for _, _, k in graph.out_edges(i, keys=True) if k == "support")
        d_neg = sum(1 for _, _, k in graph.out_edges(i, keys=True) if k == "failed")
        in_pos = sum(1 for _, _, k in graph.in_edges(i, keys=True) if k == "support")
        d_in = graph.nodes[i]["direct_user"] + in_pos
        e = float(graph.nodes[i]["error"])
        phi_pos.append(math.log1p(d_pos + d_in))
        phi_neg.append(math.log1p(e * (1 + d_neg + d_in)))
    return phi_pos, phi_neg


def _weighted_mean(values: Sequence[float], lengths: Sequence[float]) -> float:
    return sum(v * n for v, n in zip(values, lengths, strict=True)) / sum(lengths)


def modulation(phi: Sequence[float], lengths: Sequence[float], *, clip: float = CLIP) -> list[float]:
    """m = exp(clip(z, −c, c)) of the length-weighted z-score of ``phi``, renormalised to Σ L·m = L.

    >>> modulation([1.0, 1.0], [3, 5])
    [1.0, 1.0]
    """
    total = float(sum(lengths))
    mean = _weighted_mean(phi, lengths)
    std = math.sqrt(_weighted_mean([(p - mean) ** 2 for p in phi], lengths))
    raw = [math.exp(min(max((p - mean) / (std + EPS), -clip), clip)) for p in phi]
    scale = total / sum(m * n for m, n in zip(raw, lengths, strict=True))
    return [m * scale for m in raw]


def iapo_weights(
    annotation: InfluenceAnnotation,
    advantage: float,
    lengths: Sequence[int],
    *,
    beta_pos: float = BETA_POS,
    clip: float = CLIP,
) -> list[float]:
    """IAPO's per-action weights w_i for a trajectory advantage ``advantage`` (zeros when it is 0).

    Args:
        annotation: the influence annotation of the trajectory.
        advantage: the trajectory's GRPO advantage Â.
        lengths: L_i, the token length of each action (>= 0, not all 0).
        beta_pos: β₊ (IAPO: 0.05).
        clip: c (IAPO: 0.25).
    """
    if len(lengths) != annotation.n:
        raise ValueError(f"lengths has {len(lengths)} entries for {annotation.n} actions")
    if any(n < 0 for n in lengths) or (annotation.n and sum(lengths) <= 0):
        raise ValueError(f"lengths must be >= 0 with a positive sum, got {list(lengths)}")
    if annotation.n == 0:
        return []
    if advantage == 0:
        return [0.0] * annotation.n
    phi_pos, phi_neg = features(influence_graph(annotation))
    if advantage < 0:
        return modulation(phi_neg, lengths, clip=clip)
    m_pos = modulation(phi_pos, lengths, clip=clip)
    mean_neg = _weighted_mean(phi_neg, lengths)
    raw = [m * math.exp(-beta_pos * (p - mean_neg)) for m, p in zip(m_pos, phi_neg, strict=True)]
    scale = float(sum(lengths)) / sum(r * n for r, n in zip(raw, lengths, strict=True))
    return [r * scale for r in raw]


# ---------------------------------------------------------------------------------------- annotators
def _provenance(step_info: Mapping[str, Any]) -> Mapping[str, Any]:
    return step_info.get(K.PROVENANCE) or {}


class ProvenanceAnnotator:
    """The rule annotator: IAPO's edges from the env's ``info["provenance"]`` (exact value binding).

    Each record lists, per bound argument, the chosen source (already filtered for necessity, explicit
    binding and source priority by `papergym.envs.service.provenance`): ``{"kind": "tool", "step": k}``
    gives k →⁺ j; ``{"kind": "user", "elicited_by": k}`` gives k →⁺ j, or one u_j^dir when k is None.
    Failed-use edges come from ``repeats``, ``fallback_from`` and sources whose step failed. e_i is a
    tool error or an invalid action. A step without a record contributes no edges.
    """

    def __call__(self, traj: Trajectory) -> InfluenceAnnotation:
        n = len(traj.steps)
        errors = [False] * n
        direct = [0] * n
        support: set[tuple[int, int]] = set()
        failed: set[tuple[int, int]] = set()
        for j, step in enumerate(traj.steps):
            record = _provenance(step.info)
            errors[j] = bool(record.get("error") or step.info.get(K.INVALID_ACTION))
            unelicited: set[int] = set()
            for source in record.get("sources", ()):
                k = source.get("step") if source.get("kind") == "tool" else source.get("elicited_by")
                if k is None:
                    unelicited.add(int(source.get("turn", -1)))
                elif 0 <= k < j:
                    (failed if errors[k] else support).add((k, j))
            direct[j] = len(unelicited)
            for key in ("repeats", "fallback_from"):
                k = record.get(key)
                if k is not None and 0 <= k < j:
                    failed.add((k, j))
        return InfluenceAnnotation(n, errors, sorted(support), sorted(failed), direct)


IAPO_ANNOTATOR_SYSTEM = (
    "You annotate the information flow of a customer-service agent's trajectory. You reply with JSON only."
)
IAPO_ANNOTATOR_TEMPLATE = (
    "Trajectory (agent actions are numbered; each observation follows the action that produced or "
    "elicited it):\n{trajectory}\n\n"
    "For each action j, in order, give an object "
    '{{"step": j, "error": <true if action j failed: a tool, schema, runtime or rule error, or an explicit '
    'user rejection>, "inputs": [earlier actions i whose tool result or elicited user reply supplies a '
    'specific value bound into action j], "failed": [earlier actions i whose error action j repeats, whose '
    'invalid output it uses, or that it must fall back from], "user_direct": <number of unelicited user '
    "turns whose values action j uses>}}. Accept an input only if action j would be unsupported without "
    "it (a shared topic is not enough), it is bound to a concrete argument, branch or recovery, and it "
    "is the most comprehensive source (the earliest on ties). Reply with a JSON list of these objects."
)
"""The prompt of `ModelGraphAnnotator` (papergym's wording of IAPO's annotation rules, §4.2)."""


def render_actions(traj: Trajectory) -> list[Message]:
    """The trajectory as numbered messages for an annotator model."""
    messages: list[Message] = []
    opening = traj.steps[0].observation if traj.steps else ""
    if isinstance(opening, str) and opening:
        messages.append({"role": "user", "content": f"(start) {opening[-2000:]}"})
    for j, step in enumerate(traj.steps):
        messages.append({"role": "assistant", "content": f"(action {j}) {step.action}"})
        results = step.info.get(K.TOOL_RESULTS)
        nxt = traj.steps[j + 1].observation if j + 1 < len(traj.steps) else None
        text = results[0] if results else nxt if isinstance(nxt, str) else ""
        if text:
            messages.append({"role": "user", "content": f"(after action {j}) {text}"})
    return messages


class ModelGraphAnnotator:
    """IAPO's annotator: a `ModelAnnotator` (any ChatModel) labels errors and edges per action.

    Out-of-range or non-causal indices in the model's reply are dropped; a reply that is not a JSON
    list raises `BackendError` (from `ModelAnnotator.annotate`).

    Args:
        annotator: a `ModelAnnotator`, or a ChatModel (wrapped with IAPO's prompt at temperature 0).
        seed: passed to the model.
    """

    def __init__(self, annotator: ModelAnnotator | ChatModel, *, seed: int | None = 0) -> None:
        if not isinstance(annotator, ModelAnnotator):
            annotator = ModelAnnotator(
                annotator,
                system_prompt=IAPO_ANNOTATOR_SYSTEM,
                template=IAPO_ANNOTATOR_TEMPLATE,
                max_tokens=2048,
                temperature=0.0,
            )
        self.annotator = annotator
        self.seed = seed

    def __call__(self, traj: Trajectory) -> InfluenceAnnotation:
        n = len(traj.steps)
        rows = self.annotator.annotate(render_actions(traj), seed=self.seed)
        errors, direct = [False] * n, [0] * n
        support: set[tuple[int, int]] = set()
        failed: set[tuple[int, int]] = set()
        for row in rows:
            j = _index(row.get("step"))
            if j is None or not 0 <= j < n:
                continue
            errors[j] = bool(row.get("error", False))
            direct[j] = max(_index(row.get("user_direct")) or 0, 0)
            for key, edges in (("inputs", support), ("failed", failed)):
                for i in row.get(key) or ():
                    i = _index(i)
                    if i is not None and 0 <= i < j:
                        edges.add((i, j))
        return InfluenceAnnotation(n, errors, sorted(support), sorted(failed), direct)


class NoisyAnnotator:
    """A robustness probe (papers/envs.md §4.4, inferred): another annotator's edges, each dropped with
    probability ``rate`` and as many spurious edges added at random (i < j, either sign), seeded per
    trajectory from ``seed`` and its task id, so a rerun gives the same noise.

    Args:
        base: the annotator to perturb (default `ProvenanceAnnotator`).
        rate: ρ, the drop probability and the expected share of added edges.
        seed: the noise seed.
    """

    def __init__(self, base: InfluenceAnnotator | None = None, *, rate: float = 0.1, seed: int = 0) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be in [0, 1], got {rate}")
        self.base = base if base is not None else ProvenanceAnnotator()
        self.rate = float(rate)
        self.seed = int(seed)

    def __call__(self, traj: Trajectory) -> InfluenceAnnotation:
        ann = self.base(traj)
        rng = random.Random(f"{self.seed}:{traj.task_id}:{traj.seed}:{ann.n}")
        edges = {"support": set(ann.support), "failed": set(ann.failed)}
        total = sum(len(e) for e in edges.values())
        for kind in edges:
            edges[kind] = {e for e in sorted(edges[kind]) if rng.random() >= self.rate}
        pairs = [(i, j) for j in range(ann.n) for i in range(j)]
        for _ in range(sum(rng.random() < self.rate for _ in range(total)) if pairs else 0):
            edges[rng.choice(("support", "failed"))].add(rng.choice(pairs))
        return InfluenceAnnotation(
            ann.n, ann.errors, sorted(edges["support"]), sorted(edges["failed"]), ann.direct_user
        )


def _index(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


class InfluenceAdvantage:
    """IAPO's credit as an `AdvantageHook`: action i of a trajectory with advantage Â gets Â·w_i.

    Args:
        annotator: an `InfluenceAnnotator` (default `ProvenanceAnnotator`), a `ModelAnnotator`, or a
            ChatModel (the last two wrapped in `ModelGraphAnnotator`).
        beta_pos: β₊ (IAPO: 0.05).
        clip: c (IAPO: 0.25).
        noise: ρ > 0 wraps the annotator in `NoisyAnnotator` (edges dropped and added at rate ρ; a
            robustness probe, papers/envs.md §4.4); 0 (default) uses it as is.
        noise_seed: the `NoisyAnnotator`'s seed.
        shuffle: a control of ours (not IAPO's): the weights permuted across the trajectory's actions
            (seeded from ``noise_seed`` and the trajectory, as `NoisyAnnotator`), then rescaled so
            Σ L_i·w_i = L still holds: the same spread of weights, assigned without regard to influence.

    >>> from papergym.core.trajectory import Step, Trajectory
    >>> prov = [{"sources": []}, {"sources": [{"kind": "tool", "step": 0}]}, {"sources": []}]
    >>> traj = Trajectory("t", 0, [Step("", "a", 0.0, {"provenance": p}) for p in prov])
    >>> [round(a, 3) for a in InfluenceAdvantage()(traj, 1.0, action_lengths=[10, 10, 10])]
    [1.151, 1.151, 0.698]
    """

    def __init__(
        self,
        *,
        annotator: InfluenceAnnotator | ModelAnnotator | ChatModel | None = None,
        beta_pos: float = BETA_POS,
        clip: float = CLIP,
        noise: float = 0.0,
        noise_seed: int = 0,
        shuffle: bool = False,
    ) -> None:
        if beta_pos < 0 or clip <= 0:
            raise ValueError(f"beta_pos must be >= 0 and clip > 0, got {beta_pos}, {clip}")
        if annotator is None:
            annotator = ProvenanceAnnotator()
        elif isinstance(annotator, ModelAnnotator) or hasattr(annotator, "chat"):
            annotator = ModelGraphAnnotator(annotator)  # type: ignore[arg-type]
        if noise:
            annotator = NoisyAnnotator(annotator, rate=noise, seed=noise_seed)
        self.annotator: InfluenceAnnotator = annotator
        self.beta_pos = float(beta_pos)
        self.clip = float(clip)
        self.shuffle, self.noise_seed = bool(shuffle), int(noise_seed)

    def weights(self, traj: Trajectory, advantage: float, action_lengths: Sequence[int]) -> list[float]:
        """w_i for each action (zeros when ``advantage`` is 0)."""
        weights = iapo_weights(
            self.annotator(traj), advantage, action_lengths, beta_pos=self.beta_pos, clip=self.clip
        )
        if not self.shuffle or advantage == 0:
            return weights
        random.Random(f"shuffle:{self.noise_seed}:{traj.task_id}:{traj.seed}:{len(weights)}").shuffle(weights)
        mass = sum(w * n for w, n in zip(weights, action_lengths, strict=True))
        return [w * sum(action_lengths) / mass for w in weights]

    def __call__(
        self,
        traj: Trajectory,
        advantage: float,
        *,
        action_lengths: Sequence[int],
        group: Sequence[Trajectory] = (),
        batch: Sequence[Sequence[Trajectory]] = (),
    ) -> list[float]:
        if len(action_lengths) != len(traj.steps):
            raise ValueError(f"action_lengths has {len(action_lengths)} entries for {len(traj.steps)} steps")
        return [advantage * w for w in self.weights(traj, advantage, action_lengths)]


def moved_share(weights: Sequence[float], *, threshold: float = 0.1) -> float:
    """The share of actions whose weight moves more than ``threshold`` from flat credit (|w − 1| > t).

    IAPO reports 86.5% on the positive branch (§4.3).
    """
    return sum(abs(w - 1.0) > threshold for w in weights) / len(weights) if weights else 0.0
