"""The airline tools' semantics on hand-made databases, and the tau2 folder loader on a generated folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.core import info_keys as K
from papergym.core.tool_calls import ToolCall
from papergym.envs.service.airline.policy import AIRLINE_POLICY
from papergym.envs.service.airline.tools import AirlineTools
from papergym.envs.service.db import ServiceDB


def _available(seats: int, prices: tuple[int, int, int]) -> dict[str, Any]:
    cabins = ("basic_economy", "economy", "business")
    return {
        "status": "available",
        "available_seats": dict.fromkeys(cabins, seats),
        "prices": dict(zip(cabins, prices, strict=True)),
    }


def _db() -> dict[str, Any]:
    """Two flights PHL -> LGA -> LAX, one user with a card, a gift card and a certificate, a reservation."""
    return {
        "flights": {
            "HAT001": {
                "flight_number": "HAT001",
                "origin": "PHL",
                "destination": "LGA",
                "scheduled_departure_time_est": "06:00:00",
                "scheduled_arrival_time_est": "07:00:00",
                "dates": {
                    "2024-05-14": {"status": "cancelled"},
                    "2024-05-16": _available(10, (87, 122, 471)),
                    "2024-05-17": _available(1, (90, 130, 500)),
                },
            },
            "HAT002": {
                "flight_number": "HAT002",
                "origin": "LGA",
                "destination": "LAX",
                "scheduled_departure_time_est": "08:00:00",
                "scheduled_arrival_time_est": "11:00:00",
                "dates": {"2024-05-16": _available(5, (100, 150, 600))},
            },
        },
        "users": {
            "mia_li_3668": {
                "user_id": "mia_li_3668",
                "name": {"first_name": "Mia", "last_name": "Li"},
                "address": {
                    "address1": "1 Main St",
                    "address2": "",
                    "city": "Austin",
                    "country": "USA",
                    "state": "TX",
                    "zip": "78750",
                },
                "email": "mia@example.com",
                "dob": "1990-04-05",
                "payment_methods": {
                    "credit_card_1": {
                        "source": "credit_card",
                        "brand": "visa",
                        "last_four": "7447",
                        "id": "credit_card_1",
                    },
                    "gift_card_2": {"source": "gift_card", "amount": 200, "id": "gift_card_2"},
                    "certificate_3": {"source": "certificate", "amount": 100, "id": "certificate_3"},
                },
                "saved_passengers": [],
                "membership": "gold",
                "reservations": ["4WQ150"],
            }
        },
        "reservations": {
            "4WQ150": {
                "reservation_id": "4WQ150",
                "user_id": "mia_li_3668",
                "origin": "PHL",
                "destination": "LGA",
                "flight_type": "one_way",
                "cabin": "economy",
                "flights": [
                    {
                        "origin": "PHL",
                        "destination": "LGA",
                        "flight_number": "HAT001",
                        "date": "2024-05-16",
                        "price": 110,
                    }
                ],
                "passengers": [
                    {"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"},
                    {"first_name": "Raj", "last_name": "Smith", "dob": "1967-04-01"},
                ],
                "payment_history": [{"payment_id": "credit_card_1", "amount": 220}],
                "created_at": "2024-05-10T10:00:00",
                "total_baggages": 1,
                "nonfree_baggages": 0,
                "insurance": "no",
                "status": None,
            }
        },
    }


ME = {"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}


def _tools() -> AirlineTools:
    return AirlineTools(ServiceDB(_db()))


def _book(tools: AirlineTools, **changes: Any) -> Any:
    args = {
        "user_id": "mia_li_3668",
        "origin": "PHL",
        "destination": "LAX",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [
            {"flight_number": "HAT001", "date": "2024-05-16"},
            {"flight_number": "HAT002", "date": "2024-05-16"},
        ],
        "passengers": [ME],
        "payment_methods": [{"payment_id": "credit_card_1", "amount": 272}],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": "no",
        **changes,
    }
    return tools.call("book_reservation", args)


def test_booking_charges_the_payment_methods_and_takes_seats() -> None:
    tools = _tools()
    result = _book(
        tools,
        passengers=[ME, {"first_name": "Raj", "last_name": "Smith", "dob": "1967-04-01"}],
        insurance="yes",
        nonfree_baggages=1,
        total_baggages=5,
        # (122 + 150) * 2 + 30 * 2 + 50 = 654
        payment_methods=[
            {"payment_id": "certificate_3", "amount": 100},
            {"payment_id": "gift_card_2", "amount": 200},
            {"payment_id": "credit_card_1", "amount": 354.0},
        ],
    )
    assert not result.error, result.text
    res = result.value
    assert res["reservation_id"] == "HATHAT" and res["created_at"] == "2024-05-15T15:00:00"
    assert [f["price"] for f in res["flights"]] == [122, 150]
    assert res["payment_history"][-1] == {"payment_id": "credit_card_1", "amount": 354}
    assert isinstance(res["payment_history"][-1]["amount"], int)
    user = tools.db.get("users", "mia_li_3668")
    assert user["payment_methods"]["gift_card_2"]["amount"] == 0
    assert "certificate_3" not in user["payment_methods"]  # a certificate is used up whole
    assert user["reservations"] == ["4WQ150", "HATHAT"]
    assert tools.db.get("flights", "HAT001")["dates"]["2024-05-16"]["available_seats"]["economy"] == 8
    assert tools.db.get("flights", "HAT002")["dates"]["2024-05-16"]["available_seats"]["economy"] == 3
    assert tools.db.get("flights", "HAT002")["dates"]["2024-05-16"]["available_seats"]["business"] == 5
    assert (
        _book(tools, payment_methods=[{"payment_id": "credit_card_1", "amount": 272}]).value["reservation_id"]
        == "HATHAU"
    )


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        (
            {"payment_methods": [{"payment_id": "credit_card_1", "amount": 271}]},
            "does not add up, total price is 272",
        ),
        ({"payment_methods": [{"payment_id": "credit_card_9", "amount": 272}]}, "credit_card_9 not found"),
        (
            {"cabin": "business", "payment_methods": [{"payment_id": "gift_card_2", "amount": 1071}]},
            "Not enough balance",
        ),
        (
            {"flights": [{"flight_number": "HAT001", "date": "2024-05-14"}]},
            "not available on date 2024-05-14",
        ),
        (
            {"flights": [{"flight_number": "HAT001", "date": "2024-05-17"}], "passengers": [ME, ME]},
            "Not enough seats",
        ),
        ({"flights": [{"flight_number": "HAT009", "date": "2024-05-16"}]}, "Flight HAT009 not found"),
        ({"user_id": "nobody"}, "User nobody not found"),
    ],
)
def test_a_failing_booking_leaves_the_database_unchanged(changes: dict[str, Any], error: str) -> None:
    tools = _tools()
    before = tools.db.to_dict()
    result = _book(tools, **changes)
    assert result.error and error in result.text
    assert tools.db.to_dict() == before


def test_cancellation_refunds_every_payment_and_keeps_the_seats_as_tau2() -> None:
    tools = _tools()
    res = tools.call("cancel_reservation", {"reservation_id": "4WQ150"}).value
    assert res["status"] == "cancelled"
    assert res["payment_history"] == [
        {"payment_id": "credit_card_1", "amount": 220},
        {"payment_id": "credit_card_1", "amount": -220},
    ]
    assert tools.db.get("flights", "HAT001")["dates"]["2024-05-16"]["available_seats"]["economy"] == 10
    assert (
        tools.call("cancel_reservation", {"reservation_id": "NOPE"}).text
        == "Error: Reservation NOPE not found"
    )


def test_flight_changes_keep_old_prices_reprice_on_a_cabin_change_and_settle_the_difference() -> None:
    tools = _tools()
    kept = tools.call(
        "update_reservation_flights",
        {
            "reservation_id": "4WQ150",
            "cabin": "economy",
            "flights": [{"flight_number": "HAT001", "date": "2024-05-16"}],
            "payment_id": "gift_card_2",
        },
    ).value
    assert kept["flights"][0]["price"] == 110 and len(kept["payment_history"]) == 1  # nothing to pay
    upgraded = tools.call(
        "update_reservation_flights",
        {
            "reservation_id": "4WQ150",
            "cabin": "business",
            "flights": [{"flight_number": "HAT001", "date": "2024-05-16"}],
            "payment_id": "credit_card_1",
        },
    ).value
    assert upgraded["cabin"] == "business" and upgraded["flights"][0]["price"] == 471
    assert upgraded["payment_history"][-1] == {"payment_id": "credit_card_1", "amount": (471 - 110) * 2}
    down = tools.call(
        "update_reservation_flights",
        {
            "reservation_id": "4WQ150",
            "cabin": "economy",
            "flights": [{"flight_number": "HAT001", "date": "2024-05-16"}],
            "payment_id": "gift_card_2",
        },
    ).value
    assert down["payment_history"][-1] == {"payment_id": "gift_card_2", "amount": (122 - 471) * 2}
    assert tools.db.get("users", "mia_li_3668")["payment_methods"]["gift_card_2"]["amount"] == 200 + 698


def test_flight_changes_refuse_certificates_and_short_gift_cards() -> None:
    tools = _tools()
    before = tools.db.to_dict()
    args = {
        "reservation_id": "4WQ150",
        "cabin": "business",
        "flights": [{"flight_number": "HAT001", "date": "2024-05-16"}],
        "payment_id": "certificate_3",
    }
    assert "Certificate cannot be used" in tools.call("update_reservation_flights", args).text
    assert (
        "balance is not enough"
        in tools.call("update_reservation_flights", {**args, "payment_id": "gift_card_2"}).text
    )
    assert tools.db.to_dict() == before


def test_baggage_passengers_certificates_and_reads() -> None:
    tools = _tools()
    bags = tools.call(
        "update_reservation_baggages",
        {
            "reservation_id": "4WQ150",
            "total_baggages": 9,
            "nonfree_baggages": 3,
            "payment_id": "credit_card_1",
        },
    ).value
    assert (bags["total_baggages"], bags["nonfree_baggages"]) == (9, 3)
    assert bags["payment_history"][-1] == {"payment_id": "credit_card_1", "amount": 150}
    free = tools.call(
        "update_reservation_baggages",
        {
            "reservation_id": "4WQ150",
            "total_baggages": 9,
            "nonfree_baggages": 3,
            "payment_id": "credit_card_1",
        },
    ).value
    assert len(free["payment_history"]) == 2  # no new non-free bag: no payment
    assert (
        "does not match"
        in tools.call("update_reservation_passengers", {"reservation_id": "4WQ150", "passengers": [ME]}).text
    )
    sent = [tools.call("send_certificate", {"user_id": "mia_li_3668", "amount": 150}).text for _ in range(4)]
    assert sent[0] == "Certificate certificate_3221322 added to user mia_li_3668 with amount 150."
    assert "certificate_3221324" in sent[2] and sent[3] == "Error: Too many certificates"
    assert (
        tools.call("get_flight_status", {"flight_number": "HAT001", "date": "2024-05-14"}).text == "cancelled"
    )
    direct = tools.call(
        "search_direct_flight", {"origin": "PHL", "destination": "LGA", "date": "2024-05-16"}
    ).value
    assert [(f["flight_number"], f["date"], f["prices"]["economy"]) for f in direct] == [
        ("HAT001", None, 122)
    ]
    pairs = tools.call(
        "search_onestop_flight", {"origin": "PHL", "destination": "LAX", "date": "2024-05-16"}
    ).value
    assert [[(f["flight_number"], f["date"]) for f in p] for p in pairs] == [
        [("HAT001", "2024-05-16"), ("HAT002", "2024-05-16")]
    ]
    assert len(tools.call("list_all_airports", {}).value) == 20
    assert tools.call("calculate", {"expression": "(122 + 150) * 2"}).text == "544.0"


# ---------------------------------------------------------------------- tau2 folder
def _tau2_record(task: Any) -> dict[str, Any]:
    """A generated task written as a tau2 ``tasks.json`` entry."""
    ins = task.instructions
    return {
        "id": task.id.replace("/", "_"),
        "description": {"purpose": task.template},
        "user_scenario": {
            "persona": None,
            "instructions": {
                "domain": "airline",
                "reason_for_call": ins.reason_for_call,
                "known_info": ins.known_info,
                "unknown_info": ins.unknown_info,
                "task_instructions": ins.task_instructions,
            },
        },
        "initial_state": None,
        "evaluation_criteria": {
            "actions": [
                {"action_id": a.action_id, "name": a.name, "arguments": a.arguments, "info": None}
                for a in task.criteria.actions
            ],
            "communicate_info": task.criteria.communicate_info,
            "nl_assertions": task.criteria.nl_assertions,
            "reward_basis": ["DB", "COMMUNICATE"],
        },
    }


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = gym.make("papergym/ServiceAgent-v0", domain="airline").unwrapped
    tasks = [env.generated_task(split, i) for split in ("train", "test") for i in range(12)]
    path = tmp_path_factory.mktemp("tau2_airline")
    (path / "db.json").write_text(json.dumps(env._base()), encoding="utf-8")
    records = [_tau2_record(t) for t in tasks]
    (path / "tasks.json").write_text(json.dumps(records), encoding="utf-8")
    ids = [r["id"] for r in records]
    splits = {"train": ids[:12], "test": ids[12:], "base": ids}
    (path / "split_tasks.json").write_text(json.dumps(splits), encoding="utf-8")
    (path / "policy.md").write_text(AIRLINE_POLICY, encoding="utf-8")
    return path


def test_a_tau2_format_airline_folder_loads_and_its_gold_scores_one(folder: Path) -> None:
    env = gym.make("papergym/ServiceAgent-v0", domain="airline", tau2_data=folder).unwrapped
    assert env.splits == ("train", "test") and not env.enforce_policy
    ids = json.loads((folder / "split_tasks.json").read_text())["base"]
    for task_id in ids:
        _, info = env.reset(options={"task_id": task_id})
        assert info[K.POLICY] == AIRLINE_POLICY
        while True:
            _, reward, terminated, truncated, info = env.step(env.oracle_action())
            if terminated or truncated:
                break
        assert reward == 1.0 and info[K.CHECKS] == {"db": True, "communicate": True}, task_id


def test_a_wrong_write_on_tau2_data_fails_the_db_check(folder: Path) -> None:
    env = gym.make("papergym/ServiceAgent-v0", domain="airline", tau2_data=folder).unwrapped
    records = json.loads((folder / "tasks.json").read_text())
    task_id = next(
        r["id"]
        for r in records
        if any(a["name"] == "cancel_reservation" for a in r["evaluation_criteria"]["actions"])
    )
    gold = next(r for r in records if r["id"] == task_id)["evaluation_criteria"]["actions"]
    user_id = gold[0]["arguments"]["user_id"]
    env.reset(options={"task_id": task_id})
    swapped = False
    while True:
        action = env.oracle_action()
        if "cancel_reservation" in action and not swapped:  # a wrong write in place of the gold one
            env.step(ToolCall("send_certificate", {"user_id": user_id, "amount": 100}).format())
            swapped = True
            action = "I have sent you a certificate instead. ###STOP###"
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert reward == 0.0 and info[K.CHECKS]["db"] is False


TAU2_AIRLINE = Path(__file__).resolve().parents[4] / "shared" / "tau2" / "airline"


@pytest.mark.skipif(
    not (TAU2_AIRLINE / "tasks.json").is_file(),
    reason=f"tau2's airline data is not at {TAU2_AIRLINE} (copy tau2's data/tau2/domains/airline/ there)",
)
def test_tau2s_own_airline_tasks_load_and_their_gold_calls_fit_the_tool_schemas() -> None:
    from papergym.envs.service.tau2_data import load_tau2_folder

    loaded = load_tau2_folder(TAU2_AIRLINE, "airline")
    assert len(loaded.tasks) == 50 and len(loaded.splits["base"]) == 50
    schemas = AirlineTools.tools()
    problems = [
        (task.id, a.name, schemas[a.name].validate(a.arguments))
        for task in loaded.tasks.values()
        for a in task.criteria.actions
        if schemas[a.name].validate(a.arguments) is not None
    ]
    assert problems == []
