"""The tasks a trainer's dataset holds: one reset per row, replayable by ``task_id``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium


def first_observations(
    env_id: str,
    n: int,
    *,
    seed: int = 0,
    split: str = "train",
    env_kwargs: Mapping[str, Any] | None = None,
) -> list[tuple[int, Any, dict[str, Any]]]:
    """``(seed, observation, info)`` of the env's reset with seeds ``seed .. seed + n - 1`` on ``split``."""
    import papergym  # noqa: F401  (registers the ids)

    env = gymnasium.make(env_id, **dict(env_kwargs or {}))
    try:
        return [(seed + i, *env.reset(seed=seed + i, options={"split": split})) for i in range(n)]
    finally:
        env.close()
