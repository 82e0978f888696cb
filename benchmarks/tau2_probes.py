"""Probe calls for `tau2_diff`: every agent tool the recorded gold calls leave out, and error cases.

Each domain's probes run in order on one fresh environment (the task id ``probe``: no initialization
actions). The ids name records of the folder the fixture is recorded on: tau2's own retail / airline
``db.json`` (``../shared/tau2/``) and papergym's own telecom folder (``tests/envs/service/fixtures/
tau2_telecom``). Errors probed: unknown records, wrong statuses, bad arguments the schema lets
through, arithmetic that fails and an unknown tool.
"""

from __future__ import annotations

from typing import Any

PROBE_TASK = "probe"
"""The task id of the probe calls (not a task of the folder: no initialization actions)."""

_RETAIL_PENDING = "#W5918442"  # sofia_rossi_8776, items 1725100896 (product 6858788497), 5312063289
_RETAIL_DELIVERED = "#W4817420"  # ava_moore_2033, items 6777246137, 4900661478; paid by gift_card_8168843

_ADDRESS = {
    "address1": "1 Main St",
    "address2": "",
    "city": "Austin",
    "state": "TX",
    "country": "USA",
    "zip": "78701",
}

RETAIL: tuple[tuple[str, dict[str, Any]], ...] = (
    ("list_all_product_types", {}),
    ("get_user_details", {"user_id": "nobody_0000"}),
    ("find_user_id_by_email", {"email": "nobody@example.com"}),
    ("find_user_id_by_name_zip", {"first_name": "Sofia", "last_name": "Rossi", "zip": "00000"}),
    ("get_order_details", {"order_id": "#W0000000"}),
    ("get_order_details", {"order_id": "#W3220387"}),
    ("get_order_details", {"order_id": "#W2611340"}),
    ("get_product_details", {"product_id": "0000000000"}),
    ("get_item_details", {"item_id": "0000000000"}),
    ("calculate", {"expression": "2 * (3 + 4) / 3"}),
    ("calculate", {"expression": "1 / 0"}),
    ("calculate", {"expression": "import os"}),
    ("cancel_pending_order", {"order_id": _RETAIL_DELIVERED, "reason": "no longer needed"}),
    ("cancel_pending_order", {"order_id": _RETAIL_PENDING, "reason": "because"}),
    ("cancel_pending_order", {"order_id": "#W0000000", "reason": "no longer needed"}),
    (
        "return_delivered_order_items",
        {"order_id": _RETAIL_PENDING, "item_ids": ["1725100896"], "payment_method_id": "credit_card_5051208"},
    ),
    (
        "return_delivered_order_items",
        {"order_id": _RETAIL_DELIVERED, "item_ids": ["0000000000"], "payment_method_id": "gift_card_8168843"},
    ),
    (
        "return_delivered_order_items",
        {"order_id": _RETAIL_DELIVERED, "item_ids": ["6777246137"], "payment_method_id": "paypal_0000000"},
    ),
    (
        "exchange_delivered_order_items",
        {
            "order_id": _RETAIL_DELIVERED,
            "item_ids": ["6777246137"],
            "new_item_ids": ["4900661478"],
            "payment_method_id": "gift_card_8168843",
        },
    ),
    (
        "exchange_delivered_order_items",
        {
            "order_id": _RETAIL_PENDING,
            "item_ids": ["1725100896"],
            "new_item_ids": ["1725100896"],
            "payment_method_id": "credit_card_5051208",
        },
    ),
    (
        "modify_pending_order_items",
        {
            "order_id": _RETAIL_PENDING,
            "item_ids": ["1725100896"],
            "new_item_ids": ["0000000000"],
            "payment_method_id": "credit_card_5051208",
        },
    ),
    (
        "modify_pending_order_items",
        {
            "order_id": _RETAIL_PENDING,
            "item_ids": ["1725100896", "5312063289"],
            "new_item_ids": ["1725100896"],
            "payment_method_id": "credit_card_5051208",
        },
    ),
    *(
        ("modify_pending_order_payment", {"order_id": order, "payment_method_id": method})
        for order, method in (
            (_RETAIL_PENDING, "credit_card_5051208"),
            (_RETAIL_PENDING, "paypal_0000000"),
            (_RETAIL_DELIVERED, "gift_card_8168843"),
        )
    ),
    (
        "modify_pending_order_address",
        {"order_id": _RETAIL_DELIVERED, **_ADDRESS},
    ),
    (
        "modify_user_address",
        {"user_id": "nobody_0000", **_ADDRESS},
    ),
    ("no_such_tool", {}),
)

_BOOKING: dict[str, Any] = {
    "user_id": "mia_li_3668",
    "origin": "PHL",
    "destination": "LGA",
    "flight_type": "one_way",
    "cabin": "economy",
    "flights": [{"flight_number": "HAT001", "date": "2024-05-20"}],
    "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
    "payment_methods": [{"payment_id": "credit_card_4421486", "amount": 100}],
    "total_baggages": 0,
    "nonfree_baggages": 0,
    "insurance": "no",
}

