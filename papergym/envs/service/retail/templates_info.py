"""Retail templates that read and decline: information requests, policy refusals, a transfer."""

from __future__ import annotations

import random

from papergym.envs.service.plan import Count, Fmt, Lit, Match, Res
from papergym.envs.service.retail.data import RetailWorld
from papergym.envs.service.retail.steps import (
    TRANSFER_MESSAGE,
    Build,
    ask_order,
    auth,
    new_builder,
    options_text,
    other_variant,
    pick_order,
)
from papergym.envs.service.retail.tools import evaluate_arithmetic
from papergym.envs.service.tasks import ServiceTask


# ---------------------------------------------------------------------- information
def info_template(kind: str, name: str) -> Build:
    statuses = {
        "status": ("pending", "processed", "delivered", "cancelled"),
        "tracking": ("processed", "delivered"),
    }

    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = pick_order(
            rng, world, split, rng.choice(statuses.get(kind, ("pending", "processed", "delivered")))
        )
        if order is None:
            return None
        user = world.user(order["user_id"])
        b = new_builder(name)
        known = auth(b, world, user["user_id"], rng)
        if kind == "count":
            n = len(user["orders"])
            b.say("You have {0} orders with us.", Count(Res("user", ("orders",))))
            b.tell(f"{n} orders")
            return b.build("", "Hi, how many orders have I placed with your store?", known)
        if kind == "gift_card":
            cards = [m for m in user["payment_methods"].values() if m["source"] == "gift_card"]
            if not cards:
                return None
            b.say(
                "Your gift card balance is ${0}.",
                Res("user", ("payment_methods", Match({"source": "gift_card"}), "balance")),
            )
            b.tell(f"{cards[0]['balance']:.2f}")
            return b.build("", "Hi, what is the balance left on my gift card?", known)
        ask_order(b, order["order_id"])
        if kind == "status":
            b.say("Your order {0} is currently {1}.", Res("order", ("order_id",)), Res("order", ("status",)))
            b.tell(order["status"])
            b.assertion("The agent tells the user the status of their order.", f"said:{order['status']}")
            return b.build("", "Hi, could you tell me the status of my order?", known)
        if kind == "tracking":
            b.say(
                "The tracking id of order {0} is {1}.",
                Res("order", ("order_id",)),
                Res("order", ("fulfillments", 0, "tracking_id", 0)),
            )
            b.tell(order["fulfillments"][0]["tracking_id"][0])
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
            b.tell(str(round(evaluate_arithmetic(expression), 2)))
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
            b.tell(method_id)
            return b.build("", "Hi, which payment method did I use for my order?", known)
        # kind == "variant_price": the price of another option of a product in the order
        item = rng.choice(order["items"])
        variant = other_variant(world, item, rng)
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
            Lit(options_text(variant["options"])),
            Res("prod", ("variants", Match({"options": variant["options"]}), "price")),
        )
        b.tell(f"{variant['price']:.2f}")
        return b.build(
            "",
            f"Hi, how much would the {item['name']} from my order cost with "
            f"{options_text(variant['options'])}?",
            known,
        )

    return build


# ---------------------------------------------------------------------- refusals and transfers
def refuse_template(kind: str, name: str) -> Build:
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
        order = pick_order(rng, world, split, status)
        if order is None:
            return None
        user_id = order["user_id"]
        if kind == "other_user":
            others = [u for u in world.users[split] if u != user_id]
            user_id = rng.choice(others)
        b = new_builder(name)
        known = auth(b, world, user_id, rng)
        ask_order(b, order["order_id"])
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
            b.tell(status)
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


def transfer_template(name: str) -> Build:
    def build(rng: random.Random, world: RetailWorld, split: str) -> ServiceTask | None:
        order = pick_order(rng, world, split, "delivered")
        if order is None:
            return None
        b = new_builder(name)
        known = auth(b, world, order["user_id"], rng)
        ask_order(b, order["order_id"])
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
