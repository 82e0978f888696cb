"""A seeded airline database in tau2-bench's schema (flights, users, reservations), and its indexes.

The schema is tau2's ``FlightDB``: ``flights`` (flight number -> route, scheduled times and a status
per date: ``available`` with seats and prices, ``on time`` / ``delayed`` / ``flying`` / ``landed`` with
times, or ``cancelled``), ``users`` (profile, payment methods: credit cards, gift cards and travel
certificates, saved passengers, membership, reservation ids) and ``reservations``. The clock is tau2's:
2024-05-15 15:00 EST; flights run 2024-05-01 to 2024-05-30.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

NOW = "2024-05-15T15:00:00"
"""tau2's fixed current time (airline policy.md)."""
TODAY = "2024-05-15"
FIRST_DAY, LAST_DAY = date(2024, 5, 1), date(2024, 5, 30)
N_USERS = 300
"""Users in the generated database (inferred; tau2's airline database has 500)."""
TEST_EVERY = 5
"""Every fifth user (by creation order) belongs to the test split, the rest to train."""
CABINS: tuple[str, ...] = ("basic_economy", "economy", "business")
AIRPORTS: tuple[tuple[str, str], ...] = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)
"""The airports tau2's ``list_all_airports`` returns (IATA code, city)."""
_FIRST = (
    "Mia", "Noah", "Olivia", "Liam", "Emma", "Ethan", "Ava", "Lucas", "Sofia", "Mason", "Isabella", "James",
    "Amelia", "Omar", "Yara", "Raj", "Mei", "Chen", "Fatima", "Ivan", "Lena", "Juan", "Aarav", "Sara",
    "Daiki", "Nadia", "Kevin", "Harper", "Anya", "Mohamed", "Lucia", "Yusuf", "Emily", "Hiro", "Zoe",
)  # fmt: skip
_LAST = (
    "Li", "Smith", "Garcia", "Brown", "Khan", "Rossi", "Silva", "Nguyen", "Kim", "Patel", "Lopez",
    "Muller", "Sanchez", "Ahmed", "Jackson", "Wilson", "Moore", "Taylor", "Thomas", "Lee", "Ito",
    "Kowalski", "Hernandez", "Davis", "Martin", "Johansson", "Anderson", "Santos", "Gonzalez", "Wright",
)  # fmt: skip
_STREETS = ("Maple Drive", "Oak Street", "Sunset Drive", "Hillcrest Road", "Pine Lane", "Elm Avenue")
_CITIES = (("Austin", "TX"), ("Denver", "CO"), ("Seattle", "WA"), ("Boston", "MA"), ("Miami", "FL"))
_BRANDS = ("visa", "mastercard")


def _digits(rng: random.Random, n: int, used: set[str]) -> str:
    while True:
        value = str(rng.randrange(10 ** (n - 1), 10**n))
        if value not in used:
            used.add(value)
            return value


def _day(d: date) -> str:
    return d.isoformat()


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}:00"


def _status(rng: random.Random, day: str, dep: int, arr: int, prices: dict[str, int]) -> dict[str, Any]:
    """A flight's status on ``day`` relative to tau2's clock (15:00 on 2024-05-15)."""

    def stamp(d: str, minutes: int) -> str:
        return f"{d}T{_clock(minutes)}"

    if day < TODAY or (day == TODAY and arr <= 15 * 60):
        if rng.random() < 0.06:
            return {"status": "cancelled"}
        late = rng.randrange(-10, 40)
        return {
            "status": "landed",
            "actual_departure_time_est": stamp(day, dep + max(late, 0)),
            "actual_arrival_time_est": stamp(day, min(arr + late, 23 * 60 + 59)),
        }
    if day == TODAY and dep <= 15 * 60:
        return {
            "status": "flying",
            "actual_departure_time_est": stamp(day, dep + 5),
            "estimated_arrival_time_est": stamp(day, arr + 5),
        }
    near = day <= "2024-05-18"
    draw = rng.random()
    if day == TODAY or (near and draw < 0.3):
        if draw < 0.08:
            return {"status": "cancelled"}
        if draw < 0.6 or day != TODAY:
            late = rng.randrange(30, 240) if draw < 0.6 else 0
            return {
                "status": "delayed",
                "estimated_departure_time_est": stamp(day, min(dep + late, 23 * 60 + 59)),
                "estimated_arrival_time_est": stamp(day, min(arr + late, 23 * 60 + 59)),
            }
        return {
            "status": "on time",
            "estimated_departure_time_est": stamp(day, dep),
            "estimated_arrival_time_est": stamp(day, arr),
        }
    if draw < 0.04:
        return {"status": "cancelled"}
    return {
        "status": "available",
        "available_seats": {cabin: rng.randrange(0, 21) for cabin in CABINS},
        "prices": {cabin: int(p * rng.uniform(0.8, 1.25)) for cabin, p in prices.items()},
    }


