"""The learned search hopper: reading observations, acting on them alone, same seed same run, GRPO learns
the plan, and per-decision advantages from CAFE's shaping hook."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("bm25s")

from papergym.baselines import search_hopper as hop
from papergym.baselines.softmax_grpo import Sample, SoftmaxHeads, decision_advantages
from papergym.core.trajectory import Step, Trajectory
from papergym.credit.feedback import FeedbackAdvantageShaping
from papergym.envs.search.formats import search_action

ENV_KW = ["n_passages=300", "max_episode_steps=10"]


@pytest.fixture(scope="module")
def env():
    env = hop.make_env("papergym/SearchCritic-v0", ENV_KW)
    yield env
    env.close()


def test_reading_takes_the_question_passages_and_the_critics_query(env) -> None:
    observation, _ = env.reset(seed=3, options={"split": "train"})
    reading = hop.Reading()
    reading.observe(observation)
    assert reading.question and reading.names and all(n in reading.question for n in reading.names)
    name = reading.names[0]
    reading.queries.append(name)
    observation, *_ = env.step(search_action([name]))
    reading.observe(observation)
    assert reading.passage_of(name) is not None and reading.top == reading.passages[reading.order[0]]
    assert len(reading.passages) == 3  # top-3 passages
    observation, *_ = env.step("<request_feedback></request_feedback>")
    reading.observe(observation)
    assert reading.feedback is not None
    quoted = reading.critic_query()
    assert quoted is None or (quoted in reading.feedback and quoted not in reading.queries)


def test_a_hand_written_observation_is_read_without_the_env() -> None:
    reading = hop.Reading()
    reading.observe("Tools: ...\n\nQuestion: Where was the director of the film The Ko Gate born?")
    assert reading.names == ["The Ko Gate"]
    reading.observe(
        "<information>Doc 1(Title: The Ko Gate) The Ko Gate is a 1950 war film directed by Ana Bo.\n"
        "Doc 2(Title: Ana Bo (chemist)) Ana Bo (born 1901 in Tek) is a chemist from Vel.</information>"
    )
    assert reading.passage_of("Ana Bo") == "Ana Bo (born 1901 in Tek) is a chemist from Vel."
    assert reading.top == "The Ko Gate is a 1950 war film directed by Ana Bo."
    reading.observe('<feedback>Missing hop: search for "Ana Bo film director".</feedback>')
    assert reading.critic_query() == "Ana Bo film director"
    policy = hop.HopperPolicy()
    chains = policy.chains(reading, {(0, 0): hop.READS.index("creator")}, np.random.default_rng(0), [])
    assert chains == [(None, "Ana Bo (born 1901 in Tek) is a chemist from Vel.")]  # read the creator's page
    assert policy.chains(reading, {(0, 0): 0}, np.random.default_rng(0), [])[0][0] is None  # "stop"


def test_same_seed_same_episode_and_actions_follow_the_decisions(env) -> None:
    policy = hop.HopperPolicy()
    runs = [hop.play(env, policy, np.random.default_rng(7), seed=11, options=hop.TRAIN_OPTIONS) for _ in "ab"]
    (a, sample_a, at_a), (b, sample_b, at_b) = runs
    assert at_a == at_b
    assert [s.action for s in a.steps] == [
        s.action for s in b.steps
    ] and sample_a.decisions == sample_b.decisions
    assert at_a == sorted(at_a) and at_a[-1] == len(a.steps) - 1 and len(at_a) == len(sample_a.decisions)
    assert [d[0] for d in sample_a.decisions].count("act") == len(a.steps)  # one act decision per turn


def test_grpo_learns_the_plan() -> None:
    rows: list[dict[str, float]] = []
    args = hop.Args(env_kw=ENV_KW, steps=30, seed=0)
    hop.train(args, on_step=lambda step, metrics, policy: rows.append(metrics))
    first = np.mean([r["success"] for r in rows[:3]])
    last = np.mean([r["success"] for r in rows[-5:]])
    assert first < 0.25 and last > first + 0.3


def _traj(request_step: int | None, success: bool, n: int = 3) -> Trajectory:
    info = {"segments": {"n_requests": int(request_step is not None), "request_step": request_step}}
    steps = [Step("", "", 0.0, {}) for _ in range(n - 1)] + [Step("", "", float(success), info)]
    return Trajectory("q", 0, steps, success=success)


def test_decision_advantages_follow_the_shaping_hook() -> None:
    torch = pytest.importorskip("torch")
    group = [_traj(1, True), _traj(None, False)]  # the requester succeeded: gap +1
    rewards = torch.tensor([[1.0, 0.0]])
    steps_of = [[0, 0, 1, 2], [0, 1, 2]]
    plain = decision_advantages([group], rewards, steps_of, None)
    shaped = decision_advantages([group], rewards, steps_of, FeedbackAdvantageShaping())
    a = plain[0][0]
    assert a > 0 and plain[0] == [a] * 4 and plain[1] == [-a] * 3
    shift = 0.5 * 0.5  # lambda x clip(gap, 0, 0.5)
    assert shaped[0] == pytest.approx([a - shift, a - shift, a, a + shift]) and shaped[1] == plain[1]


def test_softmax_heads_take_one_advantage_per_decision() -> None:
    heads = SoftmaxHeads({"h": (1, 2)}, lr=0.5, epochs=1)
    sample = Sample("", [("h", 0, 0), ("h", 0, 1)])
    heads.update([sample], [[1.0, 0.0]])  # only the first decision is reinforced
    p = heads.probabilities("h")
    assert p[0] > 0.5
    with pytest.raises(ValueError, match="one value per decision"):
        heads.update([sample], [[1.0]])


def test_group_reward_kwargs_reach_the_reward_and_need_a_reward() -> None:
    with pytest.raises(ValueError, match="name the group reward"):
        hop.train(hop.Args(env_kw=ENV_KW, steps=1, group_reward_kw=["gamma=0"]))
    args = hop.Args(env_kw=ENV_KW, steps=1, tasks_per_step=1, group_size=2, group_reward="feedback_request")
    hop.train(dataclasses.replace(args, group_reward_kw=["gamma=0"]))
    with pytest.raises(TypeError):
        hop.train(dataclasses.replace(args, group_reward_kw=["delta=1"]))
