"""The env contract (DESIGN.md), checked on every registered id × its CONTRACT_VARIANTS."""

from __future__ import annotations

import gc
import inspect
import json
import math
import pickle
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import papergym
from papergym.core import info_keys
from papergym.core.trajectory import OraclePolicy, rollout
from tests.contract_helpers import last_effective_index, perturbed, trajectory_digest

CASES = [
    pytest.param(entry.id, variant, id=f"{entry.id.split('/')[1]}-{json.dumps(variant, sort_keys=True)}")
    for entry in papergym.CATALOGUE
    for variant in entry.contract_variants()
]
DECLARED_KEYS = {v for k, v in vars(info_keys).items() if k.isupper() and isinstance(v, str)}
NASTY_ACTIONS = [
    "",
    "\\boxed{",
    "\\boxed{" * 4000,
    "{" * 30000,
    "<answer>" * 3000,
    "<answer></answer>",
    "<tool_call>{</tool_call>",
    "\x00\x01\x1b[31m",
    "\ud800 lone surrogate \udfff",
    "9" * 5000,
    "\\boxed{" + "9" * 5000 + "}",
    "<answer>" + "x" * 20000 + "</answer>",
]
DOC_SECTIONS = (
    "Description",
    "Observation",
    "Action",
    "Reward",
    "Episode End",
    "Arguments",
    "Paper",
    "Version History",
)


def _make(env_id: str, variant: dict[str, Any], **kwargs: Any) -> gym.Env:
    return gym.make(env_id, **variant, **kwargs)


def _budget(env: gym.Env, key: str, default: int) -> int:
    """A smaller test size where the env asks for one (real speech channels: ``contract_budget``)."""
    budget = getattr(env.unwrapped, "contract_budget", None) or {}
    return int(budget.get(key, default))


def _texts(obs: Any) -> Any:
    """The text part of an observation (an audio env's Dict observation holds it under ``text``)."""
    return obs["text"] if isinstance(obs, dict) else obs


def _check_step(env: gym.Env, result: tuple) -> None:
    obs, reward, terminated, truncated, info = result
    assert obs in env.observation_space
    assert isinstance(reward, float) and math.isfinite(reward)
    assert reward == pytest.approx(sum(info[info_keys.REWARD_COMPONENTS].values()))
    assert isinstance(info[info_keys.INVALID_ACTION], bool)
    assert set(info) <= DECLARED_KEYS, f"undeclared info keys: {set(info) - DECLARED_KEYS}"
    if terminated or truncated:
        assert isinstance(info[info_keys.SUCCESS], bool)


@pytest.mark.parametrize(("env_id", "variant"), CASES)
def test_check_env_passes_without_warnings(env_id: str, variant: dict[str, Any]) -> None:
    for obs_mode in ("text", "chat"):
        env = _make(env_id, variant, obs_mode=obs_mode)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
        env.close()


@pytest.mark.parametrize("entry", papergym.CATALOGUE, ids=lambda e: e.id)
def test_registration_and_docstring(entry: papergym.envs.EnvEntry) -> None:
    spec = gym.spec(entry.id)
    assert spec.max_episode_steps == entry.max_episode_steps
    env = gym.make(entry.id)
    doc = inspect.getdoc(type(env.unwrapped)) or ""
    missing = [s for s in DOC_SECTIONS if f"## {s}" not in doc]
    assert not missing, f"{entry.id} docstring lacks sections {missing}"
    assert entry.contract_variants(), "every env lists at least one contract variant"


def test_same_seed_same_trajectory_across_processes() -> None:
    cases = [(p.values[0], p.values[1]) for p in CASES]
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-m", "tests.contract_helpers", json.dumps(cases)],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    ).stdout
    other = json.loads(out.strip().splitlines()[-1])
    here = [trajectory_digest(env_id, variant) for env_id, variant in cases]
    assert here == other


@pytest.mark.parametrize(("env_id", "variant"), CASES)
def test_oracle_succeeds_on_20_tasks_of_each_split(env_id: str, variant: dict[str, Any]) -> None:
    env = _make(env_id, variant)
    for split in env.unwrapped.splits:
        for seed in range(_budget(env, "tasks", 20)):
            traj = rollout(env, OraclePolicy(), seed=seed, options={"split": split})
            assert traj.success, f"oracle failed on {traj.task_id}"
            for step in traj.steps:
                _check_step(env, (step.observation, step.reward, False, False, step.info))


