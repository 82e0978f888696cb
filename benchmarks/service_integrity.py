"""Canned-agent success on generated ServiceAgent-v0 tasks (reward integrity, issue 19).

Three agents that serve nobody, each over the first ``--n`` train tasks per domain:

- ``garbage``: one question, then a garbage message until the episode ends;
- ``agent_stop``: ``###STOP###`` as its first message, then the same;
- ``think_stop``: the stop token inside ``<think>``.

Run: ``PYTHONPATH=. python benchmarks/service_integrity.py --n 200``.
"""

from __future__ import annotations

import argparse

import gymnasium as gym

import papergym  # noqa: F401  (registers the ids)

AGENTS: dict[str, tuple[str, ...]] = {
    "garbage": ("Could you please tell me your email address?", "zzqx vrrk plimf"),
    "agent_stop": ("###STOP###", "zzqx vrrk plimf"),
    "think_stop": ("<think>###STOP###</think>", "zzqx vrrk plimf"),
}
"""Each agent's first action, then the action it repeats."""


def canned_success(domain: str, agent: str, n: int, max_actions: int = 12) -> int:
    """How many of the first ``n`` train tasks of ``domain`` the canned ``agent`` succeeds on."""
    env = gym.make("papergym/ServiceAgent-v0", domain=domain)
    first, rest = AGENTS[agent]
    wins = 0
    for index in range(n):
        env.reset(seed=index, options={"task_id": f"{domain}/train/L1/{index}"})
        info: dict = {}
        for k in range(max_actions):
            _, _, terminated, truncated, info = env.step(first if k == 0 else rest)
            if terminated or truncated:
                break
        wins += bool(info.get("success"))
    env.close()
    return wins


def main() -> None:
    """Print a table of canned-agent successes per domain."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    for domain in ("retail", "airline", "telecom"):
        row = {agent: canned_success(domain, agent, args.n) for agent in AGENTS}
        print(domain, " ".join(f"{a}={v}/{args.n}" for a, v in row.items()))


if __name__ == "__main__":
    main()
