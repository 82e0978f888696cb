"""Airline templates that cancel or change a reservation, or refuse or transfer such a request."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from papergym.envs.service.airline.data import (
    BAG_FEE,
    FREE_BAGS,
    AirlineWorld,
    cancel_allowed,
    is_flown,
    segment_status,
)
from papergym.envs.service.airline.steps import (
    CABIN_WORDS,
    CONFIRM,
    TRANSFER_MESSAGE,
    Build,
    ask_reservation,
    auth,
    flight_refs,
    future_days,
    gold_flights,
    is_future,
    new_task,
    payment_method,
    pick,
)
from papergym.envs.service.plan import Lit, Match, Pick, Res
from papergym.envs.service.tasks import ServiceTask

# ---------------------------------------------------------------------- cancel
_REASONS = {
    "recent": "change of plan",
    "business": "change of plan",
    "insured": "health reasons",
    "airline": "the airline cancelled a flight",
}


def cancel(kind: str, name: str, *, search: bool = False) -> Build:
    """Cancel a reservation a rule allows (``kind``: recent, business, insured, airline); ``search``: the user
    does not know its id and the agent finds it among the user's reservations."""

    def test_for(world: AirlineWorld) -> Callable[[dict], bool]:
        def test(r: dict) -> bool:
            if not is_future(world, r):
                return False
            recent = r["created_at"] >= "2024-05-14T15:00:00"
            airline = any(segment_status(world.db, s) == "cancelled" for s in r["flights"])
            return {
                "recent": recent,
                "business": r["cabin"] == "business" and not recent,
                "insured": r["insurance"] == "yes"
                and r["cabin"] != "business"
                and not recent
                and not airline,
                "airline": airline,
            }[kind]

        return test

    def build(rng: random.Random, world: AirlineWorld, split: str) -> ServiceTask | None:
        r = pick(rng, world, split, f"cancel_{kind}", test_for(world))
        if r is None:
            return None
        user = world.user(r["user_id"])
        b = new_task(name)
        known = auth(b, world, user["user_id"])
        reason = _REASONS[kind]
        route = f"from {r['origin']} to {r['destination']}"
        if search:
            same = [
                x
                for x in user["reservations"]
                if world.reservation(x)["status"] is None
                and (world.reservation(x)["origin"], world.reservation(x)["destination"])
                == (r["origin"], r["destination"])
            ]
            if len(same) != 1:
                return None
            labels = []
            for i, rid in enumerate(user["reservations"]):
                labels.append(f"r{i}")
                b.call(
                    "get_reservation_details",
                    {"reservation_id": rid},
                    {"reservation_id": Res("user", ("reservations", i))},
                    f"r{i}",
                )
            where = Match({"origin": r["origin"], "destination": r["destination"], "status": None})
            rid_ref: Any = Pick(tuple(labels), where, ("reservation_id",))
            b.unknown.append("You do not know the reservation id.")
        else:
            ask_reservation(b, r["reservation_id"])
            rid_ref = Res("res", ("reservation_id",))
        b.say(
            "I will cancel reservation {0} (" + route + ") for the reason: {1}." + CONFIRM,
            rid_ref,
            Lit(reason),
        )
        b.call(
            "cancel_reservation",
            {"reservation_id": r["reservation_id"]},
            {"reservation_id": rid_ref},
            "cancel",
        )
        paid = r["payment_history"][0]["amount"]
        b.say(
            "Reservation {0} is {1}. The refund of {2} dollars goes to the original payment method in 5 to 7 "
            "business days.",
            rid_ref,
            Res("cancel", ("status",)),
            Res("cancel", ("payment_history", 0, "amount")),
        )
        b.tell(str(paid))
        opening = f"Hi, I need to cancel my reservation {route}. The reason: {reason}."
        return b.build("", opening, known, f"Cancel the trip {route}; the reason is {reason}.")

    return build


