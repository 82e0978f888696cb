"""Per-episode `gymnasium.Wrapper`s, one concern per module."""

from __future__ import annotations

from papergym.wrappers.four_cell import FourCellReward

__all__ = ["FourCellReward"]
