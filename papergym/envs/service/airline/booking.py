"""Airline booking templates: direct, round-trip and one-stop trips, companions, payment mixes, bags."""

from __future__ import annotations

import random
from typing import Any

from papergym.envs.service.airline.data import (
    BAG_FEE,
    FREE_BAGS,
    INSURANCE_FEE,
    AirlineWorld,
)
from papergym.envs.service.airline.steps import (
    CABIN_WORDS,
    CONFIRM,
    SELF,
    Build,
    auth,
    future_days,
    new_task,
    passenger_of,
    payment_method,
)
from papergym.envs.service.airline.tools import AirlineTools
from papergym.envs.service.db import ServiceDB
from papergym.envs.service.plan import Fmt, Lit, Match, Res, Said, Sum
from papergym.envs.service.tasks import ServiceTask


# ---------------------------------------------------------------------- booking
def bookable_flight(
    rng: random.Random,
    world: AirlineWorld,
    cabin: str,
    n: int,
    origin: str | None = None,
    dest: str | None = None,
) -> tuple[dict[str, Any], str] | None:
    """A flight and a date it can take ``n`` passengers in ``cabin``, unique by departure time in a search."""
    for _ in range(30):
        flight = world.flight(rng.choice(list(world.db["flights"])))
        if (origin and flight["origin"] != origin) or (dest and flight["destination"] != dest):
            candidates = [
                f
                for f in world.db["flights"].values()
                if (not origin or f["origin"] == origin) and (not dest or f["destination"] == dest)
            ]
            if not candidates:
                return None
            flight = rng.choice(candidates)
        day = rng.choice(future_days(rng))
        inst = flight["dates"][day]
        if inst["status"] != "available" or inst["available_seats"][cabin] < n:
            continue
        same_time = [
            f
            for f in world.direct(flight["origin"], flight["destination"], day)
            if f["scheduled_departure_time_est"] == flight["scheduled_departure_time_est"]
        ]
        if len(same_time) == 1:
            return flight, day
    return None


