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
from typing import Any

import gymnasium as gym
import numpy as np
from readme_section import write_section

import papergym  # noqa: F401  (registers the ids)
from papergym.envs.mobile_gui.templates import REGISTRY


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


def _p50_ms(fn: Any, screens: list[Any]) -> tuple[float, Any]:
    """p50 milliseconds of ``fn(screen)`` over ``screens`` and its last result."""
    times, out = [], None
    for screen in screens:
        start = time.perf_counter()
        out = fn(screen)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3, out


def images(n: int) -> list[tuple[str, float, float]]:
    """(what, before ms, after ms) for drawing a screen and encoding it, measured in one run: before is
    the same drawing with its caches cleared each time and PIL's default PNG; after is the cached drawing
    and `encode_screen` (JPEG)."""
    from papergym.envs.mobile_gui.render_image import clear_caches, encode_screen, render_image

    env = gym.make("papergym/MobileGUI-v0").unwrapped
    screens = []
    for i in range(n):
        env.reset(seed=i, options={"template": "SimpleCalendarAddOneEvent"})
        for _ in range(3):
            env.step(env.oracle_action())
        screens.append(env.phone.screen)

    def uncached(screen: Any) -> Any:
        clear_caches()
        return render_image(screen)

    def png(image: Any) -> bytes:
        buf = io.BytesIO()
        image.save(buf, "PNG")
        return buf.getvalue()

    draw_before, img = _p50_ms(uncached, screens)
    draw_after, img = _p50_ms(render_image, screens)
    array_before, _ = _p50_ms(lambda s: np.asarray(uncached(s)), screens)
    array_after, _ = _p50_ms(lambda s: np.asarray(render_image(s)), screens)
    images_ = [render_image(s) for s in screens]
    png_ms, png_bytes = _p50_ms(png, images_)
    jpeg_ms, jpeg_bytes = _p50_ms(encode_screen, images_)
    return [
        (f"PIL drawing of one screen ({img.width}x{img.height})", draw_before, draw_after),
        ('`render()` with `render_mode="rgb_array"` (drawing + numpy array)', array_before, array_after),
        (
            f"encoding it for a VLM request (PNG {len(png_bytes) // 1024} KiB -> "
            f"JPEG q85 {len(jpeg_bytes) // 1024} KiB)",
            png_ms,
            jpeg_ms,
        ),
    ]


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
    image_rows = [
        f"| {what} | {before:.1f} | {after:.1f} | {before / after:.1f}x |"
        for what, before, after in images(n_images)
    ]
    return "\n".join(
        [
            f"{episodes} oracle episodes over the {len(REGISTRY)} templates ({n_steps} steps), replayed on "
            f"the raw env; one process, Python {platform.python_version()}, {platform.machine()}. Target: "
            "step p50 <= 300 µs with HTML rendering.",
            "",
            "| what | p50 µs | p90 µs |",
            "|---|---|---|",
            *rows,
            "",
            f"Screens (p50 over {n_images} screens, one run: before = caches cleared each time and PIL's "
            "default PNG; after = cached phone frame and fonts, JPEG quality 85). Target: <= 10 ms each.",
            "",
            "| what | before ms | after ms | speed-up |",
            "|---|---|---|---|",
            *image_rows,
        ]
    )


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
        write_section(
            Path(args.write), "mobile_speed", "Mobile GUI speed (`benchmarks/mobile_speed.py`)", text
        )


if __name__ == "__main__":
    main()
