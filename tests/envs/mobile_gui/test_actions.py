"""WM-R1's action grammar: parsed with ast, never evaluated."""

from __future__ import annotations

import pytest

from papergym.envs.mobile_gui.actions import ActionError, ParsedAction, format_action, parse_action


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Thought: go.\nAction: tap(start_box='(540,1200)')", ParsedAction("tap", point=(540, 1200))),
        ("Action: tap(start_box='<|box_start|>(10,20)<|box_end|>')", ParsedAction("tap", point=(10, 20))),
        ("Action: click(start_box='(0,0,100,50)')", ParsedAction("tap", point=(50, 25))),
        ("Action: long_press(start_box='(5,6)')", ParsedAction("long_press", point=(5, 6))),
        ("Action: type(content='it\\'s \"ok\"')", ParsedAction("type", text='it\'s "ok"')),
        ("Action: type(content='line one\nline two')", ParsedAction("type", text="line one\nline two")),
        (
            "Action: scroll(start_box='(540,1200)', direction='down')",
            ParsedAction("scroll", point=(540, 1200), direction="down"),
        ),
        ("Action: scroll(direction='up')", ParsedAction("scroll", direction="up")),
        ("Action: press_back()", ParsedAction("press_back")),
        ("Action: press_home()", ParsedAction("press_home")),
        ("Action: wait()", ParsedAction("wait")),
        ("Action: open_app(app_name='Contacts')", ParsedAction("open_app", text="Contacts")),
        (
            "Action: finished(content='Dentist, Gym session')",
            ParsedAction("finished", text="Dentist, Gym session"),
        ),
        ("Action: finished()", ParsedAction("finished", text="")),
        ("Action: tap(id='save')", ParsedAction("tap", element_id="save")),
        ("Thought: no marker\ntap(start_box='(1,2)')", ParsedAction("tap", point=(1, 2))),
    ],
)
def test_wm_r1_actions_parse(text: str, expected: ParsedAction) -> None:
    assert parse_action(text) == expected
    assert parse_action(f"Action: {format_action(expected)}") == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Action: __import__('os').system('touch /tmp/pwned')",
        "Action: tap(start_box=open('/etc/passwd').read())",
        "Action: tap(start_box='(1)')",
        "Action: scroll(start_box='(1,2)', direction='diagonal')",
        "Action: type(content=42)",
        "Action: type()",
        "Action: press_back(1)",
        "Action: delete_everything()",
        "Action: tap(start_box='(1,2)', force=True)",
        "Action: " + "(" * 5000,
        "Action: tap(start_box='(1,2)'",
    ],
)
def test_bad_actions_raise_action_error_with_a_hint(text: str) -> None:
    with pytest.raises(ActionError) as err:
        parse_action(text)
    assert str(err.value)


def test_element_ids_can_be_disabled() -> None:
    with pytest.raises(ActionError, match="disabled"):
        parse_action("Action: tap(id='save')", element_ids=False)
