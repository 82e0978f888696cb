"""Airline task templates: each picks entities from the split's users and writes scenario, gold and plan.

Every template that touches a profile or a reservation first gets the user id from the user and reads
the user's details (the policy guard's authentication). The oracle's plan reads reservation ids, flight
numbers, fares, passengers and payment method ids from tool results; it takes from the task only what
the user says in words (route, date, departure time, a reason, a new passenger's details) and policy
constants (fees, free-bag allowances, compensation rates). Templates marked ``delayed`` use a value
read early (a payment method, a saved passenger, a certificate's amount, a reservation found by search)
several steps later.
"""

from __future__ import annotations

import random
from typing import Any

from papergym.envs.service.airline.booking import book, bookable_flight
from papergym.envs.service.airline.changes import (
    add_bags,
    cancel,
    change_cabin,
    change_date,
    change_passenger,
    refuse,
    transfer_flown,
)
from papergym.envs.service.airline.data import (
    AIRPORTS,
    AirlineWorld,
    cancel_allowed,
    segment_status,
)
from papergym.envs.service.airline.steps import (
    CABIN_WORDS,
    COMPENSATION,
    CONFIRM,
    Build,
    ask_reservation,
    auth,
    new_task,
    payment_method,
    pick,
)
from papergym.envs.service.domain import Template
from papergym.envs.service.plan import Count, Fmt, Match, Res, Sum
from papergym.envs.service.tasks import ServiceTask


# ---------------------------------------------------------------------- information
def _info(kind: str, name: str) -> Build:
    """Answer a question from the tools (flight status, airport code, balances, a reservation's facts)."""

    def build(rng: random.Random, world: AirlineWorld, split: str) -> ServiceTask | None:
        b = new_task(name)
        if kind == "status":
            r = world.reservation(rng.choice(world.reservations[split]))
            seg = rng.choice(r["flights"])
            status = segment_status(world.db, seg)
            b.call(
                "get_flight_status", {"flight_number": seg["flight_number"], "date": seg["date"]}, None, "st"
            )
            b.say(f"Flight {seg['flight_number']} on {seg['date']} is " + "{0}.", Res("st"))
            b.tell(status)
            return b.build(
                "", f"Hi, what is the status of flight {seg['flight_number']} on {seg['date']}?", ""
            )
        if kind == "airport":
            code, city = rng.choice(AIRPORTS)
            b.call("list_all_airports", {}, None, "ap")
            b.say(f"The airport code for {city} is " + "{0}.", Res("ap", (Match({"city": city}), "iata")))
            b.tell(code)
            return b.build("", f"Hi, what is the airport code for {city}?", "")
        user = world.user(rng.choice(world.users[split]))
        if kind in ("gift_card", "certificate"):
            method, _ = payment_method(user, kind)
            if method is None:
                return None
            known = auth(b, world, user["user_id"])
            b.say(
                "Your " + kind.replace("_", " ") + " {0} holds {1} dollars.",
                Res("user", ("payment_methods", Match({"source": kind}), "id")),
                Res("user", ("payment_methods", Match({"source": kind}), "amount")),
            )
            b.tell(str(method["amount"]))
            return b.build("", f"Hi, how much is left on my {kind.replace('_', ' ')}?", known)
        active = [x for x in user["reservations"] if world.reservation(x)["status"] is None]
        if not active:
            return None
        r = world.reservation(rng.choice(active))
        known = auth(b, world, user["user_id"])
        ask_reservation(b, r["reservation_id"])
        if kind == "paid":
            b.say(
                "You paid {0} dollars for reservation {1}.",
                Sum((Res("res", ("payment_history", "*", "amount")),)),
                Res("res", ("reservation_id",)),
            )
            b.tell(str(sum(p["amount"] for p in r["payment_history"])))
            return b.build("", "Hi, how much did I pay in total for my reservation?", known)
        if kind == "passengers":
            b.say(
                "Reservation {0} has {1} passenger(s).",
                Res("res", ("reservation_id",)),
                Count(Res("res", ("passengers",))),
            )
            b.tell(f"{len(r['passengers'])} passenger")
            return b.build("", "Hi, how many passengers are on my reservation?", known)
        # kind == "bags"
        b.say(
            "Reservation {0} has {1} checked bag(s).",
            Res("res", ("reservation_id",)),
            Res("res", ("total_baggages",)),
        )
        b.tell(f"{r['total_baggages']} checked bag")
        return b.build("", "Hi, how many checked bags are on my reservation?", known)

    return build


