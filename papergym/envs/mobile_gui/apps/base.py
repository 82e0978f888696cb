"""`RecordApp`: the data-driven app most apps are: a list of records, a detail screen, an edit form,
deletion behind a confirmation dialog, and optionally folders (moving and copying between them).

An app is described by its `Field`s; subclasses override the row text, the sort order and extra
buttons. Form fields are the draft of their back-stack entry, keyed by element id (``field_<key>``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from papergym.envs.mobile_gui.phone import NavEntry, PhoneState
from papergym.envs.mobile_gui.views import Command, Item, ScreenSpec

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


@dataclass(frozen=True)
class Field:
    """A record field: its key, its label and its kind (text, number, date, time, bool, choice)."""

    key: str
    label: str
    kind: str = "text"
    options: tuple[str, ...] = ()
    required: bool = False
    default: str = ""


def dialog(
    title: str,
    buttons: Sequence[tuple[str, str, Command]],
    *,
    message: str = "",
    field_id: str | None = None,
    field_text: str = "",
) -> dict[str, Any]:
    """A dialog as plain data (`PhoneState.dialog`)."""
    return {
        "title": title,
        "message": message,
        "buttons": [[b[0], b[1], list(b[2])] for b in buttons],
        "field_id": field_id,
        "field_text": field_text,
    }


def fid(key: str) -> str:
    """The element id of a form field."""
    return f"field_{key}"


def validate(value: str, f: Field) -> str | None:
    """Why ``value`` is not acceptable for ``f`` (None when it is)."""
    if not value:
        return f"{f.label} is required." if f.required else None
    if f.kind == "number" and not re.fullmatch(r"-?\d+(\.\d+)?", value):
        return f"{f.label} must be a number."
    if f.kind == "date" and not _DATE.match(value):
        return f"{f.label} must be a date like 2026-10-15."
    if f.kind == "time" and not _TIME.match(value):
        return f"{f.label} must be a time like 14:00."
    if f.kind == "choice" and value not in f.options:
        return f"{f.label} must be one of: {', '.join(f.options)}."
    return None


class RecordApp:
    """A list / detail / form app over one collection of `PhoneState.data`.

    Class attributes say what the app allows; ``folders`` makes the list a folder tree (records
    carry a ``folder``; the ``folders`` collection of the app holds empty folders too).
    """

    key = ""
    label = ""
    collection = ""
    fields: tuple[Field, ...] = ()
    can_add = True
    can_edit = True
    can_delete = True
    folders = False
    folder_collection = ""
    move_copy = False
    add_label = "Add"

    def root(self) -> NavEntry:
        return NavEntry(self.key, "list", "" if self.folders else None)

    # ------------------------------------------------------------------ subclass hooks
    def row_text(self, rec: dict[str, Any]) -> str:
        return str(rec.get(self.fields[0].key, ""))

    def sort_key(self, rec: dict[str, Any]) -> Any:
        return rec["id"]

    def detail_lines(self, rec: dict[str, Any]) -> list[tuple[str, str]]:
        return [(f.key, f"{f.label}: {rec.get(f.key, '')}") for f in self.fields]

    def detail_buttons(self, state: PhoneState, rec: dict[str, Any]) -> list[Item]:
        return []

    def list_extra(self, state: PhoneState, entry: NavEntry) -> list[Item]:
        return []

    def extra(self, state: PhoneState, entry: NavEntry, cmd: Command) -> str | None:
        return f"Unknown command {cmd[0]!r}."

    def on_saved(self, state: PhoneState, rec: dict[str, Any], new: bool) -> None:
        return None

    # ------------------------------------------------------------------ screens
    def visible(self, state: PhoneState, entry: NavEntry) -> list[dict[str, Any]]:
        recs = state.records(self.collection)
        if self.folders:
            recs = [r for r in recs if r.get("folder", "") == entry.arg]
        return sorted(recs, key=self.sort_key)

    def folder_names(self, state: PhoneState, parent: str) -> list[str]:
        names = {f["name"] for f in state.records(self.folder_collection) if f.get("parent", "") == parent}
        return sorted(names)

    def build(self, state: PhoneState, entry: NavEntry) -> ScreenSpec:
        if entry.screen == "detail":
            return self._detail(state, entry)
        if entry.screen == "form":
            return self._form(state, entry)
        return self._list(state, entry)

    def _list(self, state: PhoneState, entry: NavEntry) -> ScreenSpec:
        items = list(self.list_extra(state, entry))
        if self.folders:
            for name in self.folder_names(state, entry.arg):
                path = f"{entry.arg}/{name}" if entry.arg else name
                items.append(Item(f"folder_{name}", "ListItem", f"[folder] {name}", ("push", "list", path)))
        for rec in self.visible(state, entry):
            items.append(Item(f"row_{rec['id']}", "ListItem", self.row_text(rec), ("open", rec["id"])))
        if self.can_add:
            items.append(Item("add", "Button", self.add_label, ("new",), role="action"))
        title = self.label if not (self.folders and entry.arg) else f"{self.label}: {entry.arg}"
        return ScreenSpec(title, items, root=entry.screen == "list" and not entry.arg)

    def _detail(self, state: PhoneState, entry: NavEntry) -> ScreenSpec:
        rec = state.get(self.collection, entry.arg)
        if rec is None:
            return ScreenSpec("Not found", [Item("empty", "TextView", "This item no longer exists.")])
        items = [Item(f"detail_{k}", "TextView", text) for k, text in self.detail_lines(rec)]
        if self.can_edit:
            items.append(Item("edit", "Button", "Edit", ("edit", rec["id"]), role="action"))
        items.extend(self.detail_buttons(state, rec))
        if self.move_copy:
            items.append(Item("move", "Button", "Move", ("pick_folder", "move", rec["id"]), role="footer"))
            items.append(Item("copy", "Button", "Copy", ("pick_folder", "copy", rec["id"]), role="footer"))
        if self.can_delete:
            items.append(Item("delete", "Button", "Delete", ("ask_delete", rec["id"]), role="footer"))
        return ScreenSpec(self.row_text(rec), items)

    def _form(self, state: PhoneState, entry: NavEntry) -> ScreenSpec:
        items: list[Item] = []
        for f in self.fields:
            if f.kind == "bool":
                on = entry.draft.get(fid(f.key)) == "on"
                items.append(Item(fid(f.key), "Switch", f.label, ("toggle_draft", f.key), checked=on))
            else:
                hint = f.label + (f" ({'/'.join(f.options)})" if f.options else "")
                items.append(Item(fid(f.key), "EditText", "", editable=True, hint=hint))
        items.append(Item("save", "Button", "Save", ("save",), role="footer"))
        title = "New" if entry.arg is None else "Edit"
        return ScreenSpec(f"{title} {self.label}", items)

    # ------------------------------------------------------------------ commands
    def handle(self, state: PhoneState, entry: NavEntry, cmd: Command) -> str | None:
        verb = cmd[0]
        if verb == "open":
            state.stack.append(NavEntry(self.key, "detail", cmd[1]))
        elif verb == "new":
            draft = {fid(f.key): f.default for f in self.fields if f.default}
            if self.folders and entry.arg:
                draft[fid("folder")] = entry.arg
            state.stack.append(NavEntry(self.key, "form", None, draft))
        elif verb == "edit":
            rec = state.get(self.collection, cmd[1])
            if rec is None:
                return "This item no longer exists."
            draft = {fid(f.key): str(rec.get(f.key, "")) for f in self.fields}
            state.stack.append(NavEntry(self.key, "form", cmd[1], draft))
        elif verb == "toggle_draft":
            key = fid(cmd[1])
            entry.draft[key] = "off" if entry.draft.get(key) == "on" else "on"
        elif verb == "save":
            return self._save(state, entry)
        elif verb == "ask_delete":
            state.dialog = dialog(
                "Delete this item?",
                [("cancel", "Cancel", ("dismiss",)), ("confirm", "Delete", ("delete", cmd[1]))],
            )
        elif verb == "delete":
            recs = state.records(self.collection)
            recs[:] = [r for r in recs if r["id"] != cmd[1]]
            state.dialog = None
            while len(state.stack) > 2 and state.top.screen != "list":
                state.stack.pop()
        elif verb == "pick_folder":
            return self._pick_folder(state, cmd[1], cmd[2])
        elif verb in ("move_to", "copy_to"):
            return self._move_copy(state, verb, cmd[1], cmd[2])
        else:
            return self.extra(state, entry, cmd)
        return None

    def _save(self, state: PhoneState, entry: NavEntry) -> str | None:
        values: dict[str, Any] = {}
        for f in self.fields:
            raw = entry.draft.get(fid(f.key), "")
            if f.kind == "bool":
                values[f.key] = raw == "on"
                continue
            raw = raw.strip() if f.kind != "text" or "\n" not in raw else raw
            error = validate(raw, f)
            if error:
                return f"Not saved: {error}"
            values[f.key] = raw
        state.focus = None
        if entry.arg is None:
            rec = state.add(self.collection, values)
            self.on_saved(state, rec, True)
            state.stack[-1] = NavEntry(self.key, "detail", rec["id"])  # a new record opens, as in most apps
            return None
        else:
            rec = state.get(self.collection, entry.arg)
            if rec is None:
                return "This item no longer exists."
            rec.update(values)
            self.on_saved(state, rec, False)
        state.stack.pop()
        return None

    def all_folders(self, state: PhoneState) -> list[str]:
        out = [""]
        for f in state.records(self.folder_collection):
            out.append(f"{f['parent']}/{f['name']}" if f.get("parent") else f["name"])
        return sorted(set(out))

    def _pick_folder(self, state: PhoneState, what: str, rid: int) -> str | None:
        buttons = [
            (f"to_{k}", name or "(root)", (f"{what}_to", rid, name))
            for k, name in enumerate(self.all_folders(state))
        ]
        buttons.append(("cancel", "Cancel", ("dismiss",)))
        state.dialog = dialog(f"{what.capitalize()} to which folder?", buttons)
        return None

    def _move_copy(self, state: PhoneState, verb: str, rid: int, folder: str) -> str | None:
        rec = state.get(self.collection, rid)
        state.dialog = None
        if rec is None:
            return "This item no longer exists."
        if verb == "move_to":
            rec["folder"] = folder
        else:
            copy = {k: v for k, v in rec.items() if k != "id"}
            copy["folder"] = folder
            state.add(self.collection, copy)
        return None
