"""Per-episode `gymnasium.Wrapper`s, one concern per module."""

from __future__ import annotations

from papergym.wrappers.four_cell import FourCellReward
from papergym.wrappers.process_reward import ProcessReward

WRAPPERS: dict[str, str] = {
    "process_reward": "papergym.wrappers.process_reward:ProcessReward",
    "four_cell": "papergym.wrappers.four_cell:FourCellReward",
}
"""Short names of every wrapper here, for trainers' ``--env-wrapper`` (any ``module:Class`` also works)."""

__all__ = ["WRAPPERS", "FourCellReward", "ProcessReward"]
