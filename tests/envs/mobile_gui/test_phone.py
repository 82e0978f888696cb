"""The simulator: back stack, keyboard, dialogs, scrolling, layouts, and the three renderings."""

from __future__ import annotations

import random

import gymnasium as gym
import numpy as np
import pytest

import papergym  # noqa: F401
from papergym.envs.mobile_gui.apps import make_apps
from papergym.envs.mobile_gui.layouts import DEFAULT, HELDOUT
from papergym.envs.mobile_gui.oracle import at_list_end
from papergym.envs.mobile_gui.phone import CLIPBOARD_PREFIX, Phone
from papergym.envs.mobile_gui.render_html import render_html
from papergym.envs.mobile_gui.render_text import render_text
from papergym.envs.mobile_gui.views import CONTENT_TOP, Screen
from papergym.envs.mobile_gui.world import base_state


def _phone(layout=DEFAULT, seed: int = 0) -> Phone:
    return Phone(base_state(random.Random(seed)), make_apps(), layout)


def test_at_least_12_apps_with_a_launcher() -> None:
    phone = _phone()
    assert len(phone.apps) - 1 >= 12
    phone.tap_id("all_apps")
    icons = phone.screen.with_prefix("app_")
    assert len(icons) == len(phone.apps) - 1
    phone.tap(*icons[0].center)
    assert phone.screen.app != "Home"


def test_back_stack_keyboard_and_dialog() -> None:
    phone = _phone()
    phone.open_app("Contacts")
    row = phone.screen.with_prefix("row_")[0]
    phone.tap(*row.center)
    assert phone.screen.find("delete") is not None
    phone.tap_id("delete")
    clickable = {e.id for e in phone.screen.elements if e.clickable}
    assert {"cancel", "confirm"} <= clickable and "edit" not in clickable  # modal
    phone.back()  # closes the dialog
    assert phone.screen.find("dialog") is None
    phone.tap_id("edit")
    phone.tap_id("field_first")
    assert phone.screen.find("keyboard") is not None and phone.screen.find("field_first").focused
    phone.type_text("Zed")
    assert phone.screen.find("field_first").text == "Zed"
    phone.back()  # hides the keyboard first, as on Android
    assert phone.screen.find("keyboard") is None and phone.screen.title.startswith("Edit")
    phone.back()
    phone.back()
    assert phone.screen.title == "Contacts"
    assert all(c["first"] != "Zed" for c in phone.state.records("contacts"))  # never saved


def test_scrolling_reveals_the_rest_of_a_long_list() -> None:
    phone = _phone()
    for k in range(30):
        phone.state.add("expenses", {"name": f"Item {k:02d}", "amount": "1", "category": "Food", "note": ""})
    phone.open_app("Pro Expense")
    first = {e.id for e in phone.screen.with_prefix("row_")}
    assert phone.screen.find("list").scrollable
    phone.scroll("down")
    second = {e.id for e in phone.screen.with_prefix("row_")}
    assert second - first
    phone.scroll("left")  # a sideways swipe on a vertical list moves nothing
    assert {e.id for e in phone.screen.with_prefix("row_")} == second
    phone.scroll("up")
    assert {e.id for e in phone.screen.with_prefix("row_")} == first


def test_a_long_list_shows_which_rows_are_on_screen_until_its_end() -> None:
    phone = _phone()
    for k in range(30):
        phone.state.add("expenses", {"name": f"Item {k:02d}", "amount": "1", "category": "Food", "note": ""})
    phone.open_app("Pro Expense")
    n = len(phone.state.records("expenses"))
    rows = len(phone.screen.with_prefix("row_"))
    assert phone.screen.find("list").text == f"1-{rows} of {n}"
    assert not at_list_end(phone.screen.find("list"))
    seen = {e.id for e in phone.screen.with_prefix("row_")}
    for _ in range(n):
        if at_list_end(phone.screen.find("list")):
            break
        phone.scroll("down")
        seen |= {e.id for e in phone.screen.with_prefix("row_")}
    assert seen == {f"row_{r['id']}" for r in phone.state.records("expenses")}  # the end: every row shown
    assert phone.screen.find("list").text.endswith(f"-{n} of {n}")
    assert 'RecyclerView "' in render_text(phone.screen) and f"of {n}</div>" in render_html(phone.screen)


