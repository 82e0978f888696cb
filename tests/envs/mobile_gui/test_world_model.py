"""WorldModelGUI-v0: imagination, world models, the tolerant HTML parser, judges."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import papergym  # noqa: F401
from papergym.core.trajectory import OraclePolicy, rollout
from papergym.envs.mobile_gui.phone import Phone
from papergym.envs.mobile_gui.templates import REGISTRY
from papergym.envs.mobile_gui.world_model_env import WorldModelGUIEnv, replay_true_success
from papergym.envs.mobile_gui.world_models import (
    CodeWorldModel,
    JsonSuccessJudge,
    NoisyWorldModel,
    SimulatorWorldModel,
    parse_html_screen,
)

IMAGINE = "<think>What happens? call_wm(action='open_app(app_name=\"Settings\")')</think>"


class FakeChat:
    """A ChatModel that replays fixed replies and records what it was sent."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.sent: list[Sequence[dict[str, str]]] = []

    def chat(
        self,
        messages: Sequence[dict[str, str]],
        *,
        seed: int | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> str:
        self.sent.append(messages)
        return self.replies[min(len(self.sent) - 1, len(self.replies) - 1)]


def _env(**kwargs: Any) -> WorldModelGUIEnv:
    return gym.make("papergym/WorldModelGUI-v0", **kwargs).unwrapped


def _contents(env: WorldModelGUIEnv) -> str:
    st = env._s.phone
    return json.dumps(
        [st.data, st.settings, st.top.app, env.wm.state.screen.to_dict(), env._s.steps], sort_keys=True
    )


def test_an_imagined_call_changes_nothing_and_is_capped() -> None:
    env = _env(n_wm_max=2)
    env.reset(seed=1, options={"template": "SystemWifiTurnOn"})
    before = _contents(env)
    obs, reward, terminated, truncated, info = env.step(IMAGINE)
    assert obs.startswith("The result of your imagined action") and "[wifi] Switch" in obs
    assert info["imagined"] and info["n_wm"] == 1 and not info["invalid_action"]
    assert info["real_steps"] == 1  # the default world model is the simulator: its prediction is a real step
    assert _contents(env) == before and not (terminated or truncated)
    env.step(IMAGINE)
    obs, reward, *_, info = env.step(IMAGINE)  # the third call is refused
    assert info["invalid_action"] and info["n_wm"] == 2 and "used up" in obs and reward < 0
    assert _contents(env) == before


@pytest.mark.parametrize("split", ["train", "test"])
def test_oracle_solves_every_template_in_the_simulator_world_model(split: str) -> None:
    env = _env(training=False)
    for k, name in enumerate(REGISTRY):
        env.reset(seed=k, options={"template": name, "split": split})
        steps = 0
        while True:
            *_, terminated, truncated, info = env.step(env.oracle_action())
            steps += 1
            if terminated or truncated:
                break
        # the evaluation simulator's actions plus the simulator world model's predictions (not finished)
        assert info["success"] and info["true_success"] and info["real_steps"] == 2 * steps - 1, name


def test_code_world_model_reply_with_script_and_broken_tags_is_parsed_and_played_on() -> None:
    reply = (
        "Here is the next screen:\n<!DOCTYPE html><html><head><style>.x{color:red}</style>"
        "<script>fetch('http://evil'); document.write('pwned')</script></head><body>"
        '<div id="render-target" data-app="Settings" data-title="Settings">'
        '<div id="title" data-bounds="20,80,1080,230">Settings'
        '<label id="wifi" class="Switch" data-bounds="0,230,1080,380" data-clickable="true" '
        'data-checked="true" onclick="steal()">Wi-Fi</label>'
        '<button id="bluetooth" data-bounds="0,380,1080,530">Bluetooth<b>unclosed'
        "<p>Loose paragraph <img src=x onerror=alert(1)>"
    )
    chat = FakeChat(reply)
    env = _env(world_model=CodeWorldModel(chat))
    env.reset(seed=2, options={"template": "SystemWifiTurnOn"})
    obs, *_ = env.step("Action: open_app(app_name='Settings')")
    screen = env.current_screen()
    assert screen.app == "Settings" and screen.find("wifi").checked is True and screen.find("wifi").clickable
    assert screen.find("bluetooth").text.startswith("Bluetooth")
    assert any("Loose paragraph" in e.text for e in screen.elements)
    assert "pwned" not in obs and "evil" not in obs and "steal" not in obs
    assert "Interaction Description" in chat.sent[0][-1]["content"]  # Code2World's prompt
    x, y = screen.find("wifi").center
    _, _, terminated, truncated, info = env.step(f"Action: tap(start_box='({x},{y})')")
    assert not (terminated or truncated) and info["real_steps"] == 0 and len(chat.sent) == 2
    assert "true_success" not in info and env._phone is None  # training mode: no evaluation simulator


def test_garbage_html_keeps_the_old_screen() -> None:
    old = _env()
    old.reset(seed=0)
    screen = old.current_screen()
    assert parse_html_screen("", fallback=screen) is screen
    assert parse_html_screen("<script>only a script</script>", fallback=screen) is screen
    assert parse_html_screen("<<<>>></div></span>", fallback=screen) is screen


def test_noisy_world_model_is_seeded_and_its_errors_show() -> None:
    env = _env()
    env.reset(seed=3, options={"template": "SystemBluetoothTurnOn"})
    state = env.wm.state
    action = "Action: open_app(app_name='Settings')"
    noisy = NoisyWorldModel(drop=0.5, hallucinate=0.5, wrong_text=0.5)
    assert noisy.predict(state, action, seed=7) == noisy.predict(state, action, seed=7)
    assert NoisyWorldModel(wrong_screen=1.0).predict(state, action, seed=1).screen.app == "Home"
    stuck = NoisyWorldModel(no_transition=1.0).predict(state, action, seed=1)
    assert stuck.screen == state.screen
    exact = SimulatorWorldModel().predict(state, action, seed=1)
    assert exact.screen.app == "Settings" and env.wm.state is state  # the input is never mutated
    with pytest.raises(ValueError, match="probability"):
        NoisyWorldModel(drop=1.5)


def test_a_json_judge_decides_success_and_true_success_is_kept_apart() -> None:
    judge = JsonSuccessJudge(FakeChat('{"reasoning": "looks done", "success": true}'))
    env = _env(judge=judge, training=False)
    env.reset(seed=4, options={"template": "SystemWifiTurnOn"})
    _, reward, terminated, _, info = env.step("Action: finished(content='')")  # nothing was done
    assert terminated and info["success"] is True and reward == 1.0 and info["true_success"] is False
    strict = _env(judge=JsonSuccessJudge(FakeChat("I cannot tell.")))
    strict.reset(seed=4, options={"template": "SystemWifiTurnOn"})
    assert strict.step("Action: finished(content='')")[4]["success"] is False


class _Counter:
    """Counts the real simulator's calls: `Phone.act` (transitions) and `Phone.screen` (screens built)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.acts = self.screens = 0
        act, screen = Phone.act, Phone.screen

        def counting_act(phone: Phone, action: Any) -> str:
            self.acts += 1
            return act(phone, action)

        def counting_screen(phone: Phone) -> Any:
            self.screens += 1
            return screen.fget(phone)  # type: ignore[attr-defined]

        monkeypatch.setattr(Phone, "act", counting_act)
        monkeypatch.setattr(Phone, "screen", property(counting_screen))


FIXED_HTML = (
    '<div id="render-target" data-app="Settings" data-title="Settings"><button id="wifi">Wi-Fi</button></div>'
)


def test_a_training_rollout_never_touches_the_simulator(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _Counter(monkeypatch)
    env = _env(world_model=CodeWorldModel(FakeChat(FIXED_HTML)))
    canned = [a for a in env.canned_actions if "finished" not in a] + [IMAGINE]
    for seed, name in enumerate(("SystemWifiTurnOn", "ExpenseAddMultiple", "NotesTodoItemCount")):
        env.reset(seed=seed, options={"template": name})
        calls.acts = calls.screens = 0  # the start screen (task data) is built at reset
        k = 0
        while True:
            action = env.oracle_action() if k % 2 else canned[k % len(canned)]
            *_, terminated, truncated, info = env.step(action)
            k += 1
            assert info["real_steps"] == 0 and "true_success" not in info
            if terminated or truncated:
                break
        env.restore(env.snapshot())
        assert calls.acts == 0 and calls.screens == 0, name
        env.replay_true_success()  # evaluation, after the episode: the counter sees it
        assert calls.acts > 0


def test_real_steps_count_every_simulator_call(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _Counter(monkeypatch)
    noisy = NoisyWorldModel(no_transition=0.3, drop=0.2)  # over the simulator: its predictions are real steps
    for training in (True, False):
        env = _env(world_model=noisy, training=training)
        env.reset(seed=5, options={"template": "SystemBluetoothTurnOn"})
        calls.acts = 0
        while True:
            *_, terminated, truncated, info = env.step(env.oracle_action())
            assert info["real_steps"] == calls.acts, training
            if terminated or truncated:
                break
        assert info["real_steps"] > 0


def test_replayed_true_success_equals_the_evaluation_simulators() -> None:
    noisy = NoisyWorldModel(no_transition=0.2, drop=0.2, wrong_text=0.2)
    live = _env(world_model=noisy, training=False)
    train = _env(world_model=noisy)
    names = ["SystemWifiTurnOn", "ContactsAddContact", "NotesTodoItemCount", "ExpenseDeleteSingle"]
    outcomes = []
    for seed in range(8):
        options = {"template": names[seed % len(names)], "split": "test"}
        traj = rollout(live, OraclePolicy(), seed=seed, options=options)
        truth = traj.steps[-1].info["true_success"]
        assert live.replay_true_success() is truth is live.replay_true_success(traj)
        same = rollout(train, OraclePolicy(), seed=seed, options=options)
        assert [s.action for s in same.steps] == [s.action for s in traj.steps]
        assert train.replay_true_success(same) is truth
        outcomes.append(truth)
    assert True in outcomes and False in outcomes  # both outcomes occur, so the equality is not vacuous
    assert replay_true_success(traj.task_id, ["Action: finished(content='')"]) is False


def test_render_draws_the_screen_the_agent_sees() -> None:
    wrong = NoisyWorldModel(wrong_screen=1.0)  # every prediction is the home screen
    env = gym.make("papergym/WorldModelGUI-v0", world_model=wrong, render_mode="ansi", training=False)
    env.reset(seed=0, options={"template": "SystemWifiTurnOn"})
    env.step("Action: open_app(app_name='Settings')")
    assert env.render().startswith("App: Home") and env.unwrapped.phone.screen.app == "Settings"


def test_image_mode_shows_the_imagined_screen_then_the_current_one() -> None:
    pytest.importorskip("PIL.ImageDraw")
    from papergym.envs.mobile_gui.render_image import render_image

    env = _env(screen="image")
    obs, _ = env.reset(seed=1, options={"template": "SystemWifiTurnOn"})
    start = obs["image"]
    assert start.shape == env.observation_space["image"].shape
    imagined, *_, info = env.step(IMAGINE)
    assert info["imagined"]
    wm = env.unwrapped
    predicted = wm.world_model.predict(wm.wm.state, 'open_app(app_name="Settings")', seed=0).screen
    assert (imagined["image"] == np.asarray(render_image(predicted, bezel=False))).all()
    assert (imagined["image"] != start).any()


def test_image_mode_rejects_a_prediction_that_is_not_a_screen() -> None:
    pytest.importorskip("PIL.ImageDraw")
    env = _env(screen="image")
    env.reset(seed=1, options={"template": "SystemWifiTurnOn"})
    env.unwrapped._imagined = "Settings app, wifi off"
    with pytest.raises(TypeError, match="screen='text'"):
        env.unwrapped._observed_screen()
