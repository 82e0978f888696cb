from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from papergym.core.spaces import Chat, FreeText, Waveform


def test_free_text_contains_any_unicode_up_to_max_length() -> None:
    space = FreeText(10)
    assert "héllo ✓ 1" in space
    assert "" in space
    assert "x" * 11 not in space
    assert b"bytes" not in space
    assert None not in space


def test_free_text_sample_draws_from_canned_samples_reproducibly() -> None:
    a, b = FreeText(20, samples=("a", "b", "c"), seed=3), FreeText(20, samples=("a", "b", "c"), seed=3)
    draws = [a.sample() for _ in range(30)]
    assert draws == [b.sample() for _ in range(30)]
    assert set(draws) == {"a", "b", "c"}


@pytest.mark.parametrize("bad", [(), ("too long",), (1,)])
def test_free_text_rejects_bad_samples(bad: tuple) -> None:
    with pytest.raises(ValueError):
        FreeText(3, samples=bad)


def test_chat_contains_checks_roles_types_and_lengths() -> None:
    space = Chat(3, 5)
    assert ({"role": "system", "content": "a"}, {"role": "tool", "content": "b"}) in space
    assert [{"role": "user", "content": "a"}] not in space  # a list, not a tuple
    assert ({"role": "user", "content": "toolong"},) not in space
    assert ({"role": "user", "content": 3},) not in space
    assert tuple({"role": "user", "content": ""} for _ in range(4)) not in space
    assert space.sample() in space


def test_waveform_contains_1d_float32_bounded_length_and_amplitude() -> None:
    space = Waveform(max_seconds=0.5, seed=1)
    assert space.max_samples == 8000
    assert space.sample() in space
    assert np.zeros(8000, np.float32) in space
    assert np.zeros(8001, np.float32) not in space
    assert np.zeros((2, 10), np.float32) not in space
    assert np.full(10, 1.5, np.float32) not in space
    assert [0.0] not in space


@pytest.mark.parametrize("space", [FreeText(8, samples=("ab",)), Chat(2, 8), Waveform(0.1)])
def test_batching_utilities_are_registered(space: gym.Space) -> None:
    batched = batch_space(space, 3)
    assert isinstance(batched, gym.spaces.Tuple) and len(batched) == 3
    items = [space.sample() for _ in range(3)]
    joined = concatenate(space, items, create_empty_array(space, 3))
    assert isinstance(joined, tuple) and len(joined) == 3
    assert list(iterate(batched, joined)) == list(joined)  # items, not their characters
    assert pickle.loads(pickle.dumps(space)) == space
