"""Helpers of the contract tests, importable from a subprocess (cross-process determinism)."""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

import gymnasium as gym

import papergym  # noqa: F401  (registers the ids)
from papergym.core.trajectory import OraclePolicy, RandomPolicy, rollout

DIGEST_SEEDS = (0, 1, 2, 3)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float | int | str | bool) or value is None:
        return value
    return repr(value)


def trajectory_digest(env_id: str, variant: dict[str, Any]) -> str:
    """A hash of the observations, rewards and infos of oracle and random episodes."""
    env = gym.make(env_id, **variant)
    budget = getattr(env.unwrapped, "contract_budget", None) or {}
    records = []
    for seed in DIGEST_SEEDS[: budget.get("digest_seeds", len(DIGEST_SEEDS))]:
        for policy in (OraclePolicy(), RandomPolicy()):
            traj = rollout(env, policy, seed=seed)
            records.append(_jsonable(traj.reset_info))
            records.extend(_jsonable([s.observation, s.action, s.reward, s.info]) for s in traj.steps)
    env.close()
    blob = json.dumps(records, sort_keys=True, ensure_ascii=True).encode()
    return hashlib.sha256(blob).hexdigest()


if __name__ == "__main__":
    cases = json.loads(sys.argv[1])
    print(json.dumps([trajectory_digest(env_id, variant) for env_id, variant in cases]))
