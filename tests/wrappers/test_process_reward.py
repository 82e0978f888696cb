"""`ProcessReward` credits calls by the structured ``ok`` flag of ``info["tool_calls"]``, never by text."""

from __future__ import annotations

import gymnasium as gym
import pytest

import papergym  # noqa: F401  # registers the ids
from papergym.core import info_keys as K
from papergym.wrappers import ProcessReward
from papergym.wrappers.process_reward import tool_call_succeeded


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        ({K.TOOL_CALLS: [{"name": "f", "arguments": {}, "ok": True}], K.TOOL_RESULTS: ["Error-free"]}, True),
        ({K.TOOL_CALLS: [{"name": "f", "arguments": {}, "ok": False}], K.TOOL_RESULTS: ["fine"]}, False),
        ({K.TOOL_CALLS: [{"name": "f", "arguments": {}, "ok": True}, {"name": "g", "ok": False}]}, False),
        ({K.TOOL_CALLS: [{"name": "f", "arguments": {}}]}, False),  # no outcome: not credited
        ({K.TOOL_CALLS: [{"name": "f", "ok": True}], K.INVALID_ACTION: True}, False),
        ({}, False),
    ],
)
def test_tool_call_succeeded_reads_the_ok_flag(info: dict, expected: bool) -> None:
    assert tool_call_succeeded(info) is expected


def test_service_env_reports_ok_per_call() -> None:
    env = ProcessReward(gym.make("papergym/ServiceAgent-v0"), bonus=0.5)
    env.reset(seed=0)
    _, _, _, _, info = env.step('<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>')
    assert [c["ok"] for c in info[K.TOOL_CALLS]] == [False]
    assert "process" not in info[K.REWARD_COMPONENTS]
    env.reset(seed=0)
    while True:
        _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        if info.get(K.TOOL_CALLS):
            break
        assert not (terminated or truncated)
    assert [c["ok"] for c in info[K.TOOL_CALLS]] == [True]
    assert info[K.REWARD_COMPONENTS]["process"] == 0.5


@pytest.mark.parametrize("fmt", ["cafe", "search_r1"])
def test_search_env_reports_ok_per_call(fmt: str) -> None:
    pytest.importorskip("bm25s")
    env = ProcessReward(gym.make("papergym/SearchCritic-v0", format=fmt), bonus=0.5)
    env.reset(seed=0)
    if fmt == "cafe":  # a call the env refuses (unknown tool) is reported and not credited
        unknown = '<tool_call>{"name": "lookup", "arguments": {"query": ["x"]}}</tool_call>'
        _, _, _, _, info = env.step(unknown)
        assert [c["ok"] for c in info[K.TOOL_CALLS]] == [False]
        assert "process" not in info[K.REWARD_COMPONENTS]
    _, _, _, _, info = env.step(env.unwrapped.oracle_action())
    assert [c["name"] for c in info[K.TOOL_CALLS]] == ["search"]
    assert [c["ok"] for c in info[K.TOOL_CALLS]] == [True]
    assert info[K.REWARD_COMPONENTS]["process"] == 0.5
