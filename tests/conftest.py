"""Shared fixtures: a small multi-turn TextEnv used to test the base class without a real env."""

from __future__ import annotations

import importlib
import random
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from papergym.core import info_keys as K
from papergym.core.tasks import Task, TaskGenerator
from papergym.core.text_env import TextEnv, Turn

# Hypothesis' default 200 ms per-example deadline measures the machine, not the code: on a loaded
# 2-core runner a correct example can take longer and fail as "DeadlineExceeded". Deadlines are off
# for every property test (the number of examples stays bounded); performance has its own benchmarks.
settings.register_profile("papergym", deadline=None)
settings.load_profile("papergym")


def _target(rng: random.Random, difficulty: int) -> int:
    return rng.randint(2 * difficulty, 5 * difficulty)


class CounterEnv(TextEnv):
    """Reach a target number by sending "+1" / "+2" actions; "done" submits."""

    canned_actions = ("+1", "+2", "done")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._tasks = TaskGenerator("counter", _target, levels=3)
        self.value = 0
        self.submitted = False

    def _new_task(self, options: Mapping[str, Any]) -> Task:
        if "task_id" in options:
            return self._tasks.from_id(options["task_id"])
        return self._tasks.sample(self.np_random, options.get("split", "train"), options.get("difficulty"))

    def _start(self, task: Task) -> Turn:
        self.value, self.submitted = 0, False
        return Turn(f"Reach {task.payload}. Send +1 or +2, then done.")

    def _act(self, action: str) -> Turn:
        action = action.strip()
        if action in ("+1", "+2"):
            self.value += int(action[1])
            return Turn(f"value={self.value}", {"progress": 0.0})
        if action == "done":
            self.submitted = True
            return Turn("submitted", {"outcome": float(self.success_check())}, terminated=True)
        return self._invalid("Send +1, +2 or done.", **{K.PARSED_ACTION: None})

    def success_check(self) -> bool:
        return self.submitted and self.value == self.task.payload

    def oracle_action(self) -> str:
        return "+1" if self.value < self.task.payload else "done"

    def _state(self) -> Any:
        return (self.value, self.submitted)

    def _load_state(self, state: Any) -> None:
        self.value, self.submitted = state


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread() -> Iterator[None]:
    """Run torch on one intra-op thread, restoring the setting after each module.

    On a busy 2-core machine torch's intra-op threads spin against each other: generating 512
    tokens with the tiny model took 13.7 s on 2 threads and 0.7 s on one.
    """
    try:
        import torch
    except ImportError:  # the core install has no torch: nothing to set
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.fixture
def counter_env() -> CounterEnv:
    return CounterEnv()


@pytest.fixture
def benchmark_module(monkeypatch: pytest.MonkeyPatch):
    """``benchmark_module("name")``: the script ``benchmarks/name.py`` imported as a module (its folder on
    sys.path for the test only, so its own ``readme_section`` import resolves)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    return importlib.import_module
