"""``tau2_scoring="strict"``: tau2's own data scored beyond tau2 (gold actions, handoffs, confirmations).

The trajectory counts are those of ``benchmarks/tau2_strict.py`` (reported in benchmarks/README.md); the
expected numbers are derived here from the task files and a gold replay, not copied from its output.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.backends.protocols import Message
from papergym.core import info_keys as K
from papergym.envs.service.db import ServiceDB
from papergym.envs.service.domains import get_domain
from papergym.envs.service.evaluation import TRANSFER_TOOL, affirms, confirmed_mutations
from papergym.envs.service.tau2_data import load_tau2_folder
from papergym.envs.service.user import ScriptedUser

ROOT = Path(__file__).resolve().parents[3]
TAU2 = ROOT.parent / "shared" / "tau2"
sys.path.insert(0, str(ROOT / "benchmarks"))

import tau2_strict  # noqa: E402

DOMAINS = ("retail", "airline")


def _data(domain: str) -> Path:
    data = TAU2 / domain
    if not (data / "tasks.json").is_file():
        pytest.skip(f"tau2's {domain} data is not at {data} (copy tau2's data/tau2/domains/{domain}/ there)")
    return data


def _tool(name: str, error: bool = False) -> dict[str, Any]:
    return {"kind": "tool", "name": name, "arguments": {}, "result": "", "error": error}


def _agent(text: str) -> dict[str, Any]:
    return {"kind": "agent", "text": text}


def _user(text: str) -> dict[str, Any]:
    return {"kind": "user", "text": text}


WRITES = ("cancel_pending_order",)


def test_tau2_exact_stays_the_default_and_strict_needs_tau2_data() -> None:
    env = gym.make("papergym/ServiceAgent-v0", domain="retail").unwrapped
    assert env.tau2_scoring == "exact"
    with pytest.raises(ValueError, match="pass tau2_data"):
        gym.make("papergym/ServiceAgent-v0", domain="retail", tau2_scoring="strict")
    with pytest.raises(ValueError, match="tau2_scoring must be"):
        gym.make("papergym/ServiceAgent-v0", domain="retail", tau2_scoring="lenient")


def test_a_user_confirmation_is_a_yes_to_a_question_and_covers_one_mutation() -> None:
    assert affirms("Yes, please go ahead.") and affirms("ok, proceed")
    assert not affirms("No, please do not do that.") and not affirms("My email is a@b.com.")
    ask, yes = _agent("Shall I cancel order #W1 (yes/no)?"), _user("Yes, please go ahead.")
    write = _tool("cancel_pending_order")
    assert confirmed_mutations([ask, yes, _tool("get_order_details"), write], WRITES)
    assert not confirmed_mutations([write], WRITES)
    assert not confirmed_mutations([_agent("I will cancel order #W1."), yes, write], WRITES)  # not asked
    assert not confirmed_mutations([ask, _user("No, I don't want that."), write], WRITES)
    assert not confirmed_mutations([ask, yes, write, write], WRITES)  # one yes, two mutations
    assert confirmed_mutations([ask, yes, _tool("cancel_pending_order", error=True), write], WRITES)
    withdrawn = [ask, yes, _agent("Is there anything else?"), _user("I want a refund."), write]
    assert not confirmed_mutations(withdrawn, WRITES)
    assert confirmed_mutations([_tool("get_order_details")], WRITES)


@pytest.mark.parametrize("domain", DOMAINS)
def test_strict_scoring_keeps_every_gold_trajectory_and_fails_every_leak(domain: str) -> None:
    data = _data(domain)
    folder = load_tau2_folder(data, domain)
    toolkit = get_domain(domain).toolkit
    confirmed_writes: dict[str, int] = {}  # successful gold writes per task, from a gold replay
    for task_id, task in folder.tasks.items():
        tools = toolkit(ServiceDB(folder.db))
        for name, arguments in task.initialization_actions:
            tools.call(name, arguments, validate=False)
        results = [(a.name, tools.call(a.name, a.arguments, validate=False)) for a in task.criteria.actions]
        confirmed_writes[task_id] = sum(n in toolkit.WRITE and not r.error for n, r in results)
    actions = {t: t_.criteria.actions for t, t_ in folder.tasks.items()}
    transfers = sum(any(a.name == TRANSFER_TOOL for a in acts) for acts in actions.values())
    n = len(folder.tasks)
    rows = tau2_strict.measure(domain, data)
    assert rows["gold"] == (n, n, n, 0)
    unconfirmed = sum(w > 0 for w in confirmed_writes.values())
    assert rows["gold_unconfirmed"] == (n, n, n - unconfirmed, unconfirmed) and unconfirmed > 0
    # every leak that tau2 scores 1.0 fails strictly
    for name in ("drop_lookup", "drop_handoff", "extra_handoff"):
        m = rows[name][0]
        assert m > 0 and rows[name] == (m, m, 0, m), name
    assert rows["drop_handoff"][0] == transfers and rows["extra_handoff"][0] == n - transfers
    # one confirmation for two or more gold writes: passes strictly only where at most one write succeeds
    several = [t for t, acts in actions.items() if sum(a.name in toolkit.WRITE for a in acts) >= 2]
    lucky = sum(confirmed_writes[t] <= 1 for t in several)
    assert rows["one_confirmation"] == (len(several), len(several), lucky, len(several) - lucky)
    assert rows["drop_write"][2] == 0  # a missing write fails both settings (DB)


class _DecliningUser(ScriptedUser):
    """The scripted user, but it says no to every confirmation question."""

    def for_task(self, task: Any) -> _DecliningUser:
        return _DecliningUser(task)

    def reply(self, messages: Sequence[Message], *, seed: int | None = None) -> str:
        last = messages[-1]["content"] if messages else ""
        if messages and messages[-1]["role"] == "assistant" and "(yes/no)" in last:
            return "No, I do not want that."
        return super().reply(messages, seed=seed)


def test_a_write_after_the_user_says_no_fails_strictly_and_passes_tau2_exact() -> None:
    data = _data("retail")
    results = {}
    for scoring in ("exact", "strict"):
        env = gym.make(
            "papergym/ServiceAgent-v0",
            domain="retail",
            tau2_data=data,
            tau2_scoring=scoring,
            user=_DecliningUser(),
        ).unwrapped
        env.reset(options={"task_id": "5"})  # task 5 returns an item: one write
        while True:
            _, reward, terminated, truncated, info = env.step(env.oracle_action())
            if terminated or truncated:
                break
        results[scoring] = (reward, info[K.CHECKS])
    assert results["exact"] == (1.0, {"db": True})
    assert results["strict"] == (
        0.0,
        {"db": True, "action": True, "handoff": True, "confirmation": False},
    )
