"""Oracle plans: the agent side of a correct conversation, as data.

A plan is a tuple of steps: `Say` (a message to the user) and `Call` (a tool call whose result is kept
under a label). Argument values are expressions resolved at run time against what the env returned:
`Res` reads a labelled tool result, `Said` reads a value the user stated, `Pick` searches several
results. So the oracle reads every id from tool results and user turns, never from the task file.
Plans are plain frozen dataclasses: tasks holding them pickle and deep-copy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from papergym.core.tool_calls import ToolCall


class PlanError(Exception):
    """A plan expression could not be resolved (the conversation left the plan)."""


@dataclass(frozen=True)
class Match:
    """A path step: the first element of a list (or value of a dict) whose fields include ``fields``."""

    fields: Mapping[str, Any]


ALL = "*"
"""A path step: map the rest of the path over every element of a list (or value of a dict)."""


@dataclass(frozen=True)
class Lit:
    value: Any


@dataclass(frozen=True)
class Res:
    """The result of the call labelled ``label``, followed along ``path``."""

    label: str
    path: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Said:
    """The value the user stated for ``topic`` ("My {topic} is {value}.")."""

    topic: str


@dataclass(frozen=True)
class Pick:
    """Along ``out`` in the first of ``labels``' results that includes ``where``'s fields."""

    labels: tuple[str, ...]
    where: Match
    out: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Fmt:
    """``template.format(*args)`` (numbers shown with two decimals when ``money``)."""

    template: str
    args: tuple[Any, ...] = ()
    money: bool = False


@dataclass(frozen=True)
class Lst:
    items: tuple[Any, ...]


@dataclass(frozen=True)
class Sum:
    """The sum of numbers (lists flattened), rounded to cents."""

    items: tuple[Any, ...]


@dataclass(frozen=True)
class Count:
    item: Any


@dataclass(frozen=True)
class Say:
    """A message to the user."""

    template: str
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Call:
    """A tool call; its result is kept under ``label``."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""


@dataclass
class PlanContext:
    """What the oracle has seen: labelled tool results (as the agent saw them) and the user's messages."""

    results: dict[str, str] = field(default_factory=dict)
    user_messages: list[str] = field(default_factory=list)

    def result(self, label: str) -> Any:
        """The result labelled ``label``, decoded from JSON (plain text when it is not JSON)."""
        if label not in self.results:
            raise PlanError(f"no result labelled {label!r} yet")
        text = self.results[label]
        try:
            return json.loads(text)
        except ValueError:
            return text


def follow(value: Any, path: Sequence[Any]) -> Any:
    """``value`` followed along ``path`` (keys, indices, `Match`, `ALL`); PlanError if it leads nowhere."""
    for i, step in enumerate(path):
        if step == ALL:
            items = value.values() if isinstance(value, Mapping) else value
            return [follow(item, path[i + 1 :]) for item in items]
        if isinstance(step, Match):
            items = list(value.values()) if isinstance(value, Mapping) else list(value)
            value = next((item for item in items if _includes(item, step.fields)), _NONE)
        elif isinstance(value, Mapping):
            value = value.get(step, _NONE)
        elif isinstance(value, list) and isinstance(step, int) and -len(value) <= step < len(value):
            value = value[step]
        else:
            value = _NONE
        if value is _NONE:
            raise PlanError(f"path {path!r} leads nowhere at {step!r}")
    return value


_NONE = object()


def _includes(item: Any, fields: Mapping[str, Any]) -> bool:
    if not isinstance(item, Mapping):
        return False
    for key, want in fields.items():
        have = item.get(key, _NONE)
        if isinstance(want, Mapping):
            if not _includes(have, want):
                return False
        elif isinstance(want, Match):  # some element of a list (or value of a dict) includes its fields
            items = have.values() if isinstance(have, Mapping) else have if isinstance(have, list) else ()
            if not any(_includes(item, want.fields) for item in items):
                return False
        elif isinstance(want, tuple):  # any of
            if have not in want:
                return False
        elif have != want:
            return False
    return True


def said(topic: str, user_messages: Sequence[str]) -> str:
    """The last value the user stated for ``topic``."""
    pattern = re.compile(rf"[Mm]y {re.escape(topic)} is (.+?)(?:\.\s|\.$|$)", re.MULTILINE)
    for message in reversed(user_messages):
        found = pattern.findall(message)
        if found:
            return found[-1].strip()
    raise PlanError(f"the user has not stated their {topic}")


def resolve(expr: Any, ctx: PlanContext) -> Any:
    """The value of a plan expression (plain values resolve to themselves; dicts and lists recursively)."""
    if isinstance(expr, Lit):
        return expr.value
    if isinstance(expr, Res):
        path = [resolve(step, ctx) if isinstance(step, Res | Said) else step for step in expr.path]
        return follow(ctx.result(expr.label), path)
    if isinstance(expr, Said):
        return said(expr.topic, ctx.user_messages)
    if isinstance(expr, Pick):
        for label in expr.labels:
            if label in ctx.results and _includes(ctx.result(label), expr.where.fields):
                return follow(ctx.result(label), expr.out)
        raise PlanError(f"no result among {expr.labels} has {expr.where!r}")
    if isinstance(expr, Fmt):
        args = [resolve(a, ctx) for a in expr.args]
        if expr.money:
            args = [f"{a:.2f}" if isinstance(a, float | int) and not isinstance(a, bool) else a for a in args]
        return expr.template.format(*args)
    if isinstance(expr, Lst):
        return [resolve(a, ctx) for a in expr.items]
    if isinstance(expr, Sum):
        total = 0.0
        for value in _flatten([resolve(a, ctx) for a in expr.items]):
            total += float(value)
        return round(total, 2)
    if isinstance(expr, Count):
        return len(resolve(expr.item, ctx))
    if isinstance(expr, Mapping):
        return {k: resolve(v, ctx) for k, v in expr.items()}
    if isinstance(expr, list | tuple):
        return [resolve(v, ctx) for v in expr]
    return expr


def _flatten(values: Any) -> list[Any]:
    if isinstance(values, list):
        return [x for v in values for x in _flatten(v)]
    return [values]


def render_step(step: Say | Call, ctx: PlanContext) -> str:
    """The action text of one plan step."""
    if isinstance(step, Say):
        return step.template.format(*(_show(resolve(a, ctx)) for a in step.args))
    arguments = {k: resolve(v, ctx) for k, v in step.arguments.items()}
    return ToolCall(step.name, arguments).format("tag")


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)