def refuse(kind: str, name: str) -> Build:
    """A request the policy forbids: the agent reads the facts, refuses, and writes nothing."""
    tool, test, opening = {
        "cancel": (
            "cancel_reservation",
            lambda w: lambda r: not cancel_allowed(w.db, r, insured_reason=True) and is_future(w, r),
            "Hi, I want to cancel my reservation because my plans changed, and I want a full refund.",
        ),
        "basic_change": (
            "update_reservation_flights",
            lambda w: lambda r: r["cabin"] == "basic_economy" and is_future(w, r),
            "Hi, I want to move my flight to a later date.",
        ),
        "remove_bags": (
            "update_reservation_baggages",
            lambda w: lambda r: r["total_baggages"] > 0 and is_future(w, r),
            "Hi, I want to remove all checked bags from my reservation and get the bag fees back.",
        ),
        "add_passenger": (
            "update_reservation_passengers",
            lambda w: lambda r: len(r["passengers"]) < 5 and is_future(w, r),
            "Hi, I want to add one more passenger to my reservation.",
        ),
        "add_insurance": (
            "book_reservation",
            lambda w: lambda r: r["insurance"] == "no" and is_future(w, r),
            "Hi, I'd like to add travel insurance to my existing reservation.",
        ),
    }[kind]

    def build(rng: random.Random, world: AirlineWorld, split: str) -> ServiceTask | None:
        r = pick(rng, world, split, f"refuse_{kind}", test(world))
        if r is None:
            return None
        b = new_task(name)
        known = auth(b, world, r["user_id"])
        ask_reservation(b, r["reservation_id"])
        b.say(
            "I'm sorry, but the policy does not allow this for reservation {0}.",
            Res("res", ("reservation_id",)),
        )
        b.assertion("The agent refuses and does not change the reservation.", f"not_called:{tool}")
        b.assertion("The agent does not transfer the user.", "not_called:transfer_to_human_agents")
        return b.build("", opening, known, "If the agent refuses, accept it and end the conversation.")

    return build


def transfer_flown(name: str) -> Build:
    """Cancelling a partly flown trip: the agent transfers to a human agent."""

    def build(rng: random.Random, world: AirlineWorld, split: str) -> ServiceTask | None:
        r = pick(rng, world, split, "flown", lambda x: is_flown(world.db, x))
        if r is None:
            return None
        b = new_task(name)
        known = auth(b, world, r["user_id"])
        ask_reservation(b, r["reservation_id"])
        summary = "The user wants to cancel a reservation part of which has already been flown."
        b.call("transfer_to_human_agents", {"summary": summary}, {"summary": Lit(summary)}, "t")
        b.say(TRANSFER_MESSAGE)
        b.stop = "###TRANSFER###"
        opening = "Hi, I want to cancel the rest of my trip; I already took the first flight."
        return b.build("", opening, known, "If the agent cannot help, accept a transfer to a human agent.")

    return build


