"""Judges of the self-play env: a Bradley–Terry scorer over text features, and any ChatModel.

Both implement `PairwiseJudge`: ``scores(task, answers)`` gives one scalar per answer, and
``P(a > b) = σ(s_a - s_b)`` is the Bradley–Terry preference. `BTJudge` is the default: a linear score
over hashed text features, trained on preference pairs with the BT loss by full-batch gradient descent
(numpy, seconds on a CPU). `ModelPreferenceJudge` asks a `ChatModel` which of two answers is better
and scores each answer by its win rate over the others.
"""

from __future__ import annotations

import logging
import re
import zlib
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from papergym.backends.protocols import ChatModel
from papergym.envs.selfplay.pairs import Pair, bradley_terry_loss
from papergym.envs.selfplay.writing import words

logger = logging.getLogger(__name__)

_DIRECTIVE = re.compile(r"^\s*([a-z_]+)\s*:\s*(\S+)\s*$", re.MULTILINE)
_VERDICT = re.compile(r"(?:response\s+)?\(?([AB])\)?[.!]?", re.IGNORECASE)
"""A judge reply that is one verdict: the letter alone, optionally as ``Response A``, ``(A)``, ``A.``."""


@runtime_checkable
class PairwiseJudge(Protocol):
    """Scores the answers to one task; higher is better, differences are BT log-odds."""

    def scores(self, task: str, answers: Sequence[str], *, seed: int | None = None) -> list[float]: ...


def text_features(task: str, answer: str, dim: int = 256) -> np.ndarray:
    """The judge's feature vector of (task, answer): generic text statistics, no task semantics.

    Hashed answer unigrams (first half of the buckets); for every ``key: arg`` line of the task,
    hashed indicators of how the answer relates to ``arg`` (contains it, ends with it, has at least
    ``arg`` words / bullet lines when it is a number), crossed with ``key``; and dense statistics (log
    length, distinct-word ratio, share of the answer's words found in the task, bullet lines, the final
    character). The judge must learn which of these matter.

    >>> text_features("include: tide", "The tide.").shape
    (256,)
    """
    phi = np.zeros(dim)
    ws = words(answer)
    half, dense = dim // 2, 8
    for w in ws:
        phi[_bucket(w, half)] += 1.0 / np.sqrt(len(ws))
    wset = set(ws)
    stripped = answer.rstrip()
    lines = answer.split("\n")
    bullets = sum(1 for line in lines if line.startswith("- "))
    for key, arg in _DIRECTIVE.findall(task):
        relations = [f"contains={arg.lower() in wset}", f"ends={stripped.endswith(arg)}"]
        if arg.isdigit():
            relations += [f"len_ge={len(ws) >= int(arg)}", f"bullets_ge={bullets >= int(arg)}"]
        for rel in relations:
            phi[half + _bucket(f"{key}|{rel}", dim - half - dense)] += 1.0
    task_words = set(words(task))
    stats = [
        np.log1p(len(ws)) / 5.0,
        len(wset) / len(ws) if ws else 0.0,
        sum(w in task_words for w in ws) / len(ws) if ws else 0.0,
        min(bullets, 5) / 5.0,
        float(stripped.endswith("?")),
        float(stripped.endswith("!")),
        float(stripped.endswith(".")),
        float(not ws),
    ]
    phi[dim - dense :] = stats
    return phi


def _bucket(key: str, n: int) -> int:
    return zlib.crc32(key.encode()) % n


