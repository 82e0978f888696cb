"""Rollout throughput from 1 to 2 processes under a simulated policy latency, and memory per env.

Usage::

    python benchmarks/scaleout.py [--env papergym/MemoryQA-v0] [--episodes 16] [--latency-ms 5]
                                  [--write benchmarks/README.md]

The policy plays the env's oracle action after a simulated model latency (a ``time.sleep`` that stands
for a call to a model server, which releases the GIL as an HTTP call does). Policy calls of different
envs overlap (the server is assumed to batch them). Throughput is env steps per second over the same
episodes (seeds 0..N-1) for each way of running them:

- ``AsyncVectorEnv`` (Gymnasium, lockstep: a batch waits for its slowest action), 1 and 2 worker
  processes;
- `papergym.core.vector.LLMVectorEnv` driven by `play_episodes` (each env steps when its action is
  ready), 1 and 2 worker processes;
- `papergym.integrations.ray.RayEnvPool`, 1 and 2 env actors (``ray.init(num_cpus=2)``, loopback).

Parallel efficiency at 2 = throughput(2) / (2 × throughput(1)); the goal (issue 13) is >= 0.8. With
``--jitter`` the latency is uniform in [0, 2 × latency] (same mean), which is where stepping only the
ready envs pays.
"""

from __future__ import annotations

import argparse
import os
import platform
import threading
import time
import tracemalloc
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium as gym
import numpy as np
from readme_section import write_section

import papergym
from papergym.core.vector import LLMVectorEnv, play_episodes

HINT = "benchmark_oracle_action"


class OracleHint(gym.Wrapper):
    """Puts the next oracle action into ``info`` so a remote policy can play it (benchmark only)."""

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        observation, info = self.env.reset(**kwargs)
        return observation, {**info, HINT: self.env.unwrapped.oracle_action()}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        hint = None if terminated or truncated else self.env.unwrapped.oracle_action()
        return observation, reward, terminated, truncated, {**info, HINT: hint}