# ---------------------------------------------------------------------- modify
def change_date(name: str, pay: str) -> Build:
    """Move a one-way, one-flight, non-basic reservation to the same flight on another date."""

    def build(rng: random.Random, world: AirlineWorld, split: str) -> ServiceTask | None:
        r = pick(
            rng,
            world,
            split,
            "one_flight",
            lambda x: (
                x["flight_type"] == "one_way"
                and len(x["flights"]) == 1
                and x["cabin"] != "basic_economy"
                and is_future(world, x)
            ),
        )
        if r is None:
            return None
        seg, n = r["flights"][0], len(r["passengers"])
        flight = world.flight(seg["flight_number"])
        days = [
            d
            for d in future_days(rng)
            if d != seg["date"]
            and flight["dates"][d]["status"] == "available"
            and flight["dates"][d]["available_seats"][r["cabin"]] >= n
        ]
        if not days:
            return None
        day = days[0]
        diff = (flight["dates"][day]["prices"][r["cabin"]] - seg["price"]) * n
        user = world.user(r["user_id"])
        method, ref = payment_method(user, pay)
        if method is None or (pay == "gift_card" and method["amount"] < diff):
            return None
        b = new_task(name)
        known = auth(b, world, user["user_id"])
        ask_reservation(b, r["reservation_id"])
        b.call(
            "search_direct_flight",
            {"origin": flight["origin"], "destination": flight["destination"], "date": day},
            {
                "origin": Res("res", ("flights", 0, "origin")),
                "destination": Res("res", ("flights", 0, "destination")),
                "date": Lit(day),
            },
            "s",
        )
        b.say(
            "I will move reservation {0} to flight {1} on {2}; the fare difference is paid or refunded "
            "with {3}." + CONFIRM,
            Res("res", ("reservation_id",)),
            Res("res", ("flights", 0, "flight_number")),
            Lit(day),
            ref,
        )
        b.call(
            "update_reservation_flights",
            {
                "reservation_id": r["reservation_id"],
                "cabin": r["cabin"],
                "flights": [{"flight_number": seg["flight_number"], "date": day}],
                "payment_id": method["id"],
            },
            {
                "reservation_id": Res("res", ("reservation_id",)),
                "cabin": Res("res", ("cabin",)),
                "flights": [{"flight_number": Res("res", ("flights", 0, "flight_number")), "date": Lit(day)}],
                "payment_id": ref,
            },
            "upd",
        )
        b.say(
            "Done: you now fly on {0} at {1} dollars per passenger.",
            Lit(day),
            Res("upd", ("flights", 0, "price")),
        )
        b.tell(str(flight["dates"][day]["prices"][r["cabin"]]))
        opening = (
            f"Hi, I want to move my flight to {day}, same flight number, paying any difference with my "
            f"{pay.replace('_', ' ')}."
        )
        return b.build("", opening, known, f"Move the flight to {day}.")

    return build


def change_cabin(name: str, new_cabin: str, from_cabins: tuple[str, ...]) -> Build:
    """Change the cabin of a reservation on the same flights, settling the difference on the credit card."""

    def build(rng: random.Random, world: AirlineWorld, split: str) -> ServiceTask | None:
        def fits(x: dict) -> bool:
            if x["cabin"] not in from_cabins or not is_future(world, x):
                return False
            return all(
                world.flight(s["flight_number"])["dates"][s["date"]]["status"] == "available"
                and world.flight(s["flight_number"])["dates"][s["date"]]["available_seats"][new_cabin]
                >= len(x["passengers"])
                for s in x["flights"]
            )

        r = pick(rng, world, split, f"cabin_{new_cabin}_{'_'.join(from_cabins)}", fits)
        if r is None:
            return None
        n = len(r["passengers"])
        new_total = sum(
            world.flight(s["flight_number"])["dates"][s["date"]]["prices"][new_cabin] for s in r["flights"]
        )
        diff = (new_total - sum(s["price"] for s in r["flights"])) * n
        if diff == 0:
            return None
        user = world.user(r["user_id"])
        method, ref = payment_method(user, "credit_card")
        if method is None:
            return None
        b = new_task(name)
        known = auth(b, world, user["user_id"])
        ask_reservation(b, r["reservation_id"])
        b.say(
            "I will change reservation {0} to "
            + CABIN_WORDS[new_cabin]
            + " on the same flights, with the price"
            " difference charged or refunded on {1}." + CONFIRM,
            Res("res", ("reservation_id",)),
            ref,
        )
        b.call(
            "update_reservation_flights",
            {
                "reservation_id": r["reservation_id"],
                "cabin": new_cabin,
                "flights": gold_flights(r),
                "payment_id": method["id"],
            },
            {
                "reservation_id": Res("res", ("reservation_id",)),
                "cabin": Lit(new_cabin),
                "flights": flight_refs("res", len(r["flights"])),
                "payment_id": ref,
            },
            "upd",
        )
        b.say("Done. The price difference is {0} dollars.", Res("upd", ("payment_history", -1, "amount")))
        b.tell(str(abs(diff)))
        opening = (
            f"Hi, I'd like to change my reservation to {CABIN_WORDS[new_cabin]}, keeping the same flights, "
            "using my credit card."
        )
        return b.build("", opening, known, f"Change the cabin to {CABIN_WORDS[new_cabin]}.")

    return build


