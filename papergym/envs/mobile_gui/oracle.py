"""The oracle's plan language: small steps that read the current screen and emit one WM-R1 action.

A plan knows the goal (the task's parameters) but finds everything else on the screen it is shown:
elements by resource id or text (scrolling the list until they appear), values by reading texts. Each
step's ``next(ctx)`` returns the action to take, or None when the step is done (the next step runs on
the same screen). Progress lives in a plain dict (``ctx.local`` per step, ``ctx.mem`` for values read),
which the env keeps in its state, so the oracle snapshots, pickles and resumes with the env.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from papergym.envs.mobile_gui.views import Element, Screen

Match = str | Callable[[Element], bool]


class OracleError(RuntimeError):
    """A plan could not find what it needs on the screen: a bug in a template or an app."""


@dataclass
class Ctx:
    """What a step sees: the screen, the values read so far, and the step's own scratch dict."""

    screen: Screen
    mem: dict[str, Any]
    local: dict[str, Any]

    def sub(self, key: str) -> Ctx:
        return Ctx(self.screen, self.mem, self.local.setdefault(key, {}))


def act_tap(e: Element, *, long: bool = False) -> str:
    x, y = e.center
    name = "long_press" if long else "tap"
    return f"Thought: I {name.replace('_', ' ')} {e.text or e.id}.\nAction: {name}(start_box='({x},{y})')"


def act(call: str, thought: str = "Next step.") -> str:
    return f"Thought: {thought}\nAction: {call}"


def _matches(e: Element, match: Match) -> bool:
    return e.id == match if isinstance(match, str) else bool(match(e))


def locate(ctx: Ctx, match: Match, *, what: str = "") -> Element | str:
    """The element matching ``match`` on screen, or the scroll action that searches for it."""
    for e in ctx.screen.elements:
        if _matches(e, match):
            return e
    lst = ctx.screen.find("list")
    if lst is None or not lst.scrollable:
        raise OracleError(f"{what or match!r} is not on the screen {ctx.screen.title!r} and nothing scrolls")
    sig = [e.id for e in ctx.screen.elements]
    direction = ctx.local.get("dir", "down")
    if ctx.local.get("sig") == sig:  # the last scroll moved nothing: turn round
        if direction == "up":
            raise OracleError(f"{what or match!r} is not in the list of {ctx.screen.title!r}")
        direction = "up"
    ctx.local["dir"], ctx.local["sig"] = direction, sig
    x, y = lst.center
    return act(f"scroll(start_box='({x},{y})', direction='{direction}')", f"I look for {what or match}.")


class Step:
    """One step of a plan."""

    def next(self, ctx: Ctx) -> str | None:
        raise NotImplementedError


class Seq(Step):
    """Steps in order; ``dynamic`` builds the list from the values read so far."""

    def __init__(
        self, *steps: Step, dynamic: Callable[[dict[str, Any]], Sequence[Step]] | None = None
    ) -> None:
        self.steps = steps
        self.dynamic = dynamic

    def next(self, ctx: Ctx) -> str | None:
        steps = self.steps if self.dynamic is None else tuple(self.dynamic(ctx.mem))
        i = ctx.local.get("i", 0)
        while i < len(steps):
            action = steps[i].next(ctx.sub(f"s{i}"))
            if action is not None:
                ctx.local["i"] = i
                return action
            i += 1
        ctx.local["i"] = i
        return None


class Once(Step):
    """A step that emits its action once."""

    def next(self, ctx: Ctx) -> str | None:
        if ctx.local.get("done"):
            return None
        action = self.once(ctx)
        if action is not None and not action.startswith("Thought: I look for"):
            ctx.local["done"] = True
        return action

    def once(self, ctx: Ctx) -> str | None:
        raise NotImplementedError


class OpenApp(Once):
    def __init__(self, label: str) -> None:
        self.label = label

    def once(self, ctx: Ctx) -> str | None:
        return act(f"open_app(app_name={self.label!r})", f"I open {self.label}.")


class Press(Once):
    def __init__(self, key: str) -> None:
        self.key = key

    def once(self, ctx: Ctx) -> str | None:
        return act(f"press_{self.key}()", f"I press {self.key}.")


class Tap(Once):
    """Tap (or long-press) the element matching ``match``, scrolling to find it."""

    def __init__(self, match: Match, *, long: bool = False, what: str = "") -> None:
        self.match, self.long, self.what = match, long, what

    def once(self, ctx: Ctx) -> str | None:
        found = locate(ctx, self.match, what=self.what)
        return found if isinstance(found, str) else act_tap(found, long=self.long)


class TapLast(Once):
    """Tap (or long-press) the last element on screen matching ``match`` (the newest message)."""

    def __init__(self, match: Callable[[Element], bool], *, long: bool = False) -> None:
        self.match, self.long = match, long

    def once(self, ctx: Ctx) -> str | None:
        found = [e for e in ctx.screen.elements if self.match(e)]
        if not found:
            raise OracleError(f"nothing on {ctx.screen.title!r} matches")
        return act_tap(found[-1], long=self.long)


