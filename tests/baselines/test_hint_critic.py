"""The hopper's learned critic: its hints and their exact probabilities, DPO on decision paths, RDPO pairs
from rollouts, the oracle-cloned warm start, and the alternation inside the hopper's GRPO."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("bm25s")

import torch

from papergym.baselines import hint_critic as hc
from papergym.baselines import search_hopper as hop
from papergym.baselines.softmax_grpo import SoftmaxHeads
from papergym.core.trajectory import Step, Trajectory

ENV = "papergym/SearchCritic-v0"
ENV_KW = ["n_passages=300", "max_episode_steps=10"]
QUESTION = "Where was the father of the director of the film The Ko Gate born?"
FILM = "The Ko Gate is a 1950 war film directed by Ana Bo."
DIRECTOR = "Ana Bo (born 1901 in Tek) is a chemist from Vel. Their father was Li Wu, a chemist."


def _messages(*passages: tuple[str, str]) -> list[dict[str, str]]:
    docs = "\n".join(f"Doc {i}(Title: {t}) {x}" for i, (t, x) in enumerate(passages, 1))
    return [
        {"role": "user", "content": f"Question: {QUESTION}"},
        {"role": "assistant", "content": "<search>The Ko Gate</search>"},
        {"role": "tool", "content": f"<information>{docs}</information>"},
    ]


def test_hint_options_cover_every_walk_and_their_probabilities_sum_to_one() -> None:
    reading = hc.reading_of(QUESTION, _messages(("The Ko Gate", FILM), ("Ana Bo (film director)", DIRECTOR)))
    options = hc.hint_options(reading)
    assert set(options) == {
        hc.ANSWER_NOW,
        'Missing hop: search for "Li Wu chemist".',  # creator, then father
    }
    heads = SoftmaxHeads(hop.HEADS)
    with torch.no_grad():
        heads.logits["hint"].normal_(generator=torch.Generator().manual_seed(0))
    assert float(heads.path_logprobs(list(options.values())).detach().exp().sum()) == pytest.approx(
        1.0, abs=1e-6
    )
    no_passage = hc.hint_options(hc.reading_of(QUESTION, _messages()))
    assert no_passage == {'Missing hop: search for "The Ko Gate".': [[]]}  # nothing to choose


def test_the_critic_says_one_of_its_options_and_the_same_seed_gives_the_same_hint() -> None:
    messages = _messages(("The Ko Gate", FILM), ("Ana Bo (film director)", DIRECTOR))
    critic = hc.HintCritic(SoftmaxHeads(hop.HEADS))
    options = hc.hint_options(hc.reading_of(QUESTION, messages))
    said = [critic.feedback(QUESTION, messages, seed=s) for s in range(40)]
    assert set(said) <= set(options) and len(set(said)) == 2  # uniform rows: both hints occur
    assert said == [critic.feedback(QUESTION, messages, seed=s) for s in range(40)]
    assert repr(critic) == "HintCritic()"


def test_dpo_on_paths_prefers_the_chosen_hint_and_leaves_the_agents_rows() -> None:
    reading = hc.reading_of(QUESTION, _messages(("The Ko Gate", FILM), ("Ana Bo (film director)", DIRECTOR)))
    options = hc.hint_options(reading)
    chosen, rejected = options['Missing hop: search for "Li Wu chemist".'], options[hc.ANSWER_NOW]
    heads = SoftmaxHeads(hop.HEADS)
    before = {k: v.detach().clone() for k, v in heads.logits.items()}
    p0 = hc.agreement(heads, [chosen])[0]
    loss = heads.prefer([(chosen, rejected)], steps=10, lr=0.1)
    assert hc.agreement(heads, [chosen])[0] > p0 + 0.2 and 0 < loss < np.log(2)
    for name, table in heads.logits.items():
        assert torch.equal(table, before[name]) == (name != "hint")
    assert heads.prefer([], steps=10, lr=0.1) == 0.0


def test_imitating_paths_raises_their_probability() -> None:
    reading = hc.reading_of(QUESTION, _messages(("The Ko Gate", FILM), ("Ana Bo (film director)", DIRECTOR)))
    target = hc.hint_options(reading)['Missing hop: search for "Li Wu chemist".']
    heads = SoftmaxHeads(hop.HEADS)
    p0 = hc.agreement(heads, [target])[0]
    assert p0 == pytest.approx(1 / 9)  # creator, then father, of three relations each
    heads.imitate_outputs([target], steps=30, lr=0.1)
    assert hc.agreement(heads, [target])[0] > max(p0 + 0.3, 0.9)


def _fed(success: bool, feedback: str, *, prefix: str = "<search>The Ko Gate</search>") -> Trajectory:
    messages = _messages(("The Ko Gate", FILM), ("Ana Bo (film director)", DIRECTOR))
    segments = {
        "n_requests": 1,
        "request_step": 1,
        "prefix": prefix,
        "feedback": feedback,
        "critic_input": {"question": QUESTION, "trajectory": messages},
    }
    return Trajectory(
        "q", 0, [Step("Question: ...", "a", float(success), {"segments": segments})], success=success
    )


def test_critic_pairs_keep_different_sayable_hints_and_count_the_rest() -> None:
    good = _fed(True, 'Missing hop: search for "Li Wu chemist".')
    group = [good, _fed(False, hc.ANSWER_NOW), _fed(False, good.final_info["segments"]["feedback"])]
    group.append(_fed(False, 'Missing hop: search for "Someone Else".'))
    group.append(_fed(False, hc.ANSWER_NOW, prefix="<search>entirely other words here</search>"))
    pairs, count = hc.critic_pairs([group])
    assert count == hc.PairCount(found=3, same=1, unsayable=1, used=1)
    ((chosen, rejected),) = pairs
    options = hc.hint_options(
        hc.reading_of(QUESTION, good.final_info["segments"]["critic_input"]["trajectory"])
    )
    assert (
        chosen == options['Missing hop: search for "Li Wu chemist".'] and rejected == options[hc.ANSWER_NOW]
    )


def test_in_menu_maps_the_oracles_wording() -> None:
    assert (
        hc.in_menu("You have already retrieved every passage the question needs. Re-read them.")
        == hc.ANSWER_NOW
    )
    assert (
        hc.in_menu('Bad query: ... search for "Li Wu chemist".') == 'Missing hop: search for "Li Wu chemist".'
    )
    assert hc.in_menu('Start with X: search for "the exact name of the first option".') is None
    assert hc.in_menu("Re-check your chain of evidence.") is None


def test_the_warm_critic_agrees_with_the_oracle_more_than_a_uniform_one() -> None:
    args = hc.Args(env=ENV, env_kw=ENV_KW, critic_demos=30, seed=0)
    held_out = hc.oracle_hints(ENV, ENV_KW, episodes=30, seed=99, split="test")
    assert held_out, "the untrained agent's episodes should reach inputs where the critic has a choice"
    warm, uniform = hc.warm_critic(args), hop.HopperPolicy()
    assert np.mean(hc.agreement(warm.heads, held_out)) > np.mean(hc.agreement(uniform.heads, held_out)) + 0.1
    for name in ("read", "act", "query", "answer"):  # only the critic's rows were cloned
        assert not warm.heads.logits[name].detach().any()


def test_critic_only_training_keeps_the_agent_and_runs_rdpo_rounds() -> None:
    args = hc.Args(
        env=ENV, env_kw=ENV_KW, steps=4, tasks_per_step=4, group_size=4, seed=0,
        critic_demos=8, rdpo_every=2, update_agent=False,
    )  # fmt: skip
    rows: list[dict[str, float]] = []
    policy, log = hc.train(args, on_step=lambda step, metrics, p: rows.append(metrics))
    for name in ("read", "act", "query", "answer"):
        assert not policy.heads.logits[name].detach().any()
    assert [entry["step"] for entry in log] == [1.0, 3.0]
    assert all(e["found"] == e["same"] + e["unsayable"] + e["used"] for e in log)
    assert "rdpo_pairs" in rows[1] and "rdpo_pairs" not in rows[0]
    again, log_again = hc.train(args)
    assert log_again == log and torch.equal(again.heads.logits["hint"], policy.heads.logits["hint"])


def test_the_agent_learns_with_the_learned_critic_and_differs_from_critic_only() -> None:
    args = hc.Args(env=ENV, env_kw=ENV_KW, steps=20, seed=0, critic_demos=8)
    rows: list[dict[str, float]] = []
    hc.train(args, on_step=lambda step, metrics, p: rows.append(metrics))
    frozen: list[dict[str, float]] = []
    hc.train(dataclasses.replace(args, update_agent=False), on_step=lambda s, m, p: frozen.append(m))
    assert np.mean([r["success"] for r in rows[-5:]]) > np.mean([r["success"] for r in frozen[-5:]]) + 0.2


def test_a_shared_critic_draws_from_the_agents_read_rows_and_rdpo_moves_them() -> None:
    messages = _messages(("The Ko Gate", FILM), ("Ana Bo (film director)", DIRECTOR))
    options = hc.hint_options(hc.reading_of(QUESTION, messages), "read")
    assert {h for paths in options.values() for p in paths for h, _, _ in p} == {"read"}
    heads = SoftmaxHeads(hop.HEADS)
    chosen, rejected = options['Missing hop: search for "Li Wu chemist".'], options[hc.ANSWER_NOW]
    heads.prefer([(chosen, rejected)], steps=10, lr=0.1)
    assert heads.logits["read"].detach().any() and not heads.logits["hint"].detach().any()
    critic = hc.HintCritic(heads, "read")
    said = [critic.feedback(QUESTION, messages, seed=s) for s in range(40)]
    assert said.count(hc.ANSWER_NOW) < 20  # the preferred hint now dominates (1/9 under uniform rows)
    warm = hc.warm_critic(hc.Args(env=ENV, env_kw=ENV_KW, critic_demos=20, critic_rows="shared"))
    assert warm.heads.logits["read"].detach().any() and not warm.heads.logits["hint"].detach().any()
    with pytest.raises(ValueError, match="rdpo_every and rdpo_steps must be >= 0"):
        hc.train(hc.Args(env=ENV, env_kw=ENV_KW, rdpo_every=-1))
    with pytest.raises(ValueError, match="critic_rows must be one of"):
        _ = hc.Args(critic_rows="both").critic_head
