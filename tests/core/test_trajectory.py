from __future__ import annotations

import pytest

from papergym.core import info_keys as K
from papergym.core.trajectory import (
    OraclePolicy,
    RandomPolicy,
    Step,
    Trajectory,
    member_seed,
    nonzero_variance_share,
    rollout,
    rollout_group,
)
from tests.conftest import CounterEnv


class RecordingPolicy:
    """Records its seeds; plays "+1" then "done"."""

    def __init__(self) -> None:
        self.seeds: list[int] = []
        self.turn = 0

    def reset(self, *, seed: int) -> None:
        self.seeds.append(seed)
        self.turn = 0

    def __call__(self, observation: object, info: object) -> str:
        self.turn += 1
        return "+1" if self.turn == 1 else "done"


def test_rollout_records_every_step_and_the_outcome() -> None:
    traj = rollout(CounterEnv(), OraclePolicy(), seed=7)
    assert traj.seed == 7 and traj.task_id.startswith("counter/")
    assert traj.steps[-1].action == "done" and traj.success
    assert traj.total_reward == pytest.approx(1.0)


def test_rollout_group_same_task_isolated_envs_distinct_policy_seeds() -> None:
    policy, envs = RecordingPolicy(), []

    def make_env() -> CounterEnv:
        envs.append(CounterEnv())
        return envs[-1]

    group = rollout_group(make_env, policy, seed=11, group_size=4)
    assert len({t.task_id for t in group}) == 1
    assert len({id(e) for e in envs}) == 4
    assert policy.seeds == [member_seed(11, i) for i in range(4)]
    assert len(set(policy.seeds)) == 4
    with pytest.raises(ValueError):
        rollout_group(make_env, policy, seed=1, group_size=0)


def test_rollout_truncates_at_max_steps_when_the_policy_never_ends() -> None:
    class Forever(RecordingPolicy):
        def __call__(self, observation: object, info: object) -> str:
            return "+1"

    traj = rollout(CounterEnv(), Forever(), seed=0, max_steps=5)
    assert len(traj.steps) == 5 and traj.truncated and not traj.success


def test_random_policy_is_seeded() -> None:
    a = rollout(CounterEnv(), RandomPolicy(), seed=3, max_steps=6)
    b = rollout(CounterEnv(), RandomPolicy(), seed=3, max_steps=6)
    assert [s.action for s in a.steps] == [s.action for s in b.steps]


def _traj(*rewards: float) -> Trajectory:
    return Trajectory("t", 0, [Step("o", "a", r, {K.REWARD_COMPONENTS: {"x": r}}) for r in rewards])


def test_nonzero_variance_share() -> None:
    groups = [[_traj(1.0), _traj(0.0)], [_traj(1.0), _traj(1.0)], [_traj(0.5, 0.5), _traj(1.0)]]
    assert nonzero_variance_share(groups) == pytest.approx(1 / 3)
    assert nonzero_variance_share(groups, rewards=[[1, 0], [1, 0], [0, 0]]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        nonzero_variance_share([])
