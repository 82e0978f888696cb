"""Every template: the oracle solves it in both splits and both layouts, and its checks are real."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import papergym  # noqa: F401  (registers the ids)
from papergym.envs.mobile_gui.mobile_gui_env import MobileGUIEnv
from papergym.envs.mobile_gui.templates import MODULES, REGISTRY, budget

METADATA = Path(__file__).resolve().parents[3].parent / "shared" / "androidworld" / "task_metadata.json"


def _env(layout: str = "default") -> MobileGUIEnv:
    return gym.make("papergym/MobileGUI-v0", layout=layout).unwrapped


def _oracle_episode(env: MobileGUIEnv, name: str, split: str, seed: int) -> tuple[list[str], dict]:
    env.reset(seed=seed, options={"template": name, "split": split})
    actions: list[str] = []
    while True:
        actions.append(env.oracle_action())
        _, _, terminated, truncated, info = env.step(actions[-1])
        assert not info["invalid_action"], actions[-1]
        if terminated or truncated:
            return actions, info


def _contents(env: MobileGUIEnv) -> str:
    """The phone's contents (data, settings, clock, clipboard, queue, open form's draft, foreground app)."""
    st = env._s.phone
    return json.dumps(
        [st.data, st.settings, st.clock, st.clipboard, st.queue, st.top.draft, st.top.app], sort_keys=True
    )


def test_at_least_60_androidworld_templates_are_covered() -> None:
    covered = sorted(REGISTRY)
    assert len(covered) >= 60, covered
    assert len(MODULES) >= 5  # split into several modules
    if METADATA.exists():
        meta = {t["task_name"]: t for t in json.loads(METADATA.read_text())}
        unknown = [n for n in covered if n not in meta]
        assert not unknown, f"not AndroidWorld templates: {unknown}"
        wrong = [n for n in covered if REGISTRY[n].optimal_steps != int(meta[n]["optimal_steps"])]
        assert not wrong, f"optimal_steps differ from task_metadata.json: {wrong}"


def test_question_and_multi_app_templates_are_included() -> None:
    questions = [n for n, t in REGISTRY.items() if t.question]
    multi_app = [n for n, t in REGISTRY.items() if len(set(t.apps)) >= 2]
    assert len(questions) >= 20
    assert {"SimpleSmsSendReceivedAddress", "ExpenseAddMultipleFromMarkor", "MarkorCreateNoteAndSms"} <= set(
        multi_app
    )


@pytest.mark.parametrize("layout", ["default", "heldout"])
@pytest.mark.parametrize("split", ["train", "test"])
def test_oracle_solves_every_template_and_checks_are_real(layout: str, split: str) -> None:
    env = _env(layout)
    for k, (name, template) in enumerate(REGISTRY.items()):
        seed = 11 * k + (split == "test")
        env.reset(seed=seed, options={"template": name, "split": split})
        s = env._s
        if template.question:
            assert not template.check(s.params, s.phone, None)
            assert not template.check(s.params, s.phone, "no idea")
        elif not template.verification:
            assert not template.check(s.params, s.phone, None), f"{name}: the goal holds at reset"
        actions, info = _oracle_episode(env, name, split, seed)
        assert info["success"], f"{name} ({layout}, {split}): oracle failed"
        assert info["checks"] == {"state": True, "screen": True}, name
        assert len(actions) <= budget(template.optimal_steps), f"{name}: {len(actions)} steps"
        assert info["androidworld_template"] == name
        # One effective action short (the last that changed the phone's contents): the state check is false.
        env.reset(seed=seed, options={"template": name, "split": split})
        contents = [_contents(env)]
        for action in actions[:-1]:
            env.step(action)
            contents.append(_contents(env))
        assert not env.success_check()  # everything done but `finished`
        if template.question or template.verification:
            continue
        last = max(i for i in range(1, len(contents)) if contents[i] != contents[i - 1])
        env.reset(seed=seed, options={"template": name, "split": split})
        for action in actions[: last - 1]:
            env.step(action)
        assert not template.check(env._s.params, env._s.phone, None), f"{name}: true one action short"


def test_tasks_vary_with_the_seed_and_splits_differ() -> None:
    env = _env()
    for name in ("ContactsAddContact", "SimpleCalendarEventsOnDate", "RecipeDeleteMultipleRecipes"):
        goals = set()
        for seed in range(6):
            env.reset(seed=seed, options={"template": name})
            goals.add(env.template.goal(env._s.params))
        assert len(goals) >= 4, name
    train = {env.reset(seed=s, options={"split": "train"})[1]["task_id"] for s in range(20)}
    test = {env.reset(seed=s, options={"split": "test"})[1]["task_id"] for s in range(20)}
    assert not train & test


def test_task_id_replays_the_same_task() -> None:
    env = _env()
    obs, info = env.reset(seed=3, options={"template": "SimpleSmsResend"})
    again, info2 = env.reset(seed=99, options={"task_id": info["task_id"]})
    assert again == obs and info2["task_id"] == info["task_id"]
    with pytest.raises(ValueError, match="template"):
        env.reset(options={"template": "NoSuchTemplate"})


def test_wrong_answers_and_wrong_edits_fail() -> None:
    env = _env()
    env.reset(seed=4, options={"template": "SimpleCalendarLocationOfEvent"})
    _, _, terminated, _, info = env.step("Thought: guess.\nAction: finished(content='Mars')")
    assert terminated and info["success"] is False and info["reward_components"]["outcome"] == 0.0
    env.reset(seed=4, options={"template": "ContactsAddContact"})
    for _ in range(4):  # open the app, tap add, focus the first field, type a wrong name
        action = env.oracle_action()
        env.step(action if "type(" not in action else "Action: type(content='Wrong Name')")
    assert not env.template.check(env._s.params, env._s.phone, None)


def test_screen_checks_fail_on_the_first_screen() -> None:
    env = _env()
    for name, template in REGISTRY.items():
        env.reset(seed=5, options={"template": name})
        answer = "nonsense" if template.question else None
        assert not template.screen_check(env._s.params, env.current_screen(), answer), name
