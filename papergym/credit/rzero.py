"""R-Zero's challenger reward: uncertainty minus a BLEU-cluster repetition penalty within the batch.

papers/training.md §1.3 (R-Zero, arXiv 2508.05004):

- uncertainty ``r_unc = 1 - 2|p̂ - 0.5|``, maximal when the solver agrees with itself (or here, with the
  challenger's reference) half the time;
- repetition penalty: distances ``d_ij = 1 - BLEU(x_i, x_j)`` between the batch's questions,
  average-linkage agglomerative clustering with distance threshold 0.5, and ``r_rep(x_i) = λ |C_k| / B``
  for the cluster ``C_k`` holding ``x_i`` (R-Zero's fork: ``AgglomerativeClustering(distance_threshold=0.5,
  linkage="average")``, λ = 1);
- an unparseable question scores -1 (the fork's value).

Inferred here (and exposed as arguments): BLEU is sacrebleu's sentence BLEU with effective order (R-Zero
used nltk's with smoothing method 1), made symmetric by averaging both directions; unparseable questions
take no part in the clustering but count in the batch size ``B``; the final clamp ``max(0, ·)`` that
the paper states and the fork omits is off by default.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from papergym.core import info_keys as K
from papergym.core.errors import require
from papergym.core.trajectory import Trajectory
from papergym.envs.selfplay.uncertainty import uncertainty_reward

UNPARSEABLE_REWARD = -1.0
"""The reward of an unparseable question (R-Zero fork, caller_penalty.py)."""


def bleu_distances(texts: Sequence[str]) -> np.ndarray:
    """``(n, n)`` symmetric distances ``1 - BLEU/100`` (sacrebleu sentence BLEU, both directions averaged)."""
    sacrebleu = require("sacrebleu", "selfplay")
    bleu = sacrebleu.metrics.BLEU(effective_order=True)
    n = len(texts)
    sim = np.eye(n)
    for i in range(n):
        for j in range(n):
            if i != j:
                sim[i, j] = bleu.sentence_score(texts[i], [texts[j]]).score / 100.0
    sim = 0.5 * (sim + sim.T)
    return 1.0 - sim


def average_linkage_clusters(distances: np.ndarray, threshold: float) -> list[int]:
    """Cluster labels from average-linkage agglomerative clustering: clusters merge while the smallest
    average inter-cluster distance is below ``threshold`` (scikit-learn's ``distance_threshold``).

    >>> d = np.array([[0, .1, .9], [.1, 0, .8], [.9, .8, 0]])
    >>> average_linkage_clusters(d, 0.5)
    [0, 0, 1]
    """
    n = len(distances)
    clusters: list[list[int]] = [[i] for i in range(n)]
    while len(clusters) > 1:
        best, pair = np.inf, (0, 0)
        for a in range(len(clusters)):
            for b in range(a + 1, len(clusters)):
                d = float(distances[np.ix_(clusters[a], clusters[b])].mean())
                if d < best:
                    best, pair = d, (a, b)
        if best >= threshold:
            break
        a, b = pair
        clusters[a] = clusters[a] + clusters[b]
        del clusters[b]
    labels = [0] * n
    for k, members in enumerate(sorted(clusters, key=min)):
        for i in members:
            labels[i] = k
    return labels


def repetition_penalties(
    questions: Sequence[str], *, batch_size: int | None = None, threshold: float = 0.5, weight: float = 1.0
) -> list[float]:
    """``weight · |C_k| / B`` for each question's BLEU cluster ``C_k`` (B = ``batch_size`` or the count)."""
    if not questions:
        return []
    labels = average_linkage_clusters(bleu_distances(questions), threshold)
    b = batch_size if batch_size is not None else len(questions)
    sizes = np.bincount(labels)
    return [weight * float(sizes[k]) / b for k in labels]


def rzero_rewards(
    questions: Sequence[str | None],
    agreements: Sequence[float],
    *,
    threshold: float = 0.5,
    weight: float = 1.0,
    clip_at_zero: bool = False,
) -> list[float]:
    """Each question's reward: ``r_unc(p̂) - r_rep``, or -1 for an unparseable question (None).

    Args:
        questions: the batch's questions; None marks an unparseable one.
        agreements: p̂ per question (ignored for None).
        threshold: the clustering's distance threshold (R-Zero 0.5).
        weight: λ of the penalty (R-Zero 1).
        clip_at_zero: the paper's ``max(0, ·)`` (inferred off; the fork has no clamp).
    """
    if len(questions) != len(agreements):
        raise ValueError("one agreement per question")
    parsed = [i for i, q in enumerate(questions) if q is not None]
    penalties = repetition_penalties(
        [questions[i] for i in parsed],  # type: ignore[misc]
        batch_size=len(questions),
        threshold=threshold,
        weight=weight,
    )
    rewards = [UNPARSEABLE_REWARD] * len(questions)
    for i, pen in zip(parsed, penalties, strict=True):
        r = uncertainty_reward(agreements[i]) - pen
        rewards[i] = max(0.0, r) if clip_at_zero else r
    return rewards


class RZeroReward:
    """A `GroupReward` over a batch of challenger trajectories of ``papergym/SelfPlay-v0``.

    Each trajectory's final info must hold ``parsed_action`` (``{"task", "reference"}`` or None) and
    ``solver_agreement`` (p̂). The group is the batch the repetition penalty is computed within.

    Args:
        threshold, weight, clip_at_zero: see `rzero_rewards`.
    """

    def __init__(self, *, threshold: float = 0.5, weight: float = 1.0, clip_at_zero: bool = False) -> None:
        if not 0.0 < threshold <= 1.0 or weight < 0:
            raise ValueError("threshold must be in (0, 1] and weight >= 0")
        self.threshold, self.weight, self.clip_at_zero = threshold, weight, clip_at_zero

    def __call__(
        self, group: Sequence[Trajectory], *, batch: Sequence[Sequence[Trajectory]] = ()
    ) -> list[float]:
        questions: list[str | None] = []
        agreements: list[float] = []
        for traj in group:
            info = traj.final_info
            parsed = info.get(K.PARSED_ACTION)
            questions.append(parsed["task"] if isinstance(parsed, dict) else None)
            agreements.append(float(info.get(K.SOLVER_AGREEMENT, 0.0)))
        return rzero_rewards(
            questions,
            agreements,
            threshold=self.threshold,
            weight=self.weight,
            clip_at_zero=self.clip_at_zero,
        )
