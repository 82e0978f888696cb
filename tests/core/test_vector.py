"""LLMVectorEnv: envs step independently, results match single envs, Gymnasium's batched API holds."""

from __future__ import annotations

import functools
import hashlib
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import papergym  # noqa: F401  (registers the ids)
from papergym.core.trajectory import rollout
from papergym.core.vector import LLMVectorEnv, WorkerError, play_episodes

REASONING = "papergym/Reasoning-v0"
WORKERS = ["inline", "process"]


def make_reasoning() -> gym.Env:
    return gym.make(REASONING)


class HashAnswerPolicy:
    """Answers a number derived from the observation (right now and then), after a seeded delay."""

    def __init__(self, max_delay_s: float = 0.0) -> None:
        self.max_delay_s = max_delay_s
        self._rng = np.random.default_rng(0)

    def reset(self, *, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def __call__(self, observation: Any, info: Mapping[str, Any]) -> str:
        if self.max_delay_s:
            time.sleep(float(self._rng.uniform(0, self.max_delay_s)))
        digest = hashlib.blake2b(str(observation).encode(), digest_size=2).digest()
        return f"\\boxed{{{int.from_bytes(digest, 'big') % 3}}}"


class GatedStepEnv(gym.Wrapper):
    """Blocks each step until the test opens ``gate`` (a FIFO) for writing: a slow tool, driven by events.

    Opening a FIFO for reading blocks until a writer opens it, so the step's progress depends only on
    what the test does, never on how fast the machine is.
    """

    def __init__(self, env: gym.Env, gate: str) -> None:
        super().__init__(env)
        self.gate = gate

    def step(self, action: Any) -> Any:
        with open(self.gate) as gate:
            gate.read()
        return self.env.step(action)


class BrokenStepEnv(gym.Wrapper):
    def step(self, action: Any) -> Any:
        raise RuntimeError("a bug in the env")


@pytest.mark.parametrize("workers", WORKERS)
def test_batched_reset_and_step_match_single_envs(workers: str) -> None:
    vec = LLMVectorEnv([make_reasoning] * 3, workers=workers)
    try:
        observations, infos = vec.reset(seed=10)
        actions = ["\\boxed{1}", "nonsense", "\\boxed{2}"]
        next_observations, rewards, terminated, truncated, step_infos = vec.step(actions)
    finally:
        vec.close()
    for i in range(3):
        env = make_reasoning()
        observation, info = env.reset(seed=10 + i)
        assert observations[i] == observation
        assert infos["task_id"][i] == info["task_id"]
        next_observation, reward, term, trunc, _ = env.step(actions[i])
        assert (next_observations[i], rewards[i], terminated[i], truncated[i]) == (
            next_observation,
            reward,
            term,
            trunc,
        )
    assert step_infos["_invalid_action"].all()
    assert list(step_infos["invalid_action"]) == [False, True, False]


@pytest.mark.parametrize("workers", WORKERS)
def test_step_ready_steps_only_the_named_envs(workers: str) -> None:
    vec = LLMVectorEnv([make_reasoning] * 3, workers=workers)
    try:
        vec.reset(seed=0)
        results = vec.step_ready({2: "\\boxed{5}"})
        assert sorted(results) == [2]
        assert results[2].done and results[2].kind == "step"
        # envs 0 and 1 never stepped: their episodes still run, env 2's is over.
        assert vec.call("_elapsed_steps") == (0, 0, 1)
        with pytest.raises(ValueError, match="reset it first"):
            vec.submit(2, "\\boxed{1}")
        vec.reset(seed=[None, None, 7], options={"reset_mask": np.array([False, False, True])})
        assert vec.call("_elapsed_steps") == (0, 0, 0)
    finally:
        vec.close()


def _gated_reasoning(gate: str) -> gym.Env:
    return GatedStepEnv(make_reasoning(), gate)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="the gate is a POSIX FIFO")
