"""IAPO's influence credit: Props 1-3 on random graphs, hand-computed weights, and the annotators."""

from __future__ import annotations

import json
import math

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import papergym  # noqa: F401
from papergym.backends.model_roles import ModelAnnotator
from papergym.core.trajectory import OraclePolicy, Step, Trajectory, rollout
from papergym.credit.influence import (
    InfluenceAdvantage,
    InfluenceAnnotation,
    ModelGraphAnnotator,
    ProvenanceAnnotator,
    features,
    iapo_weights,
    influence_graph,
    moved_share,
)


class _Fixed:
    """An annotator returning a fixed annotation (whatever the trajectory)."""

    def __init__(self, annotation: InfluenceAnnotation) -> None:
        self.annotation = annotation

    def __call__(self, traj: Trajectory) -> InfluenceAnnotation:
        return self.annotation


def _traj(n: int) -> Trajectory:
    return Trajectory("t", 0, [Step("", f"a{i}", 0.0, {}) for i in range(n)])


@st.composite
def annotated(draw: st.DrawFn) -> tuple[InfluenceAnnotation, list[int]]:
    n = draw(st.integers(1, 9))
    pairs = [(i, j) for j in range(n) for i in range(j)]
    support = draw(st.lists(st.sampled_from(pairs), max_size=12)) if pairs else []
    failed = draw(st.lists(st.sampled_from(pairs), max_size=6)) if pairs else []
    errors = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    direct = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    lengths = draw(st.lists(st.integers(0, 60), min_size=n, max_size=n).filter(lambda x: sum(x) > 0))
    return InfluenceAnnotation(n, errors, support, failed, direct), lengths


advantages = st.floats(-5, 5, allow_nan=False).filter(lambda a: abs(a) > 1e-3)


@settings(max_examples=60, deadline=None)
@given(annotated(), advantages)
def test_total_advantage_is_conserved(case, advantage):
    annotation, lengths = case
    token_adv = InfluenceAdvantage(annotator=_Fixed(annotation))(
        _traj(annotation.n), advantage, action_lengths=lengths
    )
    assert math.isclose(
        sum(n * a for n, a in zip(lengths, token_adv, strict=True)),
        sum(lengths) * advantage,
        rel_tol=1e-9,
        abs_tol=1e-9,
    )


@settings(max_examples=60, deadline=None)
@given(annotated(), advantages)
def test_sign_is_preserved(case, advantage):
    annotation, lengths = case
    weights = iapo_weights(annotation, advantage, lengths)
    assert all(w > 0 for w in weights)
    out = InfluenceAdvantage(annotator=_Fixed(annotation))(
        _traj(annotation.n), advantage, action_lengths=lengths
    )
    assert all(math.copysign(1.0, a) == math.copysign(1.0, advantage) and a != 0 for a in out)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9), st.booleans(), st.integers(0, 2), advantages, st.data())
def test_constant_features_give_uniform_weights(n, error, direct, advantage, data):
    lengths = data.draw(st.lists(st.integers(1, 60), min_size=n, max_size=n))
    annotation = InfluenceAnnotation(n, [error] * n, [], [], [direct] * n)
    phi_pos, phi_neg = features(influence_graph(annotation))
    assert len(set(phi_pos)) == 1 and len(set(phi_neg)) == 1
    assert iapo_weights(annotation, advantage, lengths) == pytest.approx([1.0] * n, abs=1e-12)


def test_zero_advantage_gives_zero():
    annotation = InfluenceAnnotation(3, support=[(0, 1)])
    assert (
        InfluenceAdvantage(annotator=_Fixed(annotation))(_traj(3), 0.0, action_lengths=[1, 2, 3]) == [0.0] * 3
    )


def test_hand_computed_chain():
    # 0 ->+ 1, equal lengths. phi+ = [log 2, log 2, 0]; mean 2/3 log 2, std 0.3268; z = [.71, .71, -1.41]
    # clipped to [.25, .25, -.25]; exp = [1.2840, 1.2840, 0.7788], renormalised by 3 / 3.3468.
    annotation = InfluenceAnnotation(3, support=[(0, 1)])
    phi_pos, phi_neg = features(influence_graph(annotation))
    assert phi_pos == pytest.approx([math.log(2), math.log(2), 0.0]) and phi_neg == [0.0] * 3
    assert iapo_weights(annotation, 1.0, [10, 10, 10]) == pytest.approx(
        [1.150955, 1.150955, 0.698090], abs=1e-6
    )
    assert iapo_weights(annotation, -1.0, [10, 10, 10]) == pytest.approx([1.0, 1.0, 1.0])


