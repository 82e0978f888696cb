"""Retail task templates: each picks entities from the split's users and writes scenario, gold and plan.

Every template authenticates the user (by email, or by name and zip code when the user has forgotten
their email), then serves one or two requests. The oracle's plan reads user ids, order ids, item ids and
payment method ids from tool results; it takes from the task only what the user says in words (a
reason, the options they want, an address). Templates marked ``delayed`` use a value read early (a
payment method, an address, an order id found by search) several steps later.
"""

from __future__ import annotations

import random
from typing import Any

from papergym.envs.service.domain import Template
from papergym.envs.service.plan import Call, Fmt, Lit, Match, Pick, Res, Said, Say
from papergym.envs.service.retail.data import RetailWorld, random_address
from papergym.envs.service.retail.steps import (
    ASK_ORDER,
    CONFIRM,
    Build,
    ask_order,
    auth,
    find_order,
    in_order,
    method_phrase,
    new_builder,
    options_text,
    other_variant,
    pick_order,
    unique_order,
)
from papergym.envs.service.retail.templates_info import info_template, refuse_template, transfer_template
from papergym.envs.service.retail.tools import CANCEL_REASONS
from papergym.envs.service.tasks import ServiceTask


# ---------------------------------------------------------------------- cancel
def _cancel(by_name_search: bool, reason: str, name: str) -> Build:
    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = pick_order(rng, world, split, "pending")
        if order is None:
            return None
        b = new_builder(name)
        known = auth(b, world, order["user_id"], rng)
        product = order["items"][0]["name"]
        if by_name_search:
            if not unique_order(world, order["user_id"], "pending", product):
                return None
            b.unknown.append("You do not know the order id.")
            where = Match({"status": "pending", "items": Match({"name": product})})
            target = find_order(b, world, order["user_id"], where)
            oid: Any = Pick(target.labels, where, ("order_id",))
            goal = f"You want to cancel your pending order that contains a {product}; you do not know its id"
            opening = f"Hi! I want to cancel my pending order with the {product} in it. The reason: {reason}."
        else:
            ask_order(b, order["order_id"])
            oid = Res("order", ("order_id",))
            goal = f"You want to cancel your order {order['order_id']}"
            opening = f"Hi! I want to cancel an order of mine. The reason: {reason}."
        b.say("I will cancel order {0} with the reason '{1}'." + CONFIRM, oid, Lit(reason))
        b.call(
            "cancel_pending_order",
            {"order_id": order["order_id"], "reason": reason},
            {"order_id": oid, "reason": Lit(reason)},
            "cancel",
        )
        b.say(
            "Order {0} is now {1}. The refund goes to the original payment method.",
            oid,
            Res("cancel", ("status",)),
        )
        b.tell("cancelled")
        return b.build("", opening, known, f"{goal}, because it is {reason}.")

    return build


# ---------------------------------------------------------------------- returns and exchanges
def _return(to_gift_card: bool, all_items: bool, search: bool, name: str) -> Build:
    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = pick_order(rng, world, split, "delivered")
        if order is None:
            return None
        user = world.user(order["user_id"])
        cards = [m for m in user["payment_methods"].values() if m["source"] == "gift_card"]
        if to_gift_card and (not cards or cards[0]["id"] == order["payment_history"][0]["payment_method_id"]):
            return None
        items = order["items"] if all_items else [rng.choice(order["items"])]
        if search and not unique_order(world, user["user_id"], "delivered", items[0]["name"]):
            return None
        b = new_builder(name)
        known = auth(b, world, user["user_id"], rng)
        if search:
            b.unknown.append("You do not know the order id.")
            pick = find_order(
                b,
                world,
                user["user_id"],
                Match({"status": "delivered", "items": Match({"name": items[0]["name"]})}),
            )
            found: Pick | None = pick
        else:
            ask_order(b, order["order_id"])
            found = None
        oid: Any = in_order(found, ("order_id",))
        payer: Any = in_order(found, ("payment_history", 0, "payment_method_id"))
        names = [i["name"] for i in items]
        if to_gift_card:
            method_id, method_ref = (
                cards[0]["id"],
                Res("user", ("payment_methods", Match({"source": "gift_card"}), "id")),
            )
            where = "your gift card"
        else:
            method_id, method_ref = order["payment_history"][0]["payment_method_id"], payer
            where = "the original payment method"
        gold_items = sorted(i["item_id"] for i in items)
        plan_items = [
            in_order(found, ("items", Match({"name": n}), "item_id"))
            for n in sorted(names, key=lambda n: next(i["item_id"] for i in items if i["name"] == n))
        ]
        b.say(
            "I will request a return of {0} from order {1}, refunded to {2}." + CONFIRM,
            Lit(", ".join(names)),
            oid,
            method_ref,
        )
        b.call(
            "return_delivered_order_items",
            {"order_id": order["order_id"], "item_ids": gold_items, "payment_method_id": method_id},
            {"order_id": oid, "item_ids": plan_items, "payment_method_id": method_ref},
            "ret",
        )
        b.say(
            "The return is requested; the order status is now {0}. An email explains how to send the items.",
            Res("ret", ("status",)),
        )
        b.tell("return requested")
        what = "everything in" if all_items else f"the {names[0]} from"
        opening = f"Hi, I'd like to return {what} an order I received, with the refund to {where}."
        return b.build("", opening, known, f"You want to return {', '.join(names)}; refund to {where}.")

    return build


