"""Speed of `papergym/MobileGUI-v0`: step latency with the screen rendered as HTML (and as accessibility
text), reset latency, and PIL image / PNG rendering measured separately.

The oracle's actions are recorded first (episodes over every template, default layout, train split) and
then replayed, so the step times exclude the oracle. Each step includes parsing the action, applying it,
laying out the new screen and rendering it (HTML or text) into the observation.

Usage::

    python benchmarks/mobile_speed.py [--episodes 200] [--images 20] [--write benchmarks/README.md]
"""

from __future__ import annotations

import argparse
import io
import platform
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import papergym  # noqa: F401  (registers the ids)
from papergym.envs.mobile_gui.templates import REGISTRY

BEGIN, END = "<!-- mobile_speed:begin -->", "<!-- mobile_speed:end -->"


def record(episodes: int) -> list[tuple[dict, list[str]]]:
    """Oracle episodes: (reset options with the seed, actions)."""
    env = gym.make("papergym/MobileGUI-v0").unwrapped
    names = list(REGISTRY)
    out = []
    for i in range(episodes):
        options = {"template": names[i % len(names)]}
        env.reset(seed=i, options=options)
        actions = []
        while True:
            actions.append(env.oracle_action())
            *_, terminated, truncated, _ = env.step(actions[-1])
            if terminated or truncated:
                break
        out.append(({"seed": i, **options}, actions))
    return out


def replay(screen: str, episodes: list[tuple[dict, list[str]]]) -> tuple[np.ndarray, np.ndarray]:
    """Per-reset and per-step seconds, replaying the recorded episodes on the raw env."""
    env = gym.make("papergym/MobileGUI-v0", screen=screen).unwrapped
    resets, steps = [], []
    for options, actions in episodes:
        seed = options["seed"]
        start = time.perf_counter()
        env.reset(seed=seed, options={"template": options["template"]})
        resets.append(time.perf_counter() - start)
        for action in actions:
            start = time.perf_counter()
            env.step(action)
            steps.append(time.perf_counter() - start)
    return np.array(resets), np.array(steps)


def images(n: int) -> tuple[float, float, int]:
    """p50 seconds of drawing one screen with PIL and of encoding it as PNG; the PNG's size in bytes."""
    from papergym.envs.mobile_gui.render_image import render_image

    env = gym.make("papergym/MobileGUI-v0").unwrapped
    draw, encode, size = [], [], 0
    for i in range(n):
        env.reset(seed=i, options={"template": "SimpleCalendarAddOneEvent"})
        for _ in range(3):
            env.step(env.oracle_action())
        screen = env.phone.screen
        start = time.perf_counter()
        img = render_image(screen)
        draw.append(time.perf_counter() - start)
        buf = io.BytesIO()
        start = time.perf_counter()
        img.save(buf, "PNG")
        encode.append(time.perf_counter() - start)
        size = len(buf.getvalue())
    return float(np.median(draw)), float(np.median(encode)), size


def table(episodes: int, n_images: int) -> str:
    recorded = record(episodes)
    n_steps = sum(len(a) for _, a in recorded)
    rows = []
    for screen in ("html", "text"):
        resets, steps = replay(screen, recorded)
        p50, p90 = np.median(steps) * 1e6, np.percentile(steps, 90) * 1e6
        rows.append(f'| step, screen="{screen}" | {p50:.0f} | {p90:.0f} |')
        if screen == "html":
            rows.append(f"| reset | {np.median(resets) * 1e6:.0f} | {np.percentile(resets, 90) * 1e6:.0f} |")
    draw, encode, size = images(n_images)
    rows.append(f"| PIL drawing of one screen (1160x2480) | {draw * 1e6:.0f} | |")
    rows.append(f"| PNG encoding of it ({size // 1024} KiB) | {encode * 1e6:.0f} | |")
    return "\n".join(
        [
            f"{episodes} oracle episodes over the {len(REGISTRY)} templates ({n_steps} steps), replayed on "
            f"the raw env; one process, Python {platform.python_version()}, {platform.machine()}. Target: "
            "step p50 <= 300 µs with HTML rendering.",
            "",
            "| what | p50 µs | p90 µs |",
            "|---|---|---|",
            *rows,
        ]
    )


def write(readme: Path, text: str) -> None:
    content = readme.read_text()
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in content and END in content:
        head, rest = content.split(BEGIN, 1)
        content = head + block + rest.split(END, 1)[1]
    else:
        content = (
            content.rstrip("\n") + "\n\n## Mobile GUI speed (`benchmarks/mobile_speed.py`)\n\n" + block + "\n"
        )
    readme.write_text(content)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--images", type=int, default=20)
    parser.add_argument("--write", default=None, help="README to write the table into (between its markers)")
    args = parser.parse_args()
    text = table(args.episodes, args.images)
    print(text)
    if args.write:
        write(Path(args.write), text)


if __name__ == "__main__":
    main()
