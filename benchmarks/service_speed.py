"""ServiceAgent-v0 speed: tool-call step latency and full scripted episodes, beside tau2-bench's gym env.

Usage::

    python benchmarks/service_speed.py [--episodes 300] [--tau2-data ../shared/tau2/retail]
                                       [--write benchmarks/README.md]

Each episode's actions are recorded once from the oracle (tau2 data: the gold script), then replayed
with the timer running: reset + every step (the scripted user's replies included) + the final
evaluation (DB replay of the gold actions and comparison). tau2's figures (23.5 ms per step, 1.74 s per
episode on retail task 0 with its gold script, this project's machines) are from
``../shared/papers/anchors.md``; they are not re-run here (tau2 is not a papergym dependency).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

import papergym  # noqa: F401

BEGIN, END = "<!-- service_speed:begin -->", "<!-- service_speed:end -->"
TAU2_STEP_MS = 23.5
TAU2_EPISODE_MS = 1735.0
DEFAULT_TAU2 = Path(__file__).resolve().parents[2] / "shared" / "tau2" / "retail"


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _script(env: Any, options: dict[str, Any]) -> list[str]:
    env.reset(options=options)
    actions = []
    while True:
        action = env.oracle_action()
        actions.append(action)
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            if not info["success"]:
                raise RuntimeError(f"the oracle failed on {options}: {info}")
            return actions


def measure(env: Any, scripts: list[tuple[dict[str, Any], list[str]]], rounds: int) -> dict[str, Any]:
    """Replay each script ``rounds`` times; per-step and per-episode timings in µs.

    Wall-clock time and the thread's CPU time are both kept: on a loaded machine the wall clock also
    counts the time the process waited for a core, the CPU time only the env's own work.
    """
    tool, message, reset, episode, tool_cpu, episode_cpu, steps = [], [], [], [], [], [], 0
    wall, cpu = time.perf_counter_ns, time.thread_time_ns
    for _ in range(rounds):
        for options, actions in scripts:
            t0, c0 = wall(), cpu()
            env.reset(options=options)
            reset.append((wall() - t0) / 1000)
            for action in actions:
                s, c = wall(), cpu()
                env.step(action)
                spent, spent_cpu = (wall() - s) / 1000, (cpu() - c) / 1000
                if action.startswith("<tool_call>"):
                    tool.append(spent)
                    tool_cpu.append(spent_cpu)
                else:
                    message.append(spent)
            episode.append((wall() - t0) / 1000)
            episode_cpu.append((cpu() - c0) / 1000)
            steps += len(actions)
    return {
        "reset": (_pct(reset, 0.5), _pct(reset, 0.95)),
        "tool": (_pct(tool, 0.5), _pct(tool, 0.95)),
        "message": (_pct(message, 0.5), _pct(message, 0.95)),
        "episode": (_pct(episode, 0.5), _pct(episode, 0.95)),
        "cpu": (_pct(tool_cpu, 0.5), _pct(episode_cpu, 0.5)),
        "steps": statistics.mean(len(a) for _, a in scripts),
    }


def run(episodes: int, tau2_data: Path | None) -> list[tuple[str, dict[str, Any]]]:
    rows = []
    env = gym.make("papergym/ServiceAgent-v0", domain="retail").unwrapped
    scripts = [
        ({"task_id": f"retail/{split}/L1/{i}"}, [])
        for split in ("train", "test")
        for i in range(episodes // 2)
    ]
    scripts = [(o, _script(env, o)) for o, _ in scripts]
    measure(env, scripts[:20], 1)  # warm-up
    name = f"generated retail, {len(scripts)} tasks (all templates), scripted user"
    rows.append((name, measure(env, scripts, 1)))
    if tau2_data is not None and (tau2_data / "tasks.json").is_file():
        env = gym.make("papergym/ServiceAgent-v0", domain="retail", tau2_data=tau2_data).unwrapped
        one = [({"task_id": "0"}, _script(env, {"task_id": "0"}))]
        measure(env, one, 20)
        name = "tau2 retail task 0, gold script (tau2's own files)"
        rows.append((name, measure(env, one, max(episodes, 50))))
        every = [({"task_id": str(i)}, _script(env, {"task_id": str(i)})) for i in range(114)]
        rows.append(("tau2 retail, all 114 tasks, gold scripts", measure(env, every, 2)))
    return rows


def table(rows: list[tuple[str, dict[str, Any]]]) -> str:
    lines = [
        "| episodes | reset p50 / p95 (µs) | tool-call step p50 / p95 (µs) | message step p50 / p95 (µs) "
        "| full episode p50 / p95 (ms) | CPU time p50: tool-call step (µs) / episode (ms) "
        "| steps per episode |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in rows:
        lines.append(
            f"| {name} | {r['reset'][0]:.1f} / {r['reset'][1]:.1f} | {r['tool'][0]:.1f} / {r['tool'][1]:.1f} "
            f"| {r['message'][0]:.1f} / {r['message'][1]:.1f} | {r['episode'][0] / 1000:.2f} / "
            f"{r['episode'][1] / 1000:.2f} | {r['cpu'][0]:.1f} / {r['cpu'][1] / 1000:.2f} "
            f"| {r['steps']:.1f} |"
        )
    lines.append(
        f"| tau2-bench `tau-bench-v0` (anchors.md), retail task 0, gold script | 609,000 / 1,173,000 "
        f"| {TAU2_STEP_MS * 1000:,.0f} / 32,000 (any step) | (same) | {TAU2_EPISODE_MS:,.0f} | - | 8 |"
    )
    tau2_row = next((r for n, r in rows if n.startswith("tau2 retail task 0")), None)
    if tau2_row is not None:
        lines.append("")
        lines.append(
            "Same episode (tau2 retail task 0, gold script): "
            f"papergym {tau2_row['episode'][0] / 1000:.2f} ms vs "
            f"tau2 {TAU2_EPISODE_MS:,.0f} ms ({TAU2_EPISODE_MS * 1000 / tau2_row['episode'][0]:,.0f}x); "
            f"tool-call step {tau2_row['tool'][0]:.1f} µs vs {TAU2_STEP_MS * 1000:,.0f} µs "
            f"({TAU2_STEP_MS * 1000 / tau2_row['tool'][0]:,.0f}x). Targets: step <= 100 µs, episode <= 10 ms."
        )
    lines.append("")
    lines.append(
        f"One process, one env, the env's own `step` (`env.unwrapped`), Python {platform.python_version()}, "
        f"gymnasium {gym.__version__}, {platform.machine()}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} at the end (shared machine: p95 and absolute times move with the load). "
        "tau2's row is quoted, not re-run."
    )
    return "\n".join(lines)


def write(path: Path, text: str) -> None:
    old = path.read_text(encoding="utf-8")
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in old:
        start, end = old.index(BEGIN), old.index(END) + len(END)
        new = old[:start] + block + old[end:]
    else:
        new = old.rstrip("\n") + f"\n\n## Service agent speed (`benchmarks/service_speed.py`)\n\n{block}\n"
    path.write_text(new, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--tau2-data", type=Path, default=DEFAULT_TAU2)
    parser.add_argument("--write", type=Path, default=None)
    args = parser.parse_args()
    text = table(run(args.episodes, args.tau2_data))
    print(text)
    if args.write is not None:
        write(args.write, text)


if __name__ == "__main__":
    main()
