"""ServiceAgent-v0's ``prompt="compact"``: a short first observation, the same tasks, tools and scoring."""

from __future__ import annotations

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.core import info_keys as K
from papergym.envs.service.domains import DOMAINS


def _play(env: gym.Env, task_id: str) -> tuple[str, list[str], list[float], dict]:
    obs, _ = env.reset(options={"task_id": task_id})
    actions, rewards, done, info = [], [], False, {}
    while not done:
        actions.append(env.unwrapped.oracle_action())
        _, reward, terminated, truncated, info = env.step(actions[-1])
        rewards.append(reward)
        done = terminated or truncated
    return obs, actions, rewards, info


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_compact_prompt_lists_every_tool_without_policy_and_keeps_the_episode(domain: str) -> None:
    full = gym.make("papergym/ServiceAgent-v0", domain=domain)
    compact = gym.make("papergym/ServiceAgent-v0", domain=domain, prompt="compact")
    task_id = f"{domain}/test/L1/3"
    full_obs, full_actions, full_rewards, full_info = _play(full, task_id)
    obs, actions, rewards, info = _play(compact, task_id)
    tools = [t["function"]["name"] for t in compact.unwrapped.reset(options={"task_id": task_id})[1][K.TOOLS]]
    for name in tools:
        assert f"\n{name}(" in obs
    policy = compact.unwrapped._policy()
    assert policy.splitlines()[0] in full_obs and policy.splitlines()[0] not in obs
    assert '"description"' in full_obs and '"description"' not in obs
    assert len(obs) * 4 < len(full_obs)
    # the user's opening message ends both observations; the episode is the same action for action
    assert obs.rsplit("\n\n", 1)[1] == full_obs.rsplit("\n\n", 1)[1]
    assert (actions, rewards) == (full_actions, full_rewards)
    assert info[K.SUCCESS] and info[K.CHECKS] == full_info[K.CHECKS]


def test_compact_prompt_marks_optional_arguments() -> None:
    env = gym.make("papergym/ServiceAgent-v0", domain="telecom", prompt="compact")
    obs, _ = env.reset(seed=0)
    assert "\nget_bills_for_customer(customer_id, limit?)\n" in obs
    assert "get_customer_by_name(full_name, dob)" in obs


def test_unknown_prompt_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="prompt must be"):
        gym.make("papergym/ServiceAgent-v0", prompt="tiny")


@pytest.mark.parametrize("prompt", ["full", "compact"])
def test_both_prompts_show_the_call_format_verbatim_and_reset_names_the_domain(prompt: str) -> None:
    env = gym.make("papergym/ServiceAgent-v0", domain="airline", prompt=prompt)
    obs, info = env.reset(seed=0)
    # the format the parser accepts, single braces (the full prompt once showed "{{" from a format escape)
    assert '<tool_call>{"name": ..., "arguments": {...}}</tool_call>' in obs
    assert "{{" not in obs.split("<policy>")[0]
    assert info[K.DOMAIN] == "airline"
