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


def effective_state(env: gym.Env) -> str:
    """What an action can change that a success check may read, as a comparable string.

    Per env: the phone (records, settings, navigation) for the GUI envs (the world model's phone or screen
    on WorldModelGUI), the memory and reading position
    for MemoryQA, the retrieved passages and feedback for SearchCritic, the database (the phone's state
    included) and the agent's successful tool calls (a lookup changes what it knows) for the service
    envs, so a message that only talks is not effective there; for every other env the whole
    `_state()`.
    """
    u = env.unwrapped
    s = getattr(u, "_s", None)
    wm = getattr(u, "_wm", None)
    if wm is not None:  # WorldModelGUI: its judge reads the world model's state (the real phone is untouched)
        private = wm.state.private
        return repr(
            _jsonable(private.to_dict() if hasattr(private, "to_dict") else wm.state.screen.to_dict())
        )
    if s is not None and hasattr(s, "phone"):
        return repr(_jsonable(s.phone.to_dict()))
    if hasattr(u, "_reading"):
        r = u._reading()
        return repr((r.memory, r.pos))
    if s is not None and hasattr(s, "retrieved"):
        return repr((sorted(set(s.retrieved)), s.feedback))
    if s is not None and hasattr(s, "events") and hasattr(s, "db"):  # the service envs: DB and tool calls
        calls = [e for e in s.events if e["kind"] == "tool" and not e.get("error")]
        return repr((_jsonable(_db_changes(s.db)), _jsonable(calls)))
    return repr(_jsonable(u._state()))


def _db_changes(db: Any) -> dict[str, Any]:
    """The records a service env's database holds that differ from its episode's base (the base is fixed
    within an episode, so two states of one episode are equal exactly when these are): what `to_dict`
    would show changed, without copying the whole database at every step."""
    changed = {}
    for table, key in sorted(db.touched()):
        value = db.get(table, key)
        if value != db.base.get(table, {}).get(key):
            changed[f"{table}/{key}"] = value
    return changed


def last_effective_index(
    env: gym.Env, actions: list[str], *, seed: int, options: dict[str, Any]
) -> int | None:
    """The index of the last action before the final one that changed `effective_state`, or None."""
    env.reset(seed=seed, options=options)
    last = None
    for i, action in enumerate(actions[:-1]):
        before = effective_state(env)
        env.step(action)
        if effective_state(env) != before:
            last = i
    return last


def perturbed(action: str) -> str:
    """``action`` with its last letter or digit changed (a wrong gold answer of the same shape)."""
    for i in range(len(action) - 1, -1, -1):
        c = action[i]
        if c.isdigit():
            return action[:i] + str((int(c) + 1) % 10) + action[i + 1 :]
        if c.isalpha():
            nxt = "a" if c.lower() == "z" else chr(ord(c.lower()) + 1)
            return action[:i] + (nxt.upper() if c.isupper() else nxt) + action[i + 1 :]
    return action + " x"
