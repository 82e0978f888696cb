"""The scale-out benchmark's runners play the same episodes (same step counts) however they run them."""

from __future__ import annotations

import pytest


@pytest.fixture
def scaleout(benchmark_module):
    return benchmark_module("scaleout")


def test_lockstep_and_ready_runners_play_the_same_steps(scaleout) -> None:
    seeds = [0, 1, 2]
    env_id = "papergym/MemoryQA-v0"
    lockstep = scaleout.run_async_vector(env_id, 2, seeds, 0.0, False)
    ready = scaleout.run_ready_vector(env_id, 2, seeds, 0.0, True)
    alone = scaleout.run_ready_vector(env_id, 1, seeds, 0.0, False)
    assert lockstep == ready == alone > 3 * len(seeds)


def test_memory_per_instance_is_measured(scaleout) -> None:
    assert scaleout.memory_per_instance_kib("papergym/Reasoning-v0", n=5) > 0
