"""How many of tau2's gold and perturbed trajectories ``tau2_scoring="strict"`` changes (issue 19 item 5).

For every task of a tau2 domain folder, the gold trajectory is what the strict env's oracle plays: tau2's
gold actions verbatim, a confirmation question before each write, then the information to communicate.
Each perturbation edits that action list; every list is replayed on the default env
(``tau2_scoring="exact"``: tau2's own checks) and on the strict one, and the successes are counted:

- ``gold``: unchanged;
- ``gold_unconfirmed``: tau2's gold script as the default oracle plays it (no confirmation questions);
- ``one_confirmation``: tasks with two or more writes, only the first write confirmed;
- ``drop_lookup``: the first gold call of a read tool left out;
- ``drop_handoff``: tasks whose gold transfers to a human, the transfer left out;
- ``extra_handoff``: tasks whose gold does not transfer, a transfer before the closing message;
- ``drop_write``: tasks with a write, the last gold write left out (a control: both settings fail it).

Run: ``PYTHONPATH=. python benchmarks/tau2_strict.py --data ../shared/tau2`` (retail and airline).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

import papergym  # noqa: F401  (registers the ids)
from papergym.core.tool_calls import ToolCall, parse_tool_calls
from papergym.envs.service.domains import get_domain
from papergym.envs.service.evaluation import TRANSFER_TOOL
from papergym.envs.service.oracle_plan import CONFIRM

CONFIRM_PREFIX = CONFIRM.split("{", 1)[0]
HANDOFF = ToolCall(TRANSFER_TOOL, {"summary": "The user asked for a human agent."}).format("tag")


def make_env(domain: str, data: Path, scoring: str) -> Any:
    """The ServiceAgent-v0 env on tau2's ``data`` folder under ``scoring``."""
    return gym.make("papergym/ServiceAgent-v0", domain=domain, tau2_data=data, tau2_scoring=scoring).unwrapped


def tool_name(action: str) -> str | None:
    """The tool an action calls, or None for a message."""
    parsed = parse_tool_calls(action)
    return parsed.calls[0].name if parsed.ok and parsed.calls else None


def oracle_actions(env: Any, task_id: str) -> list[str]:
    """Every action of the env's oracle on ``task_id``, until the episode ends."""
    env.reset(options={"task_id": task_id})
    actions = []
    while True:
        actions.append(env.oracle_action())
        _, _, terminated, truncated, _ = env.step(actions[-1])
        if terminated or truncated:
            return actions


def success(env: Any, task_id: str, actions: Sequence[str]) -> bool:
    """Whether ``actions`` played on ``task_id`` end in success (a list that runs out fails)."""
    env.reset(options={"task_id": task_id})
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return bool(info["success"])
    return False


def _drop(actions: Sequence[str], index: int | None) -> list[str] | None:
    return None if index is None else [a for i, a in enumerate(actions) if i != index]


def _first(actions: Sequence[str], keep: Callable[[str | None], bool], last: bool = False) -> int | None:
    hits = [i for i, a in enumerate(actions) if keep(tool_name(a))]
    return (hits[-1] if last else hits[0]) if hits else None


def perturbations(
    gold: Sequence[str], unconfirmed: Sequence[str], domain: str
) -> dict[str, list[str] | None]:
    """Each perturbation of the strict oracle's ``gold`` actions (None where it does not apply)."""
    toolkit = get_domain(domain).toolkit
    confirms = [i for i, a in enumerate(gold) if a.startswith(CONFIRM_PREFIX)]
    first_confirmed = [a for i, a in enumerate(gold) if i not in confirms[1:]]
    transfers = _first(gold, lambda n: n == TRANSFER_TOOL) is not None
    return {
        "gold": list(gold),
        "gold_unconfirmed": list(unconfirmed),
        "one_confirmation": first_confirmed if len(confirms) > 1 else None,
        "drop_lookup": _drop(gold, _first(gold, lambda n: n in toolkit.READ)),
        "drop_handoff": _drop(gold, _first(gold, lambda n: n == TRANSFER_TOOL)),
        "extra_handoff": None if transfers else [*gold[:-1], HANDOFF, gold[-1]],
        "drop_write": _drop(gold, _first(gold, lambda n: n in toolkit.WRITE, last=True)),
    }


def measure(domain: str, data: Path) -> dict[str, tuple[int, int, int, int]]:
    """Per perturbation: (trajectories, exact successes, strict successes, successes that differ)."""
    exact, strict = make_env(domain, data, "exact"), make_env(domain, data, "strict")
    rows: dict[str, list[int]] = {}
    for task_id in exact._loaded().tasks:
        gold, unconfirmed = oracle_actions(strict, task_id), oracle_actions(exact, task_id)
        for name, actions in perturbations(gold, unconfirmed, domain).items():
            row = rows.setdefault(name, [0, 0, 0, 0])
            if actions is None:
                continue
            a, b = success(exact, task_id, actions), success(strict, task_id, actions)
            row[0] += 1
            row[1] += a
            row[2] += b
            row[3] += a != b
    return {name: (n, a, b, c) for name, (n, a, b, c) in rows.items()}


def main() -> None:
    """Print one markdown table per domain."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--data", type=Path, default=Path("../shared/tau2"), help="holds retail/ and airline/"
    )
    parser.add_argument("--domains", nargs="+", default=["retail", "airline"])
    args = parser.parse_args()
    print("| domain | trajectories | n | exact successes | strict successes | changed |")
    print("|---|---|---|---|---|---|")
    for domain in args.domains:
        for name, (n, a, b, c) in measure(domain, args.data / domain).items():
            print(f"| {domain} | {name} | {n} | {a} | {b} | {c} |")


if __name__ == "__main__":
    main()
