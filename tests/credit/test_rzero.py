"""R-Zero's challenger reward on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.core import info_keys as K
from papergym.core.trajectory import Step, Trajectory
from papergym.credit import GroupReward
from papergym.credit.rzero import (
    RZeroReward,
    average_linkage_clusters,
    bleu_distances,
    repetition_penalties,
    rzero_rewards,
    uncertainty_reward,
)

Q1 = "Write a short poem about the harbor at night and mention the lantern."
Q2 = "Describe the orchard in spring in exactly three sentences."


def test_uncertainty_reward_by_hand() -> None:
    assert [uncertainty_reward(p) for p in (0.0, 0.3, 0.5, 0.7, 1.0)] == [0.0, 0.6, 1.0, 0.6, 0.0]
    with pytest.raises(ValueError):
        uncertainty_reward(1.5)


def test_bleu_distances_identical_and_disjoint() -> None:
    d = bleu_distances([Q1, Q1, "zebra quantum violin"])
    assert d[0, 1] == pytest.approx(0.0) and d[0, 2] == pytest.approx(1.0)
    assert np.allclose(d, d.T) and np.allclose(np.diag(d), 0.0)


def test_average_linkage_merges_below_threshold_only() -> None:
    d = np.array([[0, 0.2, 0.6, 0.9], [0.2, 0, 0.7, 0.9], [0.6, 0.7, 0, 0.9], [0.9, 0.9, 0.9, 0]])
    # {0,1} merge at 0.2; {0,1} to 2 averages 0.65 >= 0.5: stop
    assert average_linkage_clusters(d, 0.5) == [0, 0, 1, 2]
    # with threshold 0.7, {0,1,2} merges (0.65) but 3 stays (0.9)
    assert average_linkage_clusters(d, 0.7) == [0, 0, 0, 1]


def test_repetition_penalty_is_the_cluster_share() -> None:
    assert repetition_penalties([Q1, Q1, Q1, Q2]) == pytest.approx([0.75, 0.75, 0.75, 0.25])
    assert repetition_penalties([Q1, Q2], batch_size=4, weight=0.5) == pytest.approx([0.125, 0.125])


def test_rzero_rewards_by_hand() -> None:
    rewards = rzero_rewards([Q1, Q1, Q2, None], [0.5, 0.3, 0.5, 0.9])
    # B = 4 (the unparseable one counts); {Q1, Q1} share 2/4, Q2 1/4
    assert rewards == pytest.approx([1.0 - 0.5, 0.6 - 0.5, 1.0 - 0.25, -1.0])
    clipped = rzero_rewards([Q1, Q1, Q1, Q1], [0.0, 0.5, 0.5, 0.5], clip_at_zero=True)
    assert clipped == pytest.approx([0.0, 0.0, 0.0, 0.0])


def _traj(task: str | None, agreement: float) -> Trajectory:
    info = {
        K.PARSED_ACTION: None if task is None else {"task": task, "reference": "r"},
        K.SOLVER_AGREEMENT: agreement,
    }
    return Trajectory("t", 0, steps=[Step("obs", "act", 0.0, info)])


def test_rzero_group_reward_reads_the_challenger_infos() -> None:
    reward = RZeroReward()
    assert isinstance(reward, GroupReward)
    group = [_traj(Q1, 0.5), _traj(Q1, 0.3), _traj(Q2, 0.5), _traj(None, 0.0)]
    assert reward(group) == pytest.approx([0.5, 0.1, 0.75, -1.0])
    with pytest.raises(ValueError):
        RZeroReward(threshold=0.0)
