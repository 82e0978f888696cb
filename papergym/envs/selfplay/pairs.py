"""Structural preference pairs (J-Zero's judge data) and the Bradley–Terry loss, as plain functions.

J-Zero was not found; its two pair constructions are inferred (papers/training.md §1.6) and each
hypothesis is an argument:

- **role asymmetry** (hypothesis (a)): the challenger's privileged reference is preferred over each
  of the solver's blind answers. Answers identical to the reference are skipped (no preference).
- **subtask amplification**: ``mode="drop"`` (hypothesis (a)): an answer is preferred over a copy with
  one satisfied subtask broken; ``mode="amplify"`` (hypothesis (b)): a copy with one unmet subtask
  fixed is preferred over the answer. A pair is kept only when the rejected side meets a strict
  subset of the subtasks the chosen side meets, so the label holds by construction.

Labels never come from a judge's scores, except in the ablation `self_scored`, which relabels the
same pairs by the judge's own scores (the self-reinforcing baseline).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from papergym.envs.selfplay.writing import Constraint

PairKind = Literal["role_asymmetry", "subtask_amplification"]
AmplificationMode = Literal["drop", "amplify"]


@dataclass(frozen=True)
class Pair:
    """One preference pair: ``chosen`` is labelled better than ``rejected`` for ``task``.

    Attributes:
        task: the task text both answers respond to.
        chosen: the preferred answer.
        rejected: the other answer.
        kind: how the pair was built.
        detail: what was done (``"reference>answer[2]"``, ``"drop include:tide"``).
    """

    task: str
    chosen: str
    rejected: str
    kind: PairKind
    detail: str = ""

    def swapped(self) -> Pair:
        """The same pair with the label reversed."""
        return Pair(self.task, self.rejected, self.chosen, self.kind, self.detail + " (swapped)")

    def as_dict(self) -> dict[str, str]:
        """Plain data for ``info``."""
        return {
            "task": self.task,
            "chosen": self.chosen,
            "rejected": self.rejected,
            "kind": self.kind,
            "detail": self.detail,
        }


def role_asymmetry_pairs(task: str, reference: str, answers: Sequence[str]) -> list[Pair]:
    """Reference over each blind answer (hypothesis (a) of §1.6, inferred).

    >>> [p.detail for p in role_asymmetry_pairs("t", "ref", ["a", "ref", "b"])]
    ['reference>answer[0]', 'reference>answer[2]']
    """
    return [
        Pair(task, reference, answer, "role_asymmetry", f"reference>answer[{i}]")
        for i, answer in enumerate(answers)
        if answer.strip() != reference.strip()
    ]


def satisfied(text: str, constraints: Sequence[Constraint]) -> frozenset[Constraint]:
    """The constraints ``text`` meets."""
    return frozenset(c for c in constraints if c.check(text))


def subtask_amplification_pairs(
    task: str,
    answers: Sequence[str],
    constraints: Sequence[Constraint],
    *,
    mode: AmplificationMode = "drop",
    max_pairs: int | None = None,
) -> list[Pair]:
    """Pairs whose chosen side meets a strict superset of the rejected side's subtasks.

    Args:
        task: the task text.
        answers: the texts to build from (the reference and the solver's answers).
        constraints: the task's subtasks.
        mode: ``"drop"`` breaks one met subtask of an answer (the answer is chosen); ``"amplify"``
            fixes one unmet subtask (the fixed copy is chosen). Inferred, §1.6 (a) / (b).
        max_pairs: keep at most this many (in construction order); None keeps all.

    Returns:
        The pairs, each with ``satisfied(rejected) < satisfied(chosen)`` (strict subset).
    """
    if mode not in ("drop", "amplify"):
        raise ValueError(f"mode must be 'drop' or 'amplify', got {mode!r}")
    pairs: list[Pair] = []
    for i, answer in enumerate(answers):
        base = satisfied(answer, constraints)
        for c in constraints:
            if mode == "drop" and c in base:
                chosen, rejected = answer, c.broken(answer)
            elif mode == "amplify" and c not in base:
                chosen, rejected = c.fixed(answer), answer
            else:
                continue
            if satisfied(rejected, constraints) < satisfied(chosen, constraints):
                detail = f"{mode} {c.kind}:{c.arg} of text[{i}]"
                pairs.append(Pair(task, chosen, rejected, "subtask_amplification", detail))
            if max_pairs is not None and len(pairs) >= max_pairs:
                return pairs
    return pairs


def self_scored(
    pairs: Sequence[Pair], chosen_scores: Sequence[float], rejected_scores: Sequence[float]
) -> list[Pair]:
    """The ablation ``judge_labels="self_scored"``: each pair relabelled by the judge's own scores
    (the higher-scored side becomes ``chosen``; a tie keeps the construction's order)."""
    if not len(pairs) == len(chosen_scores) == len(rejected_scores):
        raise ValueError("one chosen and one rejected score per pair")
    return [
        p if c >= r else p.swapped() for p, c, r in zip(pairs, chosen_scores, rejected_scores, strict=True)
    ]


def bradley_terry_loss(chosen_scores: Sequence[float], rejected_scores: Sequence[float]) -> float:
    """Mean ``-log σ(s(y+) - s(y-))`` over pairs (§1.6); 0.0 for no pairs.

    >>> round(bradley_terry_loss([0.0], [0.0]), 4), round(bradley_terry_loss([2.0, 0.0], [0.0, 2.0]), 4)
    (0.6931, 1.1269)
    """
    if len(chosen_scores) != len(rejected_scores):
        raise ValueError("one rejected score per chosen score")
    if not len(chosen_scores):
        return 0.0
    margin = np.asarray(chosen_scores, dtype=float) - np.asarray(rejected_scores, dtype=float)
    return float(np.mean(np.logaddexp(0.0, -margin)))


def bt_win_rates(scores: Sequence[float]) -> list[float]:
    """Each item's mean Bradley–Terry win probability against the others, ``1/(n-1) Σ_j σ(s_i - s_j)``
    (the solver reward of §1.6); 0.5 each for a single item.

    >>> [round(x, 3) for x in bt_win_rates([0.0, 0.0, 1.0986122886681098])]
    [0.375, 0.375, 0.75]
    """
    s = np.asarray(scores, dtype=float)
    n = len(s)
    if n < 2:
        return [0.5] * n
    prob = 1.0 / (1.0 + np.exp(-(s[:, None] - s[None, :])))
    np.fill_diagonal(prob, 0.0)
    return [float(x) for x in prob.sum(axis=1) / (n - 1)]


def pair_accuracy(chosen_scores: Sequence[float], rejected_scores: Sequence[float]) -> float:
    """The share of pairs whose chosen side scores strictly higher; 0.0 for no pairs."""
    if not len(chosen_scores):
        return 0.0
    return float(np.mean(np.asarray(chosen_scores) > np.asarray(rejected_scores)))


__all__ = [
    "Pair",
    "bradley_terry_loss",
    "bt_win_rates",
    "pair_accuracy",
    "role_asymmetry_pairs",
    "satisfied",
    "self_scored",
    "subtask_amplification_pairs",
]
