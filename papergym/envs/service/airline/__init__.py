"""The airline domain: tau2-bench's airline schema, tools and rules; a generated default database, tasks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from papergym.envs.service.airline.data import AirlineWorld, generate_airline_db, is_flown
from papergym.envs.service.airline.policy import AIRLINE_POLICY
from papergym.envs.service.airline.templates import TEMPLATES
from papergym.envs.service.airline.tools import AirlineTools
from papergym.envs.service.db import ServiceDB
from papergym.envs.service.domain import Domain, Session, Template

MAX_PASSENGERS = 5
"""At most five passengers per reservation (tau2 airline policy)."""
PAYMENT_LIMITS: dict[str, int] = {"certificate": 1, "credit_card": 1, "gift_card": 3}
"""At most one certificate, one credit card and three gift cards per booking (tau2 airline policy)."""


@dataclass
class AirlineDomain(Domain):
    """tau2's airline domain (see `AirlineTools` for the tools and `AIRLINE_POLICY` for the rules).

    The policy guard refuses a write before the user's details are read (tau2's agent gets the user id
    from the user and reads the profile), a write on another user's reservation or profile, and the
    rule breaks the tools do not check themselves: cancelling a flown reservation or one no rule allows
    (beyond insurance, whose reason only the conversation tells), changing the flights of a basic economy
    reservation or its route, changing the cabin after a flight is flown, removing bags, more than five
    passengers, and too many payment methods of a kind.
    """

    name: str = "airline"
    toolkit: type[AirlineTools] = AirlineTools
    policy: str = AIRLINE_POLICY
    templates: tuple[Template, ...] = field(default=TEMPLATES)

    def generate_db(self, seed: int) -> dict[str, Any]:
        return generate_airline_db(seed)

    def world(self, db: Mapping[str, Any]) -> AirlineWorld:
        return AirlineWorld.build(db)

    def authenticate(self, name: str, result: Any) -> str | None:
        if name == "get_user_details" and isinstance(result, Mapping):
            user_id = result.get("user_id")
            return user_id if isinstance(user_id, str) else None
        return None

    def guard(self, db: ServiceDB, session: Session, name: str, arguments: Mapping[str, Any]) -> str | None:
        if session.user_id is None:
            return "Policy: get the user id from the user and read their details before any change."
        reservation = db.get("reservations", arguments.get("reservation_id", ""))
        owner = arguments.get("user_id") or (reservation["user_id"] if reservation else session.user_id)
        if owner != session.user_id:
            return "Policy: you can only act for this user; this belongs to another user."
        if reservation is not None:
            return _reservation_rule(db, name, reservation, arguments)
        if name == "book_reservation":
            return _booking_rule(db, session.user_id, arguments)
        return None


def _reservation_rule(
    db: ServiceDB, name: str, reservation: Mapping[str, Any], arguments: Mapping[str, Any]
) -> str | None:
    base = {"flights": db.base["flights"]}
    if reservation.get("status") == "cancelled":
        return "Policy: this reservation is already cancelled."
    if name == "cancel_reservation":
        if is_flown(base, reservation):
            return "Policy: part of this trip has been flown; it cannot be cancelled (transfer to a human)."
        allowed = (
            reservation["created_at"] >= "2024-05-14T15:00:00"
            or any(
                db.get("flights", s["flight_number"])["dates"].get(s["date"], {}).get("status") == "cancelled"
                for s in reservation["flights"]
                if db.has("flights", s["flight_number"])
            )
            or reservation["cabin"] == "business"
            or reservation["insurance"] == "yes"
        )
        if not allowed:
            return (
                "Policy: this reservation cannot be cancelled: it was booked more than 24 hours ago, no "
                "flight was cancelled by the airline, it is not business and it has no travel insurance."
            )
    if name == "update_reservation_flights":
        old = [(s["flight_number"], s["date"]) for s in reservation["flights"]]
        new = [
            (f.get("flight_number"), f.get("date"))
            for f in arguments.get("flights", [])
            if isinstance(f, Mapping)
        ]
        if new != old and reservation["cabin"] == "basic_economy":
            return "Policy: the flights of a basic economy reservation cannot be changed."
        if arguments.get("cabin") != reservation["cabin"] and is_flown(base, reservation):
            return "Policy: the cabin cannot change once a flight of the reservation has been flown."
        route = _route(db, new)
        moved = route is not None and route != (reservation["origin"], reservation["destination"])
        if moved and (reservation["flight_type"] == "one_way" or route[0] != reservation["origin"]):
            return "Policy: a change keeps the reservation's origin, destination and trip type."
    if (
        name == "update_reservation_baggages"
        and arguments.get("total_baggages", 0) < reservation["total_baggages"]
    ):
        return "Policy: checked bags can be added, never removed."
    return None


def _route(db: ServiceDB, flights: list[tuple[Any, Any]]) -> tuple[str, str] | None:
    """(first origin, last destination) of a flight list; None when a flight is unknown."""
    records = [db.get("flights", fn) for fn, _ in flights if isinstance(fn, str)]
    if not records or any(r is None for r in records) or len(records) != len(flights):
        return None
    return records[0]["origin"], records[-1]["destination"]


def _booking_rule(db: ServiceDB, user_id: str, arguments: Mapping[str, Any]) -> str | None:
    if len(arguments.get("passengers", [])) > MAX_PASSENGERS:
        return f"Policy: a reservation has at most {MAX_PASSENGERS} passengers."
    methods = db.get("users", user_id)["payment_methods"]
    counts: dict[str, int] = {}
    for payment in arguments.get("payment_methods", []):
        method = methods.get(payment.get("payment_id")) if isinstance(payment, Mapping) else None
        if method is not None:
            counts[method["source"]] = counts.get(method["source"], 0) + 1
    for source, limit in PAYMENT_LIMITS.items():
        if counts.get(source, 0) > limit:
            return f"Policy: a booking uses at most {limit} {source.replace('_', ' ')}(s)."
    return None
