"""Speed of `papergym/SearchCritic-v0` and CAFE's metrics under a policy that drifts at a fixed rate.

Measures (one process):

- world generation and bm25s index build time at 10,000 and 100,000 passages;
- retrieval latency (p50 / p90, top-3) at 100,000 passages over entity-name queries;
- env step latency excluding retrieval (oracle episodes at 10,000 passages; each step's retrieval
  time is measured inside the step and subtracted);
- answer hallucination rate, request rate and request-skip success gap (`papergym.credit.feedback`)
  for a drifting policy: with probability ``drift`` per episode (its own seeded coin) its first search is
  for a wrong entity (a random other passage's title); a drifted episode then requests feedback with
  probability ``REQUEST_RATE`` and follows the critic's suggested query, or else answers at once with a
  made-up name. Otherwise it plays the oracle's actions.

Usage::

    python benchmarks/search_speed.py [--queries 2000] [--episodes 300] [--write benchmarks/README.md]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
from readme_section import write_section

from papergym.core.trajectory import rollout
from papergym.credit.feedback import feedback_metrics
from papergym.envs.search import retrieval
from papergym.envs.search.corpus import get_world
from papergym.envs.search.search_critic_env import SearchCriticEnv

DRIFTS = (0.0, 0.1, 0.3, 0.5)
REQUEST_RATE = 0.5


def build_times(n: int) -> tuple[float, float]:
    start = time.perf_counter()
    _, corpus = get_world(0, n)
    world_s = time.perf_counter() - start
    start = time.perf_counter()
    retrieval.BM25Retriever(corpus)
    return world_s, time.perf_counter() - start


def retrieval_latency(n: int, queries: int) -> dict[str, tuple[float, float]]:
    """p50 / p90 in ms of top-3 retrieval for passage titles and for people's names with their occupation."""
    index = retrieval.get_retriever("bm25", 0, n)
    kb, _ = get_world(0, n)
    rng = random.Random(0)
    people = kb.of_kind("person")
    kinds = {
        "passage titles": [index.corpus.titles[rng.randrange(n)] for _ in range(queries)],
        "person name + occupation": [
            f"{kb.entities[p].name} {kb.entities[p].attrs['occupation']}"
            for p in (people[rng.randrange(len(people))] for _ in range(queries))
        ],
    }
    out = {}
    for kind, qs in kinds.items():
        for q in qs[:100]:
            index.search_positions(q, k=3)
        times = []
        for q in qs:
            start = time.perf_counter()
            index.search_positions(q, k=3)
            times.append(time.perf_counter() - start)
        out[kind] = (float(np.percentile(times, 50)) * 1e3, float(np.percentile(times, 90)) * 1e3)
    return out


def step_latency(n: int, episodes: int) -> tuple[float, float, int]:
    env = SearchCriticEnv(n_passages=n)
    inner_positions = env._positions
    spent = [0.0]

    def timed(query: str) -> list[int]:
        start = time.perf_counter()
        out = inner_positions(query)
        spent[0] += time.perf_counter() - start
        return out

    env._positions = timed  # type: ignore[method-assign]
    times = []
    for seed in range(episodes):
        env.reset(seed=seed)
        while True:
            action = env.oracle_action()
            spent[0] = 0.0
            start = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(action)
            times.append(time.perf_counter() - start - spent[0])
            if terminated or truncated:
                break
    return float(np.percentile(times, 50)) * 1e6, float(np.percentile(times, 90)) * 1e6, len(times)


def _search(query: str) -> str:
    return f"<tool_call>{json.dumps({'name': 'search', 'arguments': {'query': [query]}})}</tool_call>"


class DriftPolicy:
    """Oracle actions, except that a drifting episode starts with a search for a wrong entity."""

    def __init__(self, drift: float) -> None:
        self.drift = drift
        self.env: Any = None

    def bind(self, env: Any) -> None:
        self.env = env.unwrapped

    def reset(self, *, seed: int) -> None:
        coins = random.Random(seed * 1_000_003 + int(self.drift * 1000))
        self.drifts = coins.random() < self.drift
        self.asks = coins.random() < REQUEST_RATE
        self.wrong = coins.randrange(len(self.env.corpus))
        self.step = 0
        self.follow: str | None = None

    def __call__(self, observation: Any, info: Any) -> str:
        self.step += 1
        if not self.drifts:
            return self.env.oracle_action()
        if self.step == 1:
            return _search(self.env.corpus.titles[self.wrong])
        if self.step == 2:
            if not self.asks:
                return "<think>I recall it.</think><answer>Quorvax Emberline</answer>"
            return "<think>This does not look right.</think><request_feedback></request_feedback>"
        if self.step == 3:
            match = re.search(r'search for "([^"]+)"', observation)
            if match:
                return _search(match[1])
        return self.env.oracle_action()


def drift_metrics(episodes: int) -> list[dict[str, Any]]:
    env = SearchCriticEnv(n_passages=10_000)
    rows = []
    for drift in DRIFTS:
        policy = DriftPolicy(drift)
        trajs = [
            rollout(env, policy, seed=s, options={"split": "test"}, max_steps=40) for s in range(episodes)
        ]
        m = feedback_metrics(trajs)
        rows.append({"drift": drift, **m.__dict__})
    return rows


def report(queries: int, episodes: int) -> str:
    builds = {n: build_times(n) for n in (10_000, 100_000)}
    latency = retrieval_latency(100_000, queries)
    s50, s90, n_steps = step_latency(10_000, 200)
    lines = [
        "| measure | value |",
        "|---|---|",
        *(
            f"| world generation / bm25s index build, {n:,} passages | {w:.2f} s / {b:.2f} s |"
            for n, (w, b) in builds.items()
        ),
        *(
            f"| retrieval p50 / p90, 100,000 passages, top-3, {kind} ({queries} queries) "
            f"| {r50:.3f} ms / {r90:.3f} ms |"
            for kind, (r50, r90) in latency.items()
        ),
        f"| env step p50 / p90 excluding retrieval, 10,000 passages ({n_steps} oracle steps) "
        f"| {s50:.1f} µs / {s90:.1f} µs |",
        "",
        f"Drifting policy (request rate after a drift {REQUEST_RATE}; oracle critic; {episodes} test "
        "episodes, 10,000 passages):",
        "",
        "| drift rate | success | request rate | request-skip gap | answer hallucination rate |",
        "|---|---|---|---|---|",
    ]
    for row in drift_metrics(episodes):
        lines.append(
            f"| {row['drift']:.1f} | {row['success_rate']:.3f} | {row['request_rate']:.3f} | "
            f"{row['request_skip_gap']:.3f} | {row['hallucination_rate']:.3f} |"
        )
    lines += [
        "",
        f"One process, Python {platform.python_version()}, {platform.machine()}. Target: retrieval p50 "
        "<= 1 ms at 100,000 passages. Hallucination = a wrong answer that occurs in no retrieved passage "
        "(inferred reading of CAFE's metric). "
        "Paper reference (CAFE, 7B): hallucination 29.88% base, 12.60% CAFE.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--write", type=Path, default=None)
    args = parser.parse_args()
    text = report(args.queries, args.episodes)
    print(text)
    if args.write is not None:
        write_section(
            args.write, "search_speed", "Search speed and CAFE metrics (`benchmarks/search_speed.py`)", text
        )


if __name__ == "__main__":
    main()
