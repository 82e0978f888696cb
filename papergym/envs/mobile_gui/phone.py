"""The phone simulator: one plain-data state shared by every app, a back stack, and the action semantics.

`PhoneState` holds only plain data (dicts, lists, strings, numbers), so it deep-copies, pickles and
serialises. `Phone` wraps a state with the app registry and a layout: it builds the current `Screen`
and applies the parsed actions of `papergym.envs.mobile_gui.actions` to the state.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from papergym.envs.mobile_gui.actions import ParsedAction
from papergym.envs.mobile_gui.views import Command, Dialog, Layout, Placed, Screen, ScreenSpec, lay_out

CLIPBOARD_PREFIX = "clipboard: "
"""Where the status bar shows the clipboard's text (its tail), when the clipboard is not empty."""


@dataclass
class NavEntry:
    """One back-stack entry: an app's screen, its argument, its form draft and scroll position."""

    app: str
    screen: str
    arg: Any = None
    draft: dict[str, str] = field(default_factory=dict)
    scroll: int = 0


@dataclass
class PhoneState:
    """Everything the phone knows (plain data only).

    Attributes:
        data: the apps' shared records, by collection (``contacts``, ``events``, ``expenses``, ...);
            each record is a dict with an int ``id``.
        settings: system settings (``wifi``, ``bluetooth``: bool; ``brightness``: 0..100).
        clock: stopwatch and timer state.
        clipboard: the clipboard's text.
        today: the date (``YYYY-MM-DD``); now: the time (``HH:MM``).
        stack: the back stack; ``stack[0]`` is the home screen.
        focus: the focused editable field's id, or None (the keyboard shows when set).
        dialog: the open dialog's spec as a dict, or None.
        next_id: the next record id.
        queue: the music player's queue (song ids).
        log: app events that checks read (e.g. ``"recorder:started"``).
    """

    data: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    settings: dict[str, Any] = field(
        default_factory=lambda: {"wifi": True, "bluetooth": False, "brightness": 50}
    )
    clock: dict[str, Any] = field(default_factory=dict)
    clipboard: str = ""
    today: str = "2026-10-15"
    now: str = "09:00"
    stack: list[NavEntry] = field(default_factory=lambda: [NavEntry("home", "home")])
    focus: str | None = None
    dialog: dict[str, Any] | None = None
    next_id: int = 1
    queue: list[int] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def records(self, collection: str) -> list[dict[str, Any]]:
        return self.data.setdefault(collection, [])

    def add(self, collection: str, record: Mapping[str, Any]) -> dict[str, Any]:
        rec = {**record, "id": self.next_id}
        self.next_id += 1
        self.records(collection).append(rec)
        return rec

    def get(self, collection: str, rid: Any) -> dict[str, Any] | None:
        for r in self.records(collection):
            if r["id"] == rid:
                return r
        return None

    @property
    def top(self) -> NavEntry:
        return self.stack[-1]

    def to_dict(self) -> dict[str, Any]:
        d = copy.deepcopy(self.__dict__)
        d["stack"] = [copy.deepcopy(e.__dict__) for e in self.stack]
        return d


class App(Protocol):
    """An app: a launcher label, screen builders and command handlers over the shared state."""

    key: str
    label: str

    def build(self, state: PhoneState, entry: NavEntry) -> ScreenSpec: ...

    def handle(self, state: PhoneState, entry: NavEntry, cmd: Command) -> str | None:
        """Apply an app command; return feedback text for an illegal one, else None."""
        ...

    def root(self) -> NavEntry: ...