def test_the_status_bar_previews_the_clipboard() -> None:
    phone = _phone()
    assert CLIPBOARD_PREFIX not in phone.screen.find("status_bar").text
    phone.state.clipboard = "Gate B12"
    phone.invalidate()
    assert phone.screen.find("status_bar").text.endswith(f"{CLIPBOARD_PREFIX}Gate B12")


def test_heldout_layout_moves_and_renames_but_keeps_ids() -> None:
    default, heldout = _phone(DEFAULT), _phone(HELDOUT)
    for phone in (default, heldout):
        phone.open_app("Broccoli")
    a, b = default.screen.find("add"), heldout.screen.find("add")
    assert a.text == "New recipe" and b.text == "Create recipe"
    assert a.bounds[1] >= CONTENT_TOP and b.bounds[3] <= CONTENT_TOP  # floating button vs app bar
    assert heldout.screen.theme == "dark"


def test_renderings_are_deterministic_plain_data() -> None:
    phone = _phone(seed=3)
    phone.open_app("Simple Calendar Pro")
    screen = phone.screen
    assert Screen.from_dict(screen.to_dict()) == screen
    html = render_html(screen)
    assert html == render_html(_phone_screen_again())
    assert html.startswith("<!DOCTYPE html>") and 'id="render-target"' in html and "width:1080px" in html
    assert "<script" not in html.lower() and "http" not in html
    text = render_text(screen)
    assert "[add] FloatingActionButton" in text and "clickable" in text
    row = screen.with_prefix("row_")[0]
    assert f'id="{row.id}"' in html and row.text.split(" · ")[1] in html


def _phone_screen_again() -> Screen:
    phone = _phone(seed=3)
    phone.open_app("Simple Calendar Pro")
    return phone.screen


def test_long_press_copy_and_paste() -> None:
    phone = _phone()
    phone.open_app("Markor")
    phone.tap_id("add")
    phone.tap_id("field_content")
    phone.type_text("hello")
    phone.tap_id("field_content", long=True)
    phone.tap_id("copy")
    assert phone.state.clipboard == "hello"
    phone.tap_id("field_name", long=True)
    phone.tap_id("paste")
    assert phone.screen.find("field_name").text == "hello"


def test_env_invalid_action_budget_and_html_screen() -> None:
    env = gym.make("papergym/MobileGUI-v0", screen="html").unwrapped
    obs, info = env.reset(seed=0, options={"template": "SystemWifiTurnOn"})
    assert "<!DOCTYPE html>" in obs and info["step_budget"] == 16
    obs, reward, terminated, truncated, info = env.step("I think I should tap somewhere")
    assert info["invalid_action"] and reward == pytest.approx(-0.1) and "Action:" in obs
    for _ in range(14):
        *_, terminated, truncated, info = env.step("Action: wait()")
        assert not truncated
    *_, terminated, truncated, info = env.step("Action: wait()")  # the 16th step spends the budget
    assert truncated and not terminated and info["success"] is False


@pytest.mark.parametrize("layout", ["default", "heldout"])
def test_rgb_array_is_a_readable_phone(layout: str) -> None:
    pytest.importorskip("PIL")
    env = gym.make("papergym/MobileGUI-v0", render_mode="rgb_array", layout=layout)
    env.reset(seed=1, options={"template": "ContactsAddContact"})
    env.step(env.unwrapped.oracle_action())
    frame = env.render()
    assert frame.shape == (2480, 1160, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 20  # text and widgets, not a blank canvas
    assert frame[1240, 10].sum() < 100  # the phone's dark bezel