def _exchange(n_items: int, pay: str, name: str, *, pending: bool = False) -> Build:
    """Exchange (delivered) or modify items (pending) for other options of the same products."""
    status = "pending" if pending else "delivered"
    tool = "modify_pending_order_items" if pending else "exchange_delivered_order_items"

    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = pick_order(rng, world, split, status)
        if order is None or len(order["items"]) < n_items:
            return None
        user = world.user(order["user_id"])
        items = rng.sample(order["items"], n_items)
        news = [other_variant(world, item, rng) for item in items]
        if any(n is None for n in news):
            return None
        diff = sum(n["price"] - i["price"] for i, n in zip(items, news, strict=True))
        if pay == "gift_card":
            cards = [m for m in user["payment_methods"].values() if m["source"] == "gift_card"]
            if not cards or cards[0]["balance"] < diff:
                return None
            method_id, method_ref = (
                cards[0]["id"],
                Res("user", ("payment_methods", Match({"source": "gift_card"}), "id")),
            )
            phrase = "my gift card"
        else:
            method_id = order["payment_history"][0]["payment_method_id"]
            method_ref = Res("order", ("payment_history", 0, "payment_method_id"))
            phrase = "the original payment method"
            method = user["payment_methods"][method_id]
            if method["source"] == "gift_card" and method["balance"] < diff:
                return None
        b = new_builder(name)
        known = auth(b, world, user["user_id"], rng)
        ask_order(b, order["order_id"])
        for k, item in enumerate(items):
            b.call(
                "get_product_details",
                {"product_id": item["product_id"]},
                {"product_id": Res("order", ("items", Match({"name": item["name"]}), "product_id"))},
                f"p{k}",
            )
        wanted = "; ".join(
            f"the {i['name']} for the one with {options_text(n['options'])}"
            for i, n in zip(items, news, strict=True)
        )
        old_ref = [Res("order", ("items", Match({"name": i["name"]}), "item_id")) for i in items]
        new_ref = [
            Res(f"p{k}", ("variants", Match({"options": n["options"], "available": True}), "item_id"))
            for k, n in enumerate(news)
        ]
        verb = "modify" if pending else "exchange"
        b.say(
            f"I will {verb} {{0}} in order {{1}}; the price difference is settled with {{2}}." + CONFIRM,
            Lit(wanted),
            Res("order", ("order_id",)),
            method_ref,
        )
        b.call(
            tool,
            {
                "order_id": order["order_id"],
                "item_ids": [i["item_id"] for i in items],
                "new_item_ids": [n["item_id"] for n in news],
                "payment_method_id": method_id,
            },
            {
                "order_id": Res("order", ("order_id",)),
                "item_ids": old_ref,
                "new_item_ids": new_ref,
                "payment_method_id": method_ref,
            },
            "x",
        )
        b.say("Done: the order status is now {0}.", Res("x", ("status",)))
        b.tell("pending (item modified)" if pending else "exchange requested")
        kind = "pending" if pending else "delivered"
        opening = (
            f"Hi! For one of my {kind} orders I want to {verb} {wanted}. Use {phrase} for any difference."
        )
        return b.build("", opening, known, f"You want to {verb}: {wanted}.")

    return build


