"""Retail task templates: each picks entities from the split's users and writes scenario, gold and plan.

Every template authenticates the user (by email, or by name and zip code when the user has forgotten
their email), then serves one or two requests. The oracle's plan reads user ids, order ids, item ids and
payment method ids from tool results; it takes from the task only what the user says in words (a
reason, the options they want, an address). Templates marked ``delayed`` use a value read early (a
payment method, an address, an order id found by search) several steps later.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from papergym.envs.service.builder import TaskBuilder
from papergym.envs.service.domain import Template
from papergym.envs.service.plan import Call, Count, Fmt, Lit, Match, Pick, Res, Said, Say
from papergym.envs.service.retail.data import RetailWorld, random_address
from papergym.envs.service.retail.tools import CANCEL_REASONS, evaluate_arithmetic
from papergym.envs.service.tasks import ServiceTask

CONFIRM = " Do you confirm (yes/no)?"
ASK_ORDER = "Thank you. Which order is it? Please tell me the order id."
TRANSFER_MESSAGE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
Build = Callable[[random.Random, RetailWorld, str], ServiceTask | None]


# ---------------------------------------------------------------------- shared steps
def _auth(b: TaskBuilder, world: RetailWorld, user_id: str, rng: random.Random) -> str:
    """Authenticate (email, or name + zip) and read the user's details (label ``user``)."""
    user = world.user(user_id)
    first, last = user["name"]["first_name"], user["name"]["last_name"]
    zip_code = user["address"]["zip"]
    if rng.random() < 0.5:
        b.facts["email"] = user["email"]
        b.say("I can help with that. First, could you please tell me your email address?")
        b.call("find_user_id_by_email", {"email": user["email"]}, {"email": Said("email")}, "uid")
        known = f"You are {first} {last}; your email is {user['email']}."
    else:
        b.facts |= {"first name": first, "last name": last, "zip code": zip_code}
        b.unknown.append("You do not remember your email address.")
        b.say(
            "I can help with that. First, could you please tell me your first name, last name and zip code?"
        )
        b.call(
            "find_user_id_by_name_zip",
            {"first_name": first, "last_name": last, "zip": zip_code},
            {"first_name": Said("first name"), "last_name": Said("last name"), "zip": Said("zip code")},
            "uid",
        )
        known = f"You are {first} {last} and your zip code is {zip_code}."
    b.call("get_user_details", {"user_id": user_id}, {"user_id": Res("uid")}, "user")
    return known


def _ask_order(b: TaskBuilder, order_id: str, label: str = "order") -> None:
    """Ask the user for the order id and read the order (label ``label``)."""
    b.facts["order id"] = order_id
    b.say(ASK_ORDER)
    b.call("get_order_details", {"order_id": order_id}, {"order_id": Said("order id")}, label)


def _find_order(b: TaskBuilder, world: RetailWorld, user_id: str, where: Match) -> Pick:
    """Read every order of the user (labels ``o0``, ``o1``, ...); the first one matching ``where``."""
    labels = []
    for i, order_id in enumerate(world.user(user_id)["orders"]):
        label = f"o{i}"
        labels.append(label)
        b.call("get_order_details", {"order_id": order_id}, {"order_id": Res("user", ("orders", i))}, label)
    return Pick(tuple(labels), where)


def _in_order(found: Pick | None, path: tuple[Any, ...]) -> Any:
    """``path`` in the order found by search (``found``), or in the order read under label ``order``."""
    return Res("order", path) if found is None else Pick(found.labels, found.where, path)


def _unique_order(world: RetailWorld, user_id: str, status: str, product: str) -> bool:
    """Whether exactly one of the user's orders has ``status`` and holds ``product``."""
    hits = [
        o
        for o in world.user(user_id)["orders"]
        if world.order(o)["status"] == status and any(i["name"] == product for i in world.order(o)["items"])
    ]
    return len(hits) == 1


def _options(options: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in options.items())


