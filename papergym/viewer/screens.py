"""Grabs the screens a viewer shows during an evaluation: the real screen each observation shows and, on
the world-model env, the imagined one beside it."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from papergym.core.trajectory import Trajectory
from papergym.viewer.recording import AssetWriter, step_records

logger = logging.getLogger(__name__)


def has_screens(env: gym.Env) -> bool:
    """Whether ``env`` draws screens (``rgb_array`` in its render modes) and PIL is installed."""
    modes = env.unwrapped.metadata.get("render_modes", [])
    return "rgb_array" in modes and importlib.util.find_spec("PIL") is not None


def _draw(screen: Any) -> np.ndarray:
    from papergym.envs.mobile_gui.render_image import render_image

    return np.asarray(render_image(screen))


class EpisodeRecorder:
    """Collects per-step screens while a policy plays and turns finished episodes into step records.

    Call `before_action` each time the policy is about to act (the screen its observation shows), and
    `finish` once the episode is over.

    Args:
        jsonl: the run's JSONL (screens and audio go to ``RUN.assets/`` beside it).
        screens: grab screens where the env draws them.
    """

    def __init__(self, jsonl: Path, *, screens: bool = True) -> None:
        self.assets = AssetWriter(jsonl)
        self.want_screens = screens
        self.steps: list[list[dict[str, Any]]] = []
        self._env: gym.Env | None = None
        self._screens: list[np.ndarray] = []
        self._imagined: list[np.ndarray | None] = []

    def bind(self, env: gym.Env) -> None:
        """Record from ``env``; screens only if it draws them."""
        self._env = env if self.want_screens and has_screens(env) else None

    def before_action(self) -> None:
        """Grab the real (and imagined) screen of the current observation."""
        if self._env is None:
            return
        u = self._env.unwrapped
        phone = getattr(u, "_phone", None)
        world_model = hasattr(type(u), "wm")
        if phone is None and not world_model:
            return
        if phone is None:  # a world-model env in training mode: no real screen, only the agent's
            self._screens.append(_draw(u.current_screen()))
            self._imagined.append(None)
            return
        self._screens.append(_draw(phone.screen))
        # a world-model env (it has ``wm``) shows its prediction: drawn beside the real screen
        imagined = u.current_screen() if world_model else None
        self._imagined.append(None if imagined is None else _draw(imagined))

    def finish(self, traj: Trajectory) -> list[dict[str, Any]]:
        """The step records of the episode just played (its index is the number finished so far)."""
        records = step_records(
            traj,
            episode=len(self.steps),
            assets=self.assets,
            screens=self._screens or None,
            imagined=self._imagined or None,
        )
        self.steps.append(records)
        self._screens, self._imagined = [], []
        return records
