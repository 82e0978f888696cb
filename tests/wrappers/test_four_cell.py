"""`FourCellReward`: configurable cells, reward in [0, 1], replaces the outcome term."""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium as gym
import pytest

import papergym  # noqa: F401  (registers the ids)
from papergym.core import info_keys as K
from papergym.envs.memory_qa.documents import prior_guess
from papergym.wrappers import FourCellReward
from papergym.wrappers.four_cell import CELLS


def _finish(
    env: gym.Env, seed: int, *, keep: bool, answer: str | None = None
) -> tuple[float, dict[str, Any]]:
    env.reset(seed=seed)
    inner = env.unwrapped
    for _ in inner.chunks:
        _, reward, *_ = env.step(inner.oracle_action() if keep else "<memory></memory>")
        assert reward == 0.0
    final = answer if answer is not None else inner.oracle_action()
    _, reward, terminated, _, info = env.step(final)
    assert terminated
    return reward, info


VALUES = {
    "correct_answerable": 0.9,
    "correct_unanswerable": 0.6,
    "incorrect_answerable": 0.3,
    "incorrect_unanswerable": 0.1,
}


def test_each_cell_gets_its_configured_value_and_replaces_outcome() -> None:
    env = FourCellReward(gym.make("papergym/MemoryQA-v0", pages=(3, 5)), **VALUES)
    seen = {}
    for seed in range(60):
        guessable = None
        env.reset(seed=seed)
        guessable = env.unwrapped.question.guessable
        cases = [
            ("correct_answerable", True, None),
            ("incorrect_answerable", True, "<answer>wrong</answer>"),
            ("incorrect_unanswerable", False, "<answer>wrong</answer>"),
        ]
        if guessable:
            cases.append(
                ("correct_unanswerable", False, f"<answer>{prior_guess(env.unwrapped.question)}</answer>")
            )
        for cell, keep, answer in cases:
            reward, info = _finish(env, seed, keep=keep, answer=answer)
            assert info[K.CELL] == cell
            assert info[K.REWARD_COMPONENTS]["outcome"] == VALUES[cell]
            assert reward == pytest.approx(sum(info[K.REWARD_COMPONENTS].values())) == VALUES[cell]
            assert 0.0 <= reward <= 1.0
            seen[cell] = reward
    assert set(seen) == set(CELLS)


def test_default_values() -> None:
    env = FourCellReward(gym.make("papergym/MemoryQA-v0", pages=(3, 4)))
    assert env.values == {
        "correct_answerable": 1.0,
        "correct_unanswerable": 0.5,
        "incorrect_answerable": 0.2,
        "incorrect_unanswerable": 0.0,
    }
    reward, info = _finish(env, 0, keep=False, answer="<answer>wrong</answer>")
    assert reward == 0.0 and info[K.CELL] == "incorrect_unanswerable"


@pytest.mark.parametrize("bad", [{"correct_answerable": 1.5}, {"incorrect_unanswerable": -0.1}])
def test_values_outside_unit_interval_raise(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        FourCellReward(gym.make("papergym/MemoryQA-v0"), **bad)


def test_non_final_steps_pass_through_and_invalid_keeps_penalty() -> None:
    env = FourCellReward(gym.make("papergym/MemoryQA-v0", pages=(3, 4)))
    env.reset(seed=0)
    _, reward, _, _, info = env.step("no tags")
    assert reward == pytest.approx(-0.1) and K.CELL not in info


def test_records_constructor_args_and_pickles() -> None:
    env = FourCellReward(gym.make("papergym/MemoryQA-v0", pages=(3, 4)), correct_unanswerable=0.4)
    assert env.spec is not None
    assert env._saved_kwargs["correct_unanswerable"] == 0.4
    env.reset(seed=0)
    clone = pickle.loads(pickle.dumps(env))
    assert repr(clone.step("<memory></memory>")) == repr(env.step("<memory></memory>"))
