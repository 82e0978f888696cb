"""Telecom troubleshooting templates: faults planted on the user's phone and line, and the oracle's fixes.

Each template combines faults of one issue path of tau2's telecom tasks (no service, mobile data, MMS).
A task plants them with ``initialization_actions`` (tau2's own functions: ``turn_airplane_mode_on``,
``unseat_sim_card``, ``break_apn_settings``, ``suspend_line_for_overdue_bill``, ``set_data_usage``, ...)
and is scored, as tau2's telecom tasks, on the final state: ``ENV_ASSERTION`` checks of the phone (service
connected, mobile data working at excellent speed, MMS sendable) and of the user's line (status, roaming,
refueled data, the overdue bill paid); a locked SIM must be transferred (``ACTION``).

The oracle identifies the customer by the phone number the user states, reads the customer's lines to
find the line with that number, asks the user to run diagnostics and fixes on the phone, and makes the
account changes. Templates marked ``delayed`` need the customer and line ids read at the start for an
account change many steps later (after the phone-side troubleshooting).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from papergym.envs.service.builder import TaskBuilder
from papergym.envs.service.domain import Template
from papergym.envs.service.plan import Lit, Match, Pick, Res, Said
from papergym.envs.service.tasks import EnvAssertion, ServiceTask
from papergym.envs.service.telecom.data import TelecomWorld

TRANSFER_MESSAGE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
CONFIRM = " Do you confirm (yes/no)?"
REFUEL_GB: tuple[float, ...] = (1.0, 2.0, 3.0)


@dataclass
class Ctx:
    """One task's entities and the plan's references to them."""

    customer: dict[str, Any]
    line: dict[str, Any]
    plan: dict[str, Any]
    gb: float
    bill_id: str
    cust_ref: Any = None
    line_ref: Any = None
    labels: tuple[str, ...] = ()
    roaming: bool = False
    refuel: float = 0.0
    checks: list[EnvAssertion] = field(default_factory=list)

    @property
    def ids(self) -> dict[str, str]:
        return {"customer_id": self.customer["customer_id"], "line_id": self.line["line_id"]}

    @property
    def refs(self) -> dict[str, Any]:
        return {"customer_id": self.cust_ref, "line_id": self.line_ref}


@dataclass(frozen=True)
class Fault:
    """A fault: how it is planted, how the oracle fixes it, and what it needs afterwards.

    Attributes:
        name: short name.
        init: the initialization actions that plant it.
        fix: appends the oracle's diagnosis and fix to the plan.
        reboot: the fix takes effect only after the phone restarts.
        abroad: the user is abroad.
        write: the fix changes the account (the ids read at the start are needed late).
        opening: a sentence the user adds to their opening.
    """

    name: str
    init: Callable[[Ctx], list[tuple[str, dict[str, Any]]]]
    fix: Callable[[TaskBuilder, Ctx], None]
    reboot: bool = False
    abroad: bool = False
    write: bool = False
    opening: Callable[[Ctx], str] = lambda ctx: ""


def _ask(*steps: str) -> Callable[[TaskBuilder, Ctx], None]:
    def fix(b: TaskBuilder, ctx: Ctx) -> None:
        for text in steps:
            b.say(text)

    return fix


def _fix_overdue(b: TaskBuilder, ctx: Ctx) -> None:
    b.call(
        "get_bills_for_customer",
        {"customer_id": ctx.ids["customer_id"]},
        {"customer_id": ctx.cust_ref},
        "bills",
    )
    overdue = Match({"status": "Overdue"})
    bill = Res("bills", (overdue, "bill_id"))
    b.say(
        "Your line {0} is suspended because bill {1} of {2} USD is overdue. I can send you a payment request "
        "for it." + CONFIRM,
        ctx.line_ref,
        bill,
        Res("bills", (overdue, "total_due")),
    )
    b.call(
        "send_payment_request",
        {"customer_id": ctx.ids["customer_id"], "bill_id": ctx.bill_id},
        {"customer_id": ctx.cust_ref, "bill_id": bill},
        "request",
    )
    b.say("The request is sent. Please check for a payment request on your phone and make the payment.")
    b.say("Thank you. I will now resume your line {0}." + CONFIRM, ctx.line_ref)
    b.call("resume_line", ctx.ids, ctx.refs, "resume")
    ctx.checks.append(EnvAssertion("assert_no_overdue_bill", {"overdue_bill_id": ctx.bill_id}))


def _fix_roaming_line(b: TaskBuilder, ctx: Ctx) -> None:
    b.say(
        "Roaming is not enabled on your line {0}. I can enable it at no extra cost." + CONFIRM, ctx.line_ref
    )
    b.call("enable_roaming", ctx.ids, ctx.refs, "roaming")
    ctx.roaming = True


def _fix_refuel(b: TaskBuilder, ctx: Ctx) -> None:
    b.call("get_data_usage", ctx.ids, ctx.refs, "usage")
    b.call(
        "get_details_by_id",
        {"id": ctx.plan["plan_id"]},
        {"id": Pick(ctx.labels, Match({"phone_number": ctx.line["phone_number"]}), ("plan_id",))},
        "plan",
    )
    b.say(
        "You have used {0} GB of your {1} GB data limit. I can add {2} GB at {3} USD per GB." + CONFIRM,
        Res("usage", ("data_used_gb",)),
        Res("usage", ("data_limit_gb",)),
        Lit(ctx.gb),
        Res("plan", ("data_refueling_price_per_gb",)),
    )
    b.call("refuel_data", {**ctx.ids, "gb_amount": ctx.gb}, {**ctx.refs, "gb_amount": Lit(ctx.gb)}, "refuel")
    ctx.refuel = ctx.gb


def _fix_roaming_both(b: TaskBuilder, ctx: Ctx) -> None:
    _fix_roaming_line(b, ctx)
    b.say("Please also check your network status.")
    b.say("Please turn on data roaming on your phone.")


def _locked(mode: str) -> Fault:
    def fix(b: TaskBuilder, ctx: Ctx) -> None:
        b.say("Please check your SIM card status.")
        summary = f"The customer's SIM card is locked with a {mode.upper()} code; it cannot be unlocked here."
        b.call("transfer_to_human_agents", {"summary": summary}, {"summary": Lit(summary)}, "transfer")
        b.say(TRANSFER_MESSAGE)

    return Fault(f"sim_locked_{mode}", lambda ctx: [("lock_sim_card", {"mode": mode})], fix)


def _mode(mode: str) -> Fault:
    return Fault(
        f"network_{mode}",
        lambda ctx: [("set_network_mode_preference", {"mode": mode})],
        _ask(
            "Please check your network mode preference.", "Please set your network mode to 4g_5g_preferred."
        ),
    )


def _permission(perm: str) -> Fault:
    return Fault(
        f"no_{perm}_permission",
        lambda ctx: [("remove_app_permission", {"app_name": "messaging", "permission": perm})],
        _ask(
            "Please check the messaging app permissions.",
            f"Please grant the messaging app the {perm} permission.",
        ),
    )


def _abroad(ctx: Ctx) -> list[tuple[str, dict[str, Any]]]:
    return [("set_user_location", {"abroad": True})]


FAULTS: dict[str, Fault] = {
    f.name: f
    for f in (
        Fault(
            "airplane",
            lambda ctx: [("turn_airplane_mode_on", {})],
            _ask("Please check your status bar.", "Please toggle airplane mode."),
        ),
        Fault(
            "sim_missing",
            lambda ctx: [("unseat_sim_card", {})],
            _ask("Please check your SIM card status.", "Please re-seat your SIM card."),
        ),
        Fault(
            "apn_broken",
            lambda ctx: [("break_apn_settings", {})],
            _ask("Please check your APN settings.", "Please reset your APN settings."),
            reboot=True,
        ),
        Fault(
            "overdue",
            lambda ctx: [
                (
                    "suspend_line_for_overdue_bill",
                    {**ctx.ids, "new_bill_id": ctx.bill_id, "contract_ended": False},
                )
            ],
            _fix_overdue,
            reboot=True,
            write=True,
        ),
        _locked("pin"),
        _locked("puk"),
        Fault(
            "data_off",
            lambda ctx: [("turn_data_off", {})],
            _ask("Please check your status bar.", "Please turn on your mobile data."),
        ),
        Fault(
            "roaming_phone",
            lambda ctx: [*_abroad(ctx), ("turn_roaming_off", {}), ("enable_roaming", ctx.ids)],
            _ask("Please check your network status.", "Please turn on data roaming on your phone."),
            abroad=True,
        ),
        Fault(
            "roaming_line",
            lambda ctx: [*_abroad(ctx), ("turn_roaming_on", {})],
            _fix_roaming_line,
            abroad=True,
            write=True,
        ),
        Fault(
            "roaming_both",
            lambda ctx: [*_abroad(ctx), ("turn_roaming_off", {})],
            _fix_roaming_both,
            abroad=True,
            write=True,
        ),
        Fault(
            "data_exceeded",
            lambda ctx: [
                ("set_data_usage", {**ctx.ids, "data_used_gb": round(ctx.plan["data_limit_gb"] + 0.3, 1)})
            ],
            _fix_refuel,
            write=True,
            opening=lambda ctx: (
                f" If needed, I am willing to add {ctx.gb} GB of data, but I won't change my plan."
            ),
        ),
        Fault(
            "data_saver",
            lambda ctx: [("turn_data_saver_mode_on", {})],
            _ask("Please check your data saver status.", "Please turn off data saver."),
        ),
        _mode("3g_only"),
        _mode("2g_only"),
        Fault(
            "vpn_slow",
            lambda ctx: [("break_vpn", {})],
            _ask("Please check your VPN status.", "Please disconnect your VPN."),
        ),
        Fault(
            "mms_apn",
            lambda ctx: [("break_apn_mms_setting", {})],
            _ask("Please check your APN settings.", "Please reset your APN settings."),
            reboot=True,
        ),
        Fault(
            "wifi_calling_mms",
            lambda ctx: [("set_wifi_calling", {"enabled": True, "mms_over_wifi": True})],
            _ask("Please check your Wi-Fi calling status.", "Please turn off Wi-Fi calling."),
        ),
        _permission("storage"),
        _permission("sms"),
    )
}
OPENINGS = {
    "service": "Hi, my phone shows no service: I can't make calls or use mobile data.",
    "data": "Hi, my mobile data is not working properly and I need excellent internet speed on my phone.",
    "mms": "Hi, I can't send picture messages (MMS) from my phone.",
}
COMBOS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("service", ("airplane",)),
    ("service", ("sim_missing",)),
    ("service", ("apn_broken",)),
    ("service", ("overdue",)),
    ("service", ("sim_locked_pin",)),
    ("service", ("sim_locked_puk",)),
    ("service", ("airplane", "sim_missing")),
    ("service", ("airplane", "apn_broken")),
    ("service", ("sim_missing", "apn_broken")),
    ("service", ("airplane", "overdue")),
    ("service", ("apn_broken", "overdue")),
    ("service", ("sim_missing", "overdue")),
    ("data", ("data_off",)),
    ("data", ("roaming_phone",)),
    ("data", ("roaming_line",)),
    ("data", ("roaming_both",)),
    ("data", ("data_exceeded",)),
    ("data", ("data_saver",)),
    ("data", ("network_3g_only",)),
    ("data", ("network_2g_only",)),
    ("data", ("vpn_slow",)),
    ("data", ("data_off", "data_saver")),
    ("data", ("data_exceeded", "data_saver")),
    ("data", ("roaming_line", "data_exceeded")),
    ("data", ("data_exceeded", "vpn_slow")),
    ("data", ("roaming_both", "vpn_slow")),
    ("data", ("airplane", "data_off")),
    ("data", ("network_2g_only", "data_off")),
    ("mms", ("mms_apn",)),
    ("mms", ("wifi_calling_mms",)),
    ("mms", ("no_storage_permission",)),
    ("mms", ("no_sms_permission",)),
    ("mms", ("network_2g_only",)),
    ("mms", ("mms_apn", "no_storage_permission")),
    ("mms", ("wifi_calling_mms", "no_sms_permission")),
    ("mms", ("data_off", "no_storage_permission")),
    ("mms", ("roaming_line", "mms_apn")),
    ("mms", ("data_exceeded", "no_sms_permission")),
)
"""The templates: an issue path and the faults planted on it."""
_VERIFY = {
    "service": "Please check your status bar.",
    "data": "Please run a speed test.",
    "mms": "Please try to send an MMS.",
}
_CLOSING = {
    "service": "Your phone is connected to the network again. Thank you for your patience.",
    "data": "Your mobile data works at excellent speed again. Thank you for your patience.",
    "mms": "Your phone can send MMS messages again. Thank you for your patience.",
}
_GOAL = {
    "service": [EnvAssertion("assert_service_status", {"expected_status": "connected"}, env_type="user")],
    "data": [
        EnvAssertion("assert_mobile_data_status", {"expected_status": True}, env_type="user"),
        EnvAssertion(
            "assert_internet_speed", {"expected_speed": 200.0, "expected_desc": "excellent"}, env_type="user"
        ),
    ],
    "mms": [EnvAssertion("assert_can_send_mms", {"expected_status": True}, env_type="user")],
}


def _identify(b: TaskBuilder, ctx: Ctx) -> None:
    """Ask for the phone number, read the customer and their lines (labels ``cust``, ``l0``, ``l1``...)."""
    phone = ctx.line["phone_number"]
    b.facts["phone number"] = phone
    b.say(
        "I'm sorry to hear that; I can help. Could you please tell me the phone number of the line with "
        "the problem?"
    )
    b.call("get_customer_by_phone", {"phone_number": phone}, {"phone_number": Said("phone number")}, "cust")
    labels = []
    for i, line_id in enumerate(ctx.customer["line_ids"]):
        labels.append(f"l{i}")
        b.call("get_details_by_id", {"id": line_id}, {"id": Res("cust", ("line_ids", i))}, f"l{i}")
    ctx.labels = tuple(labels)
    ctx.cust_ref = Res("cust", ("customer_id",))
    ctx.line_ref = Pick(ctx.labels, Match({"phone_number": phone}), ("line_id",))


def _build(
    path: str, names: tuple[str, ...]
) -> Callable[[random.Random, TelecomWorld, str], ServiceTask | None]:
    faults = [FAULTS[n] for n in names]
    name = f"{path}:{'+'.join(names)}"

    def build(rng: random.Random, world: TelecomWorld, split: str) -> ServiceTask | None:
        customer = world.customer(rng.choice(world.customers[split]))
        line = world.line(rng.choice(customer["line_ids"]))
        ctx = Ctx(
            customer,
            line,
            world.plan(line["plan_id"]),
            rng.choice(REFUEL_GB),
            f"B9{rng.randrange(10000):04d}",
        )
        b = TaskBuilder("telecom", name)
        b.facts["full name"] = customer["full_name"]
        init: list[tuple[str, dict[str, Any]]] = [
            ("set_user_info", {"name": customer["full_name"], "phone_number": line["phone_number"]})
        ]
        for fault in faults:
            init += fault.init(ctx)
        init.append(("simulate_network_search", {}))
        _identify(b, ctx)
        for fault in faults:
            fault.fix(b, ctx)
        locked = any(n.startswith("sim_locked") for n in names)
        if not locked:
            if any(f.reboot for f in faults):
                b.say("Please restart your phone.")
            b.say(_VERIFY[path])
            b.say(_CLOSING[path])
        abroad = any(f.abroad for f in faults)
        opening = OPENINGS[path] + (" I am travelling abroad right now." if abroad else "")
        opening += "".join(f.opening(ctx) for f in faults)
        known = f"You are {customer['full_name']}; the phone number of your line is {line['phone_number']}."
        instructions = "Do on your phone what the agent asks and tell them what it shows. " + (
            "You accept to be transferred." if locked else "Your issue is solved when the phone works again."
        )
        task = b.build("", opening, known, instructions)
        crit = task.criteria
        line_checks = [
            EnvAssertion("assert_line_status", {**ctx.ids, "expected_status": "Active"}),
            EnvAssertion(
                "assert_line_roaming", {**ctx.ids, "expected_status": ctx.roaming or "roaming_phone" in names}
            ),
            EnvAssertion("assert_data_refueling_amount", {**ctx.ids, "expected_amount": ctx.refuel}),
        ]
        if locked:
            crit.reward_basis = ("ENV_ASSERTION", "ACTION")
            crit.actions = [a for a in crit.actions if a.name == "transfer_to_human_agents"]
            crit.actions[0].compare_args = []
            crit.env_assertions = line_checks
        else:
            crit.reward_basis = ("ENV_ASSERTION",)
            crit.env_assertions = [*_GOAL[path], *line_checks, *ctx.checks]
        task.initialization_actions = init
        return task

    return build


TEMPLATES: tuple[Template, ...] = tuple(
    Template(f"{path}:{'+'.join(names)}", _build(path, names), delayed=any(FAULTS[n].write for n in names))
    for path, names in COMBOS
)
"""The telecom templates (38; 13 delayed)."""