def book(
    name: str,
    *,
    cabin: str = "economy",
    pay: str = "credit_card",
    insurance: bool = False,
    companion: str = "",
    trip: str = "direct",
    extra_bags: int = 0,
) -> Build:
    """Book a trip. ``companion``: "" (alone), "saved" (the first saved passenger) or "new" (the user says
    who); ``trip``: "direct", "round_trip" or "onestop"; ``pay``: "credit_card", "gift_card" or
    "certificate" (the whole certificate, the rest on a credit card)."""

    def build(rng: random.Random, world: AirlineWorld, split: str) -> ServiceTask | None:
        user = world.user(rng.choice(world.users[split]))
        if companion == "saved" and not user["saved_passengers"]:
            return None
        n = 1 if not companion else 2
        legs: list[tuple[dict[str, Any], str]] = []
        pair_index = -1
        if trip == "onestop":
            picked = _onestop(rng, world, cabin, n)
            if picked is None:
                return None
            legs, pair_index = picked
        else:
            first = bookable_flight(rng, world, cabin, n)
            if first is None:
                return None
            legs.append(first)
            if trip == "round_trip":
                back = bookable_flight(rng, world, cabin, n, first[0]["destination"], first[0]["origin"])
                if back is None or back[1] <= first[1]:
                    return None
                legs.append(back)
        origin, dest = legs[0][0]["origin"], legs[-1 if trip != "round_trip" else 0][0]["destination"]
        prices = [f["dates"][d]["prices"][cabin] for f, d in legs]
        free = FREE_BAGS[user["membership"]][cabin] * n
        bags = free + extra_bags if extra_bags else 0
        nonfree = extra_bags
        total = sum(prices) * n + (INSURANCE_FEE * n if insurance else 0) + BAG_FEE * nonfree
        card, card_ref = payment_method(user, "credit_card")
        if pay == "gift_card":
            method, ref = payment_method(user, "gift_card")
            if method is None or method["amount"] < total:
                return None
        elif pay == "certificate":
            method, ref = payment_method(user, "certificate")
            if method is None or card is None or method["amount"] >= total:
                return None
        else:
            method, ref = card, card_ref
        if method is None:
            return None

        b = new_task(name)
        known = auth(b, world, user["user_id"])
        passengers_gold = [passenger_of(user)]
        passengers_plan: list[Any] = [SELF]
        who = "yourself"
        if companion == "saved":
            saved = user["saved_passengers"][0]
            passengers_gold.append(dict(saved))
            passengers_plan.append(Res("user", ("saved_passengers", 0)))
            who = f"yourself and {saved['first_name']} {saved['last_name']} (saved in your profile)"
        elif companion == "new":
            other = {
                "first_name": rng.choice(("Kevin", "Aisha", "Tomas", "Priya", "Leo")),
                "last_name": rng.choice(("Smith", "Okafor", "Berg", "Rao", "Costa")),
                "dob": f"{rng.randrange(1950, 2010)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
            }
            passengers_gold.append(other)
            b.facts |= {
                "companion first name": other["first_name"],
                "companion last name": other["last_name"],
                "companion date of birth": other["dob"],
            }
            b.say(
                "Who travels with you? What is your companion first name, companion last name and "
                "companion date of birth?"
            )
            passengers_plan.append(
                {
                    "first_name": Said("companion first name"),
                    "last_name": Said("companion last name"),
                    "dob": Said("companion date of birth"),
                }
            )
            who = f"yourself and {other['first_name']} {other['last_name']} (born {other['dob']})"
        flights_plan: list[Any] = []
        price_refs: list[Any] = []
        if trip == "onestop":
            day = legs[0][1]
            b.call("search_onestop_flight", {"origin": origin, "destination": dest, "date": day}, None, "s")
            for k in range(2):
                flights_plan.append(
                    {
                        "flight_number": Res("s", (pair_index, k, "flight_number")),
                        "date": Res("s", (pair_index, k, "date")),
                    }
                )
                price_refs.append(Res("s", (pair_index, k, "prices", cabin)))
        else:
            for k, (flight, day) in enumerate(legs):
                label = f"s{k}"
                b.call(
                    "search_direct_flight",
                    {"origin": flight["origin"], "destination": flight["destination"], "date": day},
                    None,
                    label,
                )
                where = Match({"scheduled_departure_time_est": flight["scheduled_departure_time_est"]})
                flights_plan.append({"flight_number": Res(label, (where, "flight_number")), "date": Lit(day)})
                price_refs.append(Res(label, (where, "prices", cabin)))
        total_ref = Sum(
            tuple(price_refs) * n
            + (Lit(INSURANCE_FEE),) * (n if insurance else 0)
            + (Lit(BAG_FEE),) * nonfree
        )
        gold_flights = [{"flight_number": f["flight_number"], "date": d} for f, d in legs]
        if pay == "certificate":
            rest = total - method["amount"]
            cert_amount = Res("user", ("payment_methods", Match({"source": "certificate"}), "amount"))
            b.call(
                "calculate",
                {"expression": f"{float(total)} - {method['amount']}"},
                {"expression": Fmt("{0} - {1}", (total_ref, cert_amount))},
                "rest",
            )
            payments_gold = [
                {"payment_id": method["id"], "amount": method["amount"]},
                {"payment_id": card["id"], "amount": rest},  # type: ignore[index]
            ]
            payments_plan: Any = [
                {"payment_id": ref, "amount": cert_amount},
                {"payment_id": card_ref, "amount": Res("rest")},
            ]
            pay_words = "your travel certificate in full and the rest on your credit card"
        else:
            payments_gold = [{"payment_id": method["id"], "amount": total}]
            payments_plan = [{"payment_id": ref, "amount": total_ref}]
            pay_words = f"your {pay.replace('_', ' ')}"
        b.say(
            "I found the flights {0} for {1} passenger(s) in "
            + CABIN_WORDS[cabin]
            + ". The total is {2} dollars"
            + (", including travel insurance" if insurance else "")
            + (f" and {nonfree} extra checked bag(s)" if nonfree else "")
            + ", paid with {3}."
            + CONFIRM,
            Lit(", ".join(f"{f['flight_number']} on {d}" for f, d in legs)),
            Lit(n),
            total_ref,
            ref,
        )
        b.call(
            "book_reservation",
            {
                "user_id": user["user_id"],
                "origin": origin,
                "destination": dest,
                "flight_type": "round_trip" if trip == "round_trip" else "one_way",
                "cabin": cabin,
                "flights": gold_flights,
                "passengers": passengers_gold,
                "payment_methods": payments_gold,
                "total_baggages": bags,
                "nonfree_baggages": nonfree,
                "insurance": "yes" if insurance else "no",
            },
            {
                "user_id": Res("user", ("user_id",)),
                "origin": Lit(origin),
                "destination": Lit(dest),
                "flight_type": Lit("round_trip" if trip == "round_trip" else "one_way"),
                "cabin": Lit(cabin),
                "flights": flights_plan,
                "passengers": passengers_plan,
                "payment_methods": payments_plan,
                "total_baggages": Lit(bags),
                "nonfree_baggages": Lit(nonfree),
                "insurance": Lit("yes" if insurance else "no"),
            },
            "book",
        )
        b.say(
            "Your reservation {0} is booked; you paid {1} dollars.",
            Res("book", ("reservation_id",)),
            total_ref,
        )
        b.tell(str(total))
        kind = {"direct": "a one-way", "round_trip": "a round-trip", "onestop": "a one-way one-stop"}[trip]
        time = legs[0][0]["scheduled_departure_time_est"]
        back = (
            f", returning on {legs[1][1]} on the flight leaving at "
            f"{legs[1][0]['scheduled_departure_time_est']}"
            if trip == "round_trip"
            else ""
        )
        via = (
            f" connecting in {legs[0][0]['destination']} to the flight leaving at "
            f"{legs[1][0]['scheduled_departure_time_est']}"
            if trip == "onestop"
            else ""
        )
        bag_words = f" You want {bags} checked bags in total." if bags else " You need no checked bags."
        opening = (
            f"Hi, I'd like to book {kind} {CABIN_WORDS[cabin]} trip from {origin} to {dest} on {legs[0][1]}, "
            f"on the flight leaving at {time}{via}{back}, for {who}. I'll pay with {pay_words}."
            + (" I want travel insurance." if insurance else " No travel insurance.")
            + bag_words
        )
        return b.build("", opening, known, f"Book the trip as described, for {who}.{bag_words}")

    return build


def _onestop(
    rng: random.Random, world: AirlineWorld, cabin: str, n: int
) -> tuple[list[tuple[dict[str, Any], str]], int] | None:
    """A one-stop connection (two flights) bookable for ``n`` and its index in the search result."""
    tools = AirlineTools(ServiceDB(world.db))
    for _ in range(10):
        first = world.flight(rng.choice(list(world.db["flights"])))
        day = rng.choice(future_days(rng))
        onward = [
            f
            for f in world.db["flights"].values()
            if f["origin"] == first["destination"] and f["destination"] != first["origin"]
        ]
        if not onward:
            continue
        dest = rng.choice(onward)["destination"]
        pairs = tools.search_onestop_flight(first["origin"], dest, day)
        fits = [
            i
            for i, (a, c) in enumerate(pairs)
            if a["available_seats"][cabin] >= n and c["available_seats"][cabin] >= n
        ]
        if fits:
            i = rng.choice(fits)
            a, c = pairs[i]
            return [(world.flight(a["flight_number"]), day), (world.flight(c["flight_number"]), c["date"])], i
    return None