class Phone:
    """A `PhoneState` with its apps and layout: screens out, actions in.

    Args:
        state: the state (kept by reference: the phone mutates it).
        apps: the installed apps by key (the home screen and launcher list them).
        layout: how screens are laid out.
    """

    def __init__(self, state: PhoneState, apps: Mapping[str, App], layout: Layout) -> None:
        self.state = state
        self.apps = dict(apps)
        self.layout = layout
        self._placed: Placed | None = None
        self._reveal = False

    # ------------------------------------------------------------------ screens
    def placed(self) -> Placed:
        if self._placed is None:
            self._placed = self._place()
        return self._placed

    @property
    def screen(self) -> Screen:
        return self.placed().screen

    def invalidate(self) -> None:
        self._placed = None

    def _place(self) -> Placed:
        s = self.state
        entry = s.top
        app = self.apps[entry.app]
        spec = app.build(s, entry)
        dialog = Dialog(**s.dialog) if s.dialog is not None else None
        if dialog is not None:
            dialog.buttons = [(b[0], b[1], tuple(b[2])) for b in dialog.buttons]
        status = f"{s.today} {s.now}  wifi:{'on' if s.settings['wifi'] else 'off'}"
        status += f"  bt:{'on' if s.settings['bluetooth'] else 'off'}"
        if s.clipboard:  # Android 13+ previews what was copied; here the status bar's tail does
            status += f"  {CLIPBOARD_PREFIX}{s.clipboard}"
        placed = lay_out(
            spec,
            app=app.label,
            status=status,
            layout=self.layout,
            scroll=entry.scroll,
            focus=s.focus,
            dialog=dialog,
            values=entry.draft,
            reveal=self._reveal,
        )
        self._reveal = False
        entry.scroll = placed.scroll
        return placed

    # ------------------------------------------------------------------ actions
    def act(self, action: ParsedAction) -> str:
        """Apply a parsed action; return feedback text (empty when it simply happened). ``finished`` and
        ``wait`` change nothing."""
        a = action
        if a.kind in ("tap", "long_press"):
            long = a.kind == "long_press"
            if a.element_id is not None:
                return self.tap_id(a.element_id, long=long)
            x, y = a.point or (0, 0)
            return self.tap(x, y, long=long)
        if a.kind == "type":
            return self.type_text(a.text or "")
        if a.kind == "scroll":
            return self.scroll(a.direction or "down")
        if a.kind == "press_back":
            self.back()
        elif a.kind == "press_home":
            self.home()
        elif a.kind == "open_app":
            return self.open_app(a.text or "")
        return ""

    def tap(self, x: int, y: int, *, long: bool = False) -> str:
        el = self.screen.at(x, y)
        if el is None:
            return "Nothing to tap there."
        cmd = self.placed().cmds.get(el.id)
        if not long and cmd is not None and cmd[0] == "slider":
            x0, _, x1, _ = el.bounds
            return self.run((*cmd[:2], (x - x0) / max(1, x1 - x0 - 1)))
        return self.tap_id(el.id, long=long)

    def tap_id(self, element_id: str, *, long: bool = False) -> str:
        placed = self.placed()
        el = placed.screen.find(element_id)
        if el is None:
            return f"No element with id {element_id!r} on this screen."
        if long and el.editable and element_id not in placed.long_cmds:
            return self.run(("field_menu", element_id))
        cmd = placed.long_cmds.get(element_id) if long else placed.cmds.get(element_id)
        if cmd is None:
            if long and placed.cmds.get(element_id) is not None and not el.editable:
                cmd = placed.cmds[element_id]  # a long press on a plain button acts as a tap
            else:
                return f"{el.cls} {element_id!r} does not respond to a {'long press' if long else 'tap'}."
        return self.run(cmd)

    def run(self, cmd: Command) -> str:
        """Apply one command (generic ones here, the rest by the foreground app)."""
        s = self.state
        verb = cmd[0]
        feedback: str | None = None
        if verb == "back":
            self.back()
        elif verb == "home":
            self.home()
        elif verb == "focus":
            s.focus = cmd[1]
            self._reveal = True
        elif verb == "dialog_focus":
            pass
        elif verb == "dismiss":
            s.dialog = None
        elif verb == "push":
            s.focus = None
            s.stack.append(NavEntry(s.top.app if len(cmd) < 4 else cmd[3], cmd[1], cmd[2]))
        elif verb == "launch":
            self.open_app(cmd[1])
        elif verb == "field_menu":
            s.focus = cmd[1]
            s.dialog = {
                "title": "Text",
                "message": "",
                "buttons": [
                    ["copy", "Copy", ["copy", cmd[1]]],
                    ["paste", "Paste", ["paste", cmd[1]]],
                    ["cancel", "Cancel", ["dismiss"]],
                ],
                "field_id": None,
                "field_text": "",
            }
        elif verb == "copy":
            s.clipboard = s.top.draft.get(cmd[1], "")
            s.dialog = None
        elif verb == "paste":
            s.top.draft[cmd[1]] = s.top.draft.get(cmd[1], "") + s.clipboard
            s.dialog = None
        else:
            top = s.top
            feedback = self.apps[top.app].handle(s, top, cmd)
        self.invalidate()
        return feedback or ""

    def type_text(self, text: str) -> str:
        s = self.state
        if s.dialog is not None and s.dialog.get("field_id"):
            s.dialog["field_text"] = text
        elif s.focus is None:
            return "No text field is focused: tap a field first."
        else:
            s.top.draft[s.focus] = text
        self.invalidate()
        return ""

    def scroll(self, direction: str, x: int | None = None, y: int | None = None) -> str:
        placed = self.placed()
        if direction not in ("up", "down"):
            return ""  # vertical lists only: a sideways swipe moves nothing
        if placed.n_rows <= placed.visible_rows:
            return ""
        step = max(1, placed.visible_rows - 1)
        top = self.state.top
        top.scroll = placed.scroll + (step if direction == "down" else -step)
        self.invalidate()
        return ""

    def back(self) -> None:
        s = self.state
        if s.dialog is not None:
            s.dialog = None
        elif s.focus is not None:
            s.focus = None  # back first hides the keyboard, as on Android
        elif len(s.stack) > 1:
            s.stack.pop()
        self.invalidate()

    def home(self) -> None:
        s = self.state
        s.stack = [s.stack[0]]
        s.focus = None
        s.dialog = None
        self.invalidate()

    def open_app(self, name: str) -> str:
        key = self.app_key(name)
        if key is None:
            return f"No app named {name!r} is installed."
        s = self.state
        s.stack = [s.stack[0], self.apps[key].root()]
        s.focus = None
        s.dialog = None
        self.invalidate()
        return ""

    def app_key(self, name: str) -> str | None:
        want = name.strip().lower()
        for key, app in self.apps.items():
            if key == "home":
                continue
            if want in (key.lower(), app.label.lower()) or want == app.label.lower().replace(" ", ""):
                return key
        return None
