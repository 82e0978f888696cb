"""The count-based world model (`TransitionTable`), ``wm_error`` and MobileGUI-v0's real-step count."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.envs.mobile_gui.learned_wm import (
    collect_transitions,
    describe_action,
    encode_diff,
    next_screen_accuracy,
)
from papergym.envs.mobile_gui.phone import Phone
from papergym.envs.mobile_gui.render_text import render_text
from papergym.envs.mobile_gui.table_wm import TransitionTable, table_key
from papergym.envs.mobile_gui.world_models import NoisyWorldModel, WMState

TOGGLES = ["SystemBluetoothTurnOn", "SystemBluetoothTurnOff", "SystemWifiTurnOn", "SystemWifiTurnOff"]


@pytest.fixture(scope="module")
def transitions() -> list:
    return collect_transitions(episodes=30, seed=0, templates=TOGGLES)


def test_the_table_replays_its_data_where_the_data_agree(transitions: list) -> None:
    table = TransitionTable.fit(transitions)
    diffs: dict[str, Counter] = {}
    for t in transitions:
        key = table_key(t.screen, describe_action(t.action, t.screen), masked=False)
        diffs.setdefault(key, Counter())[encode_diff(t.screen, t.next_screen)] += 1
    checked = 0
    for t in transitions:
        key = table_key(t.screen, describe_action(t.action, t.screen), masked=False)
        if len(diffs[key]) == 1:
            predicted = table.predict(WMState("", t.screen), t.action).screen
            assert render_text(predicted) == render_text(t.next_screen)
            checked += 1
    assert checked > len(transitions) // 2
    assert table.coverage["exact"] == checked and table.coverage["miss"] == 0


def test_unseen_digits_fall_back_to_the_masked_key_and_unseen_screens_to_no_change(
    transitions: list,
) -> None:
    table = TransitionTable.fit(transitions)
    t = next(t for t in transitions if "open_app" in t.action and t.screen.title == "Home")
    bar = t.screen.elements[0]
    other_date = replace(bar, text=bar.text.replace("2026", "2031"))
    moved = replace(t.screen, elements=(other_date, *t.screen.elements[1:]))
    predicted = table.predict(WMState("", moved), t.action).screen
    assert table.coverage["masked"] == 1
    assert predicted.title == t.next_screen.title != moved.title  # the learned transition still happens
    unknown = replace(moved, title="Nowhere", app="Nothing")
    assert table.predict(WMState("", unknown), t.action).screen == unknown
    assert table.coverage["miss"] == 1


def test_it_beats_no_change_on_held_out_tasks_and_round_trips(tmp_path: Path, transitions: list) -> None:
    table = TransitionTable.fit(transitions)
    test = collect_transitions(episodes=12, seed=10**6, split="test", templates=TOGGLES)
    scores = next_screen_accuracy(table, test)
    assert scores["line_f1"] > scores["copy_line_f1"]
    loaded = TransitionTable.load(table.save(tmp_path / "t.json"))
    assert loaded.exact == table.exact and loaded.masked == table.masked
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    with pytest.raises(ValueError, match="not a transition table"):
        TransitionTable.load(tmp_path / "bad.json")


@pytest.mark.parametrize("wm_error", [0.0, 0.3])
def test_the_env_loads_a_table_by_name_and_never_steps_the_simulator(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, transitions: list, wm_error: float
) -> None:
    path = TransitionTable.fit(transitions).save(tmp_path / "table.json")
    acts = []
    real_act = Phone.act
    monkeypatch.setattr(Phone, "act", lambda phone, a: acts.append(a) or real_act(phone, a))
    env = gym.make("papergym/WorldModelGUI-v0", world_model=f"table:{path}", wm_error=wm_error).unwrapped
    inner = env.world_model.base if wm_error else env.world_model
    assert isinstance(inner, TransitionTable)
    assert isinstance(env.world_model, NoisyWorldModel) == (wm_error > 0)
    wins = 0
    for seed in range(4):
        env.reset(seed=seed, options={"template": TOGGLES[seed]})
        while True:
            *_, terminated, truncated, info = env.step(env.oracle_action())
            assert info["real_steps"] == 0
            if terminated or truncated:
                break
        wins += bool(info["success"])
    assert acts == []
    if not wm_error:
        assert wins == 4  # the oracle's toggles are in the table's data


def test_wm_error_is_a_probability() -> None:
    with pytest.raises(ValueError, match="wm_error"):
        gym.make("papergym/WorldModelGUI-v0", wm_error=1.5)


def test_mobile_gui_counts_the_actions_the_simulator_applied() -> None:
    env = gym.make("papergym/MobileGUI-v0")
    _, info = env.reset(seed=0, options={"template": "SystemWifiTurnOn"})
    assert info["real_steps"] == 0
    *_, info = env.step("not an action")
    assert info["real_steps"] == 0 and info["invalid_action"]
    n = 0
    while True:
        *_, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        n += 1
        assert info["real_steps"] == n
        if terminated or truncated:
            break
