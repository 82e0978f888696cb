"""CAFE's request reward, advantage shaping, RDPO pairs and metrics on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from papergym.core import info_keys as K
from papergym.core.trajectory import Step, Trajectory
from papergym.credit import AdvantageHook, GroupReward
from papergym.credit.feedback import (
    FeedbackAdvantageShaping,
    FeedbackRequestReward,
    call_skip_gap,
    feedback_metrics,
    jaccard,
    rdpo_pairs,
)


def _traj(
    requests: int,
    success: bool,
    *,
    steps: int = 1,
    request_step: int | None = None,
    prefix: str | None = None,
    feedback: str | None = None,
    checks: dict | None = None,
) -> Trajectory:
    segments = {"segment": "post", "request_step": request_step, "n_requests": requests}
    if prefix is not None:
        segments |= {"prefix": prefix, "feedback": feedback}
    last = {K.SEGMENTS: segments, K.HIDDEN_LABEL: "gold"}
    if checks is not None:
        last[K.CHECKS] = checks
    body = [Step("Question: q", "a", 0.0, {}) for _ in range(steps - 1)]
    return Trajectory("t", 0, [*body, Step("obs", "a", float(success), last)], success=success)


def test_request_reward_uses_the_groups_call_skip_gap() -> None:
    group = [_traj(1, True), _traj(2, False), _traj(0, False), _traj(0, False)]
    reward = FeedbackRequestReward()
    assert isinstance(reward, GroupReward)
    # gap = 1/2 - 0/2 = 0.5; R = r + 0.5 * C * 0.5 - 0.05 * [n - 1]+
    assert reward(group) == pytest.approx([1.25, 0.20, 0.0, 0.0])
    assert reward.last_gap == pytest.approx(0.5)


def test_request_reward_falls_back_to_the_batch_gap_then_zero() -> None:
    group = [_traj(1, True), _traj(1, False)]  # one route only
    batch = [[_traj(1, True), _traj(0, False)], [_traj(0, True), _traj(0, False)]]
    # batch gap = 1/1 - 1/3 = 2/3
    assert FeedbackRequestReward()(group, batch=batch) == pytest.approx([1 + 1 / 3, 1 / 3])
    assert FeedbackRequestReward()(group) == pytest.approx([1.0, 0.0])
    assert FeedbackRequestReward()([_traj(3, True)]) == pytest.approx([1.0 - 0.1])
    assert call_skip_gap(group, [[_traj(1, True)]]) == 0.0  # the batch has one route too


def test_request_reward_ignores_hidden_labels() -> None:
    group = [_traj(1, True), _traj(0, False)]
    before = FeedbackRequestReward()(group)
    for t in group:
        t.steps[-1].info[K.HIDDEN_LABEL] = "permuted"  # type: ignore[index]
    assert FeedbackRequestReward()(group) == before


def test_advantage_shaping_hand_computed() -> None:
    hook = FeedbackAdvantageShaping()
    assert isinstance(hook, AdvantageHook)
    group = [_traj(1, True), _traj(0, False)]  # gap 1.0, g = clip(1, 0, 0.5) = 0.5, λg = 0.25
    traj = _traj(1, True, steps=4, request_step=1)
    lengths = [10, 3, 7, 5]
    assert hook(traj, 1.0, action_lengths=lengths, group=group) == pytest.approx([0.75, 1.0, 1.25, 1.25])
    assert hook(traj, 0.1, action_lengths=lengths, group=group) == pytest.approx([0.0, 0.1, 0.35, 0.35])
    assert hook(traj, -1.0, action_lengths=lengths, group=group) == [-1.0] * 4  # only A > 0 is shaped
    half = [_traj(1, True), _traj(1, False), _traj(0, False), _traj(0, True)]  # gap 0: no shaping
    assert hook(traj, 1.0, action_lengths=lengths, group=half) == [1.0] * 4
    quarter = [
        _traj(1, True),
        _traj(1, True),
        _traj(1, False),
        _traj(1, True),
        _traj(0, True),
        _traj(0, False),
    ]
    # gap = 3/4 - 1/2 = 0.25, λg = 0.125
    assert hook(traj, 1.0, action_lengths=lengths, group=quarter) == pytest.approx([0.875, 1.0, 1.125, 1.125])
    skipper = _traj(0, True, steps=4)
    assert hook(skipper, 1.0, action_lengths=lengths, group=group) == [1.0] * 4
    assert hook(traj, 1.0, action_lengths=lengths) == [1.0] * 4  # no group: û = 0
    with pytest.raises(ValueError, match="action_lengths"):
        hook(traj, 1.0, action_lengths=[1, 2], group=group)


def test_rdpo_pairs_on_a_hand_built_group() -> None:
    good = _traj(1, True, request_step=1, prefix="search Tek city born", feedback="Search the director.")
    close = _traj(1, False, request_step=1, prefix="search Tek city born now", feedback="Answer now.")
    far = _traj(1, False, request_step=1, prefix="something else entirely", feedback="Look elsewhere.")
    skipped = _traj(0, False)
    pairs = rdpo_pairs([good, close, far, skipped])
    assert len(pairs) == 1
    pair = pairs[0]
    assert pair.chosen == "Search the director." and pair.rejected == "Answer now."
    assert pair.similarity == pytest.approx(0.8) and pair.prompt.endswith("search Tek city born")
    assert rdpo_pairs([good, close], threshold=0.9) == []
    assert jaccard("", "") == 1.0


def test_feedback_metrics() -> None:
    trajs = [
        _traj(1, True, checks={"exact_match": True, "grounded": True}),
        _traj(1, False, checks={"exact_match": False, "grounded": True}),
        _traj(0, False, checks={"exact_match": False, "grounded": False}),  # hallucinated
        _traj(0, False),  # never answered
    ]
    m = feedback_metrics(trajs)
    assert (m.n, m.success_rate, m.request_rate) == (4, 0.25, 0.5)
    assert m.request_skip_gap == pytest.approx(0.5)
    assert m.hallucination_rate == pytest.approx(1 / 3)
    assert math.isnan(feedback_metrics([_traj(0, True)]).request_skip_gap)
    with pytest.raises(ValueError):
        feedback_metrics([])


def test_request_reward_on_env_rollouts() -> None:
    pytest.importorskip("bm25s")
    pytest.importorskip("Stemmer")
    from papergym.core.trajectory import OraclePolicy, rollout
    from papergym.envs.search.search_critic_env import SearchCriticEnv

    class AskFirst(OraclePolicy):
        def __call__(self, observation, info):  # type: ignore[no-untyped-def]
            steps = len(self._env._s.actions)  # type: ignore[union-attr]
            return (
                "<request_feedback></request_feedback>" if steps == 0 else super().__call__(observation, info)
            )

    env = SearchCriticEnv(n_passages=2000)
    asked = rollout(env, AskFirst(), seed=0, max_steps=40)
    plain = rollout(env, OraclePolicy(), seed=0, max_steps=40)
    assert asked.success and plain.success
    rewards = FeedbackRequestReward()([asked, plain])
    assert rewards == pytest.approx([1.0, 1.0])  # both routes succeed: gap 0
    shaped = FeedbackAdvantageShaping()(
        asked, 1.0, action_lengths=[1] * len(asked.steps), group=[asked, plain]
    )
    assert shaped == [1.0] * len(asked.steps)


def test_advantage_shaping_uses_the_batch_gap_for_a_single_route_group() -> None:
    """A group where every member requested has no in-group gap; û comes from the batch, as in the reward."""
    group = [_traj(1, True), _traj(1, False)]
    batch = [group, [_traj(0, False), _traj(0, False)]]  # batch gap 0.5 - 0 = 0.5, λg = 0.25
    traj = _traj(1, True, steps=3, request_step=1)
    hook = FeedbackAdvantageShaping()
    reward = FeedbackRequestReward()
    reward(group, batch=batch)
    assert reward.last_gap == pytest.approx(0.5)
    shaped = hook(traj, 1.0, action_lengths=[2, 2, 2], group=group, batch=batch)
    assert shaped == pytest.approx([0.75, 1.0, 1.25])
    assert hook(traj, 1.0, action_lengths=[2, 2, 2], group=group) == [1.0] * 3  # no batch: no gap
