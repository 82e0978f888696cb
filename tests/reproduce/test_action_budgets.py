"""Every warm-started reproduction's action budget holds the longest action its demonstrator writes.

A budget shorter than a demonstrated action cuts that action off unclosed at generation time: the policy
can never make the call it was taught (SpeechGym's budget of 48 tokens cut off every retail lookup with a
name and a zip code, benchmarks/README.md, "Tiny-LM copying")."""

from __future__ import annotations

import importlib

import gymnasium as gym
import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

from papergym.baselines.run import parse_kwargs
from papergym.baselines.sft import demonstrator
from papergym.baselines.tiny import build_tokenizer

EPISODES = 12
"""Demonstrations read per setting (the longest actions, order edits with ids, occur in most dozens)."""


def _settings() -> list[tuple[str, str, list[str], str | None, int]]:
    """(label, env id, env kwargs, demonstrator, max_new_tokens) of each warm-started reproduction."""
    out = []
    for name in ("speechgym", "iapo", "cafe", "awm", "wm_r1"):
        module = importlib.import_module(f"papergym.reproduce.{name}")
        args = module.Args()
        domains = ("telecom", "retail", "airline") if name == "iapo" else (None,)
        for domain in domains:
            if domain:
                args = module.for_domain(module.Args(), domain)
            label = f"{name}:{domain}" if domain else name
            out.append((label, args.env, list(args.env_kw), args.sft_demonstrator, args.max_new_tokens))
    return out


def _longest_action(env_id: str, env_kw: list[str], teacher_spec: str | None) -> tuple[int, str]:
    tokenizer = build_tokenizer()
    env = gym.make(env_id, **parse_kwargs(env_kw))
    teacher = demonstrator(teacher_spec)
    longest = (0, "")
    for seed in range(EPISODES):
        observation, _ = env.reset(seed=seed)
        if teacher is not None:
            bind = getattr(teacher, "bind", None)
            if bind is not None:
                bind(env)
            teacher.reset(seed=seed)
        for _ in range(64):
            action = teacher(observation, {}) if teacher is not None else env.unwrapped.oracle_action()
            if action is None:
                break
            longest = max(longest, (len(tokenizer(action)["input_ids"]), action))
            observation, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
    env.close()
    return longest


@pytest.mark.parametrize("setting", _settings(), ids=lambda s: s[0])
def test_the_action_budget_holds_every_demonstrated_action(setting) -> None:
    label, env_id, env_kw, teacher, budget = setting
    tokens, action = _longest_action(env_id, env_kw, teacher)
    assert tokens > 0, f"{label}: the demonstrator wrote no action"
    # one more token for the end of the action (EOS), which generation must also fit
    assert tokens + 1 <= budget, f"{label}: {tokens} tokens + EOS exceed max_new_tokens={budget}: {action!r}"
