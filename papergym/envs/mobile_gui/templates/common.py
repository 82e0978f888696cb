"""Plan pieces and checks that several template modules share."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from papergym.envs.mobile_gui.apps.base import fid
from papergym.envs.mobile_gui.oracle import BackTo, Ctx, Fill, Seq, Step, Tap
from papergym.envs.mobile_gui.phone import PhoneState
from papergym.envs.mobile_gui.views import Element


def row_starting(text: str, prefix: str = "row_") -> Callable[[Element], bool]:
    """Matches a list row whose text starts with ``text``."""
    return lambda e: e.id.startswith(prefix) and (e.text == text or e.text.startswith(text + " ·"))


def row_containing(text: str, prefix: str = "row_") -> Callable[[Element], bool]:
    return lambda e: e.id.startswith(prefix) and text in e.text


def add_record(values: Mapping[str, str], *, add_id: str = "add", save_id: str = "save") -> Step:
    """Open the app's form, fill each field (by record key), save."""
    return Seq(BackTo(add_id), Tap(add_id), *(Fill(fid(k), v) for k, v in values.items()), Tap(save_id))


def delete_row(match: str | Callable[[Element], bool], what: str = "") -> Step:
    """Open the row, delete it, confirm."""
    return Seq(Tap(match, what=what), Tap("delete"), Tap("confirm"))


class Branch(Step):
    """Run ``then`` when ``pred(mem)`` holds (decided at the first call), else ``other``."""

    def __init__(self, pred: Callable[[dict[str, Any]], bool], then: Step, other: Step | None = None) -> None:
        self.pred, self.then, self.other = pred, then, other

    def next(self, ctx: Ctx) -> str | None:
        if "take" not in ctx.local:
            ctx.local["take"] = bool(self.pred(ctx.mem))
        chosen = self.then if ctx.local["take"] else self.other
        return None if chosen is None else chosen.next(ctx.sub("body"))


def duplicate_extras(rows: Mapping[str, str]) -> list[str]:
    """The ids of rows whose text repeats an earlier row's (keep the first of each)."""
    seen: set[str] = set()
    extras = []
    for rid, text in sorted(rows.items(), key=lambda kv: int(kv[0].split("_")[1])):
        if text in seen:
            extras.append(rid)
        seen.add(text)
    return extras


def record_key(rec: Mapping[str, Any], keys: Sequence[str]) -> tuple[str, ...]:
    return tuple(str(rec.get(k, "")).strip().lower() for k in keys)


def has_record(state: PhoneState, collection: str, want: Mapping[str, Any]) -> bool:
    """Some record matches ``want`` on its keys (case-insensitive, numbers compared as numbers)."""
    return any(all(_same(rec.get(k), v) for k, v in want.items()) for rec in state.records(collection))


def _same(a: Any, b: Any) -> bool:
    try:
        return abs(float(a) - float(b)) < 1e-9
    except (TypeError, ValueError):
        return str(a).strip().lower() == str(b).strip().lower()


def no_duplicates_and_all_kept(
    state: PhoneState, collection: str, keys: Sequence[str], originals: list[list[str]]
) -> bool:
    """Exactly one record per distinct original (AndroidWorld's duplicate-deletion check)."""
    now = [record_key(r, keys) for r in state.records(collection)]
    return sorted(now) == sorted({tuple(o) for o in originals})
