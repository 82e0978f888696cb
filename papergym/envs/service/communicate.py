"""The COMMUNICATE check: did the agent state each required value, and only that value, for its slot.

Two settings (the env's ``communicate=`` argument):

- ``"substring"`` (tau2-exact, the default on tau2's own data): each string is a case-insensitive
  substring of some agent message with commas removed, as tau2's evaluator does.
- ``"strict"`` (the default on generated tasks): each value must be stated as a whole token in some
  agent message, and that message must state no competing value of the same kind. The kind is read off
  the expected value:

  - numbers (counts, money): the standalone numbers of the message (commas removed, ``$`` allowed) are
    compared numerically, so ``14`` is not ``4`` and ``$878`` is not ``877.50``; the slot of a number
    is its unit (``$``/dollars, else the next word, skipping list words: ``"4 or 5 orders"``), and no
    other number of the stated value's slot (or without a unit) may appear; words that go with the
    number (``"4 orders"``) must follow it;
  - statuses (`STATUSES`): the status must appear as words and no other status may;
  - ids, codes and names (anything else): the value must appear as a whole token; for an id or a code
    (a digit, ``_``, ``#`` or all capitals) no other token of the same shape (letters, digits and
    separators in the same pattern) may appear.

  The values of every COMMUNICATE string of the task are allowed together, so one message may state
  them all; no later agent message may state a competing value of the slot (the last word counts).
  On generated tasks a value counts only in a message sent after the lookups that show it (the
  task's ``communicate_sources``: a value stated after an unrelated lookup is a guess).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from decimal import Decimal
from typing import Literal

CommunicateMode = Literal["strict", "substring"]
STATUSES: tuple[str, ...] = (
    "pending (item modified)",
    "return requested",
    "exchange requested",
    "pending",
    "processed",
    "delivered",
    "cancelled",
    "available",
    "delayed",
    "on time",
    "flying",
    "landed",
)
"""Order and flight statuses of the retail and airline domains (the slots a status answer fills)."""
_NUMBER = re.compile(r"(?<![\w.#/:$-])(-?\$?-?)(\d+(?:\.\d+)?)(?![\w/:-]|\.\d)")
_TOKEN = re.compile(r"[#\w][\w#./-]*\w|[#\w]")
_WORD = re.compile(r"\w+")
_LIST_WORDS = frozenset({"or", "and", "to", "nor", "maybe", "perhaps"})
_MONEY_WORDS = frozenset({"dollar", "dollars", "usd"})


def _numbers(text: str) -> list[Decimal]:
    return [n for n, _ in _slots(text)]


def _slots(text: str) -> list[tuple[Decimal, str]]:
    """Each standalone number of ``text`` with its unit: ``$`` for money, else the next word after it
    (skipping numbers and list words such as "or"), so ``"4 or 5 orders"`` gives both the unit orders."""
    low = text.lower()
    out = []
    for m in _NUMBER.finditer(low):
        unit = "$" if "$" in m.group(1) else ""
        if not unit:
            for word in _WORD.findall(low[m.end() :]):
                if word not in _LIST_WORDS and not word[0].isdigit():
                    unit = "$" if word in _MONEY_WORDS else word
                    break
        out.append((Decimal(m.group(2)), unit))  # a magnitude: "-391 dollars" states a refund of 391
    return out


def _shape(token: str) -> str:
    return re.sub(r"[a-z]", "a", re.sub(r"[A-Z]", "A", re.sub(r"\d", "0", token)))


def _statuses(text: str) -> set[str]:
    """The statuses named in lowercase ``text``, a longer one hiding the shorter one it contains."""
    found: set[str] = set()
    rest = text
    for status in STATUSES:
        pattern = re.compile(rf"(?<!\w){re.escape(status)}(?!\w)")
        if pattern.search(rest):
            found.add(status)
            rest = pattern.sub(" ", rest)
    return found


def _kind(value: str) -> str:
    if value.lower() in STATUSES:
        return "status"
    if _numbers(value):
        return "number"
    return "token"


def _states(message: str, value: str, allowed: Sequence[str]) -> bool:
    """``message`` states ``value`` and no competing value of its kind outside ``allowed``."""
    kind = _kind(value)
    low = message.lower()
    if kind == "number":
        expected = _numbers(value)[0]
        units = {u for n, u in _slots(message) if n == expected}
        words = _NUMBER.sub(" ", value.lower()).split()
        # the words of the value must follow its number ("4 orders", "123 main st")
        tail = r"\W+".join(re.escape(w) for w in words)
        head = re.escape(_NUMBER.search(value.lower()).group(2))  # type: ignore[union-attr]
        follows = not words or re.search(rf"(?<![\w.]){head}\W+{tail}", low) is not None
        return bool(units) and follows and not _competes(message, value, allowed, units)
    if kind == "status":
        if value.lower() not in _statuses(low):
            return False
    elif value.lower() not in {t.lower() for t in _TOKEN.findall(message)}:
        return False
    return not _competes(message, value, allowed, set())


def _competes(message: str, value: str, allowed: Sequence[str], units: set[str]) -> bool:
    """``message`` states a value of ``value``'s kind (and slot ``units``, for a number) outside
    ``allowed``: a number of the same unit or without one, another status, an id of the same shape."""
    kind = _kind(value)
    if kind == "number":
        allowed_numbers = {n for a in allowed if _kind(a) == "number" for n in _numbers(a)}
        units = units or {u for n, u in _slots(value) if n in allowed_numbers}
        # a number without a unit could fill any slot, so it competes with every number
        return any(
            n not in allowed_numbers and (u in units or not u or "" in units) for n, u in _slots(message)
        )
    if kind == "status":
        return not _statuses(message.lower()) <= {a.lower() for a in allowed if _kind(a) == "status"}
    if not _id_like(value):
        return False  # a name or a word: no slot of competing values to read
    allowed_low = {a.lower() for a in allowed}
    return any(t.lower() not in allowed_low for t in _TOKEN.findall(message) if _shape(t) == _shape(value))


def _id_like(token: str) -> bool:
    """An id or a code: it has a digit, an underscore or ``#``, or is an all-capitals code (``JFK``)."""
    return any(c.isdigit() or c in "_#" for c in token) or (token.isupper() and len(token) >= 2)


