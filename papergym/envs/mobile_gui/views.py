"""Screens as plain data: a flat view hierarchy of `Element`s with pixel bounds, and the layout engine.

A `Screen` is what an agent (or a world model) sees: serialisable with `Screen.to_dict` /
`Screen.from_dict`, never holding callbacks. Apps describe a screen as a `ScreenSpec` (items with
roles, no coordinates); `lay_out` places it on the 1080x2400 phone (WM-R1's screenshot size,
papers/envs.md §1.2) under a `Layout` and returns the screen plus each element's command.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

WIDTH, HEIGHT = 1080, 2400
STATUS_H = 80
APPBAR_H = 150
NAVBAR_H = 160
ROW_H = 150
KEYBOARD_H = 700
CONTENT_TOP = STATUS_H + APPBAR_H
CONTENT_BOTTOM = HEIGHT - NAVBAR_H
Bounds = tuple[int, int, int, int]
Command = tuple[Any, ...]


@dataclass(slots=True)
class Element:
    """One view: a resource id unique on its screen, a class, its text, pixel bounds ``(x0, y0, x1, y1)``."""

    id: str
    cls: str
    text: str = ""
    bounds: Bounds = (0, 0, 0, 0)
    clickable: bool = False
    editable: bool = False
    scrollable: bool = False
    checked: bool | None = None
    focused: bool = False
    hint: str = ""

    @property
    def center(self) -> tuple[int, int]:
        x0, y0, x1, y1 = self.bounds
        return (x0 + x1) // 2, (y0 + y1) // 2

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "cls": self.cls,
            "text": self.text,
            "bounds": list(self.bounds),
            "clickable": self.clickable,
            "editable": self.editable,
            "scrollable": self.scrollable,
            "checked": self.checked,
            "focused": self.focused,
            "hint": self.hint,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Element:
        b = tuple(int(v) for v in d.get("bounds", (0, 0, 0, 0)))
        return cls(
            str(d.get("id", "")),
            str(d.get("cls", "View")),
            str(d.get("text", "")),
            (b[0], b[1], b[2], b[3]) if len(b) == 4 else (0, 0, 0, 0),
            bool(d.get("clickable", False)),
            bool(d.get("editable", False)),
            bool(d.get("scrollable", False)),
            None if d.get("checked") is None else bool(d["checked"]),
            bool(d.get("focused", False)),
            str(d.get("hint", "")),
        )


@dataclass(slots=True)
class Screen:
    """What the phone shows: the foreground app, a title and the elements in drawing order."""

    app: str
    title: str
    elements: tuple[Element, ...]
    theme: str = "light"

    def find(self, element_id: str) -> Element | None:
        for e in self.elements:
            if e.id == element_id:
                return e
        return None

    def at(self, x: int, y: int) -> Element | None:
        """The topmost clickable or editable element containing the point."""
        for e in reversed(self.elements):
            x0, y0, x1, y1 = e.bounds
            if (e.clickable or e.editable) and x0 <= x < x1 and y0 <= y < y1:
                return e
        return None

    def with_prefix(self, prefix: str) -> list[Element]:
        return [e for e in self.elements if e.id.startswith(prefix)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "app": self.app,
            "title": self.title,
            "theme": self.theme,
            "elements": [e.to_dict() for e in self.elements],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Screen:
        return cls(
            str(d.get("app", "")),
            str(d.get("title", "")),
            tuple(Element.from_dict(e) for e in d.get("elements", ())),
            str(d.get("theme", "light")),
        )


@dataclass(slots=True)
class Item:
    """An element before layout. ``role``: ``row`` (the scrolling list), ``action`` (a primary action:
    the floating button or the app bar, by layout), ``footer`` (a fixed bottom button) or ``header``
    (fixed, above the list)."""

    id: str
    cls: str
    text: str = ""
    cmd: Command | None = None
    role: str = "row"
    editable: bool = False
    checked: bool | None = None
    hint: str = ""
    long_cmd: Command | None = None


@dataclass(slots=True)
class ScreenSpec:
    """An app's description of one screen."""

    title: str
    items: list[Item] = field(default_factory=list)
    root: bool = False
    """The app's first screen (no up button)."""
    grid: int = 1
    """Columns of the list (the home screen's icon grid)."""


