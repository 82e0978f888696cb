"""Structural pair builders (the intended label on every pair), the Bradley–Terry pieces and the judges."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.core import info_keys as K
from papergym.envs.selfplay import (
    BTJudge,
    ModelPreferenceJudge,
    Pair,
    bradley_terry_loss,
    bt_win_rates,
    pair_accuracy,
    raw_env,
    role_asymmetry_pairs,
    self_scored,
    subtask_amplification_pairs,
)
from papergym.envs.selfplay.pairs import satisfied
from papergym.envs.selfplay.writing import KINDS, Constraint, draw_brief, parse_constraints, words
from tests.backends.scripted import ScriptedChat


def _texts(rng: np.random.Generator, vocab: tuple[str, ...]) -> list[str]:
    """Varied answers: random topic words, lengths, endings and bullet lines."""
    out = []
    for _ in range(6):
        n = int(rng.integers(0, 60))
        body = " ".join(vocab[int(i)] for i in rng.integers(len(vocab), size=n))
        if rng.random() < 0.3:
            body += "\n- " + vocab[0] + "\n- really"
        out.append(body + str(rng.choice(["", "?", "!", "."])))
    return out


@pytest.mark.parametrize("mode", ["drop", "amplify"])
def test_every_subtask_pair_has_the_intended_label(mode: str) -> None:
    rng = np.random.default_rng(0)
    total = 0
    for _ in range(60):
        brief = draw_brief(rng)
        constraints = brief.menu
        texts = _texts(rng, brief.vocabulary)
        pairs = subtask_amplification_pairs("task", texts, constraints, mode=mode)  # type: ignore[arg-type]
        for p in pairs:
            assert satisfied(p.rejected, constraints) < satisfied(p.chosen, constraints), p
            assert (p.chosen if mode == "drop" else p.rejected) in texts
            assert p.kind == "subtask_amplification"
        total += len(pairs)
    assert total > 200  # the constructions fire for every kind of constraint, not vacuously
    kinds_seen = {
        p.detail.split()[1].split(":")[0]
        for s in range(30)
        for b in [draw_brief(np.random.default_rng(s))]
        for p in subtask_amplification_pairs(
            "t",
            [*_texts(np.random.default_rng(s), b.vocabulary), "x"],
            b.menu,
            mode=mode,  # type: ignore[arg-type]
        )
    }
    assert kinds_seen == set(KINDS)


def test_each_constraint_breaks_and_fixes_by_hand() -> None:
    text = "The ferry crosses the river?"
    cases = {
        Constraint("include", "ferry"): ("The crosses the river?", text),
        Constraint("avoid", "really"): ("The ferry crosses the river really?", text),
        Constraint("end_with", "?"): ("The ferry crosses the river!", text),
        Constraint("min_words", "3"): ("the ferry?", text),
    }
    for c, (broken, fixed) in cases.items():
        assert c.check(text) and c.broken(text) == broken and not c.check(broken)
        assert c.fixed(broken) is not None and c.check(c.fixed(broken)) and c.fixed(text) == fixed
    assert Constraint("max_words", "3").broken("a b c") == "a b c and"
    assert Constraint("bullets", "2").fixed("x") == "x\n- point 1\n- point 2"
    assert words(Constraint("max_words", "2").fixed("one two three!")) == ["one", "two"]
    assert parse_constraints("include: Tide\nbullets: 0") is None
    assert parse_constraints("avoid: really\navoid: really") == (Constraint("avoid", "really"),)


def test_role_asymmetry_pairs_prefer_the_reference() -> None:
    answers = ["blind one", "ref", "blind two "]
    pairs = role_asymmetry_pairs("task", "ref", answers)
    assert [(p.chosen, p.rejected) for p in pairs] == [("ref", "blind one"), ("ref", "blind two ")]
    assert all(p.kind == "role_asymmetry" for p in pairs)


def test_env_pairs_carry_the_intended_labels_on_every_round() -> None:
    env = raw_env(domains=("writing",), group_size=4)
    rng = np.random.default_rng(3)
    n_pairs = 0
    for seed in range(15):
        env.reset(seed=seed)
        brief = env.game.round.material
        chosen = [c for c in brief.menu if rng.random() < 0.6] or [brief.menu[0]]
        task = "Write about the " + brief.topic + ".\n" + "\n".join(c.render() for c in chosen)
        reference = brief.source
        for c in chosen:
            reference = c.fixed(reference)
        env.step(f"<task>{task}</task><reference>{reference}</reference>")
        for text in _texts(rng, brief.vocabulary)[:4]:
            env.step(text)
        env.step(env.judge_action())
        info = env.infos["judge"]
        for p in info[K.PAIRS]:
            assert info[K.CANDIDATES][p["chosen_index"]] == p["chosen"]
            assert info[K.CANDIDATES][p["rejected_index"]] == p["rejected"]
            if p["kind"] == "role_asymmetry":
                assert p["chosen"] == reference.strip() and p["rejected"] != p["chosen"]
            else:
                assert satisfied(p["rejected"], tuple(chosen)) < satisfied(p["chosen"], tuple(chosen))
            n_pairs += 1
    assert n_pairs > 50


def test_self_scored_relabels_by_score_and_keeps_ties() -> None:
    pairs = [Pair("t", "a", "b", "role_asymmetry"), Pair("t", "c", "d", "role_asymmetry")]
    out = self_scored(pairs, [0.0, 1.0], [1.0, 1.0])
    assert (out[0].chosen, out[0].rejected) == ("b", "a") and out[1] == pairs[1]
    with pytest.raises(ValueError):
        self_scored(pairs, [0.0], [1.0])


def test_bradley_terry_pieces_by_hand() -> None:
    assert bradley_terry_loss([1.0], [0.0]) == pytest.approx(math.log(1 + math.exp(-1)))
    assert bradley_terry_loss([], []) == 0.0
    assert bt_win_rates([1.0, 0.0]) == pytest.approx([1 / (1 + math.exp(-1)), 1 / (1 + math.exp(1))])
    assert bt_win_rates([3.0]) == [0.5]
    assert pair_accuracy([1.0, 0.0, 2.0], [0.0, 0.0, 1.0]) == pytest.approx(2 / 3)


def test_bt_judge_learns_structural_pairs_and_generalises() -> None:
    rng = np.random.default_rng(7)

    def pairs(n: int) -> list[Pair]:
        out: list[Pair] = []
        while len(out) < n:
            brief = draw_brief(rng)
            task = "Write.\n" + "\n".join(c.render() for c in brief.menu)
            out += subtask_amplification_pairs(task, _texts(rng, brief.vocabulary), brief.menu)
        return out[:n]

    train, held_out = pairs(400), pairs(200)
    judge = BTJudge(seed=0)
    before = judge.pair_accuracy(held_out)
    loss = judge.update(train)
    after = judge.pair_accuracy(held_out)
    assert after > 0.85 and after > before
    assert loss < bradley_terry_loss(*judge.pair_scores(train)) + 1e-9 or loss < 0.5
    assert judge.update([]) == 0.0


def test_model_preference_judge_scores_by_win_rate() -> None:
    chat = ScriptedChat("A", "B", "neither")
    judge = ModelPreferenceJudge(chat)
    # pairs asked in order (0,1): A, x wins; (0,2): B, z wins; (1,2): no letter, a tie
    assert judge.scores("task", ["x", "y", "z"], seed=3) == pytest.approx([0.5, 0.25, 0.75])
    assert (
        len(chat.calls) == 3
        and chat.last["seed"] == 3
        and "Response A:\ny" in chat.last["messages"][1]["content"]
    )
    both = ModelPreferenceJudge(ScriptedChat("A"), both_orders=True)
    assert both.scores("t", ["x", "y"]) == [0.5, 0.5]  # always "A": position bias cancels
    env = raw_env(domains=("math",), group_size=2, judge=ScriptedChat("A"))
    assert isinstance(env.judge, ModelPreferenceJudge)