def test_a_fast_env_is_not_held_back_by_a_slow_one(tmp_path: Path) -> None:
    gate = str(tmp_path / "gate")
    os.mkfifo(gate)
    slow = functools.partial(_gated_reasoning, gate)
    vec = LLMVectorEnv([slow, make_reasoning], workers="process")
    try:
        vec.reset(seed=0)
        vec.submit(0, "\\boxed{1}")
        vec.submit(1, "\\boxed{1}")
        first = vec.ready()
        assert [r.index for r in first] == [1]  # the slow env's step cannot finish: its gate is shut
        assert vec.pending == frozenset({0})
        with open(gate, "w") as opened:
            opened.write("go")
        assert [r.index for r in vec.ready()] == [0]
    finally:
        vec.close()


@pytest.mark.parametrize("workers", WORKERS)
def test_next_step_autoreset_matches_gymnasium(workers: str) -> None:
    ours = LLMVectorEnv([make_reasoning] * 2, workers=workers, autoreset_mode=AutoresetMode.NEXT_STEP)
    theirs = SyncVectorEnv([make_reasoning] * 2, autoreset_mode=AutoresetMode.NEXT_STEP)
    try:
        a, _ = ours.reset(seed=3)
        b, _ = theirs.reset(seed=3)
        assert a == b
        for actions in (["\\boxed{1}", "\\boxed{2}"], ["x", "y"], ["\\boxed{0}", "\\boxed{0}"]):
            a_obs, a_rew, a_term, a_trunc, _ = ours.step(actions)
            b_obs, b_rew, b_term, b_trunc, _ = theirs.step(actions)
            assert a_obs == tuple(b_obs)
            np.testing.assert_array_equal(a_rew, b_rew)
            np.testing.assert_array_equal(a_term, b_term)
            np.testing.assert_array_equal(a_trunc, b_trunc)
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("workers", WORKERS)
def test_play_episodes_equals_sequential_rollouts(workers: str) -> None:
    seeds = list(range(20, 27))
    vec = LLMVectorEnv([make_reasoning] * 3, workers=workers)
    try:
        played = play_episodes(vec, [HashAnswerPolicy(max_delay_s=0.004) for _ in range(3)], seeds=seeds)
    finally:
        vec.close()
    assert [t.seed for t in played] == seeds
    for trajectory, seed in zip(played, seeds, strict=True):
        expected = rollout(make_reasoning(), HashAnswerPolicy(), seed=seed)
        assert trajectory.task_id == expected.task_id
        assert [s.action for s in trajectory.steps] == [s.action for s in expected.steps]
        assert [s.reward for s in trajectory.steps] == [s.reward for s in expected.steps]
        assert trajectory.success == expected.success
        assert trajectory.terminated and not trajectory.truncated


def test_play_episodes_marks_episodes_cut_by_max_steps(counter_env) -> None:
    vec = LLMVectorEnv([type(counter_env)] * 2, workers="inline")

    class AlwaysPlusOne:
        def reset(self, *, seed: int) -> None:
            del seed

        def __call__(self, observation: Any, info: Mapping[str, Any]) -> str:
            return "+1"

    try:
        played = play_episodes(vec, [AlwaysPlusOne(), AlwaysPlusOne()], seeds=[0, 1, 2], max_steps=3)
    finally:
        vec.close()
    assert [len(t.steps) for t in played] == [3, 3, 3]
    assert all(t.truncated and not t.terminated for t in played)


@pytest.mark.parametrize("workers", WORKERS)
def test_an_env_bug_raises_worker_error_with_its_index(workers: str) -> None:
    vec = LLMVectorEnv([make_reasoning, lambda: BrokenStepEnv(make_reasoning())], workers=workers)
    try:
        vec.reset(seed=0)
        with pytest.raises(WorkerError, match="a bug in the env") as caught:
            vec.step_ready({1: "\\boxed{1}"})
        assert caught.value.index == 1
    finally:
        vec.close()


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="at least one"):
        LLMVectorEnv([])
    with pytest.raises(ValueError, match="workers"):
        LLMVectorEnv([make_reasoning], workers="threads")  # type: ignore[arg-type]
    vec = LLMVectorEnv([make_reasoning] * 2, workers="inline")
    try:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match="2 actions"):
            vec.step(["\\boxed{1}"])
        with pytest.raises(IndexError):
            vec.submit(5, "x")
        vec.submit(0, "\\boxed{1}")
        with pytest.raises(ValueError, match="busy"):
            vec.submit(0, "\\boxed{1}")
    finally:
        vec.close()
