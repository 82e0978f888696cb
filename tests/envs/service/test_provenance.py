"""The service env's provenance log: value binding, source priority, error flags, in every domain."""

from __future__ import annotations

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.core import info_keys as K
from papergym.envs.service.domains import DOMAINS
from papergym.envs.service.provenance import ProvenanceLog


def _tool(name: str, arguments: dict, result: str, error: bool = False) -> dict:
    return {"kind": "tool", "name": name, "arguments": arguments, "result": result, "error": error}


def test_source_priority_prefers_the_most_comprehensive_then_the_earliest() -> None:
    log = ProvenanceLog()
    events = [{"kind": "user", "text": "Hi, my customer id is C1001."}]
    events.append(_tool("a", {}, '{"customer_id": "C1001", "line_ids": ["L1002"]}'))
    assert log.update(events, 0)["sources"] == []
    events.append(_tool("b", {}, '{"owner": "C1001", "line": "L1002", "extra": 7}'))
    log.update(events, 1)
    events.append(_tool("c", {"customer_id": "C1001", "line_id": "L1002", "flag": True, "n": 1}, "ok"))
    record = log.update(events, 2)
    # The opening user turn holds one unit, tool results 0 and 1 hold both: the earliest of those wins.
    assert record["sources"] == [{"kind": "tool", "step": 0}]
    assert [b["argument"] for b in record["bindings"]] == ["customer_id", "line_id"]
    events.append({"kind": "agent", "text": "Your line L1002 costs 35.50 USD."})
    events.append({"kind": "user", "text": "ok"})
    record = log.update(events, 3)
    assert record["kind"] == "message" and record["sources"] == [{"kind": "tool", "step": 0}]
    events.append(_tool("d", {"customer_id": "C1001", "amount": 35.5}, "ok"))
    record = log.update(events, 4)  # 35.5 is only in the agent's own message: unbound
    # C1001 alone: the opening turn and step 0 cover it equally, and the opening turn came first.
    assert (
        record["sources"] == [{"kind": "user", "turn": 0, "elicited_by": None}]
        and len(record["bindings"]) == 1
    )


def test_a_unit_of_a_user_reply_resolves_to_the_eliciting_message() -> None:
    log = ProvenanceLog()
    events = [{"kind": "user", "text": "hello"}, {"kind": "agent", "text": "Your email?"}]
    events.append({"kind": "user", "text": "My email is ann@example.com."})
    log.update(events, 0)
    events.append(_tool("find", {"email": "ann@example.com"}, "ann_1"))
    assert log.update(events, 1)["sources"] == [{"kind": "user", "turn": 1, "elicited_by": 0}]


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_error_flags_in_every_domain(domain: str) -> None:
    env = gym.make("papergym/ServiceAgent-v0", domain=domain).unwrapped
    env.reset(seed=0, options={"split": "train"})
    bogus = '<tool_call>{"name": "transfer_to_human_agents", "arguments": {"summary": 3}}</tool_call>'
    infos = [env.step(bogus)[-1] for _ in range(2)]
    infos.append(env.step(env.oracle_action())[-1])
    first, repeat, fallback = (i[K.PROVENANCE] for i in infos)
    assert first["error"] and first["repeats"] is None and first["fallback_from"] is None
    assert repeat["error"] and repeat["repeats"] == 0 and repeat["fallback_from"] is None
    assert not fallback["error"] and fallback["fallback_from"] == 1 and fallback["repeats"] is None
    env.step("<tool_call>{not json</tool_call>")
    info = env.step(env.oracle_action())[-1]
    assert info[K.PROVENANCE]["fallback_from"] == 3


def test_provenance_can_be_switched_off() -> None:
    env = gym.make("papergym/ServiceAgent-v0", domain="telecom", provenance=False).unwrapped
    env.reset(seed=0)
    assert K.PROVENANCE not in env.step(env.oracle_action())[-1]