def _flights(rng: random.Random) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    """Flights on routes between the airports; also each flight's base fares (for past-dated bookings)."""
    codes = [code for code, _ in AIRPORTS]
    flights: dict[str, Any] = {}
    fares: dict[str, dict[str, int]] = {}
    number = 0
    for origin in codes:
        for destination in rng.sample([c for c in codes if c != origin], 6):
            for _ in range(rng.choice((1, 1, 2))):
                number += 1
                flight_number = f"HAT{number:03d}"
                dep = rng.randrange(5 * 12, 18 * 12) * 5
                arr = dep + rng.randrange(12, 60) * 5
                economy = rng.randrange(90, 200)
                base = {
                    "basic_economy": int(economy * rng.uniform(0.5, 0.8)),
                    "economy": economy,
                    "business": int(economy * rng.uniform(2.2, 4.0)),
                }
                fares[flight_number] = base
                days = {}
                d = FIRST_DAY
                while d <= LAST_DAY:
                    days[_day(d)] = _status(rng, _day(d), dep, arr, base)
                    d += timedelta(days=1)
                flights[flight_number] = {
                    "flight_number": flight_number,
                    "origin": origin,
                    "destination": destination,
                    "scheduled_departure_time_est": _clock(dep),
                    "scheduled_arrival_time_est": _clock(arr),
                    "dates": days,
                }
    return flights, fares


def _person(rng: random.Random) -> dict[str, str]:
    return {
        "first_name": rng.choice(_FIRST),
        "last_name": rng.choice(_LAST),
        "dob": f"{rng.randrange(1945, 2012)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
    }


FREE_BAGS: dict[str, dict[str, int]] = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
"""Free checked bags per passenger by membership and cabin (tau2 airline policy)."""
BAG_FEE = 50
"""Dollars per extra checked bag (tau2 airline policy)."""
INSURANCE_FEE = 30
"""Dollars per passenger for travel insurance (tau2 airline policy)."""


