"""The airline domain's tools: tau2-bench's names, arguments and semantics, over a `ServiceDB`.

As in tau2, the tools check only what the API checks (existence, availability, seats, balances, the
payment total, the passenger count); the policy's other rules (cancellation windows, basic economy,
baggage removal, ...) are the agent's to respect, and the env's policy guard refuses them on generated
tasks. Writes check everything before they change anything; results are the records as JSON.
"""

from __future__ import annotations

from datetime import date as _date
from datetime import timedelta
from typing import Any, Literal, TypedDict

from papergym.envs.service.airline.data import AIRPORTS, BAG_FEE, INSURANCE_FEE, NOW
from papergym.envs.service.domain import ToolError, Toolkit
from papergym.envs.service.retail.tools import evaluate_arithmetic

NEW_RESERVATION_IDS: tuple[str, ...] = ("HATHAT", "HATHAU", "HATHAV")
"""The ids tau2 gives new reservations, in order (at most three per episode)."""
NEW_CERTIFICATE_NUMBERS: tuple[int, ...] = (3221322, 3221323, 3221324)
"""The numbers tau2 gives new certificates, in order (at most three per user and episode)."""


class FlightInfo(TypedDict):
    """One flight of a reservation."""

    flight_number: str
    date: str


class PassengerInfo(TypedDict):
    """One passenger."""

    first_name: str
    last_name: str
    dob: str


class PaymentInfo(TypedDict):
    """One payment of a booking."""

    payment_id: str
    amount: float


_RESERVATION_FIELDS = (
    *("reservation_id", "user_id", "origin", "destination", "flight_type", "cabin", "flights"),
    *("passengers", "payment_history", "created_at", "total_baggages", "nonfree_baggages", "insurance"),
    "status",
)
_USER_FIELDS = (
    *("user_id", "name", "address", "email", "dob", "payment_methods", "saved_passengers"),
    *("membership", "reservations"),
)
_FLIGHT_FIELDS = ("flight_number", "origin", "destination", "date", "price")
_PASSENGER_FIELDS = ("first_name", "last_name", "dob")
_ADDRESS_FIELDS = ("address1", "address2", "city", "country", "state", "zip")
_METHOD_FIELDS = {"credit_card": ("source", "id", "brand", "last_four")}
"""tau2's airline models' field orders (``Reservation``, ``User``, ...): its tools dump the models."""


