"""The service env's provenance log: which earlier tool results and user turns supplied an action's values.

For IAPO's influence graph (papers/envs.md §4.2, §4.4) every step's ``info["provenance"]`` records, by
explicit binding of values:

- ``bindings``: for each information unit of the action (a leaf of a tool call's arguments, or an
  id-like token or amount in a message) that occurs in an earlier source, the chosen source:
  ``{"kind": "tool", "step": k}`` (the result of the agent's call at step k) or
  ``{"kind": "user", "turn": t, "elicited_by": k}`` (user turn t, elicited by the agent's message at
  step k; None for an unelicited turn such as the opening one);
- ``sources``: the distinct chosen sources;
- ``error``: the call failed (tool, schema or policy error) or the action was invalid;
- ``repeats``: the step of an earlier failed call with the same tool and arguments, or None;
- ``fallback_from``: the previous step when it was a failed call that this action does not repeat.

IAPO's acceptance conditions are applied here: *necessity* (only specific units count: strings of at
least `MIN_UNIT_CHARS` characters and numbers other than 0 and 1, matched as whole tokens), *explicit
binding* (each unit is bound to a named argument or to the message) and *source priority* (sources are
chosen greedily by how many of the action's units they cover, the earliest first on ties, and a further
source is cited only for units the earlier choices do not cover). Failed results are not sources.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MIN_UNIT_CHARS = 3
"""The shortest string that counts as an information unit (inferred)."""
_ID_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_@.\-]*\d[A-Za-z0-9_@.\-]*|\d+\.\d+")


def _number_forms(x: float) -> list[str]:
    if float(x).is_integer():
        return [str(int(x)), f"{x:.1f}", f"{x:.2f}"]
    return [repr(float(x)), f"{x:.2f}"]


def units(value: Any, path: str = "") -> list[tuple[str, list[str]]]:
    """The information units of an argument value: ``(argument path, spellings)`` per leaf.

    >>> units({"order_id": "#W123", "item_ids": ["1", 42], "flag": True})
    [('order_id', ['#w123']), ('item_ids[1]', ['42', '42.0', '42.00'])]
    """
    out: list[tuple[str, list[str]]] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            out += units(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            out += units(item, f"{path}[{i}]")
    elif isinstance(value, bool) or value is None:
        pass
    elif isinstance(value, int | float):
        if value not in (0, 1):
            out.append((path, _number_forms(float(value))))
    else:
        text = str(value).strip().lower()
        if len(text) >= MIN_UNIT_CHARS:
            out.append((path, [text]))
    return out


def message_units(text: str) -> list[tuple[str, list[str]]]:
    """Units of an agent message: id-like tokens (holding a digit) and decimal amounts."""
    seen: dict[str, None] = {}
    for token in _ID_TOKEN.findall(text):
        token = token.strip(".-").lower()
        if len(token) >= MIN_UNIT_CHARS:
            seen.setdefault(token)
    return [("message", [t]) for t in seen]


_TOKEN = re.compile(r"[^\s\"',:;\[\]{}()<>=]+")
"""A token of a source text: a run between JSON and sentence delimiters."""


def _tokens(text: str) -> frozenset[str]:
    tokens = set(_TOKEN.findall(text))
    return frozenset(tokens | {t.rstrip(".!?") for t in tokens})


@dataclass
class _Source:
    ref: dict[str, Any]
    text: str
    order: int
    tokens: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.tokens = _tokens(self.text)

    def holds(self, spelling: str) -> bool:
        """Whether the unit occurs as a whole token (or, for a unit with delimiters, as a whole phrase)."""
        if _TOKEN.fullmatch(spelling):
            return spelling in self.tokens
        if spelling not in self.text:
            return False
        return re.search(rf"(?<![\w.]){re.escape(spelling)}(?![\w]|\.\d)", self.text) is not None


@dataclass
class ProvenanceLog:
    """Incremental provenance over the env's event list (``kind`` user / agent / tool).

    Call `update` once per agent step, after the step's events were appended.
    """

    seen: int = 0
    turns: int = 0
    sources: list[_Source] = field(default_factory=list)
    failed_calls: dict[str, int] = field(default_factory=dict)
    last_failed: int | None = None

    def _add_user(self, text: str, elicited_by: int | None) -> None:
        ref = {"kind": "user", "turn": self.turns, "elicited_by": elicited_by}
        self.sources.append(_Source(ref, text.lower(), len(self.sources)))
        self.turns += 1

    def update(
        self, events: Sequence[Mapping[str, Any]], step: int, *, invalid: bool = False
    ) -> dict[str, Any]:
        """The provenance record of agent step ``step`` (its events: those after the last update).

        Args:
            events: the env's whole event list.
            step: the 0-based index of the agent's action.
            invalid: the action could not be parsed (no event was appended for it).
        """
        new = list(events[self.seen :])
        self.seen = len(events)
        i = 0
        while i < len(new) and new[i]["kind"] not in ("agent", "tool"):  # before this action: unelicited
            if new[i]["kind"] == "user":
                self._add_user(str(new[i]["text"]), None)
            i += 1
        action = new[i] if i < len(new) else None
        record: dict[str, Any] = {"step": step, "kind": "invalid", "bindings": [], "sources": []}
        record["fallback_from"] = self.last_failed
        if action is None:
            record["error"] = True
            record["repeats"] = None
            self.last_failed = step
            return record
        if action["kind"] == "tool":
            record.update(kind="tool", tool=action["name"])
            leaves = units(action["arguments"])
            error = bool(action["error"]) or invalid
            signature = f"{action['name']}:{json.dumps(action['arguments'], sort_keys=True, default=str)}"
            record["repeats"] = self.failed_calls.get(signature)
        else:
            record["kind"] = "message"
            leaves = message_units(str(action["text"]))
            error = invalid
            signature = ""
            record["repeats"] = None
        if record["repeats"] is not None and record["repeats"] == record["fallback_from"]:
            record["fallback_from"] = None  # a plain repeat, not a fallback
        record["error"] = error
        record["bindings"], record["sources"] = self._bind(leaves)
        if action["kind"] == "tool":
            if error:
                self.failed_calls[signature] = step
            else:
                ref = {"kind": "tool", "step": step}
                self.sources.append(_Source(ref, str(action["result"]).lower(), len(self.sources)))
        self.last_failed = step if error else None
        for event in new[i + 1 :]:
            if event["kind"] == "user":
                self._add_user(str(event["text"]), step)
        return record

    def _bind(self, leaves: list[tuple[str, list[str]]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Source priority: greedy cover of the units by the most comprehensive source, earliest on ties."""
        covers: list[tuple[_Source, set[int]]] = []
        for source in self.sources:
            hit = {u for u, (_, forms) in enumerate(leaves) if any(source.holds(f) for f in forms)}
            if hit:
                covers.append((source, hit))
        open_units = set().union(*(hit for _, hit in covers)) if covers else set()
        chosen: dict[int, _Source] = {}
        order: list[_Source] = []
        while open_units:
            source, hit = max(covers, key=lambda c: (len(c[1] & open_units), -c[0].order))
            gained = hit & open_units
            if not gained:
                break
            for u in gained:
                chosen[u] = source
            open_units -= gained
            order.append(source)
        bindings = [
            {"argument": leaves[u][0], "value": leaves[u][1][0], "source": dict(chosen[u].ref)}
            for u in sorted(chosen)
        ]
        return bindings, [dict(s.ref) for s in sorted(order, key=lambda s: s.order)]
