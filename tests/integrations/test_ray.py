"""Ray rollouts on a local cluster (loopback only): a group over 4 actors survives a killed actor."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import gymnasium as gym
import pytest

from papergym.core.errors import PapergymError
from papergym.core.trajectory import OraclePolicy, rollout_group

ray = pytest.importorskip("ray", reason="Ray is the `dist` extra: pip install 'papergym[dist]'")

from papergym.integrations.ray import RayEnvPool  # noqa: E402

ENV_ID = "papergym/MemoryQA-v0"  # many steps per episode, so an actor can die mid-episode


def test_pool_needs_ray_initialised_and_valid_sizes() -> None:
    if ray.is_initialized():
        pytest.skip("Ray is already initialised in this process")
    with pytest.raises(PapergymError, match=r"ray\.init"):
        RayEnvPool(ENV_ID, num_actors=1)


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


class KillOnceOracle(OraclePolicy):
    """The oracle, which kills its own env actor at its 5th action (once per test)."""

    killed = threading.Event()

    def bind(self, env: Any) -> None:
        super().bind(env)
        self.view = env

    def reset(self, *, seed: int) -> None:
        super().reset(seed=seed)
        self.calls = 0

    def __call__(self, observation: Any, info: Mapping[str, Any]) -> Any:
        self.calls += 1
        if self.calls == 5 and not KillOnceOracle.killed.is_set():
            KillOnceOracle.killed.set()
            ray.kill(self.view.actor, no_restart=True)
        return super().__call__(observation, info)


def test_group_rollout_survives_a_killed_actor(local_ray: None) -> None:
    pool = RayEnvPool(ENV_ID, num_actors=4)
    try:
        episodes = pool.rollout_group(KillOnceOracle, seed=3, group_size=4)
        again = pool.rollout_group(OraclePolicy, seed=3, group_size=4)
    finally:
        pool.close()
    assert KillOnceOracle.killed.is_set()
    assert [e.member for e in episodes] == [0, 1, 2, 3]
    assert sum(e.retried for e in episodes) == 1  # exactly the episode whose actor was killed
    assert all("Actor" in failure for e in episodes for failure in e.failures)
    local = rollout_group(lambda: gym.make(ENV_ID), OraclePolicy(), seed=3, group_size=4)
    for remote_episodes in (episodes, again):
        for episode, expected in zip(remote_episodes, local, strict=True):
            trajectory = episode.trajectory
            assert trajectory is not None and trajectory.success
            assert trajectory.task_id == expected.task_id
            assert [s.action for s in trajectory.steps] == [s.action for s in expected.steps]
            assert len(trajectory.steps) > 5