def generate_airline_db(seed: int, n_users: int = N_USERS) -> dict[str, Any]:
    """The database: ~170 flights over 30 days, ``n_users`` users with 1-4 reservations each."""
    rng = random.Random(seed)
    used: set[str] = set()
    flights, fares = _flights(rng)
    by_origin: dict[str, list[str]] = {}
    for fn, flight in flights.items():
        by_origin.setdefault(flight["origin"], []).append(fn)
    users: dict[str, Any] = {}
    reservations: dict[str, Any] = {}
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    for _ in range(n_users):
        me = _person(rng)
        user_id = f"{me['first_name'].lower()}_{me['last_name'].lower()}_{_digits(rng, 4, used)}"
        methods: dict[str, Any] = {}
        sources = [
            "credit_card",
            *rng.sample(["credit_card", "gift_card", "certificate"], rng.randrange(0, 3)),
        ]
        for source in sources:
            method_id = f"{source}_{_digits(rng, 7, used)}"
            method: dict[str, Any] = {"source": source}
            if source == "credit_card":
                method |= {"brand": rng.choice(_BRANDS), "last_four": f"{rng.randrange(10000):04d}"}
            else:
                method["amount"] = (
                    rng.randrange(50, 500) if source == "gift_card" else rng.choice((100, 150, 250))
                )
            method["id"] = method_id
            methods[method_id] = method
        city, state = rng.choice(_CITIES)
        user = {
            "user_id": user_id,
            "name": {"first_name": me["first_name"], "last_name": me["last_name"]},
            "address": {
                "address1": f"{rng.randrange(10, 999)} {rng.choice(_STREETS)}",
                "address2": f"Suite {rng.randrange(100, 999)}",
                "city": city,
                "country": "USA",
                "state": state,
                "zip": str(rng.randrange(10000, 99999)),
            },
            "email": f"{user_id.rsplit('_', 1)[0].replace('_', '.')}{rng.randrange(1000, 9999)}@example.com",
            "dob": me["dob"],
            "payment_methods": methods,
            "saved_passengers": [_person(rng) for _ in range(rng.randrange(0, 3))],
            "membership": rng.choices(("regular", "silver", "gold"), (5, 3, 2))[0],
            "reservations": [],
        }
        users[user_id] = user
        for _ in range(rng.randrange(1, 5)):
            while True:
                rid = "".join(rng.choice(alphabet) for _ in range(6))
                if rid not in reservations and rid not in used:
                    used.add(rid)
                    break
            reservations[rid] = _reservation(rng, rid, user, flights, fares, by_origin)
            user["reservations"].append(rid)
    return {"flights": flights, "users": users, "reservations": reservations}


def _reservation(
    rng: random.Random,
    rid: str,
    user: dict[str, Any],
    flights: dict[str, Any],
    fares: dict[str, dict[str, int]],
    by_origin: dict[str, list[str]],
) -> dict[str, Any]:
    first = flights[rng.choice(list(flights))]
    legs = [first["flight_number"]]
    if rng.random() < 0.2:  # one stop
        onward = [f for f in by_origin[first["destination"]] if flights[f]["destination"] != first["origin"]]
        onward = [
            f
            for f in onward
            if flights[f]["scheduled_departure_time_est"] > first["scheduled_arrival_time_est"]
        ]
        if onward:
            legs.append(rng.choice(onward))
    origin, destination = first["origin"], flights[legs[-1]]["destination"]
    out_day = FIRST_DAY + timedelta(days=rng.randrange(1, 28))
    segments = [(fn, out_day) for fn in legs]
    back = [f for f in by_origin[destination] if flights[f]["destination"] == origin]
    flight_type = "one_way"
    if back and rng.random() < 0.45 and out_day < LAST_DAY - timedelta(days=1):
        flight_type = "round_trip"
        segments.append(
            (
                rng.choice(back),
                out_day + timedelta(days=rng.randrange(1, min(6, (LAST_DAY - out_day).days + 1))),
            )
        )
    cabin = rng.choices(CABINS, (3, 5, 2))[0]
    n = rng.choices((1, 2, 3, 4), (5, 3, 1, 1))[0]
    passengers = ([{**user["name"], "dob": user["dob"]}] if rng.random() < 0.8 else []) + [
        _person(rng) for _ in range(n)
    ]
    passengers = passengers[:n]
    flown = []
    for fn, d in segments:
        day = flights[fn]["dates"][_day(d)]
        price = day["prices"][cabin] if day["status"] == "available" else fares[fn][cabin]
        flown.append(
            {
                "origin": flights[fn]["origin"],
                "destination": flights[fn]["destination"],
                "flight_number": fn,
                "date": _day(d),
                "price": price,
            }
        )
    insurance = "yes" if rng.random() < 0.3 else "no"
    bags = rng.randrange(0, n + 2)
    nonfree = max(0, bags - FREE_BAGS[user["membership"]][cabin] * n)
    total = (
        sum(f["price"] for f in flown) * n
        + (INSURANCE_FEE * n if insurance == "yes" else 0)
        + BAG_FEE * nonfree
    )
    payer = rng.choice([m for m in user["payment_methods"].values() if m["source"] != "certificate"])
    near = TODAY <= _day(out_day) <= "2024-05-18"
    if (near or _day(out_day) > TODAY) and rng.random() < (0.5 if near else 0.2):  # booked in the last 24 h
        created = f"2024-05-14T{rng.randrange(15, 24):02d}:{rng.randrange(60):02d}:00"
    else:
        start = FIRST_DAY - timedelta(days=10)
        created_day = start + timedelta(
            days=rng.randrange(0, max(1, (min(out_day, date(2024, 5, 14)) - start).days))
        )
        created = f"{_day(created_day)}T{rng.randrange(0, 24):02d}:{rng.randrange(60):02d}:00"
    history = [{"payment_id": payer["id"], "amount": total}]
    record: dict[str, Any] = {
        "reservation_id": rid,
        "user_id": user["user_id"],
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": flown,
        "passengers": passengers,
        "payment_history": history,
        "created_at": created,
        "total_baggages": bags,
        "nonfree_baggages": nonfree,
        "insurance": insurance,
        "status": None,
    }
    if rng.random() < 0.08:
        record["status"] = "cancelled"
        history.append({"payment_id": payer["id"], "amount": -total})
    return record