def _fields(record: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """``record`` in a model's field order, an unset optional field null (the model's dump)."""
    return {name: record.get(name) for name in names}


def _reservation_view(reservation: dict[str, Any]) -> dict[str, Any]:
    """A reservation as tau2's tools return it: the ``Reservation`` model's dump (its field order, nested
    flights and passengers too, the optional ``status`` null when unset)."""
    view = _fields(reservation, _RESERVATION_FIELDS)
    view["flights"] = [_fields(f, _FLIGHT_FIELDS) for f in reservation["flights"]]
    view["passengers"] = [_fields(p, _PASSENGER_FIELDS) for p in reservation["passengers"]]
    view["payment_history"] = [_fields(p, ("payment_id", "amount")) for p in reservation["payment_history"]]
    return view


def _method_view(method: dict[str, Any]) -> dict[str, Any]:
    """A payment method as tau2's ``PaymentMethod`` models dump it: a gift card's or certificate's amount
    is a float (``500.0``)."""
    view = _fields(method, _METHOD_FIELDS.get(method["source"], ("source", "id", "amount")))
    if "amount" in view:
        view["amount"] = float(view["amount"])
    return view


def _user_view(user: dict[str, Any]) -> dict[str, Any]:
    """A user as tau2's tools return it: the ``User`` model's dump."""
    view = _fields(user, _USER_FIELDS)
    view["name"] = _fields(user["name"], ("first_name", "last_name"))
    view["address"] = _fields(user["address"], _ADDRESS_FIELDS)
    view["payment_methods"] = {k: _method_view(m) for k, m in user["payment_methods"].items()}
    view["saved_passengers"] = [_fields(p, _PASSENGER_FIELDS) for p in user["saved_passengers"]]
    return view


def _dollars(amount: float, what: str) -> int | float:
    """An amount as tau2 stores it (an int when whole)."""
    if isinstance(amount, float) and amount.is_integer():
        return int(amount)
    if isinstance(amount, float):
        raise ToolError(f"{what} must be a whole number of dollars, got {amount}")
    return amount


class AirlineTools(Toolkit):
    """tau2's airline toolkit (flights, users, reservations, payment methods)."""

    READ = (
        "get_user_details",
        "get_reservation_details",
        "search_direct_flight",
        "search_onestop_flight",
        "list_all_airports",
        "get_flight_status",
    )
    WRITE = (
        "book_reservation",
        "cancel_reservation",
        "update_reservation_flights",
        "update_reservation_passengers",
        "update_reservation_baggages",
        "send_certificate",
    )
    GENERIC = ("calculate", "transfer_to_human_agents")

    # ------------------------------------------------------------------ lookups
    def _user(self, user_id: str, *, write: bool = False) -> dict[str, Any]:
        user = self.db.edit("users", user_id) if write else self.db.get("users", user_id)
        if user is None:
            raise ToolError(f"User {user_id} not found")
        return user

    def _reservation(self, reservation_id: str, *, write: bool = False) -> dict[str, Any]:
        found = (
            self.db.edit("reservations", reservation_id)
            if write
            else self.db.get("reservations", reservation_id)
        )
        if found is None:
            raise ToolError(f"Reservation {reservation_id} not found")
        return found

    def _flight(self, flight_number: str) -> dict[str, Any]:
        flight = self.db.get("flights", flight_number)
        if flight is None:
            raise ToolError(f"Flight {flight_number} not found")
        return flight

    def _instance(self, flight_number: str, day: str) -> dict[str, Any]:
        flight = self._flight(flight_number)
        if day not in flight["dates"]:
            raise ToolError(f"Flight {flight_number} not found on date {day}")
        return flight["dates"][day]

    def _bookable(self, info: FlightInfo, cabin: str, n_passengers: int) -> tuple[dict[str, Any], int]:
        """The flight and its current price in ``cabin``; ToolError if it cannot take the passengers."""
        if not isinstance(info, dict) or not {"flight_number", "date"} <= set(info):
            raise ToolError("Each flight needs 'flight_number' and 'date'")
        instance = self._instance(info["flight_number"], info["date"])
        if instance["status"] != "available":
            raise ToolError(f"Flight {info['flight_number']} not available on date {info['date']}")
        if instance["available_seats"][cabin] < n_passengers:
            raise ToolError(f"Not enough seats on flight {info['flight_number']}")
        return self._flight(info["flight_number"]), instance["prices"][cabin]

    def _take_seats(self, info: FlightInfo, cabin: str, n: int) -> None:
        flight = self.db.edit("flights", info["flight_number"])
        seats = flight["dates"][info["date"]]["available_seats"]
        self.db.set(seats, cabin, seats[cabin] - n)

    def _charge_update(self, user_id: str, payment_id: str, total: int) -> dict[str, Any] | None:
        """tau2's payment for a change: no certificates; a gift card must cover ``total`` (a refund adds)."""
        method = self._user(user_id)["payment_methods"].get(payment_id)
        if method is None:
            raise ToolError("Payment method not found")
        if method["source"] == "certificate":
            raise ToolError("Certificate cannot be used to update reservation")
        if method["source"] == "gift_card" and method["amount"] < total:
            raise ToolError("Gift card balance is not enough")
        if method["source"] == "gift_card":
            card = self._user(user_id, write=True)["payment_methods"][payment_id]
            self.db.set(card, "amount", card["amount"] - total)
        return {"payment_id": payment_id, "amount": total} if total != 0 else None

    def _search(
        self,
        origin: str | None,
        destination: str | None,
        day: str,
        after: str | None = None,
        flights: list[dict[str, Any]] | None = None,
    ) -> list:
        """tau2's direct-flight search (``flights``: the flight records to scan, default all)."""
        found = []
        for flight in self.db.values("flights") if flights is None else flights:
            instance = flight["dates"].get(day)
            if (
                (origin is None or flight["origin"] == origin)
                and (destination is None or flight["destination"] == destination)
                and instance is not None
                and instance["status"] == "available"
                and (after is None or flight["scheduled_departure_time_est"] >= after)
            ):
                found.append(
                    {
                        "flight_number": flight["flight_number"],
                        "origin": flight["origin"],
                        "destination": flight["destination"],
                        "status": "available",
                        "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
                        "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"],
                        "date": None,
                        "available_seats": dict(instance["available_seats"]),
                        "prices": dict(instance["prices"]),
                    }
                )
        return found

    # ------------------------------------------------------------------ generic
    def calculate(self, expression: str) -> str:
        """Calculate the result of a mathematical expression.

        Args:
            expression: The expression, such as '2 + 2': numbers, operators (+, -, *, /), parentheses and
                spaces.
        """
        return str(round(evaluate_arithmetic(expression), 2))

    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of the user's issue. Only transfer if the user
        explicitly asks for a human agent, or the issue cannot be solved with the policy and the tools.

        Args:
            summary: A summary of the user's issue.
        """
        return "Transfer successful"

    # ------------------------------------------------------------------ reads
    def get_user_details(self, user_id: str) -> dict[str, Any]:
        """Get the details of a user: profile, payment methods, saved passengers, membership, reservations.

        Args:
            user_id: The user id, such as 'sara_doe_496'.
        """
        return _user_view(self._user(user_id))

    def get_reservation_details(self, reservation_id: str) -> dict[str, Any]:
        """Get the details of a reservation.

        Args:
            reservation_id: The reservation id, such as '8JX2WO'.
        """
        return _reservation_view(self._reservation(reservation_id))

    def list_all_airports(self) -> list[dict[str, str]]:
        """List every airport served: IATA code and city."""
        return [{"iata": code, "city": city} for code, city in AIRPORTS]

    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
        """Search the direct flights between two airports on a date that can be booked.

        Args:
            origin: The origin airport's three-letter code, such as 'JFK'.
            destination: The destination airport's three-letter code, such as 'LAX'.
            date: The date in the format 'YYYY-MM-DD', such as '2024-05-20'.
        """
        return self._search(origin, destination, date)

    def search_onestop_flight(self, origin: str, destination: str, date: str) -> list[list[dict[str, Any]]]:
        """Search the one-stop connections between two airports on a date: pairs of flights, the second
        leaving the connecting airport after the first arrives.

        Args:
            origin: The origin airport's three-letter code, such as 'JFK'.
            destination: The destination airport's three-letter code, such as 'LAX'.
            date: The date in the format 'YYYY-MM-DD', such as '2024-05-20'.
        """
        pairs = []
        by_origin: dict[str, list[dict[str, Any]]] = {}
        for flight in self.db.values("flights"):
            by_origin.setdefault(flight["origin"], []).append(flight)
        for first in self._search(origin, None, date, flights=by_origin.get(origin, [])):
            first["date"] = date
            arrival = first["scheduled_arrival_time_est"]
            day2 = date
            if "+1" in arrival:
                try:
                    day2 = (_date.fromisoformat(date) + timedelta(days=1)).isoformat()
                except ValueError:
                    day2 = date
            onward = by_origin.get(first["destination"], [])
            for second in self._search(
                first["destination"], destination, day2, after=arrival, flights=onward
            ):
                second["date"] = day2
                pairs.append([first, second])
        return pairs

    def get_flight_status(self, flight_number: str, date: str) -> str:
        """Get the status of a flight on a date ('available', 'on time', 'delayed', 'flying', 'landed' or
        'cancelled').

        Args:
            flight_number: The flight number, such as 'HAT001'.
            date: The date in the format 'YYYY-MM-DD'.
        """
        return self._instance(flight_number, date)["status"]

    # ------------------------------------------------------------------ writes
    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: Literal["round_trip", "one_way"],
        cabin: Literal["business", "economy", "basic_economy"],
        flights: list[FlightInfo],
        passengers: list[PassengerInfo],
        payment_methods: list[PaymentInfo],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Literal["yes", "no"],
    ) -> dict[str, Any]:
        """Book a reservation.

        Args:
            user_id: The id of the user who books, such as 'sara_doe_496'.
            origin: The IATA code of the trip's origin, such as 'SFO'.
            destination: The IATA code of the trip's destination, such as 'JFK'.
            flight_type: 'one_way' or 'round_trip'.
            cabin: 'basic_economy', 'economy' or 'business'.
            flights: Every flight of the reservation: objects with 'flight_number' and 'date'.
            passengers: Every passenger: objects with 'first_name', 'last_name' and 'dob' (YYYY-MM-DD).
            payment_methods: The payments: objects with 'payment_id' (from the user's profile) and 'amount'.
            total_baggages: The total number of checked bags.
            nonfree_baggages: The number of checked bags that are not free.
            insurance: Whether travel insurance is bought: 'yes' or 'no'.
        """
        user = self._user(user_id)
        rid = next((r for r in NEW_RESERVATION_IDS if not self.db.has("reservations", r)), None)
        if rid is None:
            raise ToolError("Too many reservations")
        n = len(passengers)
        segments, total = [], 0
        for info in flights:
            flight, price = self._bookable(info, cabin, n)
            segments.append(
                {
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "flight_number": info["flight_number"],
                    "date": info["date"],
                    "price": price,
                }
            )
            total += price * n
        total += (INSURANCE_FEE * n if insurance == "yes" else 0) + BAG_FEE * nonfree_baggages
        payments = [
            {"payment_id": p["payment_id"], "amount": _dollars(p["amount"], "A payment amount")}
            for p in payment_methods
        ]
        for payment in payments:
            method = user["payment_methods"].get(payment["payment_id"])
            if method is None:
                raise ToolError(f"Payment method {payment['payment_id']} not found")
            if method["source"] in ("gift_card", "certificate") and method["amount"] < payment["amount"]:
                raise ToolError(f"Not enough balance in payment method {payment['payment_id']}")
        paid = sum(p["amount"] for p in payments)
        if paid != total:
            raise ToolError(f"Payment amount does not add up, total price is {total}, but paid {paid}")
        writable = self._user(user_id, write=True)
        for payment in payments:
            method = writable["payment_methods"][payment["payment_id"]]
            if method["source"] == "gift_card":
                self.db.set(method, "amount", method["amount"] - payment["amount"])
            elif method["source"] == "certificate":
                self.db.delete(writable["payment_methods"], payment["payment_id"])
        for info in flights:
            self._take_seats(info, cabin, n)
        reservation = {
            "reservation_id": rid,
            "user_id": user_id,
            "origin": origin,
            "destination": destination,
            "flight_type": flight_type,
            "cabin": cabin,
            "flights": segments,
            "passengers": [dict(p) for p in passengers],
            "payment_history": payments,
            "created_at": NOW,
            "total_baggages": total_baggages,
            "nonfree_baggages": nonfree_baggages,
            "insurance": insurance,
            "status": None,
        }
        self.db.insert("reservations", rid, reservation)
        self.db.append(writable["reservations"], rid)
        return _reservation_view(reservation)

    def cancel_reservation(self, reservation_id: str) -> dict[str, Any]:
        """Cancel a whole reservation; every payment is refunded to its payment method.

        Args:
            reservation_id: The reservation id, such as 'ZFA04Y'.
        """
        reservation = self._reservation(reservation_id, write=True)
        refunds = [
            {"payment_id": p["payment_id"], "amount": -p["amount"]} for p in reservation["payment_history"]
        ]
        for refund in refunds:
            self.db.append(reservation["payment_history"], refund)
        self.db.set(reservation, "status", "cancelled")
        return _reservation_view(reservation)

    def update_reservation_flights(
        self,
        reservation_id: str,
        cabin: Literal["business", "economy", "basic_economy"],
        flights: list[FlightInfo],
        payment_id: str,
    ) -> dict[str, Any]:
        """Update the flights (and cabin) of a reservation. A kept flight keeps its price when the cabin
        is unchanged; the difference is charged to, or refunded on, the payment method.

        Args:
            reservation_id: The reservation id, such as 'ZFA04Y'.
            cabin: The cabin class of the whole reservation.
            flights: Every flight of the ENTIRE new reservation, objects with 'flight_number' and 'date';
                unchanged flights must be listed too.
            payment_id: The payment id stored in the user's profile, such as 'credit_card_7815826' or
                'gift_card_7815826'.
        """

        reservation = self._reservation(reservation_id)
        user_id = reservation["user_id"]
        self._user(user_id)
        n = len(reservation["passengers"])
        segments, total = [], 0
        for info in flights:
            if not isinstance(info, dict) or not {"flight_number", "date"} <= set(info):
                raise ToolError("Each flight needs 'flight_number' and 'date'")
            kept = next(
                (
                    s
                    for s in reservation["flights"]
                    if s["flight_number"] == info["flight_number"]
                    and s["date"] == info["date"]
                    and cabin == reservation["cabin"]
                ),
                None,
            )
            if kept is not None:
                segments.append(dict(kept))
                total += kept["price"] * n
                continue
            flight, price = self._bookable(info, cabin, n)
            segments.append(
                {
                    "flight_number": info["flight_number"],
                    "date": info["date"],
                    "price": price,
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                }
            )
            total += price * n
        total -= sum(s["price"] for s in reservation["flights"]) * n
        payment = self._charge_update(user_id, payment_id, total)
        writable = self._reservation(reservation_id, write=True)
        if payment is not None:
            self.db.append(writable["payment_history"], payment)
        self.db.set(writable, "flights", segments)
        self.db.set(writable, "cabin", cabin)
        return _reservation_view(writable)

    def update_reservation_passengers(
        self, reservation_id: str, passengers: list[PassengerInfo]
    ) -> dict[str, Any]:
        """Update the passengers of a reservation (their number cannot change).

        Args:
            reservation_id: The reservation id, such as 'ZFA04Y'.
            passengers: Every passenger: objects with 'first_name', 'last_name' and 'dob' (YYYY-MM-DD).
        """
        reservation = self._reservation(reservation_id, write=True)
        if len(passengers) != len(reservation["passengers"]):
            raise ToolError("Number of passengers does not match")
        self.db.set(reservation, "passengers", [dict(p) for p in passengers])
        return _reservation_view(reservation)

    def update_reservation_baggages(
        self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> dict[str, Any]:
        """Update the checked bags of a reservation; each added non-free bag is charged.

        Args:
            reservation_id: The reservation id, such as 'ZFA04Y'.
            total_baggages: The new total number of checked bags.
            nonfree_baggages: The new number of non-free checked bags.
            payment_id: The payment id stored in the user's profile, such as 'credit_card_7815826' or
                'gift_card_7815826'.
        """

        reservation = self._reservation(reservation_id)
        total = BAG_FEE * max(0, nonfree_baggages - reservation["nonfree_baggages"])
        payment = self._charge_update(reservation["user_id"], payment_id, total)
        writable = self._reservation(reservation_id, write=True)
        if payment is not None:
            self.db.append(writable["payment_history"], payment)
        self.db.set(writable, "total_baggages", total_baggages)
        self.db.set(writable, "nonfree_baggages", nonfree_baggages)
        return _reservation_view(writable)

    def send_certificate(self, user_id: str, amount: float) -> str:
        """Send a travel certificate to a user, as compensation. Be careful!

        Args:
            user_id: The user id, such as 'sara_doe_496'.
            amount: The certificate's amount in dollars.
        """
        user = self._user(user_id)
        value = _dollars(amount, "The amount")
        for number in NEW_CERTIFICATE_NUMBERS:
            method_id = f"certificate_{number}"
            if method_id not in user["payment_methods"]:
                methods = self._user(user_id, write=True)["payment_methods"]
                self.db.set(methods, method_id, {"id": method_id, "amount": value, "source": "certificate"})
                return f"Certificate {method_id} added to user {user_id} with amount {value}."
        raise ToolError("Too many certificates")