# ---------------------------------------------------------------------- modifications of pending orders
def _address_change(target: str, name: str) -> Build:
    """target: 'order_new' (a new address for a pending order), 'order_default' (the profile's address),
    'user' (the default address), 'both' (default address and a pending order)."""

    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = pick_order(rng, world, split, "pending")
        if order is None:
            return None
        user = world.user(order["user_id"])
        if target == "order_default" and order["address"] == user["address"]:
            return None
        address = dict(user["address"]) if target == "order_default" else random_address(rng)
        line2 = f", {address['address2']}" if address["address2"] else ""
        spoken = f"{address['address1']}{line2}, {address['city']}, {address['state']} {address['zip']}, USA"
        b = new_builder(name)
        known = auth(b, world, user["user_id"], rng)
        if target == "order_default":
            plan_address: dict[str, Any] = {k: Res("user", ("address", k)) for k in address}
        else:
            plan_address = {k: Lit(v) for k, v in address.items()}
        if target in ("user", "both"):
            b.say("I will change your default address to {0}." + CONFIRM, Lit(spoken))
            b.call(
                "modify_user_address",
                {"user_id": user["user_id"], **address},
                {"user_id": Res("uid"), **plan_address},
                "ua",
            )
            if target == "user":  # a statement ends the user's turn: say it only when nothing follows
                b.say("Your default address is now {0}.", Res("ua", ("address", "address1")))
        if target != "user":
            ask_order(b, order["order_id"])
            b.say(
                "I will change the shipping address of order {0} to {1}." + CONFIRM,
                Res("order", ("order_id",)),
                Fmt("{}, {}", (plan_address["address1"], plan_address["city"])),
            )
            b.call(
                "modify_pending_order_address",
                {"order_id": order["order_id"], **address},
                {"order_id": Res("order", ("order_id",)), **plan_address},
                "oa",
            )
            b.say(
                "Order {0} will now ship to {1}.",
                Res("oa", ("order_id",)),
                Res("oa", ("address", "address1")),
            )
        b.tell(address["address1"])
        if target == "order_default":
            opening = (
                "Hi, my pending order has a wrong shipping address; please ship it to my default address."
            )
        elif target == "user":
            opening = f"Hi, I moved. Please update my default address to {spoken}."
        elif target == "both":
            opening = (
                f"Hi, I moved to {spoken}. Please update my default address and my pending order's address."
            )
        else:
            opening = f"Hi, please change the shipping address of my pending order to {spoken}."
        return b.build("", opening, known)

    return build


def _payment_change(source: str, name: str) -> Build:
    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = pick_order(rng, world, split, "pending")
        if order is None:
            return None
        user = world.user(order["user_id"])
        current = order["payment_history"][0]["payment_method_id"]
        methods = [
            m for m in user["payment_methods"].values() if m["source"] == source and m["id"] != current
        ]
        if not methods or (
            source == "gift_card" and methods[0]["balance"] < order["payment_history"][0]["amount"]
        ):
            return None
        method = methods[0]
        b = new_builder(name)
        known = auth(b, world, user["user_id"], rng)
        ask_order(b, order["order_id"])
        ref = Res("user", ("payment_methods", Match({"source": source}), "id"))
        b.say("I will switch the payment of order {0} to {1}." + CONFIRM, Res("order", ("order_id",)), ref)
        b.call(
            "modify_pending_order_payment",
            {"order_id": order["order_id"], "payment_method_id": method["id"]},
            {"order_id": Res("order", ("order_id",)), "payment_method_id": ref},
            "pay",
        )
        b.say(
            "Done: order {0} is now paid with {1}; the old payment is refunded.",
            Res("pay", ("order_id",)),
            ref,
        )
        b.tell(method["id"])
        return b.build(
            "", f"Hi! I'd like to pay for my pending order with {method_phrase(method)} instead.", known
        )

    return build


def _second(step: Say | Call) -> Say | Call:
    """A step of a second request: the order id it asks for is the user's "second order id"."""
    if isinstance(step, Say) and step.template == ASK_ORDER:
        return Say("Thank you. Which order is the second request about? Please tell me the second order id.")
    if isinstance(step, Call) and step.arguments.get("order_id") == Said("order id"):
        return Call(step.name, {**step.arguments, "order_id": Said("second order id")}, step.label)
    return step


