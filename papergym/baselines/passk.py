"""The unbiased pass@k estimator (Chen et al. 2021, arXiv 2107.03374) and its evaluation over any env.

pass@k is the probability that at least one of k samples, drawn without replacement from n generated
samples of which c are correct, is correct: ``1 - C(n-c, k) / C(n, k)``. It is computed in the
numerically stable product form ``1 - prod_{i=n-c+1}^{n} (1 - k / i)`` (papers/training.md §0.2), never
with factorials.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from papergym.core.errors import BackendError
from papergym.core.trajectory import Policy, rollout_group


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one task from ``n`` samples with ``c`` correct.

    >>> round(pass_at_k(5, 2, 1), 9), round(pass_at_k(5, 2, 2), 9), pass_at_k(4, 0, 2), pass_at_k(4, 3, 2)
    (0.4, 0.7, 0.0, 1.0)

    Raises:
        ValueError: unless ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:  # every k-subset holds a correct sample
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


@dataclass
class PassAtK:
    """The outcome of a pass@k evaluation.

    Attributes:
        scores: mean pass@k over the evaluated tasks, per k.
        tasks: one record per task: ``{"task_id", "seed", "n", "correct"}``, or ``{"task_id", "seed",
            "error"}`` for a task whose group hit a backend fault (left out of ``scores``).
    """

    scores: dict[int, float] = field(default_factory=dict)
    tasks: list[dict[str, Any]] = field(default_factory=list)


def evaluate_pass_at_k(
    make_env: Callable[[], gym.Env],
    policy: Policy,
    *,
    tasks: int,
    n: int,
    ks: Sequence[int],
    seed: int = 0,
    options: dict[str, Any] | None = None,
) -> PassAtK:
    """Sample ``n`` episodes of each of ``tasks`` tasks and estimate pass@k for every k in ``ks``.

    Task ``j`` is the one ``reset(seed=seed + j)`` draws; its ``n`` members are isolated env instances
    with distinct policy seeds (`rollout_group`), so a sampling policy gives distinct attempts.

    Raises:
        ValueError: a k outside ``1..n`` or ``tasks < 1``.
    """
    if tasks < 1 or not ks or any(not 1 <= k <= n for k in ks):
        raise ValueError(f"need tasks >= 1 and every k in 1..n={n}; got tasks={tasks}, ks={list(ks)}")
    result = PassAtK()
    per_k: dict[int, list[float]] = {k: [] for k in ks}
    for j in range(tasks):
        try:
            group = rollout_group(make_env, policy, seed=seed + j, group_size=n, options=options)
        except BackendError as exc:
            result.tasks.append({"task_id": None, "seed": seed + j, "error": str(exc)})
            continue
        correct = sum(t.success for t in group)
        result.tasks.append({"task_id": group[0].task_id, "seed": seed + j, "n": n, "correct": correct})
        for k in ks:
            per_k[k].append(pass_at_k(n, correct, k))
    result.scores = {k: float(np.mean(v)) for k, v in per_k.items() if v}
    return result