class BTJudge:
    """A linear Bradley–Terry scorer ``s(x, y) = w · φ(x, y)`` over `text_features`.

    Args:
        dim: feature dimension.
        init_scale: standard deviation of the initial weights (inferred: a judge starts with its own
            arbitrary preferences, as a pretrained model does; 0 starts indifferent).
        l2: L2 penalty of `update`.
        lr: gradient-descent step size of `update`.
        epochs: full-batch steps per `update`.
        seed: seed of the initial weights.

    >>> judge = BTJudge(seed=0)
    >>> pairs = [Pair("include: tide", "The tide is high.", "It is high.", "subtask_amplification")] * 4
    >>> before = judge.pair_accuracy(pairs); loss = judge.update(pairs)
    >>> judge.pair_accuracy(pairs)
    1.0
    """

    def __init__(
        self,
        *,
        dim: int = 256,
        init_scale: float = 0.1,
        l2: float = 1e-3,
        lr: float = 0.5,
        epochs: int = 50,
        seed: int = 0,
    ) -> None:
        if dim < 16:
            raise ValueError(f"dim must be >= 16, got {dim}")
        if init_scale < 0 or l2 < 0 or lr <= 0 or epochs < 1:
            raise ValueError("init_scale and l2 must be >= 0, lr > 0 and epochs >= 1")
        self.dim, self.l2, self.lr, self.epochs = dim, float(l2), float(lr), int(epochs)
        self.weights = np.random.default_rng(seed).normal(0.0, init_scale, dim)

    def __repr__(self) -> str:
        return f"BTJudge(dim={self.dim})"

    def score(self, task: str, answer: str) -> float:
        """The score of one answer."""
        return float(self.weights @ text_features(task, answer, self.dim))

    def scores(self, task: str, answers: Sequence[str], *, seed: int | None = None) -> list[float]:
        """One score per answer (deterministic; ``seed`` is unused)."""
        return [self.score(task, a) for a in answers]

    def pair_scores(self, pairs: Sequence[Pair]) -> tuple[list[float], list[float]]:
        """The chosen and rejected scores of each pair."""
        return [self.score(p.task, p.chosen) for p in pairs], [self.score(p.task, p.rejected) for p in pairs]

    def pair_accuracy(self, pairs: Sequence[Pair]) -> float:
        """The share of pairs ordered correctly; 0.0 for none."""
        if not pairs:
            return 0.0
        chosen, rejected = self.pair_scores(pairs)
        return float(np.mean(np.asarray(chosen) > np.asarray(rejected)))

    def update(self, pairs: Sequence[Pair]) -> float:
        """Minimise the BT loss (+ L2) on ``pairs`` by ``epochs`` full-batch gradient steps.

        Returns:
            The BT loss on ``pairs`` after the update (0.0 for no pairs; nothing changes then).
        """
        if not pairs:
            return 0.0
        diff = np.stack(
            [
                text_features(p.task, p.chosen, self.dim) - text_features(p.task, p.rejected, self.dim)
                for p in pairs
            ]
        )  # (P, D)
        w = self.weights.copy()
        for _ in range(self.epochs):
            margin = diff @ w
            grad_margin = -1.0 / (1.0 + np.exp(margin))  # d/dm of log(1 + e^{-m})
            w -= self.lr * (diff.T @ grad_margin / len(pairs) + self.l2 * w)
        self.weights = w
        return bradley_terry_loss(diff @ w, np.zeros(len(pairs)))


class ModelPreferenceJudge:
    """A `PairwiseJudge` backed by any `ChatModel`, asked which of two answers is better.

    Each unordered pair of answers is compared once (twice, in both orders, with ``both_orders=True``,
    to cancel position bias); an answer's score is its share of wins. A reply naming neither answer
    counts as a tie (0.5) and is logged at WARNING; so does any reply that is not a single verdict (issue
    19: ``A or B``, ``Both A and B``, ``It's a tie`` used to count as a win for A, the first letter in it).

    Args:
        model: the chat model.
        both_orders: ask each pair in both orders.
        max_tokens: reply budget.
    """

    SYSTEM = "You compare two responses to a task. Reply with the single letter A or B."
    TEMPLATE = (
        "Task:\n{task}\n\nResponse A:\n{a}\n\nResponse B:\n{b}\n\n"
        "Which response fulfils the task better? Reply with A or B only."
    )

    def __init__(self, model: ChatModel, *, both_orders: bool = False, max_tokens: int = 4) -> None:
        self.model = model
        self.both_orders = both_orders
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"ModelPreferenceJudge({self.model!r})"

    def prefer(self, task: str, a: str, b: str, *, seed: int | None = None) -> float:
        """1.0 if the model prefers ``a``, 0.0 if ``b``, 0.5 if its reply is not one verdict."""
        messages = [
            {"role": "system", "content": self.SYSTEM},
            {"role": "user", "content": self.TEMPLATE.format(task=task, a=a, b=b)},
        ]
        reply = self.model.chat(messages, seed=seed, max_tokens=self.max_tokens, temperature=0.0)
        match = _VERDICT.fullmatch(reply.strip().replace("*", ""))
        if match is None:
            logger.warning("%r: reply %r is not one A/B verdict; counting a tie", self, reply[:100])
            return 0.5
        return 1.0 if match.group(1).upper() == "A" else 0.0

    def scores(self, task: str, answers: Sequence[str], *, seed: int | None = None) -> list[float]:
        """Each answer's share of pairwise wins (0.5 for a single answer)."""
        n = len(answers)
        if n < 2:
            return [0.5] * n
        wins = np.zeros(n)
        for i in range(n):
            for j in range(i + 1, n):
                p = self.prefer(task, answers[i], answers[j], seed=seed)
                if self.both_orders:
                    p = 0.5 * (p + 1.0 - self.prefer(task, answers[j], answers[i], seed=seed))
                wins[i] += p
                wins[j] += 1.0 - p
        return [float(x) for x in wins / (n - 1)]