def _other_variant(world: RetailWorld, item: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    product = world.product(item["product_id"])
    choices = [
        v
        for v in product["variants"].values()
        if v["available"] and v["item_id"] != item["item_id"] and v["options"] != item["options"]
    ]
    return rng.choice(choices) if choices else None


def _pick_order(rng: random.Random, world: RetailWorld, split: str, status: str) -> dict[str, Any] | None:
    orders = world.orders.get((split, status), [])
    return world.order(rng.choice(orders)) if orders else None


def _method_phrase(method: dict[str, Any]) -> str:
    if method["source"] == "credit_card":
        return f"my {method['brand']} credit card ending in {method['last_four']}"
    return "my PayPal account" if method["source"] == "paypal" else "my gift card"


def _new(world: RetailWorld, name: str) -> TaskBuilder:
    return TaskBuilder("retail", name)


# ---------------------------------------------------------------------- cancel
def _cancel(by_name_search: bool, reason: str, name: str) -> Build:
    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = _pick_order(rng, world, split, "pending")
        if order is None:
            return None
        b = _new(world, name)
        known = _auth(b, world, order["user_id"], rng)
        product = order["items"][0]["name"]
        if by_name_search:
            if not _unique_order(world, order["user_id"], "pending", product):
                return None
            b.unknown.append("You do not know the order id.")
            where = Match({"status": "pending", "items": Match({"name": product})})
            target = _find_order(b, world, order["user_id"], where)
            oid: Any = Pick(target.labels, where, ("order_id",))
            goal = f"You want to cancel your pending order that contains a {product}; you do not know its id"
            opening = f"Hi! I want to cancel my pending order with the {product} in it. The reason: {reason}."
        else:
            _ask_order(b, order["order_id"])
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
        b.communicate.append("cancelled")
        return b.build("", opening, known, f"{goal}, because it is {reason}.")

    return build


# ---------------------------------------------------------------------- returns and exchanges
def _return(to_gift_card: bool, all_items: bool, search: bool, name: str) -> Build:
    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = _pick_order(rng, world, split, "delivered")
        if order is None:
            return None
        user = world.user(order["user_id"])
        cards = [m for m in user["payment_methods"].values() if m["source"] == "gift_card"]
        if to_gift_card and (not cards or cards[0]["id"] == order["payment_history"][0]["payment_method_id"]):
            return None
        items = order["items"] if all_items else [rng.choice(order["items"])]
        if search and not _unique_order(world, user["user_id"], "delivered", items[0]["name"]):
            return None
        b = _new(world, name)
        known = _auth(b, world, user["user_id"], rng)
        if search:
            b.unknown.append("You do not know the order id.")
            pick = _find_order(
                b,
                world,
                user["user_id"],
                Match({"status": "delivered", "items": Match({"name": items[0]["name"]})}),
            )
            found: Pick | None = pick
        else:
            _ask_order(b, order["order_id"])
            found = None
        oid: Any = _in_order(found, ("order_id",))
        payer: Any = _in_order(found, ("payment_history", 0, "payment_method_id"))
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
            _in_order(found, ("items", Match({"name": n}), "item_id"))
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
        b.communicate.append("return requested")
        what = "everything in" if all_items else f"the {names[0]} from"
        opening = f"Hi, I'd like to return {what} an order I received, with the refund to {where}."
        return b.build("", opening, known, f"You want to return {', '.join(names)}; refund to {where}.")

    return build


def _exchange(n_items: int, pay: str, name: str, *, pending: bool = False) -> Build:
    """Exchange (delivered) or modify items (pending) for other options of the same products."""
    status = "pending" if pending else "delivered"
    tool = "modify_pending_order_items" if pending else "exchange_delivered_order_items"

    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = _pick_order(rng, world, split, status)
        if order is None or len(order["items"]) < n_items:
            return None
        user = world.user(order["user_id"])
        items = rng.sample(order["items"], n_items)
        news = [_other_variant(world, item, rng) for item in items]
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
        b = _new(world, name)
        known = _auth(b, world, user["user_id"], rng)
        _ask_order(b, order["order_id"])
        for k, item in enumerate(items):
            b.call(
                "get_product_details",
                {"product_id": item["product_id"]},
                {"product_id": Res("order", ("items", Match({"name": item["name"]}), "product_id"))},
                f"p{k}",
            )
        wanted = "; ".join(
            f"the {i['name']} for the one with {_options(n['options'])}"
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
        b.communicate.append("pending (item modified)" if pending else "exchange requested")
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
        order = _pick_order(rng, world, split, "pending")
        if order is None:
            return None
        user = world.user(order["user_id"])
        if target == "order_default" and order["address"] == user["address"]:
            return None
        address = dict(user["address"]) if target == "order_default" else random_address(rng)
        line2 = f", {address['address2']}" if address["address2"] else ""
        spoken = f"{address['address1']}{line2}, {address['city']}, {address['state']} {address['zip']}, USA"
        b = _new(world, name)
        known = _auth(b, world, user["user_id"], rng)
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
            _ask_order(b, order["order_id"])
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
        b.communicate.append(address["address1"])
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
        order = _pick_order(rng, world, split, "pending")
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
        b = _new(world, name)
        known = _auth(b, world, user["user_id"], rng)
        _ask_order(b, order["order_id"])
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
        b.communicate.append(method["id"])
        return b.build(
            "", f"Hi! I'd like to pay for my pending order with {_method_phrase(method)} instead.", known
        )

    return build


# ---------------------------------------------------------------------- information
def _info(kind: str, name: str) -> Build:
    statuses = {
        "status": ("pending", "processed", "delivered", "cancelled"),
        "tracking": ("processed", "delivered"),
    }

    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = _pick_order(
            rng, world, split, rng.choice(statuses.get(kind, ("pending", "processed", "delivered")))
        )
        if order is None:
            return None
        user = world.user(order["user_id"])
        b = _new(world, name)
        known = _auth(b, world, user["user_id"], rng)
        if kind == "count":
            n = len(user["orders"])
            b.say("You have {0} orders with us.", Count(Res("user", ("orders",))))
            b.communicate.append(f"{n} orders")
            return b.build("", "Hi, how many orders have I placed with your store?", known)
        if kind == "gift_card":
            cards = [m for m in user["payment_methods"].values() if m["source"] == "gift_card"]
            if not cards:
                return None
            b.say(
                "Your gift card balance is ${0}.",
                Res("user", ("payment_methods", Match({"source": "gift_card"}), "balance")),
            )
            b.communicate.append(f"{cards[0]['balance']:.2f}")
            return b.build("", "Hi, what is the balance left on my gift card?", known)
        _ask_order(b, order["order_id"])
        if kind == "status":
            b.say("Your order {0} is currently {1}.", Res("order", ("order_id",)), Res("order", ("status",)))
            b.communicate.append(order["status"])
            b.assertion("The agent tells the user the status of their order.", f"said:{order['status']}")
            return b.build("", "Hi, could you tell me the status of my order?", known)
        if kind == "tracking":
            b.say(
                "The tracking id of order {0} is {1}.",
                Res("order", ("order_id",)),
                Res("order", ("fulfillments", 0, "tracking_id", 0)),
            )
            b.communicate.append(order["fulfillments"][0]["tracking_id"][0])
            return b.build("", "Hi, I need the tracking number of my order.", known)
        if kind == "total":
            prices = [i["price"] for i in order["items"]]
            expression = " + ".join(str(p) for p in prices)
            b.call(
                "calculate",
                {"expression": expression},
                {
                    "expression": Fmt(
                        " + ".join(["{}"] * len(prices)),
                        tuple(Res("order", ("items", i, "price")) for i in range(len(prices))),
                    )
                },
                "calc",
            )
            b.say("The items of your order add up to ${0}.", Res("calc"))
            b.communicate.append(str(round(evaluate_arithmetic(expression), 2)))
            return b.build("", "Hi, what is the total price of the items in my order?", known)
        if kind == "payment":
            method_id = order["payment_history"][0]["payment_method_id"]
            b.say(
                "Order {0} was paid with {1}.",
                Res("order", ("order_id",)),
                Res(
                    "user",
                    ("payment_methods", Res("order", ("payment_history", 0, "payment_method_id")), "id"),
                ),
            )
            b.communicate.append(method_id)
            return b.build("", "Hi, which payment method did I use for my order?", known)
        # kind == "variant_price": the price of another option of a product in the order
        item = rng.choice(order["items"])
        variant = _other_variant(world, item, rng)
        if variant is None:
            return None
        b.call(
            "get_product_details",
            {"product_id": item["product_id"]},
            {"product_id": Res("order", ("items", Match({"name": item["name"]}), "product_id"))},
            "prod",
        )
        b.say(
            "The {0} with {1} costs ${2}.",
            Lit(item["name"]),
            Lit(_options(variant["options"])),
            Res("prod", ("variants", Match({"options": variant["options"]}), "price")),
        )
        b.communicate.append(f"{variant['price']:.2f}")
        return b.build(
            "",
            f"Hi, how much would the {item['name']} from my order cost with {_options(variant['options'])}?",
            known,
        )

    return build


# ---------------------------------------------------------------------- refusals and transfers
def _refuse(kind: str, name: str) -> Build:
    """The user asks for something the policy forbids; the agent checks, then declines (no write)."""
    status = {
        "cancel_delivered": "delivered",
        "return_pending": "pending",
        "cancel_processed": "processed",
        "exchange_pending": "pending",
        "other_user": "pending",
    }[kind]
    tool = {
        "cancel_delivered": "cancel_pending_order",
        "cancel_processed": "cancel_pending_order",
        "return_pending": "return_delivered_order_items",
        "exchange_pending": "exchange_delivered_order_items",
        "other_user": "cancel_pending_order",
    }[kind]

    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = _pick_order(rng, world, split, status)
        if order is None:
            return None
        user_id = order["user_id"]
        if kind == "other_user":
            others = [u for u in world.users[split] if u != user_id]
            user_id = rng.choice(others)
        b = _new(world, name)
        known = _auth(b, world, user_id, rng)
        _ask_order(b, order["order_id"])
        if kind == "other_user":
            b.say(
                "I'm sorry, but order {0} does not belong to your account, so I cannot act on it.",
                Res("order", ("order_id",)),
            )
            opening = "Hi, I need to cancel an order for a friend of mine; it is no longer needed."
        else:
            b.say(
                "I'm sorry, but order {0} is {1}; the policy does not allow that in this status.",
                Res("order", ("order_id",)),
                Res("order", ("status",)),
            )
            b.communicate.append(status)
            verb = {
                "cancel_delivered": "cancel",
                "cancel_processed": "cancel",
                "return_pending": "return",
                "exchange_pending": "exchange an item of",
            }[kind]
            opening = f"Hi, I want to {verb} my order; it is no longer needed."
        b.assertion("The agent does not change the order.", f"not_called:{tool}")
        return b.build("", opening, known)

    return build


def _transfer(name: str) -> Build:
    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = _pick_order(rng, world, split, "delivered")
        if order is None:
            return None
        b = _new(world, name)
        known = _auth(b, world, order["user_id"], rng)
        _ask_order(b, order["order_id"])
        summary = (
            "The user reports a damaged delivered item and wants compensation, which no tool can provide."
        )
        b.call("transfer_to_human_agents", {"summary": summary}, {"summary": Lit(summary)}, "t")
        b.say(TRANSFER_MESSAGE)
        b.stop = "###TRANSFER###"
        return b.build(
            "",
            "Hi, an item in my delivered order arrived damaged and I want compensation for the trouble.",
            known,
            "If the agent cannot help, accept a transfer to a human agent.",
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
            b = _new(world, name)
            if a.plan is None or c.plan is None or a.script is None or c.script is None:
                raise RuntimeError(f"{name}: a generated part lacks its plan or script")
            b.plan = list(a.plan) + [_second(step) for step in c.plan[3:]]  # no second authentication
            b.gold = list(a.criteria.actions) + list(c.criteria.actions[2:])
            b.facts = {**c.script.facts, **a.script.facts}
            if "order id" in c.script.facts:
                b.facts["second order id"] = c.script.facts["order id"]
            b.requests = [c.reason_for_call]
            b.communicate = a.criteria.communicate_info + c.criteria.communicate_info
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
    Template("info_status", _info("status", "info_status")),
    Template("info_tracking", _info("tracking", "info_tracking")),
    Template("info_total", _info("total", "info_total")),
    Template("info_gift_card", _info("gift_card", "info_gift_card")),
    Template("info_order_count", _info("count", "info_order_count")),
    Template("info_payment_method", _info("payment", "info_payment_method"), delayed=True),
    Template("info_variant_price", _info("variant_price", "info_variant_price")),
    Template("refuse_cancel_delivered", _refuse("cancel_delivered", "refuse_cancel_delivered")),
    Template("refuse_cancel_processed", _refuse("cancel_processed", "refuse_cancel_processed")),
    Template("refuse_return_pending", _refuse("return_pending", "refuse_return_pending")),
    Template("refuse_exchange_pending", _refuse("exchange_pending", "refuse_exchange_pending")),
    Template("refuse_other_user", _refuse("other_user", "refuse_other_user")),
    Template("transfer_damaged", _transfer("transfer_damaged")),
    Template(
        "status_then_cancel",
        _two(_info("status", "s"), _cancel(False, CANCEL_REASONS[0], "c"), "status_then_cancel"),
        delayed=True,
    ),
    Template(
        "return_then_address",
        _two(_return(False, False, False, "r"), _address_change("user", "a"), "return_then_address"),
        delayed=True,
    ),
)
