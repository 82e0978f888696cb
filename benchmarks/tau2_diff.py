"""Record tau2-bench's tool outputs and diff papergym's against them.

Two steps, each run by its own Python:

1. ``record`` (a Python that imports tau2: ``--tau2`` is a tau2-bench checkout, its ``src/`` is put on
   the path): replays the gold actions of tau2's own tasks on a fresh tau2 environment per task and
   writes every call with tau2's tool-message text::

       python benchmarks/tau2_diff.py record --tau2 /tmp/tau2-src --domain retail \\
           --data ../shared/tau2/retail --tasks 0,5,10 --out retail.json

2. ``diff`` (papergym's Python): replays the same calls on papergym's toolkit over the same folder and
   prints each output that differs; exit status 1 if any does::

       python benchmarks/tau2_diff.py diff --domain retail --data ../shared/tau2/retail --recorded retail.json
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

TAU2_DB = {"retail": "RetailDB", "airline": "FlightDB"}
"""The tau2 DB class of each domain (``tau2.domains.<domain>.data_model``)."""


def _gold_calls(data: Path, task_ids: Sequence[str]) -> list[dict[str, Any]]:
    records = {str(r["id"]): r for r in json.loads((data / "tasks.json").read_text(encoding="utf-8"))}
    calls = []
    for task_id in task_ids:
        for action in (records[task_id].get("evaluation_criteria") or {}).get("actions") or []:
            calls.append(
                {
                    "task": task_id,
                    "name": action["name"],
                    "arguments": action.get("arguments") or {},
                    "requestor": action.get("requestor") or "assistant",
                }
            )
    return calls


def record(tau2: Path, domain: str, data: Path, task_ids: Sequence[str]) -> list[dict[str, Any]]:
    """tau2's output for every gold call of ``task_ids`` (a fresh tau2 environment per task)."""
    sys.path.insert(0, str(tau2 / "src"))
    env_module = importlib.import_module(f"tau2.domains.{domain}.environment")
    db_class = getattr(importlib.import_module(f"tau2.domains.{domain}.data_model"), TAU2_DB[domain])
    message = importlib.import_module("tau2.data_model.message")
    calls = _gold_calls(data, task_ids)
    env = None
    current = None
    for i, call in enumerate(calls):
        if call["task"] != current:
            env, current = env_module.get_environment(db=db_class.load(str(data / "db.json"))), call["task"]
        tool_call = message.ToolCall(
            id=str(i), name=call["name"], arguments=call["arguments"], requestor=call["requestor"]
        )
        reply = env.get_response(tool_call)
        call["output"] = reply.content
        call["error"] = bool(reply.error)
    return calls


def replay(domain: str, data: Path, calls: Sequence[dict[str, Any]]) -> list[str]:
    """papergym's output text for each recorded call (a fresh database per task)."""
    from papergym.envs.service.db import ServiceDB
    from papergym.envs.service.domains import get_domain
    from papergym.envs.service.tau2_data import load_tau2_folder

    base = load_tau2_folder(data, domain).db
    toolkit = get_domain(domain).toolkit
    outputs = []
    tools = None
    current = None
    for call in calls:
        if call["task"] != current:
            tools, current = toolkit(ServiceDB(base)), call["task"]
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
    dif = sub.add_parser("diff", help="diff papergym's outputs against a recording")
    dif.add_argument("--recorded", type=Path, required=True)
    for p in (rec, dif):
        p.add_argument("--domain", choices=sorted(TAU2_DB), required=True)
        p.add_argument("--data", type=Path, required=True, help="tau2's data/tau2/domains/<domain>/ folder")
    args = parser.parse_args(argv)
    if args.command == "record":
        calls = record(args.tau2, args.domain, args.data, args.tasks.split(","))
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
