from __future__ import annotations

import pytest

from papergym.core import info_keys as K
from papergym.core.trajectory import Step, Trajectory
from papergym.credit import GroupReward, MajorityVoteReward, majority_vote


def _traj(answer: str | None, label: str = "7") -> Trajectory:
    info = {K.ANSWER: answer, K.HIDDEN_LABEL: label, K.SUCCESS: answer == label}
    return Trajectory("math/test/L1/0", 0, [Step("q", "a", 0.0, info)])


def test_majority_label_and_ratio() -> None:
    vote = majority_vote(["4", "5", "4", None, "5", "4"])
    assert vote.label == "4" and vote.ratio == pytest.approx(0.5)
    assert majority_vote([None, None]).label is None
    assert majority_vote(["b", "a"]).label == "b"  # ties: first seen


def test_rewards_follow_the_majority_not_the_label() -> None:
    reward = MajorityVoteReward()
    assert isinstance(reward, GroupReward)
    group = [_traj("3"), _traj("3"), _traj("7"), _traj(None)]
    assert reward(group) == [1.0, 1.0, 0.0, 0.0]
    assert reward.last_vote is not None and reward.last_vote.label == "3"


def test_rewards_ignore_hidden_labels() -> None:
    reward = MajorityVoteReward()
    answers = ["3", "3", "7", None, "7", "7"]
    base = reward([_traj(a, "7") for a in answers])
    for label in ("3", "0", "never"):
        permuted = [_traj(a, label) for a in answers]
        for t in permuted:  # also flip success, which carries the label too
            t.steps[-1].info[K.SUCCESS] = not t.steps[-1].info[K.SUCCESS]
        assert reward(permuted) == base


def test_vote_subset() -> None:
    reward = MajorityVoteReward(n_votes=2)
    assert reward([_traj("1"), _traj("1"), _traj("2"), _traj("2"), _traj("2")]) == [1.0, 1.0, 0.0, 0.0, 0.0]
    with pytest.raises(ValueError):
        MajorityVoteReward(n_votes=0)


def test_vote_rewards_returns_the_vote_with_the_rewards() -> None:
    group = [_traj("3"), _traj("7"), _traj("7")]
    rewards, vote = MajorityVoteReward().vote_rewards(group)
    assert rewards == [0.0, 1.0, 1.0]
    assert vote.label == "7" and vote.ratio == pytest.approx(2 / 3)
