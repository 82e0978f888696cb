"""ServiceAgent-v0, airline generated default: templates, oracle, tau2-exact checks, the policy guard."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.core import info_keys as K
from papergym.core.tool_calls import ToolCall
from papergym.envs.service.airline.templates import TEMPLATES
from papergym.envs.service.service_env import ServiceAgentEnv
from tests.envs.service.oracle_play import (
    assert_oracle_solves,
    assert_templates_cover_both_splits,
    play_oracle,
    task_ids_by_template,
)

PER_TEMPLATE = 2
NO_USER = {"info_flight_status", "info_airport_code", "info_seats"}
"""Templates that only ask about flights or airports (no profile is read)."""


def _env(**kwargs: Any) -> ServiceAgentEnv:
    return gym.make("papergym/ServiceAgent-v0", domain="airline", **kwargs).unwrapped


TASK_IDS = task_ids_by_template(_env(), TEMPLATES, per_template=PER_TEMPLATE)


def _first(template: str) -> str:
    return TASK_IDS[(template, "train")][0]


def _call(action: str) -> dict[str, Any]:
    return json.loads(action[len("<tool_call>") : -len("</tool_call>")])


def test_there_are_at_least_30_templates_and_some_use_values_read_early() -> None:
    assert_templates_cover_both_splits(TEMPLATES, TASK_IDS)


@pytest.mark.parametrize("template", [t.name for t in TEMPLATES])
def test_the_oracle_solves_every_template_in_both_splits(template: str) -> None:
    env = _env()
    for split in ("train", "test"):
        assert_oracle_solves(env, TASK_IDS[(template, split)])


def test_writes_of_every_kind_are_exercised_by_the_templates() -> None:
    env = _env()
    written = {
        a.name
        for (_, split), ids in TASK_IDS.items()
        for task_id in ids
        for a in env.generated_task(split, int(task_id.rsplit("/", 1)[1])).criteria.actions
        if a.name in env._domain().toolkit.WRITE
    }
    assert written == set(env._domain().toolkit.WRITE)


def test_splits_use_disjoint_users() -> None:
    env = _env()
    users: dict[str, set[str]] = {}
    for split in ("train", "test"):
        tasks = [env.generated_task(split, i) for i in range(80)]
        users[split] = {
            t.criteria.actions[0].arguments["user_id"] for t in tasks if t.template not in NO_USER
        }
    assert users["train"] and users["test"] and not users["train"] & users["test"]


def test_the_oracle_reads_ids_and_fares_from_tool_results_not_from_the_task() -> None:
    env = _env()
    for template in ("book_certificate_and_card", "cancel_find_reservation", "change_date_gift_card"):
        env.reset(options={"task_id": _first(template)})
        task = env._s.task
        plan = repr(task.plan)
        gold = json.dumps([a.arguments for a in task.criteria.actions])
        for word in ("credit_card_", "gift_card_", "certificate_"):
            assert word not in plan, (template, word)
        for action in task.criteria.actions:
            rid = action.arguments.get("reservation_id")
            if rid:
                assert rid in gold and rid not in plan, template
        if template == "book_certificate_and_card":
            payment = task.criteria.actions[-1].arguments["payment_methods"]
            assert all(f"'amount': {p['amount']}" not in plan for p in payment)


def test_a_wrong_write_scores_zero_through_the_db_check() -> None:
    def rename(action: str) -> list[str]:
        if "update_reservation_passengers" not in action:
            return [action]
        call = _call(action)
        call["arguments"]["passengers"][0] = {**call["arguments"]["passengers"][0], "dob": "1900-01-01"}
        return [ToolCall(call["name"], call["arguments"]).format()]

    reward, info, actions = play_oracle(_env(), _first("change_passenger"), rename)
    assert any("1900-01-01" in a for a in actions)
    assert reward == 0.0 and info[K.CHECKS]["db"] is False and not info[K.SUCCESS]


def test_an_extra_write_scores_zero_through_the_db_check() -> None:
    def add_certificate(action: str) -> list[str]:
        if "cancel_reservation" not in action:
            return [action]
        env_user = add_certificate.user  # type: ignore[attr-defined]
        return [action, ToolCall("send_certificate", {"user_id": env_user, "amount": 50}).format()]

    env = _env()
    task_id = _first("cancel_recent")
    env.reset(options={"task_id": task_id})
    add_certificate.user = env._s.task.criteria.actions[0].arguments["user_id"]  # type: ignore[attr-defined]
    reward, info, actions = play_oracle(env, task_id, add_certificate)
    assert any("send_certificate" in a for a in actions)
    assert reward == 0.0 and info[K.CHECKS] == {"db": False, "communicate": True}


def test_a_missing_communication_scores_zero() -> None:
    def mute(action: str) -> list[str]:
        return ["Your balance is shown in your profile."] if action.startswith("Your gift card") else [action]

    reward, info, _ = play_oracle(_env(), _first("info_gift_card"), mute)
    assert reward == 0.0 and info[K.CHECKS] == {"db": True, "communicate": False}


def test_a_forbidden_cancellation_is_refused_by_the_guard_and_fails_the_nl_assertion() -> None:
    env = _env()
    task_id = _first("refuse_cancel")
    env.reset(options={"task_id": task_id})
    rid = env._s.task.criteria.actions[-1].arguments["reservation_id"]
    results: list[str] = []

    def try_cancel(action: str) -> list[str]:
        if action.startswith("I'm sorry"):
            return [ToolCall("cancel_reservation", {"reservation_id": rid}).format(), action]
        return [action]

    env.reset(options={"task_id": task_id})
    while True:
        action = env.oracle_action()
        for a in try_cancel(action):
            _, reward, terminated, truncated, info = env.step(a)
            results += info.get(K.TOOL_RESULTS, [])
            if terminated or truncated:
                break
        if terminated or truncated:
            break
    assert any(r.startswith("Error: Policy: this reservation cannot be cancelled") for r in results)
    assert reward == 0.0 and info[K.CHECKS]["nl_assertion"] is False and info[K.CHECKS]["db"] is True


def _run_until(env: ServiceAgentEnv, tool: str) -> None:
    while tool not in env.oracle_action():
        env.step(env.oracle_action())


def test_policy_guard_refuses_writes_before_the_user_is_known_and_on_other_users() -> None:
    env = _env()
    env.reset(options={"task_id": _first("cancel_business")})
    rid = env._s.task.criteria.actions[-1].arguments["reservation_id"]
    _, _, _, _, info = env.step(ToolCall("cancel_reservation", {"reservation_id": rid}).format())
    assert "user id" in info[K.TOOL_RESULTS][0] and env._s.errors == 1 and env._s.db.touched() == set()
    user_id = env._s.task.criteria.actions[0].arguments["user_id"]
    other = next(r for r in env._base()["reservations"].values() if r["user_id"] != user_id)
    _run_until(env, "cancel_reservation")
    _, _, _, _, info = env.step(
        ToolCall("cancel_reservation", {"reservation_id": other["reservation_id"]}).format()
    )
    assert "another user" in info[K.TOOL_RESULTS][0] and env._s.errors == 2
    _, _, _, _, info = env.step(
        ToolCall("send_certificate", {"user_id": other["user_id"], "amount": 100}).format()
    )
    assert "another user" in info[K.TOOL_RESULTS][0] and env._s.db.touched() == set()


@pytest.mark.parametrize(
    ("template", "tool", "change", "message"),
    [
        ("refuse_change_basic_economy", "update_reservation_flights", "flights", "basic economy"),
        ("refuse_remove_bags", "update_reservation_baggages", "bags", "never removed"),
    ],
)
def test_policy_guard_refuses_rule_breaks_the_tools_allow(
    template: str, tool: str, change: str, message: str
) -> None:
    env = _env()
    env.reset(options={"task_id": _first(template)})
    _run_until(env, "I'm sorry")
    base = env._base()
    res = base["reservations"][env._s.task.criteria.actions[-1].arguments["reservation_id"]]
    user = base["users"][res["user_id"]]
    card = next(m["id"] for m in user["payment_methods"].values() if m["source"] == "credit_card")
    if change == "flights":
        seg = res["flights"][0]
        day = "2024-05-29" if seg["date"] != "2024-05-29" else "2024-05-28"
        args = {
            "reservation_id": res["reservation_id"],
            "cabin": res["cabin"],
            "flights": [{"flight_number": seg["flight_number"], "date": day}],
            "payment_id": card,
        }
    else:
        args = {
            "reservation_id": res["reservation_id"],
            "total_baggages": 0,
            "nonfree_baggages": 0,
            "payment_id": card,
        }
    _, _, _, _, info = env.step(ToolCall(tool, args).format())
    assert message in info[K.TOOL_RESULTS][0] and env._s.db.touched() == set()
    loose = _env(enforce_policy=False)
    loose.reset(options={"task_id": _first(template)})
    _run_until(loose, "I'm sorry")
    _, _, _, _, info = loose.step(ToolCall(tool, args).format())
    assert "Policy" not in info[K.TOOL_RESULTS][0]


def test_the_policy_and_tools_reach_the_agent() -> None:
    env = _env()
    obs, info = env.reset(seed=0)
    names = {t["function"]["name"] for t in info[K.TOOLS]}
    assert names == {
        "get_user_details",
        "get_reservation_details",
        "search_direct_flight",
        "search_onestop_flight",
        "list_all_airports",
        "get_flight_status",
        "book_reservation",
        "cancel_reservation",
        "update_reservation_flights",
        "update_reservation_passengers",
        "update_reservation_baggages",
        "send_certificate",
        "calculate",
        "transfer_to_human_agents",
    }
    assert "2024-05-15 15:00:00 EST" in info[K.POLICY] and "book_reservation" in obs
