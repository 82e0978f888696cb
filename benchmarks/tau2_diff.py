"""Record tau2-bench's tool outputs and diff papergym's against them.

Two steps, each run by its own Python:

1. ``record`` (a Python that imports tau2: ``--tau2`` is a tau2-bench checkout, its ``src/`` is put on
   the path): replays the gold actions of tau2's own tasks on a fresh tau2 environment per task and
   writes every call with tau2's tool-message text::

       python benchmarks/tau2_diff.py record --tau2 /tmp/tau2-src --domain retail \\
           --data ../shared/tau2/retail --tasks 0,5,10 --probes --out retail.json

   ``--probes`` adds the domain's probe calls (`tau2_probes`: every agent tool the gold calls leave out,
   and error cases) on one more fresh environment.

2. ``diff`` (papergym's Python): replays the same calls on papergym's toolkit over the same folder and
   prints each output that differs; exit status 1 if any does::

       python benchmarks/tau2_diff.py diff --domain retail --data ../shared/tau2/retail --recorded retail.json

Telecom (``--domain telecom``, a folder with ``db.toml`` / ``user_db.toml`` and ``tasks.json`` or
``tasks_small.json``): after each task's initialization actions, the phone's read tools and the agent's
reads of the task's customer (`PHONE_READS`), the gold actions (the user's on the phone), a tour of the
phone's write tools (`PHONE_TOUR`), then the reads again.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tau2_probes import PROBE_TASK, probe_calls

TAU2_DB = {"retail": "RetailDB", "airline": "FlightDB", "telecom": "TelecomDB"}
"""The tau2 DB class of each domain (``tau2.domains.<domain>.data_model``)."""
PHONE_READS: tuple[tuple[str, dict[str, Any]], ...] = (
    *((name, {}) for name in ("check_status_bar", "check_network_status", "check_network_mode_preference")),
    *((name, {}) for name in ("run_speed_test", "check_sim_status", "check_data_restriction_status")),
    *((name, {}) for name in ("check_apn_settings", "check_wifi_status", "check_wifi_calling_status")),
    *((name, {}) for name in ("check_vpn_status", "check_installed_apps", "can_send_mms")),
    ("check_payment_request", {}),
    ("check_app_status", {"app_name": "messaging"}),
    ("check_app_permissions", {"app_name": "browser"}),
    ("check_app_status", {"app_name": "camera"}),
)
"""The phone's reads, probed before and after each task's gold actions."""
PHONE_TOUR: tuple[tuple[str, dict[str, Any]], ...] = (
    *((name, {}) for name in ("toggle_wifi", "check_wifi_status", "toggle_wifi", "toggle_wifi_calling")),
    *((name, {}) for name in ("toggle_wifi_calling", "toggle_data_saver_mode", "run_speed_test")),
    *((name, {}) for name in ("toggle_data_saver_mode", "connect_vpn", "connect_vpn", "check_vpn_status")),
    *((name, {}) for name in ("run_speed_test", "disconnect_vpn", "disconnect_vpn", "toggle_roaming")),
    ("toggle_roaming", {}),
    ("set_network_mode_preference", {"mode": "3g_only"}),
    ("run_speed_test", {}),
    ("set_network_mode_preference", {"mode": "4g_5g_preferred"}),
    ("set_apn_settings", {"apn_settings": {"apn_name": "internet"}}),
    ("grant_app_permission", {"app_name": "messaging", "permission": "network"}),
    ("reset_apn_settings", {}),
    ("reboot_device", {}),
    ("toggle_airplane_mode", {}),
    ("toggle_wifi", {}),
    ("toggle_airplane_mode", {}),
    ("make_payment", {}),
)
"""Every write tool of the phone, each state change undone where a toggle allows."""


def _records(data: Path) -> dict[str, dict[str, Any]]:
    task_file = next(data / n for n in ("tasks.json", "tasks_small.json") if (data / n).is_file())
    return {str(r["id"]): r for r in json.loads(task_file.read_text(encoding="utf-8"))}


def _call(task_id: str, name: str, arguments: dict[str, Any], requestor: str) -> dict[str, Any]:
    return {"task": task_id, "name": name, "arguments": arguments, "requestor": requestor}


def _gold_calls(data: Path, task_ids: Sequence[str]) -> list[dict[str, Any]]:
    records = _records(data)
    calls = []
    for task_id in task_ids:
        for action in (records[task_id].get("evaluation_criteria") or {}).get("actions") or []:
            requestor = action.get("requestor") or "assistant"
            calls.append(_call(task_id, action["name"], action.get("arguments") or {}, requestor))
    return calls


def _telecom_calls(env: Any, task_id: str, gold: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The probe sequence of one telecom task (the agent's reads name the customer tau2's env finds):
    the reads, the gold actions, the tour, then the reads whose results the task can change."""
    reads = [_call(task_id, n, a, "user") for n, a in PHONE_READS]
    first: list[dict[str, Any]] = []
    again: list[dict[str, Any]] = []
    phone = env.user_tools.db.surroundings.phone_number
    if phone is not None:
        customer = env.tools.get_customer_by_phone(phone).customer_id
        line = env.tools._get_line_by_phone(phone)
        first = [
            _call(task_id, "get_customer_by_phone", {"phone_number": phone}, "assistant"),
            _call(task_id, "get_details_by_id", {"id": line.plan_id}, "assistant"),
        ]
        again = [
            _call(task_id, "get_details_by_id", {"id": line.line_id}, "assistant"),
            _call(task_id, "get_bills_for_customer", {"customer_id": customer, "limit": 1}, "assistant"),
            _call(task_id, "get_data_usage", {"customer_id": customer, "line_id": line.line_id}, "assistant"),
        ]
    tour = [_call(task_id, n, a, "user") for n, a in PHONE_TOUR]
    return [*reads, *first, *again, *gold, *tour, *(dict(call) for call in (*reads, *again))]


