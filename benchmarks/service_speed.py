"""ServiceAgent-v0 speed: tool-call step latency and full scripted episodes, beside tau2-bench's gym env.

Usage::

    python benchmarks/service_speed.py [--episodes 300] [--tau2-data ../shared/tau2/retail]
        [--tau2-python /tmp/tau2venv/bin/python --tau2-domains /tmp/tau2data] [--write benchmarks/README.md]

Each episode's actions are recorded once from the oracle (tau2 data: the gold script), then replayed
with the timer running: reset + every step (the scripted user's replies included) + the final
evaluation (DB replay of the gold actions and comparison).

With ``--tau2-python`` (a Python with tau2-bench installed) and ``--tau2-domains`` (a tau2 data folder:
``tau2/domains/<domain>/`` for retail, airline and telecom, each with its ``tasks.json``), the same
episodes (the first ``--tau2-tasks`` tasks of each domain, gold scripts) are also timed on tau2's own gym
env by ``tau2_gym_speed.py`` in that Python, in the same run, and the ratios are given. Without them the
tau2 comparison is skipped and tau2's figures from ``../shared/papers/anchors.md`` (23.5 ms per step,
1.74 s per retail episode) are quoted instead (tau2 is not a papergym dependency).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
from readme_section import write_section

import papergym  # noqa: F401
from papergym.envs.service.tau2_data import load_tau2_folder

TAU2_STEP_MS = 23.5
TAU2_EPISODE_MS = 1735.0
DEFAULT_TAU2 = Path(__file__).resolve().parents[2] / "shared" / "tau2" / "retail"
GYM_SPEED = Path(__file__).resolve().parent / "tau2_gym_speed.py"
DOMAINS = ("retail", "airline", "telecom")


def _pct(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
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


def _tau2_gym(python: Path, data: Path, domain: str, task_ids: list[str]) -> dict[str, Any]:
    """tau2's gym env on ``task_ids`` (``tau2_gym_speed.py`` run by ``python``): p50s in µs."""
    command = [str(python), str(GYM_SPEED), "--domain", domain, "--tasks", ",".join(task_ids)]
    env = {**os.environ, "TAU2_DATA_DIR": str(data)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    episodes = result["episodes"]
    tool = [t * 1e6 for e in episodes for t, call in zip(e["steps"], e["tool_call"], strict=True) if call]
    return {
        "tool": statistics.median(tool) if tool else float("nan"),
        "reset": statistics.median(e["reset"] * 1e6 for e in episodes),
        "episode": statistics.median(e["episode"] * 1e6 for e in episodes),
        "steps": statistics.mean(len(e["steps"]) for e in episodes),
        "solved": sum(e["reward"] == 1.0 and e["done"] for e in episodes),
        "load": result["load"],
    }


def compare(python: Path, data: Path, n_tasks: int, rounds: int) -> list[dict[str, Any]]:
    """Each domain's first ``n_tasks`` tau2 tasks (gold scripts) on papergym and on tau2's gym env."""
    out = []
    for domain in DOMAINS:
        folder = data / "tau2" / "domains" / domain
        env = gym.make("papergym/ServiceAgent-v0", domain=domain, tau2_data=folder).unwrapped
        task_ids = list(load_tau2_folder(folder, domain).tasks)[:n_tasks]
        scripts = [({"task_id": t}, _script(env, {"task_id": t})) for t in task_ids]
        measure(env, scripts, 2)  # warm-up
        ours = measure(env, scripts, rounds)
        load_before = os.getloadavg()[0]
        theirs = _tau2_gym(python, data, domain, task_ids)
        out.append({"domain": domain, "tasks": len(task_ids), "papergym": ours, "tau2": theirs})
        out[-1]["load"] = load_before
    return out


def comparison_table(rows: list[dict[str, Any]]) -> str:
    """papergym vs tau2's gym env, per domain, with the ratios."""
    lines = [
        "| domain (tau2 tasks, gold scripts) | tool-call step p50: papergym (µs) / tau2 (ms) / ratio "
        "| reset p50: papergym (µs) / tau2 (ms) | episode p50: papergym (ms) / tau2 (ms) / ratio "
        "| steps per episode: papergym / tau2 | tau2 episodes at reward 1.0 "
        "| load average (papergym / tau2) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ours, theirs = r["papergym"], r["tau2"]
        lines.append(
            f"| {r['domain']} (first {r['tasks']}) | {ours['tool'][0]:.1f} / {theirs['tool'] / 1000:.1f} / "
            f"{theirs['tool'] / ours['tool'][0]:,.0f}x "
            f"| {ours['reset'][0]:.1f} / {theirs['reset'] / 1000:,.0f} "
            f"| {ours['episode'][0] / 1000:.2f} / {theirs['episode'] / 1000:,.0f} / "
            f"{theirs['episode'] / ours['episode'][0]:,.0f}x | {ours['steps']:.1f} / {theirs['steps']:.1f} "
            f"| {theirs['solved']} of {r['tasks']} | {r['load']:.1f} / {theirs['load']:.1f} |"
        )
    return "\n".join(lines)


def table(rows: list[tuple[str, dict[str, Any]]], comparison: list[dict[str, Any]] | None = None) -> str:
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
    if comparison is None:
        lines.append(
            f"| tau2-bench `tau-bench-v0` (anchors.md), retail task 0, gold script | 609,000 / 1,173,000 "
            f"| {TAU2_STEP_MS * 1000:,.0f} / 32,000 (any step) | (same) | {TAU2_EPISODE_MS:,.0f} | - | 8 |"
        )
    tau2_row = next((r for n, r in rows if n.startswith("tau2 retail task 0")), None)
    if tau2_row is not None and comparison is None:
        lines.append("")
        lines.append(
            "Same episode (tau2 retail task 0, gold script): "
            f"papergym {tau2_row['episode'][0] / 1000:.2f} ms vs "
            f"tau2 {TAU2_EPISODE_MS:,.0f} ms ({TAU2_EPISODE_MS * 1000 / tau2_row['episode'][0]:,.0f}x); "
            f"tool-call step {tau2_row['tool'][0]:.1f} µs vs {TAU2_STEP_MS * 1000:,.0f} µs "
            f"({TAU2_STEP_MS * 1000 / tau2_row['tool'][0]:,.0f}x). Targets: step <= 100 µs, episode <= 10 ms."
        )
    if comparison is not None:
        lines += ["", "papergym vs tau2-bench's own gym env, the same episodes measured in this run:", ""]
        lines.append(comparison_table(comparison))
    lines.append("")
    lines.append(
        f"One process, one env, the env's own `step` (`env.unwrapped`), Python {platform.python_version()}, "
        f"gymnasium {gym.__version__}, {platform.machine()}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} at the end (shared machine: p95 and absolute times move with the load). "
        + (
            "tau2's row is quoted, not re-run."
            if comparison is None
            else "tau2: its gym env in a separate Python (tau2_gym_speed.py), one episode per task after "
            "one warm-up; its user is tau2's UserSimulator with the LLM call replaced by the script. "
            "Compare ratios, not absolute times."
        )
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--tau2-data", type=Path, default=DEFAULT_TAU2)
    parser.add_argument("--tau2-python", type=Path, default=None, help="a Python with tau2 installed")
    parser.add_argument("--tau2-domains", type=Path, default=None, help="tau2's data folder (tau2/domains/)")
    parser.add_argument("--tau2-tasks", type=int, default=5, help="tasks per domain in the tau2 comparison")
    parser.add_argument("--write", type=Path, default=None)
    args = parser.parse_args()
    comparison = None
    if args.tau2_python is not None and args.tau2_domains is not None:
        comparison = compare(args.tau2_python, args.tau2_domains, args.tau2_tasks, rounds=20)
    else:
        sys.stderr.write("tau2 comparison skipped: pass --tau2-python and --tau2-domains to run it\n")
    text = table(run(args.episodes, args.tau2_data), comparison)
    print(text)
    if args.write is not None:
        write_section(
            args.write, "service_speed", "Service agent speed (`benchmarks/service_speed.py`)", text
        )


if __name__ == "__main__":
    main()
