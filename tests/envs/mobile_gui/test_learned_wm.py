"""The learned world model's data, diff format and backend (no model: scripted chat replies)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.envs.mobile_gui.learned_wm import (
    LearnedWorldModel,
    apply_diff,
    collect_transitions,
    encode_diff,
    line_f1,
    next_screen_accuracy,
    parse_element_line,
    training_pair,
)
from papergym.envs.mobile_gui.phone import Phone
from papergym.envs.mobile_gui.render_text import element_line, render_text


class DiffOracleChat:
    """A ChatModel that answers each prompt with the true diff of a known transition."""

    def __init__(self, transitions: Sequence) -> None:
        self.answers = {training_pair(t)[0][-1]["content"]: training_pair(t)[1] for t in transitions}

    def chat(self, messages, *, seed=None, max_tokens=512, temperature=0.0) -> str:
        return self.answers.get(messages[-1]["content"], "garbage")


class FixedChat:
    def __init__(self, reply: str) -> None:
        self.reply = reply

    def chat(self, messages, *, seed=None, max_tokens=512, temperature=0.0) -> str:
        return self.reply


@pytest.fixture(scope="module")
def transitions() -> list:
    return collect_transitions(episodes=6, seed=0) + collect_transitions(episodes=3, seed=0, layout="heldout")


def test_the_diff_round_trips_and_is_shorter_than_the_screen(transitions: list) -> None:
    assert len(transitions) > 30 and len({t.template for t in transitions}) > 2
    for t in transitions:
        diff = encode_diff(t.screen, t.next_screen)
        assert render_text(apply_diff(t.screen, diff)) == render_text(t.next_screen)
        for e in t.next_screen.elements:  # a hint under a text is not rendered, so compare the lines
            parsed = parse_element_line(element_line(e))
            assert parsed is not None and element_line(parsed) == element_line(e)
    same = next(t for t in transitions if t.screen == t.next_screen)
    assert encode_diff(same.screen, same.next_screen) == "=\n=*"  # "no change" is two lines
    total = sum(len(encode_diff(t.screen, t.next_screen)) for t in transitions)
    assert total < 0.8 * sum(len(render_text(t.next_screen)) for t in transitions)
    assert any(t.screen != t.next_screen for t in transitions)


def test_random_play_mixes_in_and_the_split_is_respected() -> None:
    oracle = collect_transitions(episodes=3, seed=1, random_rate=0.0)
    mixed = collect_transitions(episodes=3, seed=1, random_rate=1.0)
    assert [t.action for t in oracle] != [t.action for t in mixed]
    with pytest.raises(ValueError, match="random_rate"):
        collect_transitions(episodes=1, random_rate=2.0)


def test_a_garbled_reply_keeps_the_screen_and_drops_bad_lines(transitions: list) -> None:
    t = transitions[0]
    assert apply_diff(t.screen, "no header here") == t.screen
    diff = 'App: Settings | Screen: Settings\n=status_bar\n[x] Button "Broken (1,2\n=no_such_id\n=status_bar'
    out = apply_diff(t.screen, diff)
    assert out.title == "Settings" and [e.id for e in out.elements] == ["status_bar"]
    kept = apply_diff(t.screen, "=\n=*")
    assert kept == t.screen and apply_diff(t.screen, '=\n=*\n[x] Button "late" (0,0,1,1)') == t.screen


def test_accuracy_of_a_perfect_and_of_a_useless_model(transitions: list) -> None:
    prompts = Counter(training_pair(t)[0][-1]["content"] for t in transitions)
    # the screen does not show all of the state: a prompt seen twice may have two next screens
    unique = [t for t in transitions if prompts[training_pair(t)[0][-1]["content"]] == 1]
    perfect = next_screen_accuracy(LearnedWorldModel(DiffOracleChat(unique)), unique)
    assert perfect["exact"] == 1.0 and perfect["line_f1"] == 1.0 and perfect["n"] == len(unique) > 20
    useless = next_screen_accuracy(LearnedWorldModel(FixedChat("nonsense")), transitions)
    # an unreadable reply keeps the screen: exactly the "no change" floor
    assert useless["exact"] == useless["copy_exact"] < 1.0 and useless["line_f1"] == useless["copy_line_f1"]
    t = transitions[0]
    assert line_f1(t.screen, t.screen) == 1.0


def test_the_env_takes_the_learned_model_and_never_steps_the_simulator(
    monkeypatch: pytest.MonkeyPatch, transitions: list
) -> None:
    acts = []
    real_act = Phone.act
    monkeypatch.setattr(Phone, "act", lambda phone, a: acts.append(a) or real_act(phone, a))
    wm = LearnedWorldModel(DiffOracleChat(transitions))
    env = gym.make("papergym/WorldModelGUI-v0", world_model=wm)
    env.reset(seed=0)
    for _ in range(4):
        *_, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        assert info["real_steps"] == 0
        if terminated or truncated:
            break
    assert acts == []
