"""papergym's tool outputs against tau2's own, recorded by ``benchmarks/tau2_diff.py``.

The retail / airline fixtures hold tau2's tool-message text for the gold calls of a few of tau2's own
tasks, replayed in order on a fresh environment per task, then the probe calls (``benchmarks/
tau2_probes.py``: every other tool and error cases) on one more. The telecom fixture was recorded on
papergym's own tau2-format folder (``fixtures/tau2_telecom``, no tau2 data): per task, every phone read,
the agent's reads, the gold actions and a tour of every phone write, then the agent-tool probes.
The calls known to differ are listed; the test fails if any other call drifts, and also when a listed
one starts to match (then shrink the list).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).parent / "fixtures"
TAU2 = ROOT.parent / "shared" / "tau2"
sys.path.insert(0, str(ROOT / "benchmarks"))

import tau2_diff  # noqa: E402

KNOWN_DIFFERENT = {
    "retail": set(),
    "airline": set(),
    # telecom: 341, tau2 names a new draft bill with a random id (B + 8 hex digits), papergym B<customer>D;
    # 586-587, tau2's break_vpn makes its shared default VPN poor, so a later connect_vpn in the same
    # process connects to a poor server (slow speed test); papergym's connect_vpn is always excellent.
    "telecom": {341, 586, 587},
}
DATA = {"retail": TAU2 / "retail", "airline": TAU2 / "airline", "telecom": FIXTURES / "tau2_telecom"}


@pytest.mark.parametrize("domain", sorted(KNOWN_DIFFERENT))
def test_tool_outputs_match_tau2s_recorded_ones(domain: str) -> None:
    data = DATA[domain]
    if not (data / "db.json").is_file() and not (data / "db.toml").is_file():
        pytest.skip(f"tau2's {domain} data is not at {data} (copy tau2's data/tau2/domains/{domain}/ there)")
    calls = json.loads((FIXTURES / f"tau2_tool_outputs_{domain}.json").read_text(encoding="utf-8"))
    ours = tau2_diff.replay(domain, data, calls)
    different = {i for i, (call, text) in enumerate(zip(calls, ours, strict=True)) if call["output"] != text}
    assert different == KNOWN_DIFFERENT[domain]
    assert len(calls) > len(different)


@pytest.mark.parametrize("domain", sorted(KNOWN_DIFFERENT))
def test_the_recorded_calls_cover_every_tool_and_errors(domain: str) -> None:
    from papergym.envs.service.domains import get_domain

    calls = json.loads((FIXTURES / f"tau2_tool_outputs_{domain}.json").read_text(encoding="utf-8"))
    toolkit = get_domain(domain).toolkit
    agent = {c["name"] for c in calls if c["requestor"] == "assistant"}
    user = {c["name"] for c in calls if c["requestor"] == "user"}
    assert set(toolkit.READ + toolkit.WRITE + toolkit.GENERIC) <= agent
    assert set(toolkit.USER) <= user
    assert sum(c["error"] for c in calls if c["requestor"] == "assistant") >= 10


def _layouts(text: str) -> list[tuple[str, ...]]:
    """The key order of every record in a JSON tool output. Maps whose keys are data are left out (ids,
    which all hold a digit, and a variant's ``options``): tau2's order there is the data's."""
    try:
        value = json.loads(text)
    except ValueError:
        return []
    found: list[tuple[str, ...]] = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        parent, node = stack.pop()
        if isinstance(node, dict):
            if parent != "options" and not all(any(ch.isdigit() for ch in key) for key in node):
                found.append(tuple(node))
            stack.extend(node.items())
        elif isinstance(node, list):
            stack.extend((parent, item) for item in node)
    return found


@pytest.mark.parametrize("domain", sorted(KNOWN_DIFFERENT))
def test_generated_tasks_show_records_in_tau2s_layouts(domain: str) -> None:
    """Generated tasks' tool outputs use only record layouts (keys, their order, nulls included) that
    tau2's own recorded outputs show: one serialization for tau2's data and papergym's."""
    import gymnasium as gym

    from papergym.core import info_keys as K

    calls = json.loads((FIXTURES / f"tau2_tool_outputs_{domain}.json").read_text(encoding="utf-8"))
    tau2_layouts = {layout for call in calls for layout in _layouts(call["output"])}
    env = gym.make("papergym/ServiceAgent-v0", domain=domain).unwrapped
    seen: set[tuple[str, ...]] = set()
    for split in ("train", "test"):
        for index in range(30):
            env.reset(options={"task_id": env.generated_task(split, index).id})
            while True:
                _, _, terminated, truncated, info = env.step(env.oracle_action())
                for text in info.get(K.TOOL_RESULTS) or []:
                    seen.update(_layouts(text))
                if terminated or truncated:
                    break
    assert len(seen) >= 3
    assert seen <= tau2_layouts, sorted(seen - tau2_layouts)
