"""A small learned (non-LM) service agent for the retail domain: a menu of actions, trained with GRPO.

The policy is for SpeechGym's question (envs.md §2) of whether a per-turn process reward rescues GRPO from
gradient starvation, where the ~1M-parameter LM, SFT-warmed on a CPU budget, never makes a successful tool
call (benchmarks/README.md, "SpeechGym reproduction"), so neither reward ever varies. Here a well-formed
call is given by the action space and *what to do* is learned. Each turn the policy reads the conversation
(``obs_mode="chat"``: user turns as heard, its own calls and the tool results, `Reading`) and draws from
softmax rows (`HEADS`; a row is the request's intent words hashed into `INTENT_BUCKETS`, times, for
``act``, the conversation's progress, `Reading.progress`):

- ``act``: one of `ACTS`: ask for the email, for the name and zip code, or for the order id; ``lookup``,
  the next read call (``find_user_id_by_email`` / ``find_user_id_by_name_zip`` with the values last heard,
  then ``get_user_details`` of the id found, then ``get_order_details`` of the order id last heard, else
  of the user's next unread order); ``confirm`` (ask yes/no for the write ``write`` draws), ``write``
  (execute it), ``report`` (tell the user the field ``field`` draws), ``refuse``, ``stop``.
- ``write``: which write tool (`WRITES`); its arguments are the current order's id and, per tool, a
  ``reason`` (`REASONS`), a payment method (``pay``: the order's original one or the user's first of a
  source, `PAYMENTS`) and ``items`` (all the order's items, or those the request names).
- ``field``: what ``report`` states (`FIELDS`), read off the last results.

Heard values go into calls as heard, normalised as a listener reads them
(`papergym.envs.voice.hearing_oracle.understood`), so a misheard email fails against the database and
the policy must learn to ask again. The policy can complete only some of the domain's task kinds (status,
tracking, order count, gift card balance, payment method, cancellation, payment change, returns, refusals,
transfer); exchanges, item and address edits and sums need arguments it cannot form, so its success has a
ceiling below 1 (the same for every arm). Nothing reads the task, its gold actions or the env's checks.

`MenuPolicy.episode_decisions` turns demonstrations (`HearingOracle` episodes on a speech channel: the
oracle's procedure with values as heard; the env's oracle on ``ServiceAgent-v0``) into the menu's
decisions, for a behaviour-cloning warm start; `papergym.baselines.menu_grpo` plays, warms and trains it
(optionally in an env wrapper, e.g. SpeechGym's `ProcessReward`).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from papergym.baselines.menu_grpo import Demonstrator, call_text, conversation, same_call, tool_result
from papergym.baselines.softmax_grpo import Decision, SoftmaxHeads
from papergym.core.tool_calls import parse_tool_calls
from papergym.envs.service.user import STOP
from papergym.envs.voice.hearing_oracle import understood

ACTS: tuple[str, ...] = (
    "ask_email",
    "ask_name_zip",
    "ask_order",
    "lookup",
    "confirm",
    "write",
    "report",
    "refuse",
    "stop",
)
WRITES: tuple[str, ...] = (
    "cancel_pending_order",
    "modify_pending_order_payment",
    "return_delivered_order_items",
    "transfer_to_human_agents",
)
REASONS: tuple[str, ...] = ("no longer needed", "ordered by mistake")
PAYMENTS: tuple[str, ...] = ("original", "gift_card", "credit_card", "paypal")
ITEMS: tuple[str, ...] = ("all", "named")
FIELDS: tuple[str, ...] = ("status", "tracking", "order_count", "gift_card_balance", "payment", "done")
INTENT_WORDS: frozenset[str] = frozenset(
    (
        *("cancel", "return", "exchange", "change", "modify", "address", "pay", "paypal", "visa"),
        *("mastercard", "credit", "gift", "card", "status", "track", "tracking", "how", "many", "balance"),
        *("which", "payment", "method", "price", "total", "cost", "damaged", "broken", "mistake", "longer"),
        *("needed", "refund", "pending", "delivered", "processed", "someone", "friend", "human"),
    )
)
"""Words of the opening request that make its intent (inferred: the retail requests' vocabulary)."""
INTENT_BUCKETS = 32
"""Rows the intent words are hashed into (inferred; collisions only share rows)."""
PROGRESS_STATES = 4 * 3 * 3 * 2
"""identity (none, heard, user id, user details) × order (none, heard, details) × write (none, confirmed,
done) × the last call failed since the user last spoke."""
HEADS: dict[str, tuple[int, int]] = {
    "act": (INTENT_BUCKETS * PROGRESS_STATES, len(ACTS)),
    "write": (INTENT_BUCKETS, len(WRITES)),
    "reason": (INTENT_BUCKETS, len(REASONS)),
    "pay": (INTENT_BUCKETS, len(PAYMENTS)),
    "items": (INTENT_BUCKETS, len(ITEMS)),
    "field": (INTENT_BUCKETS, len(FIELDS)),
}
ASKS = {
    "ask_email": "Could you please tell me your email address?",
    "ask_name_zip": "Could you please tell me your first name, last name and zip code?",
    "ask_order": "Which order is it? Please tell me the order id.",
}
_FACT = re.compile(r"My (email|first name|last name|zip code|order id|user id) is (.+?)\.?$")
_WORDS = re.compile(r"[a-z]+")
_AGREE = re.compile(r"\b(yes|go ahead)\b", re.IGNORECASE)


def intent_bucket(request: str) -> int:
    """The opening request's intent words (`INTENT_WORDS`, sorted, deduplicated) hashed into a row.

    >>> intent_bucket("Hi, could you tell me the status of my order?") == intent_bucket("STATUS of order")
    True
    """
    words = sorted(set(_WORDS.findall(request.lower())) & INTENT_WORDS)
    return zlib.crc32(" ".join(words).encode()) % INTENT_BUCKETS


def heard_facts(turn: str) -> dict[str, str]:
    """The ``My <topic> is <value>.`` statements of a user turn as a listener reads them.

    >>> heard_facts("My email is a at b.com. My order ID is hash W1,234,567.")
    {'email': 'a@b.com', 'order id': '#W1234567'}
    """
    facts = {}
    for part in re.split(r"(?<=\.)\s+(?=My )", understood(turn)):
        m = _FACT.match(part.strip())
        if m:
            facts[m.group(1)] = m.group(2)
    return facts


@dataclass
class Reading:
    """What the policy knows, re-read from the whole conversation each turn (a chat observation)."""

    request: str = ""
    facts: dict[str, str] = field(default_factory=dict)
    user_id: str | None = None
    user: dict[str, Any] | None = None
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    order: dict[str, Any] | None = None
    confirmed: bool = False
    written: bool = False
    failed: bool = False
    last_agent: str = ""

    @classmethod
    def of(cls, messages: Sequence[Mapping[str, Any]]) -> Reading:
        reading = cls()
        for role, text, tool in conversation(messages):
            if role == "user":
                if not reading.request:
                    reading.request = text
                new = heard_facts(text)
                reading.facts.update(new)
                reading.failed = reading.failed and not new
                reading.confirmed = "(yes/no)" in reading.last_agent and bool(_AGREE.search(text))
            elif role == "assistant":
                reading.last_agent = text
            else:
                reading._take(tool, text)
        return reading

    def _take(self, name: str, text: str) -> None:
        self.failed = text.startswith("Error")
        if self.failed:
            return
        result = tool_result(text)
        if name.startswith("find_user_id"):
            self.user_id = str(result)
        elif name == "get_user_details" and isinstance(result, dict):
            self.user = result
        elif name == "get_order_details" and isinstance(result, dict):
            self.orders[str(result.get("order_id"))] = self.order = result
        elif name in WRITES:
            self.written = True
            if isinstance(result, dict) and "order_id" in result:
                self.order = result

    def progress(self) -> int:
        """The ``act`` row's progress index (`PROGRESS_STATES`)."""
        heard = "email" in self.facts or {"first name", "last name", "zip code"} <= set(self.facts)
        identity = 3 if self.user is not None else 2 if self.user_id else 1 if heard else 0
        order = 2 if self.order is not None else 1 if "order id" in self.facts else 0
        write = 2 if self.written else 1 if self.confirmed else 0
        return ((identity * 3 + order) * 3 + write) * 2 + int(self.failed)

    # -------------------------------------------------------------- what the menu's choices say
    def lookup(self) -> str:
        """The next read call (empty arguments where nothing was heard: the call fails)."""
        if self.user_id is None:
            if "email" in self.facts or not {"first name", "last name", "zip code"} <= set(self.facts):
                return call_text("find_user_id_by_email", email=self.facts.get("email", ""))
            f = self.facts
            return call_text(
                "find_user_id_by_name_zip",
                first_name=f["first name"],
                last_name=f["last name"],
                zip=f["zip code"],
            )
        if self.user is None:
            return call_text("get_user_details", user_id=self.user_id)
        heard = self.facts.get("order id")
        if heard and heard not in self.orders:
            return call_text("get_order_details", order_id=heard)
        unread = [o for o in self.user.get("orders", []) if o not in self.orders]
        return call_text("get_order_details", order_id=unread[0] if unread else heard or "")

    def target(self) -> dict[str, Any]:
        """The order a write acts on: the first read order holding an item the request names, else the
        last order read."""
        named = (o for o in self.orders.values() if any(_named(i, self.request) for i in o.get("items", [])))
        return next(named, self.order or {})

    def write_call(self, tool: str, reason: str, pay: str, items: str) -> str:
        order = self.target()
        order_id = str(order.get("order_id", self.facts.get("order id", "")))
        if tool == "cancel_pending_order":
            return call_text(tool, order_id=order_id, reason=reason)
        if tool == "transfer_to_human_agents":
            return call_text(tool, summary=f"The user asks: {self.request}")
        if tool == "modify_pending_order_payment":
            return call_text(tool, order_id=order_id, payment_method_id=self.payment_method(pay))
        chosen = [i for i in order.get("items", []) if items == "all" or _named(i, self.request)]
        return call_text(
            tool,
            order_id=order_id,
            item_ids=[i["item_id"] for i in chosen],
            payment_method_id=self.payment_method(pay),
        )

    def payment_method(self, pay: str) -> str:
        if pay == "original":
            history = self.target().get("payment_history") or [{}]
            return str(history[0].get("payment_method_id", ""))
        methods = (self.user or {}).get("payment_methods", {})
        return next((str(m["id"]) for m in methods.values() if m.get("source") == pay), "")

    def report(self, what: str) -> str:
        order = self.order or {}
        order_id = order.get("order_id", "")
        if what == "status":
            return f"Your order {order_id} is currently {order.get('status', 'unknown')}."
        if what == "tracking":
            ids = [t for f in order.get("fulfillments", []) for t in f.get("tracking_id", [])]
            return f"The tracking id of order {order_id} is {', '.join(ids) or 'not available'}."
        if what == "order_count":
            return f"You have {len((self.user or {}).get('orders', []))} orders with us."
        if what == "gift_card_balance":
            balance = self.payment_field("gift_card", "balance")
            return f"Your gift card balance is ${balance:.2f}." if balance != "" else "I see no gift card."
        if what == "payment":
            return f"Order {order_id} was paid with {self.payment_method('original')}."
        return f"Done: your request on order {order_id} is complete."

    def payment_field(self, source: str, key: str) -> Any:
        methods = (self.user or {}).get("payment_methods", {})
        return next((m.get(key, "") for m in methods.values() if m.get("source") == source), "")


def _named(item: Mapping[str, Any], request: str) -> bool:
    return str(item.get("name", "")).lower() in request.lower()


def render(reading: Reading, choice: Mapping[str, int]) -> str:
    """The action a set of choices (``head -> index``; a head the action does not use may be left out)
    says in ``reading``."""
    act = ACTS[choice["act"]]
    if act in ASKS:
        return ASKS[act]
    if act == "lookup":
        return reading.lookup()
    if act == "report":
        return reading.report(FIELDS[choice.get("field", 0)])
    if act == "refuse":
        order = reading.order or {}
        order_id, status = order.get("order_id", ""), order.get("status", "")
        return f"I'm sorry, I am unable to do that: order {order_id} is {status}."
    if act == "stop":
        return STOP
    pick = {h: choice.get(h, 0) for h in ("write", "reason", "pay", "items")}  # heads the tool does not use
    call = reading.write_call(
        WRITES[pick["write"]], REASONS[pick["reason"]], PAYMENTS[pick["pay"]], ITEMS[pick["items"]]
    )
    if act == "write":
        return call
    (parsed,) = parse_tool_calls(call).calls
    shown = ", ".join(f"{k}={v}" for k, v in parsed.arguments.items())
    return f"I will call {parsed.name} with {shown}. Do you confirm (yes/no)?"


def needed_heads(act: str, tool: str) -> tuple[str, ...]:
    """The heads a choice of ``act`` (and, for writes, ``tool``) draws beyond ``act``."""
    if act == "report":
        return ("field",)
    if act not in ("confirm", "write"):
        return ()
    extra = {
        "cancel_pending_order": ("reason",),
        "modify_pending_order_payment": ("pay",),
        "return_delivered_order_items": ("items", "pay"),
    }
    return ("write", *extra.get(tool, ()))


class MenuPolicy:
    """The menu's softmax heads (`HEADS`, zero logits: uniform choices) and how a turn draws from them."""

    def __init__(self, *, lr: float = 0.1, epochs: int = 4, optimizer: str = "adam") -> None:
        self.heads = SoftmaxHeads(HEADS, lr=lr, epochs=epochs, optimizer=optimizer)

    @staticmethod
    def read(messages: Sequence[Mapping[str, Any]]) -> Reading:
        return Reading.of(messages)

    @staticmethod
    def demonstrator(env: Any, task_seed: int) -> Demonstrator:
        return _demonstrator(env, task_seed)

    @staticmethod
    def episode_decisions(turns: Sequence[tuple[Reading, str]]) -> list[Decision]:
        return episode_decisions(turns)

    @staticmethod
    def rows(reading: Reading) -> dict[str, int]:
        intent = intent_bucket(reading.request)
        return {
            "act": intent * PROGRESS_STATES + reading.progress(),
            **{head: intent for head in HEADS if head != "act"},
        }

    def act(self, reading: Reading, rng: np.random.Generator, decisions: list[Decision]) -> str:
        """Draw one turn's choices (recorded in ``decisions``) and return the action they say."""
        rows = self.rows(reading)
        choice = {"act": self.heads.draw("act", rows["act"], rng, decisions)}
        tool = ""
        if ACTS[choice["act"]] in ("confirm", "write"):
            choice["write"] = self.heads.draw("write", rows["write"], rng, decisions)
            tool = WRITES[choice["write"]]
        for head in needed_heads(ACTS[choice["act"]], tool):
            if head not in choice:
                choice[head] = self.heads.draw(head, rows[head], rng, decisions)
        return render(reading, choice)


# ---------------------------------------------------------------------- behaviour cloning


def _write_choices(reading: Reading, action: str) -> dict[str, int] | None:
    """The write head and argument choices whose call equals ``action``, or None."""
    for w, tool in enumerate(WRITES):
        options = [
            range(len({"reason": REASONS, "pay": PAYMENTS, "items": ITEMS}[h]))
            for h in needed_heads("write", tool)[1:]
        ]
        for combo in np.ndindex(*(len(o) for o in options)) if options else [()]:
            choice = {"act": ACTS.index("write"), "write": w}
            choice.update(zip(needed_heads("write", tool)[1:], (int(c) for c in combo), strict=True))
            if same_call(render(reading, choice), action):
                return choice
    return None


def label(reading: Reading, action: str, next_write: dict[str, int] | None) -> dict[str, int] | None:
    """The menu choices that say what a demonstrator said (``next_write``: the choices of the episode's
    next write call, for a confirmation question), or None where the menu cannot say it."""
    from papergym.envs.service.evaluation import REFUSAL_PHRASES

    if parse_tool_calls(action).calls:
        lookup = {"act": ACTS.index("lookup")}
        return lookup if same_call(reading.lookup(), action) else _write_choices(reading, action)
    low = action.lower()
    if STOP in action:
        act = "stop"
    elif "(yes/no)" in low:
        return None if next_write is None else {**next_write, "act": ACTS.index("confirm")}
    elif any(p in low for p in REFUSAL_PHRASES):
        act = "refuse"
    elif "email" in low:
        act = "ask_email"
    elif "zip code" in low or "first name" in low:
        act = "ask_name_zip"
    elif "order id" in low:
        act = "ask_order"
    else:
        for f, what in enumerate(FIELDS[:-1]):
            key = reading.report(what).rsplit(" ", 1)[-1].rstrip(".")
            if key and key in action and key not in ("available", "card", "unknown"):
                return {"act": ACTS.index("report"), "field": f}
        if not action.startswith("Done"):
            return None
        return {"act": ACTS.index("report"), "field": FIELDS.index("done")}
    return {"act": ACTS.index(act)}


def decisions_of(reading: Reading, choice: Mapping[str, int]) -> list[tuple[str, int, int]]:
    """``choice`` as the decisions `MenuPolicy.act` would have drawn for it."""
    rows = MenuPolicy.rows(reading)
    act = ACTS[choice["act"]]
    heads = needed_heads(act, WRITES[choice["write"]] if "write" in choice else "")
    return [("act", rows["act"], choice["act"])] + [(h, rows[h], choice[h]) for h in heads]


def _demonstrator(env: Any, task_seed: int) -> Demonstrator:
    """`HearingOracle` on a speech channel (values as heard), else the env's oracle."""
    from papergym.envs.voice.hearing_oracle import HearingOracle

    if not hasattr(env.unwrapped, "heard"):
        return lambda observation, info: str(env.unwrapped.oracle_action())
    oracle = HearingOracle()
    oracle.bind(env)
    oracle.reset(seed=task_seed)
    return oracle


def episode_decisions(turns: Sequence[tuple[Reading, str]]) -> list[Decision]:
    """A demonstration's ``(reading, action)`` turns as the menu's decisions (turns the menu cannot say are
    left out; a confirmation question is labelled with the episode's next write call)."""
    decisions: list[Decision] = []
    for t, (reading, action) in enumerate(turns):
        writes = (_write_choices(r, a) for r, a in turns[t + 1 :] if parse_tool_calls(a).calls)
        next_write = next((w for w in writes if w is not None), None)
        choice = label(reading, action, next_write)
        if choice is not None:
            decisions += decisions_of(reading, choice)
    return decisions
