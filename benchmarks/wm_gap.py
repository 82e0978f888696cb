"""Judged vs true success in `papergym/WorldModelGUI-v0` as the world model's error rate grows (WM-R1's
world-model exploitation gap, papers/envs.md §1.7).

For each error rate ε, `NoisyWorldModel` draws each error mode per prediction with probability ε (a
transition that does not happen, a dropped element, a hallucinated "Saved ✓" button, a reversed text) and
a wrong screen (home) with probability ε/4. The judge is the default final-screen check on the predicted
screen; true success is the simulator's check on the same actions. Two policies: the oracle (reading the
predicted screens; when a screen cannot be read it waits) and the oracle with mistakes: with probability
``MISTAKE_RATE`` per step (its own seeded coin) it takes a random non-finishing canned action instead.

Usage::

    python benchmarks/wm_gap.py [--episodes 100] [--write benchmarks/README.md]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import gymnasium as gym
from readme_section import write_section

import papergym  # noqa: F401  (registers the ids)
from papergym.envs.mobile_gui.templates import REGISTRY
from papergym.envs.mobile_gui.world_models import NoisyWorldModel

RATES = (0.0, 0.05, 0.1, 0.2, 0.4)
MISTAKE_RATE = 0.2
"""The mistaken policy's per-step error rate (fixed before measuring)."""


def run(rate: float, mistakes: float, episodes: int) -> tuple[float, float]:
    """(judged success rate, true success rate) over ``episodes`` tasks, one per template in turn."""
    wm = NoisyWorldModel.at_rate(rate)
    # training=False: the evaluation simulator reports info["true_success"] at the end of each episode
    env = gym.make("papergym/WorldModelGUI-v0", world_model=wm, training=False).unwrapped
    canned = [a for a in env.canned_actions if "finished" not in a]
    names = list(REGISTRY)
    judged = true = 0
    for i in range(episodes):
        coin = random.Random(10_000 + i)
        env.reset(seed=i, options={"template": names[i % len(names)], "split": "test"})
        while True:
            action = env.oracle_action()
            if coin.random() < mistakes and "finished(" not in action:
                action = coin.choice(canned)
            *_, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        judged += bool(info["success"])
        true += bool(info.get("true_success", False))
    return judged / episodes, true / episodes


def table(episodes: int) -> str:
    rows = []
    for rate in RATES:
        cells = []
        for mistakes in (0.0, MISTAKE_RATE):
            j, t = run(rate, mistakes, episodes)
            cells.append(f"{j:.2f} | {t:.2f} | {j - t:+.2f}")
        rows.append(f"| {rate:.2f} | " + " | ".join(cells) + " |")
    return "\n".join(
        [
            f"{episodes} test-split episodes per cell (templates in turn), default final-screen judge; the "
            f"mistaken policy errs with probability {MISTAKE_RATE} per step.",
            "",
            "| ε | oracle judged | oracle true | gap | mistaken judged | mistaken true | gap |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--write", default=None)
    args = parser.parse_args()
    text = table(args.episodes)
    print(text)
    if args.write:
        write_section(Path(args.write), "wm_gap", "World-model success gap (`benchmarks/wm_gap.py`)", text)


if __name__ == "__main__":
    main()
