"""Speed of `papergym/SearchCritic-v0`.

Measures (one process):

- world generation and bm25s index build time at 10,000 and 100,000 passages;
- retrieval latency (p50 / p90, top-3) at 100,000 passages over entity-name queries;
- env step latency excluding retrieval (oracle episodes at 10,000 passages; each step's retrieval
  time is measured inside the step and subtracted).

CAFE's behaviour metrics (request rate, request-skip gap, answer hallucination) are measured on a policy
that learns, in ``papergym reproduce cafe``; an earlier table here scored a scripted policy whose drift
rate set the result (its hallucination rate was 1 − success by construction) and was removed.

Usage::

    python benchmarks/search_speed.py [--queries 2000] [--write benchmarks/README.md]
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from pathlib import Path

import numpy as np
from readme_section import write_section

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


def report(queries: int) -> str:
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
        f"One process, Python {platform.python_version()}, {platform.machine()}. Target: retrieval p50 "
        "<= 1 ms at 100,000 passages. CAFE's request and hallucination metrics are measured by a learning "
        "policy in `papergym reproduce cafe`.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--write", type=Path, default=None)
    args = parser.parse_args()
    text = report(args.queries)
    print(text)
    if args.write is not None:
        write_section(args.write, "search_speed", "Search speed (`benchmarks/search_speed.py`)", text)


if __name__ == "__main__":
    main()
