"""Shared steps of the retail templates: authentication, order lookup, entity draws, phrasing."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from papergym.envs.service.builder import TaskBuilder
from papergym.envs.service.plan import Match, Pick, Res, Said
from papergym.envs.service.retail.data import RetailWorld
from papergym.envs.service.tasks import ServiceTask

CONFIRM = " Do you confirm (yes/no)?"
ASK_ORDER = "Thank you. Which order is it? Please tell me the order id."
TRANSFER_MESSAGE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
Build = Callable[[random.Random, RetailWorld, str], ServiceTask | None]


def auth(b: TaskBuilder, world: RetailWorld, user_id: str, rng: random.Random) -> str:
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


def ask_order(b: TaskBuilder, order_id: str, label: str = "order") -> None:
    """Ask the user for the order id and read the order (label ``label``)."""
    b.facts["order id"] = order_id
    b.say(ASK_ORDER)
    b.call("get_order_details", {"order_id": order_id}, {"order_id": Said("order id")}, label)


def find_order(b: TaskBuilder, world: RetailWorld, user_id: str, where: Match) -> Pick:
    """Read every order of the user (labels ``o0``, ``o1``, ...); the first one matching ``where``."""
    labels = []
    for i, order_id in enumerate(world.user(user_id)["orders"]):
        label = f"o{i}"
        labels.append(label)
        b.call("get_order_details", {"order_id": order_id}, {"order_id": Res("user", ("orders", i))}, label)
    return Pick(tuple(labels), where)


def in_order(found: Pick | None, path: tuple[Any, ...]) -> Any:
    """``path`` in the order found by search (``found``), or in the order read under label ``order``."""
    return Res("order", path) if found is None else Pick(found.labels, found.where, path)


def unique_order(world: RetailWorld, user_id: str, status: str, product: str) -> bool:
    """Whether exactly one of the user's orders has ``status`` and holds ``product``."""
    hits = [
        o
        for o in world.user(user_id)["orders"]
        if world.order(o)["status"] == status and any(i["name"] == product for i in world.order(o)["items"])
    ]
    return len(hits) == 1


def options_text(options: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in options.items())


def other_variant(world: RetailWorld, item: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    product = world.product(item["product_id"])
    choices = [
        v
        for v in product["variants"].values()
        if v["available"] and v["item_id"] != item["item_id"] and v["options"] != item["options"]
    ]
    return rng.choice(choices) if choices else None


def pick_order(rng: random.Random, world: RetailWorld, split: str, status: str) -> dict[str, Any] | None:
    orders = world.orders.get((split, status), [])
    return world.order(rng.choice(orders)) if orders else None


def method_phrase(method: dict[str, Any]) -> str:
    if method["source"] == "credit_card":
        return f"my {method['brand']} credit card ending in {method['last_four']}"
    return "my PayPal account" if method["source"] == "paypal" else "my gift card"


def new_builder(name: str) -> TaskBuilder:
    """A builder for one retail task of template ``name``."""
    return TaskBuilder("retail", name)