class TapText(Tap):
    """Tap the element whose text is ``text`` (or starts with it, with ``prefix=True``)."""

    def __init__(self, text: str, *, prefix: bool = False, long: bool = False, id_prefix: str = "") -> None:
        def match(e: Element) -> bool:
            ok = e.text.startswith(text) if prefix else e.text == text
            return ok and e.id.startswith(id_prefix) and (e.clickable or e.editable)

        super().__init__(match, long=long, what=repr(text))


class Fill(Step):
    """Make the field ``field_id`` hold ``value``: tap it to focus, then type."""

    def __init__(self, field_id: str, value: str | Callable[[dict[str, Any]], str]) -> None:
        self.field_id, self.value = field_id, value

    def next(self, ctx: Ctx) -> str | None:
        value = self.value if isinstance(self.value, str) else self.value(ctx.mem)
        found = locate(ctx, self.field_id)
        if isinstance(found, str):
            return found
        if found.text == value:
            return None
        if ctx.screen.find("dialog") is None and not found.focused:
            return act_tap(found)
        return act(f"type(content={value!r})", f"I type into {self.field_id}.")


class SetSwitch(Step):
    """Tap the switch ``element_id`` until its checked state is ``want``."""

    def __init__(self, element_id: str, want: bool) -> None:
        self.element_id, self.want = element_id, want

    def next(self, ctx: Ctx) -> str | None:
        found = locate(ctx, self.element_id)
        if isinstance(found, str):
            return found
        return None if found.checked == self.want else act_tap(found)


class BackTo(Step):
    """Press back until an element matching ``match`` is on the screen."""

    def __init__(self, match: Match) -> None:
        self.match = match

    def next(self, ctx: Ctx) -> str | None:
        if any(_matches(e, self.match) for e in ctx.screen.elements):
            return None
        return act("press_back()", "I go back.")


class TapAt(Once):
    """Tap inside ``element_id`` at a fraction of its width (a slider's end)."""

    def __init__(self, element_id: str, frac: float) -> None:
        self.element_id, self.frac = element_id, frac

    def once(self, ctx: Ctx) -> str | None:
        found = locate(ctx, self.element_id)
        if isinstance(found, str):
            return found
        x0, y0, x1, y1 = found.bounds
        x = min(x1 - 1, max(x0, round(x0 + self.frac * (x1 - x0 - 1))))
        return act(f"tap(start_box='({x},{(y0 + y1) // 2})')", f"I set {self.element_id}.")


class Read(Step):
    """Store ``fn(screen)`` in ``mem[key]`` (no action)."""

    def __init__(self, key: str, fn: Callable[[Screen], Any]) -> None:
        self.key, self.fn = key, fn

    def next(self, ctx: Ctx) -> str | None:
        ctx.mem[self.key] = self.fn(ctx.screen)
        return None


def at_list_end(lst: Element) -> bool:
    """The list's scroll indicator (``"a-b of n"``) says its last row is on screen."""
    m = re.fullmatch(r"\d+-(\d+) of (\d+)", lst.text)
    return m is not None and m.group(1) == m.group(2)


class Scan(Step):
    """Read every element whose id starts with ``prefix`` into ``mem[key]`` (id -> text), scrolling down
    through the list until its scroll indicator shows the last row (or a scroll shows nothing new)."""

    def __init__(self, key: str, prefix: str = "row_") -> None:
        self.key, self.prefix = key, prefix

    def next(self, ctx: Ctx) -> str | None:
        seen = ctx.mem.setdefault(self.key, {})
        for e in ctx.screen.elements:
            if e.id.startswith(self.prefix):
                seen[e.id] = e.text
        if ctx.local.get("done"):
            return None
        lst = ctx.screen.find("list")
        sig = [e.id for e in ctx.screen.elements]
        if lst is None or not lst.scrollable or at_list_end(lst) or ctx.local.get("sig") == sig:
            ctx.local["done"] = True
            return None
        ctx.local["sig"] = sig
        x, y = lst.center
        return act(f"scroll(start_box='({x},{y})', direction='down')", "I read the rest of the list.")


class Finish(Step):
    """End the episode; ``answer`` computes the answer of a question task from the values read."""

    def __init__(self, answer: Callable[[dict[str, Any]], str] | None = None) -> None:
        self.answer = answer

    def next(self, ctx: Ctx) -> str | None:
        content = "" if self.answer is None else self.answer(ctx.mem)
        return act(f"finished(content={content!r})", "The task is complete.")


def texts(screen: Screen, prefix: str) -> list[str]:
    """The texts of the elements whose id starts with ``prefix``, in screen order."""
    return [e.text for e in screen.elements if e.id.startswith(prefix)]