def _seats(name: str) -> Build:
    """Seats left and the fare in a cabin of a flight named by route, date and departure time."""

    def build(rng: random.Random, world: AirlineWorld, split: str) -> ServiceTask | None:
        cabin = rng.choice(("basic_economy", "economy", "business"))
        picked = bookable_flight(rng, world, cabin, 0)
        if picked is None:
            return None
        flight, day = picked
        b = new_task(name)
        time = flight["scheduled_departure_time_est"]
        b.call(
            "search_direct_flight",
            {"origin": flight["origin"], "destination": flight["destination"], "date": day},
            None,
            "s",
        )
        where = Match({"scheduled_departure_time_est": time})
        b.say(
            "The flight {0} leaving at "
            + time
            + " has {1} "
            + CABIN_WORDS[cabin]
            + " seats left at {2} dollars.",
            Res("s", (where, "flight_number")),
            Res("s", (where, "available_seats", cabin)),
            Res("s", (where, "prices", cabin)),
        )
        b.tell(str(flight["dates"][day]["prices"][cabin]))
        opening = (
            f"Hi, how many {CABIN_WORDS[cabin]} seats are left on the flight from {flight['origin']} to "
            f"{flight['destination']} leaving at {time} on {day}, and at what price?"
        )
        return b.build("", opening, "")

    return build


# ---------------------------------------------------------------------- compensation
def _eligible(world: AirlineWorld, r: dict[str, Any]) -> bool:
    """Whether the policy allows compensation: silver or gold, insured, or business."""
    membership = world.user(r["user_id"])["membership"]
    return membership in ("silver", "gold") or r["insurance"] == "yes" or r["cabin"] == "business"


def _compensate(name: str, grant: bool) -> Build:
    """A complaint about a flight the airline cancelled: a certificate (``grant``) or a refusal."""

    def build(rng: random.Random, world: AirlineWorld, split: str) -> ServiceTask | None:
        r = pick(
            rng,
            world,
            split,
            f"airline_cancelled_{grant}",
            lambda x: (
                any(segment_status(world.db, s) == "cancelled" for s in x["flights"])
                and _eligible(world, x) == grant
            ),
        )
        if r is None:
            return None
        k = next(i for i, s in enumerate(r["flights"]) if segment_status(world.db, s) == "cancelled")
        seg, n = r["flights"][k], len(r["passengers"])
        b = new_task(name)
        known = auth(b, world, r["user_id"])
        ask_reservation(b, r["reservation_id"])
        b.call(
            "get_flight_status",
            {"flight_number": seg["flight_number"], "date": seg["date"]},
            {
                "flight_number": Res("res", ("flights", k, "flight_number")),
                "date": Res("res", ("flights", k, "date")),
            },
            "st",
        )
        opening = (
            f"Hi, my flight {seg['flight_number']} on {seg['date']} was cancelled, and I want compensation "
            "for it."
        )
        if not grant:
            b.say(
                "I'm sorry: the flight was {0}, but your reservation is not eligible for compensation.",
                Res("st"),
            )
            b.assertion("The agent does not send a certificate.", "not_called:send_certificate")
            b.assertion("The agent looks the reservation up.", "called:get_reservation_details")
            b.assertion("The agent checks the flight's status.", "called:get_flight_status")
            b.assertion("The agent refuses to proceed.", "refused")
            return b.build("", opening, known, "If the agent refuses, accept it and end the conversation.")
        amount = COMPENSATION["cancelled"] * n
        b.call(
            "calculate",
            {"expression": f"{COMPENSATION['cancelled']} * {n}"},
            {
                "expression": Fmt(
                    f"{COMPENSATION['cancelled']} * {{0}}", (Count(Res("res", ("passengers",))),)
                )
            },
            "amt",
        )
        b.say(
            "The flight was {0}. I can offer a travel certificate of {1} dollars." + CONFIRM,
            Res("st"),
            Res("amt"),
        )
        b.call(
            "send_certificate",
            {"user_id": r["user_id"], "amount": amount},
            {"user_id": Res("user", ("user_id",)), "amount": Res("amt")},
            "cert",
        )
        b.say("Done: {0}", Res("cert"))
        b.tell(str(amount))
        return b.build("", opening, known, "Accept a travel certificate as compensation.")

    return build


