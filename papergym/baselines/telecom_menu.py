"""A small learned (non-LM) service agent for the telecom domain: a menu of actions, trained with GRPO.

For IAPO's telecom question (envs.md §4: the paper's largest gain, 21.74 → 39.93 pass^1), where the tiny
LM cannot learn the task on a CPU. Telecom is troubleshooting: the agent identifies the line by the phone
number the user states, reads the account, asks the user to look at and fix their own phone (the user's
device is simulated, `papergym.envs.service.telecom.user`) and makes account changes (pay an overdue
bill, resume the line, enable roaming, refuel data, transfer a locked SIM). It must *diagnose*: which
fault is on the phone shows only in what the phone reports when asked to check something. Each turn the
policy reads the conversation (`TelecomReading`, a chat observation) and draws from softmax heads
(`HEADS`) at one row, the conversation's state (`TelecomReading.state`: the opening's kind, what was
read and written, the instructions given and the last thing the user or a tool said, numbers masked)
hashed into `ROWS`:

- ``act``: one of `ACTS`: ask for the phone number; a read call (``lookup``: the customer by the phone
  number heard, then each of the customer's lines; ``usage``: the line's data usage; ``plan``: the line's
  plan; ``bills``: the customer's bills); ``instruct`` (ask the user to do what ``instruct`` draws on
  the phone); ``confirm`` (ask yes/no for the write ``write`` draws), ``write`` (execute it); ``close``.
- ``instruct``: one of `INSTRUCTIONS` (checks, fixes, a restart, paying a payment request, a speed test,
  sending an MMS).
- ``write``: one of `WRITES`; its arguments come from the reads (the customer, the line with the phone
  number heard, the overdue bill, the data amount the user offered in their opening).

Nothing reads the task, its faults, gold actions or the env's checks. `TelecomMenu.episode_decisions`
turns the env's oracle episodes into the menu's decisions for a behaviour-cloning warm start;
`papergym.baselines.menu_grpo` plays, warms and trains it.
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
from papergym.envs.service.telecom.templates import TRANSFER_MESSAGE
from papergym.envs.service.telecom.user import device_requests

ACTS: tuple[str, ...] = (
    "ask_phone",
    "lookup",
    "usage",
    "plan",
    "bills",
    "instruct",
    "confirm",
    "write",
    "close",
)
READS: tuple[str, ...] = ("lookup", "usage", "plan", "bills")
WRITES: tuple[str, ...] = (
    "send_payment_request",
    "resume_line",
    "enable_roaming",
    "refuel_data",
    "transfer_to_human_agents",
)
INSTRUCTIONS: tuple[str, ...] = (
    "Please check your status bar.",
    "Please check your SIM card status.",
    "Please check your APN settings.",
    "Please check your network status.",
    "Please check your data saver status.",
    "Please check your network mode preference.",
    "Please check your VPN status.",
    "Please check your Wi-Fi calling status.",
    "Please check the messaging app permissions.",
    "Please toggle airplane mode.",
    "Please re-seat your SIM card.",
    "Please reset your APN settings.",
    "Please turn on your mobile data.",
    "Please turn on data roaming on your phone.",
    "Please turn off data saver.",
    "Please set your network mode to 4g_5g_preferred.",
    "Please disconnect your VPN.",
    "Please turn off Wi-Fi calling.",
    "Please grant the messaging app the storage permission.",
    "Please grant the messaging app the sms permission.",
    "Please restart your phone.",
    "Please check for a payment request on your phone and make the payment.",
    "Please run a speed test.",
    "Please try to send an MMS.",
)
"""What the agent can ask the user to do on the phone (the telecom policy's list of phone actions)."""
ROWS = 2**15
"""Rows the conversation's state is hashed into (inferred: collisions only share rows)."""
HEADS: dict[str, tuple[int, int]] = {
    "act": (ROWS, len(ACTS)),
    "instruct": (ROWS, len(INSTRUCTIONS)),
    "write": (ROWS, len(WRITES)),
}
ASK_PHONE = (
    "I'm sorry to hear that; I can help. Could you please tell me the phone number of the line with the "
    "problem?"
)
CLOSINGS = {
    "service": "Your phone is connected to the network again. Thank you for your patience.",
    "data": "Your mobile data works at excellent speed again. Thank you for your patience.",
    "mms": "Your phone can send MMS messages again. Thank you for your patience.",
}
"""The closing statement per kind of problem (a statement ends the scripted user's conversation)."""
_PHONE = re.compile(r"My phone number is ([\d-]+)")
_GB = re.compile(r"add (\d+(?:\.\d+)?) GB")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_AGREE = re.compile(r"\b(yes|go ahead)\b", re.IGNORECASE)
_LOCK = re.compile(r"\b(PIN|PUK)\b", re.IGNORECASE)
_REQUESTS = [tuple(device_requests(text, ())) for text in INSTRUCTIONS]


def problem_kind(opening: str) -> str:
    """The kind of problem an opening describes: ``mms``, ``service`` or ``data``.

    >>> problem_kind("Hi, I can't send picture messages (MMS) from my phone.")
    'mms'
    """
    low = opening.lower()
    if "mms" in low or "picture message" in low:
        return "mms"
    return "service" if "no service" in low else "data"


def masked(text: str) -> str:
    """``text`` with its numbers masked (a state reads what was said, not the values).

    >>> masked("Speed Test Result: 275.00 Mbps (Excellent).")
    'Speed Test Result: # Mbps (Excellent).'
    """
    return _NUMBER.sub("#", text)


@dataclass
class TelecomReading:
    """What the policy knows, re-read from the whole conversation each turn (a chat observation)."""

    opening: str = ""
    phone: str = ""
    customer: dict[str, Any] | None = None
    lines: dict[str, dict[str, Any]] = field(default_factory=dict)
    usage: dict[str, Any] | None = None
    plan: dict[str, Any] | None = None
    bills: list[dict[str, Any]] | None = None
    written: set[str] = field(default_factory=set)
    instructed: set[int] = field(default_factory=set)
    confirmed: bool = False
    failed: bool = False
    last_agent: str = ""
    last_event: str = ""

    @classmethod
    def of(cls, messages: Sequence[Mapping[str, Any]]) -> TelecomReading:
        reading = cls()
        for role, text, tool in conversation(messages):
            if role == "user":
                reading.opening = reading.opening or text
                heard = _PHONE.search(text)
                reading.phone = heard.group(1) if heard else reading.phone
                reading.confirmed = "(yes/no)" in reading.last_agent and bool(_AGREE.search(text))
                reading.last_event = masked(text)
            elif role == "assistant":
                reading.last_agent = text
                instruction = None if tool else instruction_of(text)
                if instruction is not None:
                    reading.instructed.add(instruction)
            else:
                reading._take(tool, text)
                reading.last_event = f"{tool}:{'error' if reading.failed else 'ok'}"
        return reading

    def _take(self, name: str, text: str) -> None:
        self.failed = text.startswith("Error")
        if self.failed:
            return
        result = tool_result(text)
        if name == "get_customer_by_phone" and isinstance(result, dict):
            self.customer = result
        elif name == "get_details_by_id" and isinstance(result, dict):
            if "line_id" in result:
                self.lines[str(result["line_id"])] = result
            elif "plan_id" in result:
                self.plan = result
        elif name == "get_data_usage" and isinstance(result, dict):
            self.usage = result
        elif name == "get_bills_for_customer" and isinstance(result, list):
            self.bills = result
        elif name in WRITES:
            self.written.add(name)
            if isinstance(result, dict) and isinstance(result.get("line"), dict):
                self.lines[str(result["line"].get("line_id"))] = result["line"]

    # -------------------------------------------------------------- what the state holds
    @property
    def kind(self) -> str:
        return problem_kind(self.opening)

    @property
    def offered_gb(self) -> float:
        """The data the user offered to add in their opening (0: none)."""
        found = _GB.search(self.opening)
        return float(found.group(1)) if found else 0.0

    def line(self) -> dict[str, Any]:
        """The line with the phone number heard ({} until it is read)."""
        return next((x for x in self.lines.values() if x.get("phone_number") == self.phone), {})

    def identity(self) -> int:
        """0: nothing heard; 1: the phone number heard; 2: the customer read; 3: all their lines read."""
        if self.customer is None:
            return 1 if self.phone else 0
        return 3 if set(map(str, self.customer.get("line_ids", []))) <= set(self.lines) else 2

    def overdue_bill(self) -> dict[str, Any]:
        return next((b for b in self.bills or [] if b.get("status") == "Overdue"), {})

    def state(self) -> str:
        """The conversation's state: what the rows of every head are hashed from."""
        line, usage = self.line(), self.usage or {}
        over = float(usage.get("data_used_gb", 0)) >= float(usage.get("data_limit_gb", 1e9))
        parts = [
            self.kind,
            "abroad" if "abroad" in self.opening else "home",
            "offer" if self.offered_gb else "-",
            f"id{self.identity()}",
            f"line:{line.get('status', '?')}:{line.get('roaming_enabled', '?')}",
            f"usage:{'over' if over else 'under'}" if self.usage else "-",
            "plan" if self.plan else "-",
            f"bills:{bool(self.overdue_bill())}" if self.bills is not None else "-",
            "wrote:" + ",".join(sorted(self.written)),
            f"confirmed:{self.confirmed}",
            "asked:" + ",".join(map(str, sorted(self.instructed))),
            "last:" + self.last_event,
        ]
        return "|".join(parts)

    def row(self) -> int:
        return zlib.crc32(self.state().encode()) % ROWS

    # -------------------------------------------------------------- what the menu's choices say
    def read_call(self, what: str) -> str:
        """The read call of ``what`` (a `READS` name); ids not yet read are empty (the call fails)."""
        customer_id = str((self.customer or {}).get("customer_id", ""))
        line = self.line()
        if what == "usage":
            return call_text("get_data_usage", customer_id=customer_id, line_id=str(line.get("line_id", "")))
        if what == "plan":
            return call_text("get_details_by_id", id=str(line.get("plan_id", "")))
        if what == "bills":
            return call_text("get_bills_for_customer", customer_id=customer_id)
        if self.customer is None:
            return call_text("get_customer_by_phone", phone_number=self.phone)
        line_ids = [str(i) for i in self.customer.get("line_ids", [])]
        unread = [i for i in line_ids if i not in self.lines]
        return call_text("get_details_by_id", id=(unread or line_ids or [""])[0])

    def write_call(self, tool: str) -> str:
        ids = {
            "customer_id": str((self.customer or {}).get("customer_id", "")),
            "line_id": str(self.line().get("line_id", "")),
        }
        if tool == "send_payment_request":
            bill_id = str(self.overdue_bill().get("bill_id", ""))
            return call_text(tool, customer_id=ids["customer_id"], bill_id=bill_id)
        if tool == "refuel_data":
            return call_text(tool, **ids, gb_amount=self.offered_gb)
        if tool == "transfer_to_human_agents":
            lock = _LOCK.search(self.last_event)
            what = f"is locked with a {lock.group(1).upper()} code" if lock else "cannot be fixed here"
            return call_text(tool, summary=f"The customer's phone {what}; it needs a human agent.")
        return call_text(tool, **ids)

    def confirmation(self, tool: str) -> str:
        """The yes/no question before ``tool``."""
        line_id = self.line().get("line_id", "")
        what = {
            "send_payment_request": f"send a payment request for the overdue bill "
            f"{self.overdue_bill().get('bill_id', '')} of line {line_id}",
            "resume_line": f"resume your line {line_id}",
            "enable_roaming": f"enable roaming on your line {line_id} at no extra cost",
            "refuel_data": f"add {self.offered_gb} GB of data to your line {line_id}",
            "transfer_to_human_agents": "transfer you to a human agent",
        }[tool]
        return f"I can {what}. Do you confirm (yes/no)?"

    def closing(self) -> str:
        return TRANSFER_MESSAGE if "transfer_to_human_agents" in self.written else CLOSINGS[self.kind]


def _said(text: str) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(device_requests(text, ()))


def instruction_of(text: str) -> int | None:
    """The `INSTRUCTIONS` index asking the same phone actions as ``text`` (None: no instruction does).

    >>> INSTRUCTIONS[instruction_of("Please also check your network status.")]
    'Please check your network status.'
    """
    said = _said(text)
    return _REQUESTS.index(said) if said and said in _REQUESTS else None


def render(reading: TelecomReading, choice: Mapping[str, int]) -> str:
    """The action a set of choices (``head -> index``; heads the act does not use may be left out) says."""
    act = ACTS[choice["act"]]
    if act == "ask_phone":
        return ASK_PHONE
    if act in READS:
        return reading.read_call(act)
    if act == "instruct":
        return INSTRUCTIONS[choice.get("instruct", 0)]
    if act == "close":
        return reading.closing()
    tool = WRITES[choice.get("write", 0)]
    return reading.write_call(tool) if act == "write" else reading.confirmation(tool)


def needed_heads(act: str) -> tuple[str, ...]:
    """The heads a choice of ``act`` draws beyond ``act``."""
    return ("instruct",) if act == "instruct" else ("write",) if act in ("confirm", "write") else ()


class TelecomMenu:
    """The telecom menu's softmax heads (`HEADS`, zero logits: uniform choices) and how a turn draws."""

    def __init__(self, *, lr: float = 0.1, epochs: int = 4, optimizer: str = "adam") -> None:
        self.heads = SoftmaxHeads(HEADS, lr=lr, epochs=epochs, optimizer=optimizer)

    @staticmethod
    def read(messages: Sequence[Mapping[str, Any]]) -> TelecomReading:
        return TelecomReading.of(messages)

    def act(self, reading: TelecomReading, rng: np.random.Generator, decisions: list[Decision]) -> str:
        """Draw one turn's choices (recorded in ``decisions``) and return the action they say."""
        row = reading.row()
        choice = {"act": self.heads.draw("act", row, rng, decisions)}
        for head in needed_heads(ACTS[choice["act"]]):
            choice[head] = self.heads.draw(head, row, rng, decisions)
        return render(reading, choice)

    @staticmethod
    def demonstrator(env: Any, task_seed: int) -> Demonstrator:
        """The env's oracle."""
        return lambda observation, info: str(env.unwrapped.oracle_action())

    @staticmethod
    def episode_decisions(turns: Sequence[tuple[TelecomReading, str]]) -> list[Decision]:
        return episode_decisions(turns)


# ---------------------------------------------------------------------- behaviour cloning


def _write_of(reading: TelecomReading, action: str) -> int | None:
    """The `WRITES` index whose call equals ``action`` (a transfer: by name; its summary is free text)."""
    (call,) = parse_tool_calls(action).calls or (None,)
    if call is None or call.name not in WRITES:
        return None
    w = WRITES.index(call.name)
    same = call.name == "transfer_to_human_agents" or same_call(reading.write_call(call.name), action)
    return w if same else None


def label(reading: TelecomReading, action: str, next_write: int | None) -> dict[str, int] | None:
    """The menu choices that say what a demonstrator said (``next_write``: the `WRITES` index of the
    episode's next write call, for a confirmation question), or None where the menu cannot say it."""
    if parse_tool_calls(action).calls:
        for act in READS:
            if same_call(reading.read_call(act), action):
                return {"act": ACTS.index(act)}
        w = _write_of(reading, action)
        return None if w is None else {"act": ACTS.index("write"), "write": w}
    if "(yes/no)" in action:
        return None if next_write is None else {"act": ACTS.index("confirm"), "write": next_write}
    if _said(action):  # phone actions: one of the menu's instructions, or none it can say
        instruction = instruction_of(action)
        return None if instruction is None else {"act": ACTS.index("instruct"), "instruct": instruction}
    if "phone number" in action and "?" in action:
        return {"act": ACTS.index("ask_phone")}
    return None if "?" in action else {"act": ACTS.index("close")}


def episode_decisions(turns: Sequence[tuple[TelecomReading, str]]) -> list[Decision]:
    """A demonstration's ``(reading, action)`` turns as the menu's decisions (turns the menu cannot say are
    left out)."""
    decisions: list[Decision] = []
    for t, (reading, action) in enumerate(turns):
        writes = (_write_of(r, a) for r, a in turns[t + 1 :] if parse_tool_calls(a).calls)
        choice = label(reading, action, next((w for w in writes if w is not None), None))
        if choice is not None:
            row = reading.row()
            decisions += [("act", row, choice["act"])]
            decisions += [(h, row, choice[h]) for h in needed_heads(ACTS[choice["act"]])]
    return decisions
