"""Shared steps of the airline task templates: authentication, reservation lookup, payment references."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from papergym.envs.service.airline.data import AirlineWorld, is_flown
from papergym.envs.service.builder import TaskBuilder
from papergym.envs.service.plan import Match, Res, Said
from papergym.envs.service.tasks import ServiceTask

CONFIRM = " Do you confirm (yes/no)?"
ASK_RESERVATION = "Thank you. Which reservation is it? Please tell me the reservation id?"
TRANSFER_MESSAGE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
COMPENSATION = {"cancelled": 100, "delayed": 50}
"""Certificate dollars per passenger for a cancelled / delayed flight (tau2 airline policy)."""
Build = Callable[[random.Random, AirlineWorld, str], ServiceTask | None]
CABIN_WORDS = {"basic_economy": "basic economy", "economy": "economy", "business": "business"}


# ---------------------------------------------------------------------- shared steps
def new_task(name: str) -> TaskBuilder:
    """A builder for one airline task of template ``name``."""
    return TaskBuilder("airline", name)


def auth(b: TaskBuilder, world: AirlineWorld, user_id: str) -> str:
    """Ask the user id and read the user's details (label ``user``)."""
    user = world.user(user_id)
    b.facts["user id"] = user_id
    b.say("I can help with that. First, could you please tell me your user id?")
    b.call("get_user_details", {"user_id": user_id}, {"user_id": Said("user id")}, "user")
    return f"You are {user['name']['first_name']} {user['name']['last_name']}; your user id is {user_id}."


def ask_reservation(b: TaskBuilder, rid: str, label: str = "res") -> None:
    """Ask the reservation id and read the reservation (label ``label``)."""
    b.facts["reservation id"] = rid
    b.say(ASK_RESERVATION)
    b.call(
        "get_reservation_details", {"reservation_id": rid}, {"reservation_id": Said("reservation id")}, label
    )


def payment_method(user: dict[str, Any], source: str) -> tuple[dict[str, Any] | None, Res]:
    """The user's first payment method of ``source`` and the plan's reference to its id."""
    found = next((m for m in user["payment_methods"].values() if m["source"] == source), None)
    return found, Res("user", ("payment_methods", Match({"source": source}), "id"))


def pick(
    rng: random.Random, world: AirlineWorld, split: str, name: str, test: Callable[[dict], bool]
) -> dict | None:
    """A random active reservation of the split passing ``test`` (cached as ``name``), or None."""
    ids = world.kind(split, name, test)
    return world.reservation(rng.choice(ids)) if ids else None


def flight_refs(res_label: str, n_segments: int) -> list[dict[str, Res]]:
    """The reservation's flights as tool arguments, read from its details."""
    return [
        {
            "flight_number": Res(res_label, ("flights", i, "flight_number")),
            "date": Res(res_label, ("flights", i, "date")),
        }
        for i in range(n_segments)
    ]


def gold_flights(reservation: dict[str, Any]) -> list[dict[str, str]]:
    """The reservation's flights as tool arguments (the gold action's values)."""
    return [{"flight_number": s["flight_number"], "date": s["date"]} for s in reservation["flights"]]


def passenger_of(user: dict[str, Any]) -> dict[str, str]:
    """The user as a passenger record."""
    return {
        "first_name": user["name"]["first_name"],
        "last_name": user["name"]["last_name"],
        "dob": user["dob"],
    }


SELF: dict[str, Res] = {
    "first_name": Res("user", ("name", "first_name")),
    "last_name": Res("user", ("name", "last_name")),
    "dob": Res("user", ("dob",)),
}
"""The user as a passenger, read from their details (label ``user``)."""


def is_future(world: AirlineWorld, r: dict[str, Any]) -> bool:
    """Whether no flight of the reservation has been flown."""
    return not is_flown(world.db, r)


def future_days(rng: random.Random) -> list[str]:
    """The bookable dates after tau2's today (2024-05-16 to 2024-05-30), shuffled by ``rng``."""
    days = [f"2024-05-{d:02d}" for d in range(16, 31)]
    rng.shuffle(days)
    return days
