"""ChatModelPolicy and the --policy spec parser."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import papergym  # noqa: F401  (registers the ids)
from papergym.backends.policy import ChatModelPolicy, parse_policy_spec, turn_seed
from papergym.core.trajectory import Policy, rollout
from tests.backends.fake_openai_server import FakeOpenAIServer
from tests.backends.scripted import ScriptedChat


def test_text_mode_keeps_the_conversation() -> None:
    model = ScriptedChat("r0", "r1", "r2")
    policy = ChatModelPolicy(model, max_tokens=32, temperature=0.5)
    assert isinstance(policy, Policy)
    policy.reset(seed=4)
    assert policy("obs0", {}) == "r0"
    assert model.last["messages"] == [{"role": "user", "content": "obs0"}]
    assert policy("obs1", {}) == "r1"
    assert model.last["messages"] == [
        {"role": "user", "content": "obs0"},
        {"role": "assistant", "content": "r0"},
        {"role": "user", "content": "obs1"},
    ]
    assert (model.last["max_tokens"], model.last["temperature"]) == (32, 0.5)
    assert [c["seed"] for c in model.calls] == [turn_seed(4, 0), turn_seed(4, 1)]
    assert policy.history[-1] == {"role": "assistant", "content": "r1"}
    policy.reset(seed=4)
    policy("again", {})
    assert model.last["messages"] == [{"role": "user", "content": "again"}]
    assert model.last["seed"] == turn_seed(4, 0)  # the same episode seed replays the same seeds


def test_chat_mode_sends_the_observation_as_is() -> None:
    model = ScriptedChat("a")
    policy = ChatModelPolicy(model)
    policy.reset(seed=0)
    conversation = ({"role": "system", "content": "s"}, {"role": "user", "content": "u"})
    policy(conversation, {})
    assert model.last["messages"] == list(conversation)
    assert policy.history == []
    policy({"text": "heard text", "audio": None}, {})
    assert model.last["messages"] == [{"role": "user", "content": "heard text"}]
    with pytest.raises(TypeError):
        policy(42, {})


def test_turn_seeds() -> None:
    seeds = {turn_seed(s, t) for s in range(20) for t in range(20)}
    assert len(seeds) == 400 and all(0 <= s < 2**31 for s in seeds)
    assert turn_seed(-1, 0) is not None and turn_seed(None, 3) is None


@pytest.mark.parametrize("obs_mode", ["text", "chat"])
def test_rollout_on_a_real_env(obs_mode: str) -> None:
    env = gym.make("papergym/Reasoning-v0", obs_mode=obs_mode)
    oracle = env.unwrapped
    model = ScriptedChat()
    trajectory = rollout(env, ChatModelPolicy(model), seed=3)
    assert len(trajectory.steps) == 1 and len(model.calls) == 1
    assert model.last["messages"][-1]["role"] == "user"
    assert oracle.task.task_id == trajectory.task_id


def test_parse_policy_spec_forms(tmp_path: Path, tiny_checkpoint: Path) -> None:
    assert parse_policy_spec("oracle") is None and parse_policy_spec("random") is None
    assert parse_policy_spec("vllm:x") is None
    policy = parse_policy_spec(f"hf:{tiny_checkpoint}?max_tokens=9&temperature=0.5&device=cpu")
    assert policy is not None and (policy.max_tokens, policy.temperature) == (9, 0.5)
    assert type(policy.model).__name__ == "HFChatModel"
    with FakeOpenAIServer() as server:
        cached = parse_policy_spec(
            f"openai:{server.url}#my/model?cache={tmp_path / 'c.db'}&timeout=30.5&max_retries=1"
        )
        assert cached is not None and type(cached.model).__name__ == "CachedChatModel"
        inner = cached.model.model  # type: ignore[attr-defined]
        assert (inner.base_url, inner.model, inner.timeout, inner.max_retries) == (
            server.url,
            "my/model",
            30.5,  # generous: a real request follows, and a loaded machine must not time it out
            1,
        )
        cached.reset(seed=0)
        assert cached("hello", {}).startswith("echo")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("openai:http://127.0.0.1:8000/v1", "URL#MODEL"),
        ("openai:#m", "URL#MODEL"),
        ("hf:", "hf:PATH"),
        ("hf:/x?device=cpu&colour=red", "unknown option"),
        ("openai:http://h/v1#m?device=cpu", "unknown option"),
        ("hf:/x?max_tokens=many", "bad value"),
    ],
)
def test_parse_policy_spec_errors(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_policy_spec(spec)
