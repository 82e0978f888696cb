"""WM-R1's Android action grammar (papers/envs.md §1.2), parsed with `ast` and never evaluated.

A completion is ``Thought: ...`` then ``Action: <call>``, the call one of
``tap(start_box='(x,y)')``, ``long_press(start_box=...)``, ``type(content='...')``,
``scroll(start_box=..., direction='up|down|left|right')``,
``press_back()``, ``press_home()``, ``open_app(app_name='...')``, ``wait()`` and ``finished(content='...')``.
Boxes are pixel coordinates on the 1080x2400 screen, ``(x,y)`` or ``(x0,y0,x1,y1)`` (its centre), with or
without UI-TARS's ``<|box_start|>`` / ``<|box_end|>`` markers. ``tap(id='...')`` and ``long_press(id='...')``
address an element by resource id instead (an option: ``element_ids=True``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

ACTIONS: dict[str, tuple[str, ...]] = {
    "tap": ("start_box", "id"),
    "click": ("start_box", "id"),
    "long_press": ("start_box", "id"),
    "type": ("content",),
    "scroll": ("start_box", "direction", "id"),
    "press_back": (),
    "press_home": (),
    "open_app": ("app_name",),
    "wait": (),
    "finished": ("content",),
}
"""Each action's keyword arguments (``click`` is UI-TARS's name for ``tap``)."""
DIRECTIONS = ("up", "down", "left", "right")
MAX_CALL_CHARS = 4000
_MARKERS = re.compile(r"<\|box_(?:start|end)\|>|</?point>")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_CALL_START = re.compile(r"^[a-z_]+\s*\(")


@dataclass(frozen=True, slots=True)
class ParsedAction:
    """A parsed action: its kind and arguments (``point`` in pixels, or ``element_id``)."""

    kind: str
    point: tuple[int, int] | None = None
    element_id: str | None = None
    text: str | None = None
    direction: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"action": self.kind}
        if self.point is not None:
            d["point"] = list(self.point)
        for key in ("element_id", "text", "direction"):
            value = getattr(self, key)
            if value is not None:
                d[key] = value
        return d


class ActionError(ValueError):
    """The completion holds no well-formed action (the message is the feedback shown to the agent)."""


def extract_call(completion: str) -> str:
    """The call text after the last ``Action:`` (or the last non-empty line when there is none)."""
    idx = completion.rfind("Action:")
    if idx >= 0:
        src = completion[idx + len("Action:") :]
    else:
        lines = [ln for ln in completion.strip().splitlines() if ln.strip()]
        src = lines[-1] if lines else ""
    return _MARKERS.sub("", src).strip()


def parse_box(value: Any) -> tuple[int, int]:
    """A point from ``'(x,y)'``, ``'(x0,y0,x1,y1)'`` (the centre), or a tuple/list of numbers."""
    if isinstance(value, list | tuple):
        nums = [float(v) for v in value if isinstance(v, int | float) and not isinstance(v, bool)]
        if len(nums) != len(value):
            raise ActionError("start_box must hold numbers.")
    elif isinstance(value, str):
        nums = [float(n) for n in _NUMBER.findall(value)]
    else:
        raise ActionError("start_box must be a string like '(540,1200)'.")
    if len(nums) == 2:
        return round(nums[0]), round(nums[1])
    if len(nums) == 4:
        return round((nums[0] + nums[2]) / 2), round((nums[1] + nums[3]) / 2)
    raise ActionError("start_box must be '(x,y)' or '(x0,y0,x1,y1)' in pixels.")


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float):
        return node.value
    if isinstance(node, ast.Tuple | ast.List) and all(isinstance(e, ast.Constant) for e in node.elts):
        return tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
    raise ActionError("Action arguments must be literal strings or numbers.")


def _call(src: str) -> ast.Call:
    if len(src) > MAX_CALL_CHARS or not _CALL_START.match(src):
        raise ActionError("Write one action call after 'Action:', e.g. Action: tap(start_box='(540,1200)')")
    for candidate in (src, src.replace("\n", "\\n")):
        try:
            tree = ast.parse(candidate, mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if isinstance(tree.body, ast.Call):
            return tree.body
    raise ActionError("The action is not a well-formed call, e.g. Action: type(content='hello')")


def parse_action(completion: str, *, element_ids: bool = True) -> ParsedAction:
    """Parse a completion into a `ParsedAction`.

    Raises:
        ActionError: no well-formed action; the message tells the agent the expected format.
    """
    call = _call(extract_call(completion))
    if not isinstance(call.func, ast.Name) or call.func.id not in ACTIONS:
        raise ActionError(f"Unknown action; use one of: {', '.join(a for a in ACTIONS if a != 'click')}.")
    kind = "tap" if call.func.id == "click" else call.func.id
    allowed = ACTIONS[kind]
    kwargs: dict[str, Any] = {}
    if call.args:
        if len(call.args) > 1 or not allowed:
            raise ActionError(f"{kind}() takes keyword arguments: {', '.join(allowed) or 'none'}.")
        kwargs[allowed[0]] = _literal(call.args[0])
    for kw in call.keywords:
        if kw.arg is None or kw.arg not in allowed:
            raise ActionError(f"{kind}() takes keyword arguments: {', '.join(allowed) or 'none'}.")
        kwargs[kw.arg] = _literal(kw.value)
    if kind in ("type", "finished"):
        content = kwargs.get("content", "" if kind == "finished" else None)
        if not isinstance(content, str):
            raise ActionError(f"{kind}(content='...') needs a string.")
        return ParsedAction(kind, text=content)
    if kind == "open_app":
        name = kwargs.get("app_name")
        if not isinstance(name, str) or not name.strip():
            raise ActionError("open_app(app_name='...') needs an app name.")
        return ParsedAction(kind, text=name)
    if kind in ("press_back", "press_home", "wait"):
        return ParsedAction(kind)
    direction = None
    if kind == "scroll":
        direction = kwargs.get("direction")
        if direction not in DIRECTIONS:
            raise ActionError("scroll needs direction='up', 'down', 'left' or 'right'.")
        if "start_box" not in kwargs and "id" not in kwargs:
            return ParsedAction(kind, direction=direction)
    if "id" in kwargs:
        if not element_ids:
            raise ActionError("Address elements by start_box='(x,y)'; element ids are disabled.")
        if not isinstance(kwargs["id"], str):
            raise ActionError("id must be a string.")
        return ParsedAction(kind, element_id=kwargs["id"], direction=direction)
    if "start_box" not in kwargs:
        raise ActionError(f"{kind} needs start_box='(x,y)'.")
    return ParsedAction(kind, point=parse_box(kwargs["start_box"]), direction=direction)


def format_action(action: ParsedAction) -> str:
    """The canonical WM-R1 text of an action (for history lines and the oracle)."""
    k = action.kind
    if k in ("type", "finished"):
        return f"{k}(content={action.text!r})"
    if k == "open_app":
        return f"open_app(app_name={action.text!r})"
    if k in ("press_back", "press_home", "wait"):
        return f"{k}()"
    where = (
        f"id={action.element_id!r}"
        if action.element_id is not None
        else (f"start_box='({action.point[0]},{action.point[1]})'" if action.point else "")
    )
    if k == "scroll":
        return f"scroll({where + ', ' if where else ''}direction={action.direction!r})"
    return f"{k}({where})"