@dataclass(slots=True)
class Dialog:
    """A modal dialog: a title, a message, optionally one text field, and buttons ``(id, text, command)``."""

    title: str
    message: str = ""
    buttons: list[tuple[str, str, Command]] = field(default_factory=list)
    field_id: str | None = None
    field_text: str = ""


@dataclass(frozen=True, slots=True)
class Layout:
    """How specs become screens: where the primary actions sit, the labels shown, the colour theme.

    ``labels`` maps a default label to the label shown (ids never change: they are resource ids).
    """

    name: str
    actions_in_appbar: bool = False
    footer_on_top: bool = False
    theme: str = "light"
    labels: Mapping[str, str] = field(default_factory=dict)
    row_h: int = ROW_H

    def label(self, text: str) -> str:
        return self.labels.get(text, text)


@dataclass(slots=True)
class Placed:
    """A laid-out screen: the screen, each element's tap / long-press command, the list's geometry."""

    screen: Screen
    cmds: dict[str, Command]
    long_cmds: dict[str, Command]
    n_rows: int
    visible_rows: int
    scroll: int


def lay_out(
    spec: ScreenSpec,
    *,
    app: str,
    status: str,
    layout: Layout,
    scroll: int,
    focus: str | None,
    dialog: Dialog | None,
    values: Mapping[str, str] | None = None,
    reveal: bool = False,
) -> Placed:
    """Place a spec on the phone. ``scroll`` is clamped; ``values`` overrides editable items' texts;
    ``reveal`` scrolls the focused field into view (when the keyboard has just opened)."""
    els: list[Element] = [Element("status_bar", "StatusBar", status, (0, 0, WIDTH, STATUS_H))]
    cmds: dict[str, Command] = {}
    long_cmds: dict[str, Command] = {}
    labels = layout.label
    modal = dialog is not None
    title_x0 = 20
    if not spec.root:
        els.append(Element("up", "ImageButton", "Navigate up", (0, STATUS_H, 140, CONTENT_TOP), not modal))
        cmds["up"] = ("back",)
        title_x0 = 150
    actions = [i for i in spec.items if i.role == "action"]
    headers = [i for i in spec.items if i.role == "header"]
    footers = [i for i in spec.items if i.role == "footer"]
    rows = [i for i in spec.items if i.role == "row"]
    if layout.actions_in_appbar:
        headers_right = actions
        floating: list[Item] = []
    else:
        headers_right, floating = [], actions
    x1 = WIDTH
    appbar: list[Element] = []
    for item in reversed(headers_right):
        w = 60 + 26 * len(labels(item.text))
        appbar.append(
            Element(item.id, "Button", labels(item.text), (x1 - w, STATUS_H, x1, CONTENT_TOP), not modal)
        )
        x1 -= w
    els.append(Element("title", "TextView", spec.title, (title_x0, STATUS_H, x1, CONTENT_TOP)))
    els.extend(reversed(appbar))
    top = CONTENT_TOP
    bottom = CONTENT_BOTTOM - (KEYBOARD_H if focus is not None and not modal else 0)
    fixed: list[tuple[Item, Bounds]] = []
    for item in headers:
        fixed.append((item, (0, top, WIDTH, top + ROW_H)))
        top += ROW_H
    if layout.footer_on_top:
        for item in footers:
            fixed.append((item, (0, top, WIDTH, top + ROW_H)))
            top += ROW_H
    else:
        for item in reversed(footers):
            fixed.append((item, (0, bottom - ROW_H, WIDTH, bottom)))
            bottom -= ROW_H
    row_h = layout.row_h
    cols = max(1, spec.grid)
    visible = max(1, (bottom - top) // row_h) * cols
    if reveal and focus is not None:  # bring the focused field on screen, as Android does
        idx = next((k for k, r in enumerate(rows) if r.id == focus), None)
        if idx is not None and not scroll <= idx < scroll + visible:
            scroll = max(0, idx - visible + 1)
    scroll = max(0, min(scroll, max(0, len(rows) - visible)))
    if cols > 1:
        scroll -= scroll % cols
    if rows:
        # A list longer than the screen says which rows it shows (a scroll indicator): the end is visible.
        where = (
            f"{scroll + 1}-{min(scroll + visible, len(rows))} of {len(rows)}" if len(rows) > visible else ""
        )
        els.append(
            Element("list", "RecyclerView", where, (0, top, WIDTH, bottom), scrollable=len(rows) > visible)
        )
    cell_w = WIDTH // cols
    for k, item in enumerate(rows[scroll : scroll + visible]):
        y = top + (k // cols) * row_h
        x = (k % cols) * cell_w
        fixed.append((item, (x, y, x + cell_w, y + row_h)))
    for item, bounds in fixed:
        els.append(_element(item, bounds, labels, values, focus, modal))
        _register(item, cmds, long_cmds)
    for k, item in enumerate(floating):
        w = 80 + 28 * len(labels(item.text))
        b = (WIDTH - 40 - w, bottom - 190 - 170 * k, WIDTH - 40, bottom - 40 - 170 * k)
        els.append(Element(item.id, "FloatingActionButton", labels(item.text), b, not modal))
        _register(item, cmds, long_cmds)
    for item in headers_right:
        _register(item, cmds, long_cmds)
    if focus is not None and not modal:
        kb_top = CONTENT_BOTTOM - KEYBOARD_H
        els.append(Element("keyboard", "Keyboard", "keyboard", (0, kb_top, WIDTH, CONTENT_BOTTOM)))
    if dialog is not None:
        _dialog(dialog, els, cmds, labels)
    els.append(Element("nav_back", "ImageButton", "Back", (180, CONTENT_BOTTOM, 360, HEIGHT), True))
    els.append(Element("nav_home", "ImageButton", "Home", (450, CONTENT_BOTTOM, 630, HEIGHT), True))
    cmds["nav_back"] = ("back",)
    cmds["nav_home"] = ("home",)
    screen = Screen(app, spec.title, tuple(els), layout.theme)
    return Placed(screen, cmds, long_cmds, len(rows), visible, scroll)


def _element(
    item: Item,
    bounds: Bounds,
    labels: Any,
    values: Mapping[str, str] | None,
    focus: str | None,
    modal: bool,
) -> Element:
    text = values.get(item.id, item.text) if values is not None and item.editable else item.text
    if item.cls in ("Button", "TextView.label"):
        text = labels(text)
    cls = "TextView" if item.cls == "TextView.label" else item.cls
    clickable = (item.cmd is not None or item.long_cmd is not None) and not modal and not item.editable
    return Element(
        item.id,
        cls,
        text,
        bounds,
        clickable,
        item.editable and not modal,
        False,
        item.checked,
        focus == item.id,
        labels(item.hint),
    )


def _register(item: Item, cmds: dict[str, Command], long_cmds: dict[str, Command]) -> None:
    if item.cmd is not None:
        cmds[item.id] = item.cmd
    if item.editable:
        cmds[item.id] = ("focus", item.id)
    if item.long_cmd is not None:
        long_cmds[item.id] = item.long_cmd


def _dialog(dialog: Dialog, els: list[Element], cmds: dict[str, Command], labels: Any) -> None:
    x0, x1 = 90, WIDTH - 90
    y = 800
    els.append(Element("dialog", "Dialog", dialog.title, (x0, y, x1, y + 140)))
    y += 140
    if dialog.message:
        els.append(Element("dialog_message", "TextView", dialog.message, (x0, y, x1, y + 140)))
        y += 140
    if dialog.field_id is not None:
        els.append(Element(dialog.field_id, "EditText", dialog.field_text, (x0, y, x1, y + 140), False, True))
        cmds[dialog.field_id] = ("dialog_focus",)
        y += 140
    n = max(1, len(dialog.buttons))
    stacked = n > 3  # a chooser: one button per line
    w = (x1 - x0) if stacked else (x1 - x0) // n
    for k, (bid, text, cmd) in enumerate(dialog.buttons):
        bx, by = (x0, y + 120 * k) if stacked else (x0 + k * w, y)
        els.append(Element(bid, "Button", labels(text), (bx, by, bx + w, by + 120), True))
        cmds[bid] = cmd