def _delayed_cancel(name: str) -> Build:
    """A delayed flight: the user cancels the reservation (a rule allows it) and asks for compensation; the
    agent cancels, then sends a certificate of 50 dollars per passenger."""

    def fits(world: AirlineWorld, x: dict[str, Any]) -> bool:
        return (
            any(segment_status(world.db, s) == "delayed" for s in x["flights"])
            and cancel_allowed(world.db, x, insured_reason=False)
            and _eligible(world, x)
        )

    def build(rng: random.Random, world: AirlineWorld, split: str) -> ServiceTask | None:
        r = pick(rng, world, split, "delayed_cancel", lambda x: fits(world, x))
        if r is None:
            return None
        k = next(i for i, s in enumerate(r["flights"]) if segment_status(world.db, s) == "delayed")
        seg, n = r["flights"][k], len(r["passengers"])
        b = new_task(name)
        known = auth(b, world, r["user_id"])
        ask_reservation(b, r["reservation_id"])
        b.call(
            "get_flight_status",
            {"flight_number": seg["flight_number"], "date": seg["date"]},
            {
                "flight_number": Res("res", ("flights", k, "flight_number")),
                "date": Res("res", ("flights", k, "date")),
            },
            "st",
        )
        rid = Res("res", ("reservation_id",))
        b.say("The flight is {0}. I will cancel reservation {1}." + CONFIRM, Res("st"), rid)
        b.call(
            "cancel_reservation", {"reservation_id": r["reservation_id"]}, {"reservation_id": rid}, "cancel"
        )
        rate = COMPENSATION["delayed"]
        b.call(
            "calculate",
            {"expression": f"{rate} * {n}"},
            {"expression": Fmt(f"{rate} * {{0}}", (Count(Res("res", ("passengers",))),))},
            "amt",
        )
        b.say(
            "Reservation {0} is {1}. For the delay I can offer a travel certificate of {2} dollars."
            + CONFIRM,
            rid,
            Res("cancel", ("status",)),
            Res("amt"),
        )
        b.call(
            "send_certificate",
            {"user_id": r["user_id"], "amount": rate * n},
            {"user_id": Res("user", ("user_id",)), "amount": Res("amt")},
            "cert",
        )
        b.say("Done: {0}", Res("cert"))
        b.tell(str(rate * n))
        opening = (
            f"Hi, my flight {seg['flight_number']} on {seg['date']} is delayed. I want to cancel my "
            "reservation, and I'd like compensation for the delay."
        )
        return b.build("", opening, known, "Cancel the reservation and accept a travel certificate.")

    return build


TEMPLATES: tuple[Template, ...] = (
    Template("book_direct_credit_card", book("book_direct_credit_card")),
    Template("book_direct_gift_card", book("book_direct_gift_card", pay="gift_card"), delayed=True),
    Template("book_business_insured", book("book_business_insured", cabin="business", insurance=True)),
    Template("book_basic_economy", book("book_basic_economy", cabin="basic_economy")),
    Template("book_saved_passenger", book("book_saved_passenger", companion="saved"), delayed=True),
    Template("book_new_companion", book("book_new_companion", companion="new")),
    Template("book_round_trip", book("book_round_trip", trip="round_trip"), delayed=True),
    Template("book_onestop", book("book_onestop", trip="onestop")),
    Template("book_certificate_and_card", book("book_certificate_and_card", pay="certificate"), delayed=True),
    Template("book_extra_bags", book("book_extra_bags", extra_bags=2), delayed=True),
    Template("cancel_recent", cancel("recent", "cancel_recent")),
    Template("cancel_business", cancel("business", "cancel_business")),
    Template("cancel_insured", cancel("insured", "cancel_insured")),
    Template("cancel_airline_cancelled", cancel("airline", "cancel_airline_cancelled")),
    Template(
        "cancel_find_reservation", cancel("recent", "cancel_find_reservation", search=True), delayed=True
    ),
    Template("refuse_cancel", refuse("cancel", "refuse_cancel")),
    Template("refuse_change_basic_economy", refuse("basic_change", "refuse_change_basic_economy")),
    Template("refuse_remove_bags", refuse("remove_bags", "refuse_remove_bags")),
    Template("refuse_add_passenger", refuse("add_passenger", "refuse_add_passenger")),
    Template("refuse_add_insurance", refuse("add_insurance", "refuse_add_insurance")),
    Template("transfer_flown", transfer_flown("transfer_flown")),
    Template("change_date_credit_card", change_date("change_date_credit_card", "credit_card"), delayed=True),
    Template("change_date_gift_card", change_date("change_date_gift_card", "gift_card"), delayed=True),
    Template(
        "upgrade_business",
        change_cabin("upgrade_business", "business", ("economy", "basic_economy")),
        delayed=True,
    ),
    Template("downgrade_economy", change_cabin("downgrade_economy", "economy", ("business",)), delayed=True),
    Template("add_bags_paid", add_bags("add_bags_paid", True), delayed=True),
    Template("add_bags_free", add_bags("add_bags_free", False), delayed=True),
    Template("change_passenger", change_passenger("change_passenger")),
    Template("info_flight_status", _info("status", "info_flight_status")),
    Template("info_airport_code", _info("airport", "info_airport_code")),
    Template("info_gift_card", _info("gift_card", "info_gift_card")),
    Template("info_certificate", _info("certificate", "info_certificate")),
    Template("info_amount_paid", _info("paid", "info_amount_paid")),
    Template("info_passenger_count", _info("passengers", "info_passenger_count")),
    Template("info_bag_count", _info("bags", "info_bag_count")),
    Template("info_seats", _seats("info_seats")),
    Template("compensate_cancelled_flight", _compensate("compensate_cancelled_flight", True)),
    Template("refuse_compensation", _compensate("refuse_compensation", False)),
    Template("cancel_delayed_compensate", _delayed_cancel("cancel_delayed_compensate"), delayed=True),
)
