"""ServiceAgent-v0, telecom: the user's phone, templates and the oracle, tau2 TOML data, provenance."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.core import info_keys as K
from papergym.envs.service.evaluation import evaluate
from papergym.envs.service.service_env import ServiceAgentEnv
from papergym.envs.service.telecom import TelecomTools
from papergym.envs.service.telecom.data import generate_telecom_db, load_telecom_toml
from papergym.envs.service.telecom.templates import TEMPLATES
from papergym.envs.service.telecom.user import device_requests
from tests.envs.service.oracle_play import (
    assert_templates_cover_both_splits,
    play_oracle,
    task_ids_by_template,
)

FIXTURE = Path(__file__).parent / "fixtures" / "tau2_telecom"


def _env(**kwargs: Any) -> ServiceAgentEnv:
    return gym.make("papergym/ServiceAgent-v0", domain="telecom", **kwargs).unwrapped


TASK_IDS = task_ids_by_template(_env(), TEMPLATES, per_template=1)


def test_templates_count_and_coverage() -> None:
    assert_templates_cover_both_splits(TEMPLATES, TASK_IDS)


@pytest.mark.parametrize("template", [t.name for t in TEMPLATES])
def test_oracle_solves_every_template_in_both_splits_and_fails_one_action_short(template: str) -> None:
    env = _env()
    for split in ("train", "test"):
        task_id = TASK_IDS[(template, split)][0]
        reward, info, actions = play_oracle(env, task_id)
        assert reward == 1.0 and info[K.SUCCESS] and all(info[K.CHECKS].values()), (task_id, info)
        env.reset(options={"task_id": task_id})
        assert not env.success_check()
        # The planted faults break the goal: the checks fail on the state at reset.
        s = env._s
        outcome = evaluate(
            s.task, toolkit=TelecomTools, base=env._base(), final=s.db, events=[], stopped=True, judge=None
        )
        assert outcome.reward == 0.0, task_id
        for action in actions[:-1]:
            env.step(action)
        assert not env.success_check()


def _without(skip: str) -> Any:
    def edit(action: str) -> list[str]:
        return ["Thanks, one moment."] if action == skip else [action]

    return edit


@pytest.mark.parametrize(
    ("template", "skip"),
    [
        ("service:airplane+sim_missing", "Please re-seat your SIM card."),
        ("service:apn_broken", "Please restart your phone."),
        ("data:data_off+data_saver", "Please turn off data saver."),
        ("mms:wifi_calling_mms+no_sms_permission", "Please grant the messaging app the sms permission."),
    ],
)
def test_skipping_one_device_fix_fails(template: str, skip: str) -> None:
    reward, info, actions = play_oracle(_env(), TASK_IDS[(template, "train")][0], _without(skip))
    assert "Thanks, one moment." in actions and reward == 0.0 and not info[K.SUCCESS]


def test_a_wrong_account_write_fails() -> None:
    env = _env()
    task_id = TASK_IDS[("data:roaming_line", "train")][0]

    def edit(action: str) -> list[str]:
        if "enable_roaming" in action:  # the oracle's write, then a wrong suspension of the same line
            return [
                action,
                action.replace("enable_roaming", "suspend_line").replace("}}", ', "reason": "x"}}'),
            ]
        return [action]

    reward, _, actions = play_oracle(env, task_id, edit)
    assert any("suspend_line" in a for a in actions) and reward == 0.0


def test_the_agent_cannot_call_device_tools_and_the_user_reports_the_phone() -> None:
    env = _env()
    env.reset(options={"task_id": TASK_IDS[("service:airplane", "train")][0]})
    obs, *_, info = env.step('<tool_call>{"name": "toggle_airplane_mode", "arguments": {}}</tool_call>')
    assert "Tool 'toggle_airplane_mode' not found." in obs and info[K.INVALID_ACTION]
    obs, *_ = env.step("Please check your status bar.")
    assert "Airplane Mode" in obs
    obs, *_ = env.step("Please toggle airplane mode.")
    assert "Airplane Mode is now OFF" in obs and "5G" in obs
    assert [e["name"] for e in env._s.events if e["kind"] == "device"] == [
        "check_status_bar",
        "toggle_airplane_mode",
    ]


def test_device_requests_reads_words_and_tool_names() -> None:
    names = TelecomTools.USER
    assert device_requests("Please set your network mode to 4g_only, then run a speed test.", names) == [
        ("set_network_mode_preference", {"mode": "4g_only"}),
        ("run_speed_test", {}),
    ]
    assert device_requests("Please grant the messaging app the storage permission.", names) == [
        ("grant_app_permission", {"app_name": "messaging", "permission": "storage"})
    ]
    assert device_requests("Please do this on your phone: toggle_data().", names) == [("toggle_data", {})]
    assert device_requests("Your phone can send MMS messages again.", names) == []


def test_generated_db_is_deterministic_and_splits_are_disjoint() -> None:
    assert generate_telecom_db(5) == generate_telecom_db(5)
    env = _env()
    customers = defaultdict(set)
    for split in ("train", "test"):
        for i in range(40):
            crit = env.generated_task(split, i).criteria
            customers[split] |= {
                a.arguments["customer_id"] for a in crit.env_assertions if "customer_id" in a.arguments
            }
    assert customers["train"] and customers["test"] and not customers["train"] & customers["test"]


# ---------------------------------------------------------------------- tau2 TOML data
def test_toml_loader_reads_tau2_schema() -> None:
    db = load_telecom_toml(FIXTURE)
    assert db["customers"]["C2001"]["line_ids"] == ["L2001", "L2002"]
    assert db["customers"]["C2001"]["address"]["zip_code"] == "97000"
    assert [i["amount"] for i in db["bills"]["B2001"]["line_items"]] == [30.0, 90.0]
    assert db["plans"]["P2002"]["data_refueling_price_per_gb"] == 0.5
    phone = db["device"]["phone"]
    assert (
        phone["battery_level"] == 55
        and phone["active_apn_settings"]["mmsc_url"] == "http://mms.example.net/mms"
    )
    assert phone["active_apn_settings"]["reset_at_reboot"] is False  # filled from tau2's defaults


def test_tau2_fixture_tasks_load_and_replay() -> None:
    env = _env(tau2_data=FIXTURE)
    assert env.splits == ("train", "test")
    _, info = env.reset(options={"task_id": "[service]overdue_bill"})
    assert "Telecom test policy" in info[K.POLICY]
    ids = [
        "[mobile_data]data_off",
        "[service]airplane_mode",
        "[service]overdue_bill",
        "[mobile_data]abroad_roaming",
        "[mobile_data]data_refuel",
    ]
    for task_id in ids:
        reward, info, actions = play_oracle(env, task_id)
        assert reward == 1.0 and info[K.SUCCESS], (task_id, info, actions)
    # The user's own gold actions are asked of the user and run on the phone.
    reward, info, actions = play_oracle(env, "[service]overdue_bill")
    assert "Please do this on your phone: make_payment()." in actions
    devices = [e["name"] for e in env._s.events if e["kind"] == "device"]
    assert devices == ["make_payment", "reboot_device"]
    # Skipping the user's reboot leaves the phone without service.
    reward, info, _ = play_oracle(
        env, "[service]overdue_bill", _without("Please do this on your phone: reboot_device().")
    )
    assert reward == 0.0


def test_provenance_binds_late_account_writes_to_early_lookups() -> None:
    env = _env()
    env.reset(options={"task_id": TASK_IDS[("data:roaming_line+data_exceeded", "train")][0]})
    records = []
    done = False
    while not done:
        action = env.oracle_action()
        _, _, terminated, truncated, info = env.step(action)
        records.append((action, info[K.PROVENANCE]))
        done = terminated or truncated
    lookup = next(i for i, (a, _) in enumerate(records) if "get_customer_by_phone" in a)
    assert records[lookup][1]["sources"] == [{"kind": "user", "turn": 1, "elicited_by": lookup - 1}]
    refuel_step, refuel = next((i, r) for i, (a, r) in enumerate(records) if "refuel_data" in a)
    bound = {b["argument"]: b["source"] for b in refuel["bindings"]}
    assert bound["customer_id"] == {"kind": "tool", "step": lookup}  # the earliest, most comprehensive source
    assert refuel_step - lookup >= 5
    assert not refuel["error"] and refuel["repeats"] is None


def test_device_model_user_operates_its_phone() -> None:
    from papergym.envs.service.telecom.user import DeviceModelUser
    from tests.backends.scripted import ScriptedChat

    chat = ScriptedChat(
        "My phone says no service.",
        '<tool_call>{"name": "toggle_airplane_mode", "arguments": {}}</tool_call>',
        "Done: airplane mode is off and I have 5G now.",
    )
    env = _env(user=DeviceModelUser(chat))
    obs, _ = env.reset(options={"task_id": TASK_IDS[("service:airplane", "train")][0]})
    assert (
        obs.endswith("My phone says no service.")
        and "toggle_airplane_mode" in chat.calls[0]["messages"][0]["content"]
    )
    obs, *_ = env.step("Please toggle airplane mode.")
    assert obs == "Done: airplane mode is off and I have 5G now."
    assert [e["name"] for e in env._s.events if e["kind"] == "device"] == ["toggle_airplane_mode"]
    assert (
        "[your phone] toggle_airplane_mode: Airplane Mode is now OFF." in chat.last["messages"][-1]["content"]
    )
    assert env._s.db.get("device", "phone")["airplane_mode"] is False


TAU2_TELECOM = os.environ.get("PAPERGYM_TAU2_TELECOM", "")


@pytest.mark.skipif(
    not TAU2_TELECOM,
    reason="set PAPERGYM_TAU2_TELECOM to a tau2 telecom folder (db.toml, user_db.toml, tasks.json, "
    "tasks_small.json and / or tasks_full.json, split_tasks.json, main_policy.md) to replay tau2's own tasks",
)
@pytest.mark.parametrize("task_set", ["default", "small", "full"])
def test_tau2_telecom_gold_replays_succeed(task_set: str) -> None:
    from papergym.envs.service.tau2_data import TASK_FILES

    if not (Path(TAU2_TELECOM) / TASK_FILES[task_set]).is_file():
        pytest.skip(f"{TAU2_TELECOM} has no {TASK_FILES[task_set]}")
    env = _env(tau2_data=TAU2_TELECOM, tau2_task_set=task_set)
    from papergym.envs.service.service_env import _tau2

    failed = []
    for task_id in _tau2(TAU2_TELECOM, "telecom", task_set).tasks:
        reward, info, _ = play_oracle(env, task_id)
        if reward != 1.0:
            failed.append((task_id, info[K.CHECKS]))
    assert not failed