def record(
    tau2: Path, domain: str, data: Path, task_ids: Sequence[str], probes: bool = False
) -> list[dict[str, Any]]:
    """tau2's output for every gold call of ``task_ids`` (a fresh tau2 environment per task), then,
    with ``probes``, for the domain's probe calls (`tau2_probes`) on one more fresh environment."""
    sys.path.insert(0, str(tau2 / "src"))
    env_module = importlib.import_module(f"tau2.domains.{domain}.environment")
    db_class = getattr(importlib.import_module(f"tau2.domains.{domain}.data_model"), TAU2_DB[domain])
    message = importlib.import_module("tau2.data_model.message")
    if domain == "telecom":
        return _record_telecom(env_module, db_class, message, data, task_ids, probes)
    calls = _gold_calls(data, task_ids) + (probe_calls(domain) if probes else [])
    env = None
    current = None
    for i, call in enumerate(calls):
        if call["task"] != current:
            env, current = env_module.get_environment(db=db_class.load(str(data / "db.json"))), call["task"]
        _respond(env, message, i, call)
    return calls


def _respond(env: Any, message: Any, i: int, call: dict[str, Any]) -> None:
    """Run ``call`` on tau2's ``env`` and store its tool-message text and error flag in it."""
    tool_call = message.ToolCall(
        id=str(i), name=call["name"], arguments=call["arguments"], requestor=call["requestor"]
    )
    reply = env.get_response(tool_call)
    call["output"] = reply.content
    call["error"] = bool(reply.error)


def _record_telecom(
    env_module: Any, db_class: Any, message: Any, data: Path, task_ids: Sequence[str], probes: bool
) -> list[dict[str, Any]]:
    user_db = importlib.import_module("tau2.domains.telecom.user_data_model").TelecomUserDB
    env_call = importlib.import_module("tau2.data_model.tasks").EnvFunctionCall
    records = _records(data)
    calls: list[dict[str, Any]] = []
    for task_id in task_ids:
        db, phone = db_class.load(str(data / "db.toml")), user_db.load(str(data / "user_db.toml"))
        env = env_module.get_environment(db=db, user_db=phone)
        for action in (records[task_id].get("initial_state") or {}).get("initialization_actions") or []:
            env.run_env_function_call(env_call(**action))
        task_calls = _telecom_calls(env, task_id, _gold_calls(data, [task_id]))
        for call in task_calls:
            _respond(env, message, len(calls), call)
            calls.append(call)
    if probes:
        db, phone = db_class.load(str(data / "db.toml")), user_db.load(str(data / "user_db.toml"))
        env = env_module.get_environment(db=db, user_db=phone)
        for call in probe_calls("telecom"):
            _respond(env, message, len(calls), call)
            calls.append(call)
    return calls


def replay(domain: str, data: Path, calls: Sequence[dict[str, Any]]) -> list[str]:
    """papergym's output text for each recorded call (a fresh database per task; the probe task has no
    initialization actions)."""
    from papergym.envs.service.db import ServiceDB
    from papergym.envs.service.domains import get_domain
    from papergym.envs.service.tau2_data import load_tau2_folder

    task_set = "default" if (data / "tasks.json").is_file() else "small"
    folder = load_tau2_folder(data, domain, task_set)
    toolkit = get_domain(domain).toolkit
    outputs = []
    tools = None
    current = None
    for call in calls:
        if call["task"] != current:
            tools, current = toolkit(ServiceDB(folder.db)), call["task"]
            task = folder.tasks.get(current) if current != PROBE_TASK else None
            for name, arguments in task.initialization_actions if task is not None else ():
                tools.call(name, arguments, validate=False)
        if call["requestor"] == "user":
            result = tools.call_user(call["name"], call["arguments"])
        else:
            result = tools.call(call["name"], call["arguments"], validate=False)
        outputs.append(result.text)
    return outputs


def diff(domain: str, data: Path, calls: Sequence[dict[str, Any]]) -> list[str]:
    """A unified diff for each call whose papergym output differs from tau2's."""
    problems = []
    for call, ours in zip(calls, replay(domain, data, calls), strict=True):
        if ours != call["output"]:
            head = f"task {call['task']} {call['name']}({json.dumps(call['arguments'])})"
            lines = difflib.unified_diff([call["output"]], [ours], "tau2", "papergym", lineterm="")
            problems.append(head + "\n" + "\n".join(lines))
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record tau2's outputs (needs tau2 importable)")
    rec.add_argument("--tau2", type=Path, required=True, help="a tau2-bench checkout")
    rec.add_argument("--tasks", required=True, help="comma-separated task ids whose gold calls to replay")
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("--probes", action="store_true", help="also record the domain's probe calls")
    dif = sub.add_parser("diff", help="diff papergym's outputs against a recording")
    dif.add_argument("--recorded", type=Path, required=True)
    for p in (rec, dif):
        p.add_argument("--domain", choices=sorted(TAU2_DB), required=True)
        p.add_argument("--data", type=Path, required=True, help="tau2's data/tau2/domains/<domain>/ folder")
    args = parser.parse_args(argv)
    if args.command == "record":
        calls = record(args.tau2, args.domain, args.data, args.tasks.split(","), args.probes)
        args.out.write_text(json.dumps(calls, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        sys.stdout.write(f"recorded {len(calls)} calls to {args.out}\n")
        return 0
    calls = json.loads(args.recorded.read_text(encoding="utf-8"))
    problems = diff(args.domain, args.data, calls)
    sys.stdout.write("\n\n".join(problems) + ("\n" if problems else ""))
    sys.stdout.write(f"{len(problems)} of {len(calls)} outputs differ\n")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