AIRLINE: tuple[tuple[str, dict[str, Any]], ...] = (
    ("list_all_airports", {}),
    ("search_direct_flight", {"origin": "PHL", "destination": "LGA", "date": "2024-05-16"}),
    ("search_direct_flight", {"origin": "JFK", "destination": "JFK", "date": "2024-05-16"}),
    ("search_onestop_flight", {"origin": "JFK", "destination": "DFW", "date": "2024-05-16"}),
    ("search_onestop_flight", {"origin": "JFK", "destination": "DFW", "date": "2025-01-01"}),
    *(
        ("get_flight_status", {"flight_number": number, "date": date})
        for number, date in (
            ("HAT001", "2024-05-01"),
            ("HAT004", "2024-05-15"),
            ("HAT002", "2024-05-15"),
            ("HAT001", "2024-05-03"),
            ("HAT009", "2024-05-15"),
            ("HAT001", "2024-05-20"),
            ("HAT999", "2024-05-20"),
            ("HAT001", "2023-01-01"),
        )
    ),
    ("get_user_details", {"user_id": "mia_li_3668"}),
    ("get_user_details", {"user_id": "nobody_0000"}),
    ("get_reservation_details", {"reservation_id": "NO6JO3"}),
    ("get_reservation_details", {"reservation_id": "ZZZZZZ"}),
    ("send_certificate", {"user_id": "mia_li_3668", "amount": 150}),
    ("send_certificate", {"user_id": "nobody_0000", "amount": 150}),
    ("get_user_details", {"user_id": "mia_li_3668"}),
    ("cancel_reservation", {"reservation_id": "ZZZZZZ"}),
    (
        "update_reservation_baggages",
        {"reservation_id": "NO6JO3", "total_baggages": 3, "nonfree_baggages": 1, "payment_id": "paypal_0000"},
    ),
    (
        "update_reservation_passengers",
        {"reservation_id": "NO6JO3", "passengers": []},
    ),
    (
        "update_reservation_flights",
        {
            "reservation_id": "NO6JO3",
            "cabin": "business",
            "flights": [{"flight_number": "HAT999", "date": "2024-05-16"}],
            "payment_id": "credit_card_1955700",
        },
    ),
    ("book_reservation", {**_BOOKING, "flights": [{"flight_number": "HAT001", "date": "2024-05-03"}]}),
    ("book_reservation", {**_BOOKING, "user_id": "nobody_0000"}),
    ("calculate", {"expression": "(1991 + 483) * 0.5"}),
    ("calculate", {"expression": "1 / 0"}),
    ("transfer_to_human_agents", {"summary": "The user wants a refund."}),
    ("no_such_tool", {}),
)

TELECOM: tuple[tuple[str, dict[str, Any]], ...] = (
    ("get_customer_by_id", {"customer_id": "C2001"}),
    ("get_customer_by_id", {"customer_id": "C9999"}),
    ("get_customer_by_name", {"full_name": "Rosa Quint", "dob": "1988-03-09"}),
    ("get_customer_by_name", {"full_name": "Rosa Quint", "dob": "1990-01-01"}),
    ("get_customer_by_phone", {"phone_number": "555-999-9999"}),
    *(("get_details_by_id", {"id": i}) for i in ("D2001", "B2001", "C2001", "P2002", "L2002", "X1")),
    ("suspend_line", {"customer_id": "C2001", "line_id": "L2002", "reason": "travel"}),
    ("suspend_line", {"customer_id": "C2001", "line_id": "L2002", "reason": "travel"}),
    ("resume_line", {"customer_id": "C2001", "line_id": "L2002"}),
    ("resume_line", {"customer_id": "C2001", "line_id": "L2002"}),
    ("suspend_line", {"customer_id": "C2001", "line_id": "L9999", "reason": "travel"}),
    ("suspend_line", {"customer_id": "C9999", "line_id": "L2002", "reason": "travel"}),
    ("disable_roaming", {"customer_id": "C2001", "line_id": "L2001"}),
    ("enable_roaming", {"customer_id": "C2001", "line_id": "L2001"}),
    ("enable_roaming", {"customer_id": "C2001", "line_id": "L2001"}),
    ("disable_roaming", {"customer_id": "C2001", "line_id": "L2001"}),
    ("refuel_data", {"customer_id": "C2001", "line_id": "L2001", "gb_amount": -1.0}),
    ("refuel_data", {"customer_id": "C2001", "line_id": "L9999", "gb_amount": 1.0}),
    ("send_payment_request", {"customer_id": "C2001", "bill_id": "B2001"}),
    ("send_payment_request", {"customer_id": "C2001", "bill_id": "B9999"}),
    ("get_bills_for_customer", {"customer_id": "C9999"}),
    ("get_bills_for_customer", {"customer_id": "C2001"}),
    ("get_data_usage", {"customer_id": "C2001", "line_id": "L2002"}),
    ("get_data_usage", {"customer_id": "C2001", "line_id": "L9999"}),
    ("transfer_to_human_agents", {"summary": "The phone has no service."}),
    ("no_such_tool", {}),
)

PROBES: dict[str, tuple[tuple[str, dict[str, Any]], ...]] = {
    "retail": RETAIL,
    "airline": AIRLINE,
    "telecom": TELECOM,
}
"""Each domain's probe calls (the agent's tools)."""


def probe_calls(domain: str) -> list[dict[str, Any]]:
    """The probe calls of ``domain``, as `tau2_diff` records them (task ``probe``, the agent's)."""
    return [
        {"task": PROBE_TASK, "name": name, "arguments": dict(arguments), "requestor": "assistant"}
        for name, arguments in PROBES[domain]
    ]


def main(argv: list[str] | None = None) -> int:
    """Print a domain's probe calls as JSON."""
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domain", choices=sorted(PROBES), required=True)
    args = parser.parse_args(argv)
    sys.stdout.write(json.dumps(probe_calls(args.domain), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