def communicated(
    values: Sequence[str],
    agent_messages: Sequence[str],
    mode: CommunicateMode,
    eligible: Sequence[Collection[int]] | None = None,
) -> bool:
    """Whether every value of ``values`` was communicated in ``agent_messages`` under ``mode``.

    ``eligible`` (strict only), one collection per value: the indices of the messages that may state
    that value (those sent after the lookups that show it); any later message still counts as stating
    a competing value.
    """
    said = [m.replace(",", "") for m in agent_messages]
    if mode == "substring":
        low = [m.lower() for m in said]
        return all(any(v.lower() in m for m in low) for v in values)
    if mode != "strict":
        raise ValueError(f"communicate must be 'strict' or 'substring', got {mode!r}")
    if eligible is None:
        return all(_stated_last(v, said, values) for v in values)
    return all(_stated_last(v, said, values, ok) for v, ok in zip(values, eligible, strict=True))


def _stated_last(
    value: str, said: Sequence[str], allowed: Sequence[str], eligible: Collection[int] | None = None
) -> bool:
    """Some message (of ``eligible``, if given) states ``value`` and no later message states a competing
    value of its slot."""
    for i, message in enumerate(said):
        if (eligible is None or i in eligible) and _states(message, value, allowed):
            units = (
                {u for n, u in _slots(message) if n in _numbers(value)} if _kind(value) == "number" else set()
            )
            if not any(_competes(later, value, allowed, units) for later in said[i + 1 :]):
                return True
    return False


__all__ = ["STATUSES", "CommunicateMode", "communicated"]