def test_hand_computed_error_graph():
    # Action 1 failed; 2 falls back from it (1 ->- 2); 0 (which used the opening user turn) feeds 2 and 3;
    # 2 feeds 3. Lengths 10, 20, 10, 40 (L = 80).
    annotation = InfluenceAnnotation(
        4,
        errors=[False, True, False, False],
        support=[(0, 2), (0, 3), (2, 3)],
        failed=[(1, 2)],
        direct_user=[1, 0, 0, 0],
    )
    phi_pos, phi_neg = features(influence_graph(annotation))
    # d+ = [2, 0, 1, 0], d_in = [1, 0, 1, 2]; e = [0, 1, 0, 0], d- = [0, 1, 0, 0].
    assert phi_pos == pytest.approx([math.log(4), 0.0, math.log(3), math.log(3)])
    assert phi_neg == pytest.approx([0.0, math.log(3), 0.0, 0.0])
    lengths = [10, 20, 10, 40]
    # m+: mean 0.8599, std 0.5052, z = [1.04, -1.70, 0.47, 0.47] -> clip -> exp, times 80 / 92.616.
    # Routing: psi- = phi- - 0.2747, factor exp(-0.05 psi-), renormalised to sum L w = 80.
    assert iapo_weights(annotation, 2.0, lengths) == pytest.approx(
        [1.119159, 0.642523, 1.119159, 1.119159], abs=1e-6
    )
    # Negative branch: m- only (all z clip at +-0.25): blame goes to the failed call.
    assert iapo_weights(annotation, -2.0, lengths) == pytest.approx(
        [0.860452, 1.418645, 0.860452, 0.860452], abs=1e-6
    )


def test_bad_lengths_raise():
    with pytest.raises(ValueError, match="entries"):
        InfluenceAdvantage()(_traj(2), 1.0, action_lengths=[1])
    with pytest.raises(ValueError, match="positive sum"):
        iapo_weights(InfluenceAnnotation(2), 1.0, [0, 0])
    with pytest.raises(ValueError, match="0 <= i < j"):
        InfluenceAnnotation(2, support=[(1, 0)])


def _oracle_traj(task_id: str, domain: str = "retail") -> Trajectory:
    env = gym.make("papergym/ServiceAgent-v0", domain=domain)
    policy = OraclePolicy()
    policy.bind(env)
    traj = rollout(env, policy, seed=0, options={"task_id": task_id})
    env.close()
    return traj


def test_provenance_annotator_on_an_oracle_episode():
    traj = _oracle_traj("retail/train/L1/3")
    assert traj.success
    annotation = ProvenanceAnnotator()(traj)
    assert annotation.n == len(traj.steps) and not any(annotation.errors)
    assert annotation.support, "the oracle reads ids from tool results, so some action must use another"
    for i, j in annotation.support:
        record = traj.steps[j].info["provenance"]
        assert any(s.get("step") == i or s.get("elicited_by") == i for s in record["sources"])
    weights = InfluenceAdvantage().weights(traj, 1.0, [len(s.action) for s in traj.steps])
    assert moved_share(weights) > 0


class _ScriptedChat:
    def __init__(self, reply: str) -> None:
        self.reply, self.calls = reply, 0

    def chat(self, messages, *, seed=None, max_tokens=None, temperature=0.0, **kwargs) -> str:
        self.calls += 1
        assert "(action 1)" in messages[-1]["content"]
        return self.reply


def test_model_annotator_edges_and_validation():
    rows = [
        {"step": 0, "error": False, "inputs": [], "user_direct": 1},
        {"step": 1, "error": True, "inputs": [0, 5], "failed": []},  # 5 is not earlier: dropped
        {"step": 2, "inputs": ["0"], "failed": [1, 2]},  # 2 -> 2 is not causal: dropped
    ]
    chat = _ScriptedChat("```json\n" + json.dumps(rows) + "\n```")
    annotation = ModelGraphAnnotator(chat)(_traj(3))
    assert annotation.support == [(0, 1), (0, 2)] and annotation.failed == [(1, 2)]
    assert annotation.errors == [False, True, False] and annotation.direct_user == [1, 0, 0]
    hook = InfluenceAdvantage(annotator=ModelAnnotator(chat))
    out = hook(_traj(3), 1.0, action_lengths=[5, 5, 5])
    assert chat.calls == 2 and sum(out) == pytest.approx(3.0) and len(set(round(a, 6) for a in out)) > 1