def _two(first: Build, second: Build, name: str) -> Build:
    """Two requests of the same user in one call (the second said once the first is done)."""

    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        a = first(rng, world, split)
        if a is None:
            return None
        user_id = a.criteria.actions[1].arguments["user_id"]
        mine = world.only(user_id, split)
        for _ in range(8):
            c = second(rng, mine, split)
            if c is None:
                continue
            b = new_builder(name)
            if a.plan is None or c.plan is None or a.script is None or c.script is None:
                raise RuntimeError(f"{name}: a generated part lacks its plan or script")
            b.plan = list(a.plan) + [_second(step) for step in c.plan[3:]]  # no second authentication
            b.gold = list(a.criteria.actions) + list(c.criteria.actions[2:])
            b.facts = {**c.script.facts, **a.script.facts}
            if "order id" in c.script.facts:
                b.facts["second order id"] = c.script.facts["order id"]
            b.requests = [c.reason_for_call]
            b.communicate = a.criteria.communicate_info + c.criteria.communicate_info
            b.sources = a.criteria.communicate_sources + c.criteria.communicate_sources
            b.nl = list(
                zip(
                    a.criteria.nl_assertions + c.criteria.nl_assertions,
                    a.criteria.nl_predicates + c.criteria.nl_predicates,
                    strict=True,
                )
            )
            return b.build(
                "",
                a.reason_for_call,
                str(a.instructions.known_info) if not isinstance(a.instructions, str) else "",
            )
        return None

    return build


TEMPLATES: tuple[Template, ...] = (
    Template("cancel_no_longer_needed", _cancel(False, CANCEL_REASONS[0], "cancel_no_longer_needed")),
    Template("cancel_ordered_by_mistake", _cancel(False, CANCEL_REASONS[1], "cancel_ordered_by_mistake")),
    Template("cancel_find_order", _cancel(True, CANCEL_REASONS[0], "cancel_find_order"), delayed=True),
    Template("return_one_original", _return(False, False, False, "return_one_original"), delayed=True),
    Template("return_all_original", _return(False, True, False, "return_all_original"), delayed=True),
    Template("return_one_gift_card", _return(True, False, False, "return_one_gift_card"), delayed=True),
    Template("return_find_order", _return(False, False, True, "return_find_order"), delayed=True),
    Template(
        "return_find_order_gift_card", _return(True, False, True, "return_find_order_gift_card"), delayed=True
    ),
    Template("exchange_one_original", _exchange(1, "original", "exchange_one_original"), delayed=True),
    Template("exchange_two_original", _exchange(2, "original", "exchange_two_original"), delayed=True),
    Template("exchange_one_gift_card", _exchange(1, "gift_card", "exchange_one_gift_card"), delayed=True),
    Template("modify_items_one", _exchange(1, "original", "modify_items_one", pending=True), delayed=True),
    Template("modify_items_two", _exchange(2, "original", "modify_items_two", pending=True), delayed=True),
    Template(
        "modify_items_gift_card",
        _exchange(1, "gift_card", "modify_items_gift_card", pending=True),
        delayed=True,
    ),
    Template("order_address_new", _address_change("order_new", "order_address_new")),
    Template(
        "order_address_default", _address_change("order_default", "order_address_default"), delayed=True
    ),
    Template("user_address", _address_change("user", "user_address")),
    Template("user_and_order_address", _address_change("both", "user_and_order_address"), delayed=True),
    Template("payment_to_gift_card", _payment_change("gift_card", "payment_to_gift_card")),
    Template("payment_to_paypal", _payment_change("paypal", "payment_to_paypal")),
    Template("payment_to_credit_card", _payment_change("credit_card", "payment_to_credit_card")),
    Template("info_status", info_template("status", "info_status")),
    Template("info_tracking", info_template("tracking", "info_tracking")),
    Template("info_total", info_template("total", "info_total")),
    Template("info_gift_card", info_template("gift_card", "info_gift_card")),
    Template("info_order_count", info_template("count", "info_order_count")),
    Template("info_payment_method", info_template("payment", "info_payment_method"), delayed=True),
    Template("info_variant_price", info_template("variant_price", "info_variant_price")),
    Template("refuse_cancel_delivered", refuse_template("cancel_delivered", "refuse_cancel_delivered")),
    Template("refuse_cancel_processed", refuse_template("cancel_processed", "refuse_cancel_processed")),
    Template("refuse_return_pending", refuse_template("return_pending", "refuse_return_pending")),
    Template("refuse_exchange_pending", refuse_template("exchange_pending", "refuse_exchange_pending")),
    Template("refuse_other_user", refuse_template("other_user", "refuse_other_user")),
    Template("transfer_damaged", transfer_template("transfer_damaged")),
    Template(
        "status_then_cancel",
        _two(info_template("status", "s"), _cancel(False, CANCEL_REASONS[0], "c"), "status_then_cancel"),
        delayed=True,
    ),
    Template(
        "return_then_address",
        _two(_return(False, False, False, "r"), _address_change("user", "a"), "return_then_address"),
        delayed=True,
    ),
)
