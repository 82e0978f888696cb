"""`FourCellReward`: AWM's four-cell reward over (answer correct?, memory-only answerable?)."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym

from papergym.core import info_keys as K

CELLS: tuple[str, ...] = (
    "correct_answerable",
    "correct_unanswerable",
    "incorrect_answerable",
    "incorrect_unanswerable",
)
"""The four cells, the values of ``info["cell"]``."""


class FourCellReward(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Replace the ``outcome`` term with the value of the episode's four-cell outcome.

    On the step that ends an episode whose ``info["checks"]`` holds both ``correct`` and
    ``memory_answerable`` (`papergym/MemoryQA-v0`), the ``outcome`` reward component becomes the
    value of the cell (correct?, answerable?), ``info["cell"]`` names the cell, and the reward is
    recomputed as the sum of the components (so it stays in [0, 1] on that step, whose ``format``
    term is 0). Other steps, and an episode whose answerability was not evaluated (a reader fault:
    ``info["unevaluated"]``), pass through unchanged.

    The defaults are inferred from the paper summary (papers/training.md §6.4: the exact values are
    unverified); keep ``correct_answerable`` the largest and ``incorrect_unanswerable`` the
    smallest. The order of ``correct_unanswerable`` and ``incorrect_answerable`` is the key ablation.

    Args:
        env: the env to wrap.
        correct_answerable: the value of a right answer from a memory that supports it (1.0, inferred).
        correct_unanswerable: a right answer the memory cannot support, e.g. a guess (0.5, inferred).
        incorrect_answerable: a wrong answer from a memory that supports the right one (0.2, inferred).
        incorrect_unanswerable: a wrong answer and an unsupportive memory (0.0, inferred).

    >>> import gymnasium as gym, papergym
    >>> env = FourCellReward(gym.make("papergym/MemoryQA-v0", pages=(3, 4)), correct_unanswerable=0.3)
    >>> _ = env.reset(seed=1)
    >>> done = False
    >>> while not done:
    ...     _, reward, done, _, info = env.step(env.unwrapped.oracle_action())
    >>> reward, info["cell"]
    (1.0, 'correct_answerable')
    """

    def __init__(
        self,
        env: gym.Env,
        *,
        correct_answerable: float = 1.0,
        correct_unanswerable: float = 0.5,
        incorrect_answerable: float = 0.2,
        incorrect_unanswerable: float = 0.0,
    ) -> None:
        values = {
            "correct_answerable": correct_answerable,
            "correct_unanswerable": correct_unanswerable,
            "incorrect_answerable": incorrect_answerable,
            "incorrect_unanswerable": incorrect_unanswerable,
        }
        bad = {name: v for name, v in values.items() if not 0.0 <= float(v) <= 1.0}
        if bad:
            raise ValueError(f"every cell value must lie in [0, 1] (the reward stays in [0, 1]); got {bad}")
        gym.utils.RecordConstructorArgs.__init__(self, **values)  # type: ignore[arg-type]  # the cells' names
        gym.Wrapper.__init__(self, env)
        self.values: dict[str, float] = {name: float(v) for name, v in values.items()}

    @staticmethod
    def cell(correct: bool, answerable: bool) -> str:
        """The name of the cell (correct?, answerable?)."""
        return f"{'correct' if correct else 'incorrect'}_{'answerable' if answerable else 'unanswerable'}"

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        checks = info.get(K.CHECKS) or {}
        if (terminated or truncated) and "correct" in checks and "memory_answerable" in checks:
            cell = self.cell(bool(checks["correct"]), bool(checks["memory_answerable"]))
            components = {**info.get(K.REWARD_COMPONENTS, {}), "outcome": self.values[cell]}
            info = {**info, K.REWARD_COMPONENTS: components, K.CELL: cell}
            reward = float(sum(components.values()))
        return obs, reward, terminated, truncated, info