@pytest.mark.parametrize(("env_id", "variant"), CASES)
def test_success_check_is_false_at_reset_and_without_the_last_effective_action(
    env_id: str, variant: dict[str, Any]
) -> None:
    """Dropping the last action that changed the env's state (not the final answer) loses the task; a
    single-turn task's gold answer with one character changed fails."""
    env = _make(env_id, variant)
    dropped = 0
    for split in env.unwrapped.splits:
        for seed in range(_budget(env, "tasks", 20)):
            options = {"split": split}
            env.reset(seed=seed, options=options)
            assert env.unwrapped.success_check() is False
            actions = [s.action for s in rollout(env, OraclePolicy(), seed=seed, options=options).steps]
            index = last_effective_index(env, actions, seed=seed, options=options)
            env.reset(seed=seed, options=options)
            if index is None:
                assert len(actions) == 1 or env.unwrapped.success_check() is False
                for action in [*actions[:-1], perturbed(actions[-1])]:
                    env.step(action)
            else:
                dropped += 1
                for action in actions[:index] + actions[index + 1 :]:
                    _, _, terminated, truncated, _ = env.step(action)
                    if terminated or truncated:
                        break
            assert env.unwrapped.success_check() is False, (seed, split, index)
    if len(actions) > 1:
        assert dropped > 0, "no oracle action changed the env's state"


@pytest.mark.parametrize(("env_id", "variant"), CASES)
def test_garbage_actions_never_raise(env_id: str, variant: dict[str, Any]) -> None:
    env = _make(env_id, variant)
    for i, action in enumerate(NASTY_ACTIONS):
        env.reset(seed=i % _budget(env, "seeds", len(NASTY_ACTIONS)))
        _check_step(env, env.step(action))

    @settings(
        max_examples=_budget(env, "examples", 40),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(st.lists(st.text(max_size=300) | st.sampled_from(NASTY_ACTIONS[:3]), min_size=1, max_size=4))
    def play(actions: list[str]) -> None:
        env.reset(seed=len(actions))
        for action in actions:
            result = env.step(action)
            _check_step(env, result)
            if result[2] or result[3]:
                break

    play()


@pytest.mark.parametrize(("env_id", "variant"), CASES)
def test_snapshot_restore_round_trips(env_id: str, variant: dict[str, Any]) -> None:
    env = _make(env_id, variant).unwrapped
    env.reset(seed=5)
    snap = env.snapshot()
    first = env.step(env.oracle_action())
    env.restore(snap)
    assert env.success_check() is False
    assert repr(env.step(env.oracle_action())) == repr(first)


@pytest.mark.parametrize(("env_id", "variant"), CASES)
def test_env_pickles_and_resumes(env_id: str, variant: dict[str, Any]) -> None:
    env = _make(env_id, variant)
    env.reset(seed=6)
    clone = pickle.loads(pickle.dumps(env))
    action = env.unwrapped.oracle_action()
    assert repr(clone.step(action)) == repr(env.step(action))


@pytest.mark.parametrize(("env_id", "variant"), CASES)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs_take_the_env(env_id: str, variant: dict[str, Any], mode: str) -> None:
    kwargs = {"shared_memory": False} if mode == "async" else {}
    if mode == "async" and variant.get("channel") in ("audio", "transcript"):
        # real speech: native thread pools (ONNX Runtime, CTranslate2, OpenMP) do not survive fork reliably
        # once the parent has used them (a worker hung intermittently); spawn is the documented setting
        kwargs["context"] = "spawn"
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, vector_kwargs=kwargs, **variant)
    try:
        obs, infos = envs.reset(seed=3)
        obs = _texts(obs)
        assert isinstance(obs, tuple) and len(obs) == 2 and all(isinstance(o, str) for o in obs)
        obs, rewards, terminated, truncated, infos = envs.step(envs.action_space.sample())
        assert rewards.shape == terminated.shape == truncated.shape == (2,) and len(_texts(obs)) == 2
        assert info_keys.REWARD_COMPONENTS in infos
    finally:
        envs.close()


@pytest.mark.parametrize(("env_id", "variant"), CASES)
def test_ten_thousand_resets_keep_observations_and_memory_flat(env_id: str, variant: dict[str, Any]) -> None:
    env = _make(env_id, variant, obs_mode="chat")
    total = _budget(env, "resets", 10_000)
    block = max(1, total // 50)

    def play(n: int, offset: int) -> int:
        env.action_space.seed(offset)  # replaying a block replays its actions too
        longest = 0
        for i in range(n):
            obs, _ = env.reset(seed=offset + i)
            if i % 10 == 0:
                obs = env.step(env.action_space.sample())[0]
            longest = max(longest, sum(len(m["content"]) for m in _texts(obs)))
        return longest

    play(total // 20, 0)  # warm caches
    gc.collect()
    # Allocated blocks, not tracemalloc: tracing would make a reset ~10x slower. A history leak of even
    # one object per reset would add 10,000 blocks.
    before = sys.getallocatedblocks()
    longest_early = play(block, 1_000)
    play(total - 2 * block, 2_000)
    longest_late = play(block, 1_000)
    gc.collect()
    grown = sys.getallocatedblocks() - before
    assert longest_late == longest_early
    assert grown < 3_000, f"{grown} memory blocks retained after {total} resets"