def segment_status(db: Mapping[str, Any], segment: Mapping[str, Any]) -> str:
    """The status of a reservation's flight segment on its date ("" if the flight or date is unknown)."""
    flight = db["flights"].get(segment["flight_number"])
    day = None if flight is None else flight["dates"].get(segment["date"])
    return "" if day is None else day["status"]


def is_flown(db: Mapping[str, Any], reservation: Mapping[str, Any]) -> bool:
    """Whether any segment has taken off (landed or flying), or lies in the past."""
    return any(
        s["date"] < TODAY or segment_status(db, s) in ("landed", "flying") for s in reservation["flights"]
    )


def cancel_allowed(db: Mapping[str, Any], reservation: Mapping[str, Any], *, insured_reason: bool) -> bool:
    """tau2's cancellation rule: nothing flown and (booked in the last 24 h, or a segment cancelled by the
    airline, or business, or insurance with a covered reason)."""
    if is_flown(db, reservation):
        return False
    return (
        reservation["created_at"] >= "2024-05-14T15:00:00"
        or any(segment_status(db, s) == "cancelled" for s in reservation["flights"])
        or reservation["cabin"] == "business"
        or (insured_reason and reservation["insurance"] == "yes")
    )


@dataclass
class AirlineWorld:
    """Indexes over an airline database for the task templates.

    Attributes:
        db: the database (read-only).
        users: split -> user ids.
        reservations: split -> ids of reservations that are not cancelled.
    """

    db: Mapping[str, Any]
    users: dict[str, list[str]] = field(default_factory=dict)
    reservations: dict[str, list[str]] = field(default_factory=dict)
    _kinds: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, db: Mapping[str, Any]) -> AirlineWorld:
        world = cls(db)
        for i, user_id in enumerate(db["users"]):
            split = "test" if i % TEST_EVERY == 0 else "train"
            world.users.setdefault(split, []).append(user_id)
            for rid in db["users"][user_id]["reservations"]:
                if db["reservations"][rid]["status"] != "cancelled":
                    world.reservations.setdefault(split, []).append(rid)
        return world

    def kind(self, split: str, name: str, test: Callable[[dict[str, Any]], bool]) -> list[str]:
        """The split's active reservations passing ``test`` (cached under ``name``)."""
        key = (split, name)
        if key not in self._kinds:
            self._kinds[key] = [r for r in self.reservations.get(split, []) if test(self.reservation(r))]
        return self._kinds[key]

    def user(self, user_id: str) -> dict[str, Any]:
        return self.db["users"][user_id]

    def reservation(self, rid: str) -> dict[str, Any]:
        return self.db["reservations"][rid]

    def flight(self, flight_number: str) -> dict[str, Any]:
        return self.db["flights"][flight_number]

    def direct(self, origin: str, destination: str, day: str) -> list[dict[str, Any]]:
        """The flights bookable on ``day`` from ``origin`` to ``destination`` (search_direct_flight's set)."""
        return [
            f
            for f in self.db["flights"].values()
            if f["origin"] == origin
            and f["destination"] == destination
            and f["dates"].get(day, {}).get("status") == "available"
        ]
