"""WM-R1's group reward (papers/envs.md §1.2, ``verl/utils/reward_score/wm_r1.py``):
``R = α·1[success] + β·R_L + γ·R_WM`` plus a format term, with budgets that tighten as the group succeeds.

For a group with success fraction ``p``:

- ``L_ref``: the mean length of its successful trajectories (no success: the longest length);
  ``L_budget = p·L_ref + (1 − p)·max_steps``; ``λ = (len − L_budget) / L_budget``;
  ``R_L = max(−0.5λ + 0.5, 0.1)`` on success, ``min(0.9λ − 0.1, −0.1)`` on failure.
- ``R_WM``: the same with world-model calls: ``N_ref`` the successful members' mean ``n_wm`` (no success:
  the most), ``N_budget = p·N_ref + (1 − p)·n_wm_max``, ``μ = (n_wm − N_budget) / N_budget``.
- format: ``−0.5`` when the trajectory has an invalid action (WM-R1's parse-failure penalty), weighted like
  the baseline's ``eval + 0.5·format_reward``: its term is ``format_weight · (−0.5)``.

``max_steps`` is the task's real-step budget, read from the trajectories' ``info["step_budget"]``
(MobileGUI-v0 and WorldModelGUI-v0 put it in every step's info; WM-R1's fixed ``max_steps`` of 15 or 20
is the same cap for its tasks), unless a fixed cap is given.

Length counts committed (real) steps only, not imagined ``call_wm`` turns (``info["imagined"]``). A budget
of 0 (every member succeeded with no world-model call) is taken as 1 so that μ stays finite (inferred).
Success is the env's judged ``success``; ``info["true_success"]`` is never read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from papergym.core import info_keys as K
from papergym.core.trajectory import Trajectory

ALPHA, BETA, GAMMA = 1.0, 0.5, 0.1
"""WM-R1's weights (``run_main.slurm``; the config default has γ = 0)."""
FORMAT_PENALTY = -0.5
"""WM-R1's ``format_reward`` for an unparseable action."""


def budget_term(value: float, reference: float, cap: float, p: float, success: bool) -> float:
    """WM-R1's budget-relative term (``R_L`` or ``R_WM``) of one member."""
    budget = p * reference + (1.0 - p) * cap
    budget = budget if budget > 0 else 1.0
    lam = (value - budget) / budget
    return max(-0.5 * lam + 0.5, 0.1) if success else min(0.9 * lam - 0.1, -0.1)


@dataclass
class WMR1Reward:
    """A `GroupReward`: WM-R1's multi-dimensional reward for each member of a group of the same task.

    Args:
        max_steps: a fixed real-step cap (WM-R1: 15 by default, 20 in ``run_main.slurm``); None (default):
            each group's own task budget, ``info["step_budget"]`` of its trajectories (a group is one task).
        n_wm_max: the world-model call cap (5).
        alpha, beta, gamma: the weights of success, length and world-model use (1.0, 0.5, 0.1).
        format_weight: the weight of the format penalty (0.5, WM-R1's baseline).
    """

    max_steps: int | None = None
    n_wm_max: int = 5
    alpha: float = ALPHA
    beta: float = BETA
    gamma: float = GAMMA
    format_weight: float = 0.5

    def __post_init__(self) -> None:
        if (self.max_steps is not None and self.max_steps < 1) or self.n_wm_max < 0:
            raise ValueError("max_steps must be None or >= 1, and n_wm_max >= 0")

    def step_cap(self, group: Sequence[Trajectory]) -> int:
        """The real-step cap of a group: ``max_steps``, or the task budget its trajectories carry.

        Raises:
            ValueError: no fixed cap and no ``info["step_budget"]`` in the group, or several budgets.
        """
        if self.max_steps is not None:
            return self.max_steps
        budgets = {int(s.info[K.STEP_BUDGET]) for t in group for s in t.steps if K.STEP_BUDGET in s.info}
        if len(budgets) != 1:
            raise ValueError(
                f"the group carries step budgets {sorted(budgets)} (info['step_budget']); a group is one "
                "task of an env that reports its budget, or pass WMR1Reward(max_steps=N)"
            )
        return budgets.pop()

    @staticmethod
    def length(traj: Trajectory) -> int:
        """Committed steps (imagined turns excluded)."""
        return sum(1 for s in traj.steps if not s.info.get(K.IMAGINED, False))

    @staticmethod
    def n_wm(traj: Trajectory) -> int:
        """World-model calls of the trajectory (the last step's ``info["n_wm"]``)."""
        return int(traj.steps[-1].info.get(K.N_WM, 0)) if traj.steps else 0

    def __call__(
        self, group: Sequence[Trajectory], *, batch: Sequence[Sequence[Trajectory]] = ()
    ) -> list[float]:
        if not group:
            return []
        lengths = [self.length(t) for t in group]
        calls = [self.n_wm(t) for t in group]
        wins = [bool(t.success) for t in group]
        p = sum(wins) / len(group)
        won = [i for i, w in enumerate(wins) if w]
        l_ref = sum(lengths[i] for i in won) / len(won) if won else max(lengths)
        n_ref = sum(calls[i] for i in won) / len(won) if won else max(calls)
        cap = self.step_cap(group)
        rewards = []
        for t, n, c, w in zip(group, lengths, calls, wins, strict=True):
            r_l = budget_term(n, l_ref, cap, p, w)
            r_wm = budget_term(c, n_ref, self.n_wm_max, p, w)
            bad = any(s.info.get(K.INVALID_ACTION, False) for s in t.steps)
            fmt = self.format_weight * FORMAT_PENALTY if bad else 0.0
            rewards.append(self.alpha * float(w) + self.beta * r_l + self.gamma * r_wm + fmt)
        return rewards
