"""A single-turn env whose reward varies with any change in the text, for testing trainers on a random
tiny model (whose answers never parse, so a real env would give every member the same reward)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from papergym.core import info_keys as K
from papergym.core.tasks import Task, TaskGenerator
from papergym.core.text_env import TextEnv, Turn

TOY_ID = "papergym_test/ByteMean-v0"


class ByteMeanEnv(TextEnv):
    """Reward: the mean UTF-8 byte value of the action over 255; success: the mean exceeds 0.5."""

    canned_actions = ("a", "z")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._tasks = TaskGenerator("bytes", lambda rng, difficulty: rng.randint(0, 9), levels=1)
        self._score = 0.0

    def _new_task(self, options: Mapping[str, Any]) -> Task:
        if "task_id" in options:
            return self._tasks.from_id(options["task_id"])
        return self._tasks.sample(self.np_random, options.get("split", "train"), options.get("difficulty"))

    def _start(self, task: Task) -> Turn:
        self._score = 0.0
        return Turn(f"Write something about {task.payload}.")

    def _act(self, action: str) -> Turn:
        data = action.encode() or b"\0"
        self._score = sum(data) / (255.0 * len(data))
        return Turn("ok", {"score": self._score}, terminated=True, info={K.PARSED_ACTION: action})

    def success_check(self) -> bool:
        return self._score > 0.5

    def oracle_action(self) -> str:
        return "z"

    def _state(self) -> Any:
        return self._score

    def _load_state(self, state: Any) -> None:
        self._score = state


def register_toy() -> str:
    """Register the toy id once; returns it."""
    if TOY_ID not in gym.registry:
        gym.register(id=TOY_ID, entry_point=ByteMeanEnv, max_episode_steps=1)
    return TOY_ID