class LatentOracle:
    """Plays the hinted oracle action after a simulated model latency (seeded per episode)."""

    def __init__(self, latency_s: float, jitter: bool) -> None:
        self.latency_s, self.jitter = latency_s, jitter
        self.rng = np.random.default_rng(0)

    def reset(self, *, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def delay(self) -> float:
        return float(self.rng.uniform(0, 2 * self.latency_s)) if self.jitter else self.latency_s

    def __call__(self, observation: Any, info: Mapping[str, Any]) -> Any:
        time.sleep(self.delay())
        return info[HINT]


def make_factory(env_id: str) -> Callable[[], gym.Env]:
    return lambda: OracleHint(gym.make(env_id))


def run_async_vector(env_id: str, n: int, seeds: list[int], latency_s: float, jitter: bool) -> int:
    """Lockstep: every env of the batch waits for the batch's slowest action; returns steps played."""
    envs = gym.vector.AsyncVectorEnv(
        [make_factory(env_id)] * n, shared_memory=False, autoreset_mode=gym.vector.AutoresetMode.NEXT_STEP
    )
    policies = [LatentOracle(latency_s, jitter) for _ in range(n)]
    steps = 0
    with ThreadPoolExecutor(max_workers=n) as pool:
        for start in range(0, len(seeds), n):
            batch = seeds[start : start + n]
            while len(batch) < n:  # a short last batch: pad with repeats, count only the real ones
                batch = [*batch, batch[-1]]
            for policy, seed in zip(policies, batch, strict=True):
                policy.reset(seed=seed)
            observations, infos = envs.reset(seed=batch)
            active = np.ones(n, dtype=bool)
            real = np.arange(n) < len(seeds[start : start + n])
            while active.any():
                hints = [infos[HINT][i] if active[i] else None for i in range(n)]
                futures = [
                    pool.submit(policies[i], observations[i], {HINT: hints[i]}) if active[i] else None
                    for i in range(n)
                ]
                actions = [f.result() if f else "" for f in futures]
                # a finished env is autoreset by this step (its action is ignored, its result
                # discarded): Gymnasium's batched step has no way to skip it
                observations, _, terminated, truncated, infos = envs.step(actions)
                steps += int((active & real).sum())
                active &= ~(terminated | truncated)
    envs.close()
    return steps


def run_ready_vector(env_id: str, n: int, seeds: list[int], latency_s: float, jitter: bool) -> int:
    vec = LLMVectorEnv([make_factory(env_id)] * n, workers="process")
    try:
        played = play_episodes(vec, [LatentOracle(latency_s, jitter) for _ in range(n)], seeds=seeds)
    finally:
        vec.close()
    return sum(len(t.steps) for t in played)


def run_ray(env_id: str, n: int, seeds: list[int], latency_s: float, jitter: bool) -> int:
    from papergym.integrations.ray import RayEnvPool

    pool = RayEnvPool(env_id, num_actors=n, wrappers=[OracleHint], actor_options={"num_cpus": 0.5})
    steps = 0
    try:
        pool.rollout_group(lambda: LatentOracle(latency_s, jitter), seed=seeds[0], group_size=n)  # warm-up
        lock = threading.Lock()

        def one(seed: int) -> None:
            nonlocal steps
            episodes = pool.rollout_group(lambda: LatentOracle(latency_s, jitter), seed=seed, group_size=1)
            with lock:
                steps += len(episodes[0].trajectory.steps)

        # one member per episode, n episodes in flight: each holds one actor
        with ThreadPoolExecutor(max_workers=n) as threads:
            list(threads.map(one, seeds))
    finally:
        pool.close()
    return steps


def throughput(run: Callable[..., int], *args: Any) -> float:
    start = time.perf_counter()
    steps = run(*args)
    return steps / (time.perf_counter() - start)


def memory_per_instance_kib(env_id: str, n: int = 20) -> float:
    """Python heap (tracemalloc) held per extra reset env instance, after a first one warms caches."""
    first = gym.make(env_id)
    first.reset(seed=0)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    envs = [gym.make(env_id) for _ in range(n)]
    for i, env in enumerate(envs):
        env.reset(seed=i + 1)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return grown / n / 1024


def table(env_id: str, episodes: int, latency_ms: float, with_ray: bool) -> str:
    seeds = list(range(episodes))
    latency_s = latency_ms / 1000
    runners: list[tuple[str, Callable[..., int]]] = [
        ("AsyncVectorEnv (lockstep)", run_async_vector),
        ("LLMVectorEnv + play_episodes (ready)", run_ready_vector),
    ]
    if with_ray:
        import ray

        ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
        runners.append(("Ray actors (RayEnvPool)", run_ray))
    lines = [
        "| runner | policy latency | steps/s, 1 process | steps/s, 2 processes | parallel efficiency at 2 |",
        "|---|---|---|---|---|",
    ]
    try:
        for jitter in (False, True):
            latency = f"{latency_ms:g} ms" + (f" (uniform 0-{2 * latency_ms:g} ms)" if jitter else " fixed")
            for name, run in runners:
                one = throughput(run, env_id, 1, seeds, latency_s, jitter)
                two = throughput(run, env_id, 2, seeds, latency_s, jitter)
                lines.append(f"| {name} | {latency} | {one:,.1f} | {two:,.1f} | {two / (2 * one):.2f} |")
    finally:
        if with_ray:
            ray.shutdown()
    memory = [
        "",
        "| id | Python heap per extra env instance after reset (KiB) |",
        "|---|---|",
    ]
    for entry in papergym.CATALOGUE:
        memory.append(f"| {entry.id} | {memory_per_instance_kib(entry.id):,.1f} |")
    notes = [
        "",
        f"{env_id}, oracle actions behind a simulated model latency, {episodes} episodes (seeds "
        f"0..{episodes - 1}) per cell, the same episodes in every cell. "
        f"Python {platform.python_version()}, gymnasium {gym.__version__}, {os.cpu_count()} CPUs "
        f"({platform.machine()}). Memory: tracemalloc over 20 instances of each id made with default "
        "kwargs and reset (shared caches, e.g. a search index, are built by a first instance and not "
        "counted).",
    ]
    return "\n".join(lines + memory + notes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="papergym/MemoryQA-v0")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=5.0)
    parser.add_argument("--no-ray", action="store_true", help="leave the Ray rows out")
    parser.add_argument("--write", default=None, help="markdown file whose scaleout section is replaced")
    args = parser.parse_args()
    try:
        import ray  # noqa: F401

        with_ray = not args.no_ray
    except ImportError:
        with_ray = False
    result = table(args.env, args.episodes, args.latency_ms, with_ray)
    print(result)
    if args.write:
        write_section(args.write, "scaleout", "Scale-out and memory (`benchmarks/scaleout.py`)", result)


if __name__ == "__main__":
    main()