def test_noisy_annotator_drops_and_adds_edges_reproducibly():
    from papergym.credit.influence import NoisyAnnotator

    pairs = [(i, j) for j in range(12) for i in range(j)]
    base = _Fixed(InfluenceAnnotation(12, support=pairs[::2], failed=pairs[1::5]))
    traj = _traj(12)
    assert NoisyAnnotator(base, rate=0.0)(traj).support == sorted(base.annotation.support)
    noisy = NoisyAnnotator(base, rate=0.3, seed=1)(traj)
    assert noisy.support != sorted(base.annotation.support)
    again = NoisyAnnotator(base, rate=0.3, seed=1)(traj)
    assert (noisy.support, noisy.failed) == (again.support, again.failed)
    weights = iapo_weights(noisy, 1.0, [3] * 12)
    assert sum(weights) == pytest.approx(12.0)
    with pytest.raises(ValueError, match="rate"):
        NoisyAnnotator(base, rate=1.5)


def test_influence_advantage_noise_wraps_the_annotator_in_a_noisy_one():
    from papergym.credit import ADVANTAGE_HOOKS, resolve
    from papergym.credit.influence import NoisyAnnotator

    pairs = [(i, j) for j in range(12) for i in range(j)]
    base = _Fixed(InfluenceAnnotation(12, support=pairs[::2], failed=pairs[1::5]))
    assert InfluenceAdvantage(annotator=base).annotator is base
    hook = InfluenceAdvantage(annotator=base, noise=0.3, noise_seed=1)
    assert isinstance(hook.annotator, NoisyAnnotator) and hook.annotator.base is base
    assert (hook.annotator.rate, hook.annotator.seed) == (0.3, 1)
    traj, lengths = _traj(12), [3] * 12
    noisy = iapo_weights(NoisyAnnotator(base, rate=0.3, seed=1)(traj), 1.0, lengths)
    assert hook.weights(traj, 1.0, lengths) == pytest.approx(noisy)
    assert hook.weights(traj, 1.0, lengths) != pytest.approx(
        InfluenceAdvantage(annotator=base).weights(traj, 1.0, lengths)
    )
    by_name = resolve("influence", ADVANTAGE_HOOKS, noise=0.2)
    assert isinstance(by_name.annotator, NoisyAnnotator)
    assert isinstance(by_name.annotator.base, ProvenanceAnnotator)


@pytest.mark.parametrize("advantage", [1.0, -0.5])
def test_shuffled_weights_keep_their_spread_and_mass_but_not_their_turns(advantage):
    from papergym.credit import ADVANTAGE_HOOKS, resolve

    pairs = [(i, j) for j in range(12) for i in range(j)]
    base = _Fixed(InfluenceAnnotation(12, errors=[i % 4 == 0 for i in range(12)], support=pairs[::3]))
    traj, lengths = _traj(12), [3] * 12
    clean = InfluenceAdvantage(annotator=base).weights(traj, advantage, lengths)
    shuffled = InfluenceAdvantage(annotator=base, shuffle=True).weights(traj, advantage, lengths)
    assert sorted(shuffled) == pytest.approx(sorted(clean)) and shuffled != pytest.approx(clean)
    assert shuffled == InfluenceAdvantage(annotator=base, shuffle=True).weights(traj, advantage, lengths)
    uneven = [1, 5] * 6
    mass = InfluenceAdvantage(annotator=base, shuffle=True).weights(traj, advantage, uneven)
    assert sum(w * n for w, n in zip(mass, uneven, strict=True)) == pytest.approx(sum(uneven))
    assert InfluenceAdvantage(annotator=base, shuffle=True).weights(traj, 0.0, lengths) == [0.0] * 12
    assert resolve("influence", ADVANTAGE_HOOKS, shuffle=True).shuffle
