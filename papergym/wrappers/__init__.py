"""Per-episode `gymnasium.Wrapper`s, one concern per module."""

from __future__ import annotations

from papergym.wrappers.four_cell import FourCellReward
from papergym.wrappers.process_reward import ProcessReward

__all__ = ["FourCellReward", "ProcessReward"]
