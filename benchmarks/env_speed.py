"""Env speed: reset and step latency (p50 / p95) and steps/s for every registered id, oracle policy.

Usage::

    python benchmarks/env_speed.py [--repeats 2000] [--write benchmarks/README.md]
                                   [--anchor-python /path/to/venv/bin/python]

Each id is timed twice in the same run: the raw env (``env.unwrapped``) and the env as
``gymnasium.make`` returns it (with ``TimeLimit``, ``OrderEnforcing`` and the passive checker).
``--anchor-python`` names an interpreter with ``reasoning_gym`` installed; its ``basic_arithmetic``
generate + score is then timed in the same run, so the table can state a ratio.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import time

import gymnasium as gym
from readme_section import write_section

import papergym

ANCHOR_SNIPPET = """
import json, time, statistics, reasoning_gym
ds = reasoning_gym.create_dataset("basic_arithmetic", size=100000, seed=1)
samples = []
for i in range({n}):
    t = time.perf_counter_ns()
    entry = ds[i]
    ds.score_answer(entry["answer"], entry)
    samples.append(time.perf_counter_ns() - t)
print(json.dumps(statistics.median(samples[len(samples) // 10:]) / 1000))
"""


# The anchors' figures for the same kind of step, measured on this project's machines
# (../shared/papers/anchors.md, "Measured speed of the anchors", 2026-12-02), p50 unless noted.
ANCHOR_FIGURES = {
    "papergym/Reasoning-v0": "reasoning-gym generate 54 µs + score 0.8 µs; GEM math step 4.93 ms",
    "papergym/MultiDomain-v0": "reasoning-gym generate 54 µs + score 0.8 µs; GEM math step 4.93 ms",
    "papergym/TestTime-v0": "GEM math step 4.93 ms",
    "papergym/ServiceAgent-v0": "tau2 gym env: reset 609 ms, step 23.5 ms, retail episode 1,735 ms",
    "papergym/VoiceService-v0": "tau2 gym env (text): step 23.5 ms",
}


# Ids timed with other than their default kwargs: VoiceService-v0's default channel is real speech (Piper
# TTS + Whisper ASR on every user turn, seconds per episode; its cost is the RTF table of
# benchmarks/voice_channel.py), so its row times the calibrated simulated channel, the training channel.
SPEED_KWARGS = {"papergym/VoiceService-v0": {"channel": "simulated"}}


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _episode_us(env: gym.Env, seed: int | None) -> float:
    """One oracle episode (reset + steps) in µs, oracle calls excluded."""
    t0 = time.perf_counter_ns()
    env.reset(seed=seed)
    spent, done = time.perf_counter_ns() - t0, False
    while not done:
        action = env.unwrapped.oracle_action()
        t1 = time.perf_counter_ns()
        _, _, terminated, truncated, _ = env.step(action)
        spent += time.perf_counter_ns() - t1
        done = terminated or truncated
    return spent / 1000


def time_env(env: gym.Env, repeats: int) -> dict[str, float]:
    """Latencies in µs over ``repeats`` oracle episodes (after a 10% warm-up).

    ``episode_p50`` resets with a new seed each episode (a fresh generator: the GRPO pattern);
    ``stream_episode_p50`` resets with ``seed=None`` (the generator's stream continues).
    """
    unwrapped = env.unwrapped
    resets, steps, episodes = [], [], []
    total_steps, start = 0, time.perf_counter()
    warmup = max(1, repeats // 10)
    for i in range(repeats + warmup):
        t0 = time.perf_counter_ns()
        env.reset(seed=i)
        t1 = time.perf_counter_ns()
        episode_steps, done = 0.0, False
        while not done:
            action = unwrapped.oracle_action()
            t2 = time.perf_counter_ns()
            _, _, terminated, truncated, _ = env.step(action)
            t3 = time.perf_counter_ns()
            episode_steps += t3 - t2
            done = terminated or truncated
            if i >= warmup:
                steps.append((t3 - t2) / 1000)
                total_steps += 1
        if i == warmup - 1:
            start = time.perf_counter()
        if i >= warmup:
            resets.append((t1 - t0) / 1000)
            episodes.append((t1 - t0 + episode_steps) / 1000)
    elapsed = time.perf_counter() - start
    env.reset(seed=0)
    stream = [_episode_us(env, None) for _ in range(repeats)]
    return {
        "stream_episode_p50": statistics.median(stream),
        "reset_p50": _pct(resets, 0.5),
        "reset_p95": _pct(resets, 0.95),
        "step_p50": _pct(steps, 0.5),
        "step_p95": _pct(steps, 0.95),
        "episode_p50": statistics.median(episodes),
        "steps_per_s": total_steps / elapsed,
    }


def anchor_us(python: str, n: int) -> float:
    out = subprocess.run(
        [python, "-c", ANCHOR_SNIPPET.format(n=n)], capture_output=True, text=True, check=True
    ).stdout
    return float(out.strip().splitlines()[-1])


def table(repeats: int, anchor_python: str | None) -> str:
    lines = [
        "| id | env | reset p50 / p95 (µs) | step p50 / p95 (µs) | episode p50, new seed (µs) "
        "| episode p50, seed=None (µs) | steps/s | anchor, same kind of step |",
        "|---|---|---|---|---|---|---|---|",
    ]
    math_episode = None
    for entry in papergym.CATALOGUE:
        kwargs = SPEED_KWARGS.get(entry.id, {})
        made = gym.make(entry.id, **kwargs)
        shown = entry.id + "".join(f" `{k}={v}`" for k, v in kwargs.items())
        for label, env in (("raw", made.unwrapped), ("gym.make", made)):
            r = time_env(env, repeats)
            if entry.id == "papergym/Reasoning-v0" and label == "raw":
                math_episode = r["episode_p50"]
            lines.append(
                f"| {shown} | {label} | {r['reset_p50']:.1f} / {r['reset_p95']:.1f} | "
                f"{r['step_p50']:.1f} / {r['step_p95']:.1f} | {r['episode_p50']:.1f} | "
                f"{r['stream_episode_p50']:.1f} | "
                f"{r['steps_per_s']:,.0f} | {ANCHOR_FIGURES.get(entry.id, '–')} |"
            )
        made.close()
    notes = [
        "",
        f'Oracle policy, default kwargs except where shown (Reasoning-v0: `domain="math"`, difficulty drawn '
        "per episode; VoiceService-v0 on its simulated channel: real speech costs seconds per episode, see "
        "the voice channel section), "
        f"{repeats} episodes per row after a 10% warm-up, one process, one core. "
        f"Python {platform.python_version()}, gymnasium {gym.__version__}, {os.cpu_count()} CPUs "
        f"({platform.machine()}).",
    ]
    if anchor_python and math_episode:
        anchor = anchor_us(anchor_python, repeats)
        notes.append(
            f"Same run, reasoning-gym `basic_arithmetic` generate + score: {anchor:.1f} µs p50; "
            f"papergym Reasoning-v0 (raw) reset + step: {math_episode:.1f} µs p50, "
            f"ratio {anchor / math_episode:.2f}× (reasoning-gym / papergym)."
        )
    return "\n".join(lines + notes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--write", default=None, help="markdown file whose env_speed section is replaced")
    parser.add_argument("--anchor-python", default=os.environ.get("PAPERGYM_ANCHOR_PYTHON"))
    args = parser.parse_args()
    result = table(args.repeats, args.anchor_python)
    print(result)
    if args.write:
        write_section(args.write, "env_speed", "Env speed (`papergym bench`)", result)


if __name__ == "__main__":
    main()