def add_bags(name: str, paid: bool) -> Build:
    """Add checked bags beyond the free allowance (``paid``) or within it."""

    def build(rng: random.Random, world: AirlineWorld, split: str) -> ServiceTask | None:
        r = pick(rng, world, split, "bags", lambda x: is_future(world, x))
        if r is None:
            return None
        user = world.user(r["user_id"])
        free = FREE_BAGS[user["membership"]][r["cabin"]] * len(r["passengers"])
        room = free - r["total_baggages"]
        if paid:
            add = max(1, room + 1) if room >= 0 else 1
        else:
            if room < 1:
                return None
            add = 1
        total = r["total_baggages"] + add
        nonfree = max(0, total - free)
        charge = BAG_FEE * (nonfree - r["nonfree_baggages"])
        if paid != (charge > 0):
            return None
        method, ref = payment_method(user, "credit_card")
        if method is None:
            return None
        b = new_task(name)
        known = auth(b, world, user["user_id"])
        ask_reservation(b, r["reservation_id"])
        b.say(
            "Your membership is {0}. I will set reservation {1} to "
            + f"{total} checked bags, {nonfree} of them not free"
            + (f", charging {charge} dollars" if charge else "")
            + " to {2}."
            + CONFIRM,
            Res("user", ("membership",)),
            Res("res", ("reservation_id",)),
            ref,
        )
        b.call(
            "update_reservation_baggages",
            {
                "reservation_id": r["reservation_id"],
                "total_baggages": total,
                "nonfree_baggages": nonfree,
                "payment_id": method["id"],
            },
            {
                "reservation_id": Res("res", ("reservation_id",)),
                "total_baggages": Lit(total),
                "nonfree_baggages": Lit(nonfree),
                "payment_id": ref,
            },
            "upd",
        )
        b.say("Done: the reservation now has {0} checked bags.", Res("upd", ("total_baggages",)))
        b.tell(f"{total} checked bags")
        opening = (
            f"Hi, I want to add {add} checked bag(s) to my reservation; charge any fee to my credit card."
        )
        return b.build("", opening, known, f"Add {add} checked bag(s).")

    return build


def change_passenger(name: str) -> Build:
    """Replace one passenger's details (the number of passengers stays)."""

    def build(rng: random.Random, world: AirlineWorld, split: str) -> ServiceTask | None:
        r = pick(rng, world, split, "passengers", lambda x: is_future(world, x))
        if r is None:
            return None
        j = rng.randrange(len(r["passengers"]))
        old = r["passengers"][j]
        new = {
            "first_name": rng.choice(("Nora", "Felix", "Ines", "Hugo")),
            "last_name": old["last_name"],
            "dob": old["dob"],
        }
        if new["first_name"] == old["first_name"]:
            return None
        b = new_task(name)
        known = auth(b, world, r["user_id"])
        ask_reservation(b, r["reservation_id"])
        gold = [dict(p) for p in r["passengers"]]
        gold[j] = new
        plan = [Res("res", ("passengers", i)) if i != j else Lit(new) for i in range(len(gold))]
        b.say(
            "I will replace passenger {0} {1} with "
            + f"{new['first_name']} {new['last_name']} (born {new['dob']})"
            + " on reservation {2}."
            + CONFIRM,
            Res("res", ("passengers", j, "first_name")),
            Res("res", ("passengers", j, "last_name")),
            Res("res", ("reservation_id",)),
        )
        b.call(
            "update_reservation_passengers",
            {"reservation_id": r["reservation_id"], "passengers": gold},
            {"reservation_id": Res("res", ("reservation_id",)), "passengers": plan},
            "upd",
        )
        b.say("Done: {0} is now on the reservation.", Res("upd", ("passengers", j, "first_name")))
        b.tell(new["first_name"])
        opening = (
            f"Hi, {old['first_name']} {old['last_name']} cannot travel; "
            f"{new['first_name']} {new['last_name']} "
            f"(born {new['dob']}) will take the seat on my reservation."
        )
        return b.build("", opening, known, "Replace the passenger as described.")

    return build
