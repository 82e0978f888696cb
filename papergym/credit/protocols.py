"""The two protocols of credit assignment (DESIGN.md, "Group rollouts")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from papergym.core.trajectory import Trajectory


@runtime_checkable
class GroupReward(Protocol):
    """Each member's training reward, computed from the whole group (and optionally the batch).

    It replaces the env's return as the trainer's reward. It must not read the info keys in
    `papergym.core.info_keys.LABEL_KEYS` (gold labels are for evaluation only).
    """

    def __call__(
        self, group: Sequence[Trajectory], *, batch: Sequence[Sequence[Trajectory]] = ()
    ) -> list[float]: ...


@runtime_checkable
class AdvantageHook(Protocol):
    """One advantage per action (step) from the trajectory's advantage and the actions' token lengths."""

    def __call__(
        self,
        traj: Trajectory,
        advantage: float,
        *,
        action_lengths: Sequence[int],
        group: Sequence[Trajectory] = (),
        batch: Sequence[Sequence[Trajectory]] = (),
    ) -> list[float]: ...
