"""Speed of `papergym/MobileGUI-v0`: step latency with the screen rendered as HTML (and as accessibility
text), reset latency, and drawing / encoding screens measured separately as before / after ratios in one
run (the uncached renderer against the cached one, PIL's default PNG against `encode_screen`).

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
from papergym.envs.mobile_gui.render_image import JPEG_QUALITY
from papergym.envs.mobile_gui.templates import REGISTRY

QWEN_MAX_PIXELS = 1280 * 28 * 28
"""A VLM's input cap: the ``max_pixels`` Qwen2-VL's model card suggests to balance speed and memory (the
processor resizes larger images to fit, so sending more pixels buys nothing)."""


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


def _p50_ms(fn: Any, items: list[Any]) -> tuple[float, float, Any]:
    """p50 wall and CPU milliseconds of ``fn(item)`` over ``items`` (in order), and the last result. CPU is
    this thread's time (`time.thread_time`): the work itself, without the waits of a loaded machine."""
    wall, cpu, out = [], [], None
    for item in items:
        start, start_cpu = time.perf_counter(), time.thread_time()
        out = fn(item)
        cpu.append(time.thread_time() - start_cpu)
        wall.append(time.perf_counter() - start)
    return float(np.median(wall)) * 1e3, float(np.median(cpu)) * 1e3, out


def oracle_screens(episodes: list[tuple[dict, list[str]]]) -> list[Any]:
    """Every screen the agent is shown in the recorded episodes, in order."""
    env = gym.make("papergym/MobileGUI-v0").unwrapped
    screens = []
    for options, actions in episodes:
        env.reset(seed=options["seed"], options={"template": options["template"]})
        screens.append(env.current_screen())
        for action in actions:
            env.step(action)
            screens.append(env.current_screen())
    return screens


def _png(image: Any) -> bytes:
    buf = io.BytesIO()
    image.save(buf, "PNG")
    return buf.getvalue()


def images(screens: list[Any]) -> tuple[list[tuple[str, tuple[float, float], tuple[float, float]]], float]:
    """(what, before (wall, CPU) ms, after (wall, CPU) ms) for drawing screens and encoding them, in one
    run over the same screens in episode order. Before: `render_image(cache=False)` (fonts, canvas and
    text drawn afresh with PIL's ``ImageDraw.text``, the renderer before caching) and PIL's default PNG
    of the same screenshots.
    After: the cached drawing, its caches cleared once before each pass (first sightings of a label
    count), and `encode_screen`. Also the label cache's hit rate over an after pass."""
    from papergym.envs.mobile_gui.render_image import (
        clear_caches,
        encode_screen,
        label_cache_info,
        render_image,
    )

    def cold(fn: Any) -> tuple[float, float, Any]:
        clear_caches()
        return _p50_ms(fn, screens)

    rows = []
    for label, bezel, array in (
        ("PIL drawing of one phone screen", True, False),
        ('`render()`, `render_mode="rgb_array"`: phone drawing + numpy array', True, True),
        ('`screen="image"` observation: bare screenshot + numpy array', False, True),
    ):

        def before(s: Any, bezel: bool = bezel, array: bool = array) -> Any:
            img = render_image(s, bezel=bezel, cache=False)
            return np.asarray(img) if array else img

        def after(s: Any, bezel: bool = bezel, array: bool = array) -> Any:
            img = render_image(s, bezel=bezel)
            return np.asarray(img) if array else img

        *b, img = _p50_ms(before, screens)
        *a, _ = cold(after)
        size = f"{img.shape[1]}x{img.shape[0]}" if array else f"{img.width}x{img.height}"
        rows.append((f"{label} ({size})", tuple(b), tuple(a)))
    hits = label_cache_info()
    shots = [render_image(s, bezel=False) for s in screens]
    *png, png_bytes = _p50_ms(_png, shots)
    for what, fn in (
        (f"JPEG q{JPEG_QUALITY}", encode_screen),
        (f"JPEG q{JPEG_QUALITY}, max_pixels={QWEN_MAX_PIXELS:,}", _encode_capped),
    ):
        *enc, jpeg_bytes = _p50_ms(fn, shots)
        rows.append(
            (
                f"encoding a screenshot for a VLM request: PNG ({len(png_bytes) // 1024} KiB) -> "
                f"{what} ({len(jpeg_bytes) // 1024} KiB)",
                tuple(png),
                tuple(enc),
            )
        )
    return rows, hits.hits / max(1, hits.hits + hits.misses)


def _encode_capped(image: Any) -> bytes:
    from papergym.envs.mobile_gui.render_image import encode_screen

    return encode_screen(image, max_pixels=QWEN_MAX_PIXELS)


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
    screens = oracle_screens(recorded[:n_images])
    measured, hit_rate = images(screens)
    image_rows = [
        f"| {what} | {bw:.1f} / {bc:.1f} | {aw:.1f} / {ac:.1f} | {bw / aw:.1f}x / {bc / ac:.1f}x |"
        for what, (bw, bc), (aw, ac) in measured
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
            f"Screens: p50 over the {len(screens)} screens shown in the first {n_images} of those episodes, "
            "in episode order, one run. Before: `render_image(cache=False)` (the renderer before caching: "
            "fonts, canvas and every label drawn afresh by PIL) and PIL's default PNG; after: "
            "the cached renderer, caches cleared once before each pass, and `encode_screen`. Wall / CPU "
            "(this thread's time, without the waits of a loaded machine). Target: <= 10 ms each. Label "
            f"cache hit rate over a pass: {hit_rate:.1%}.",
            "",
            "| what | before ms (wall / CPU) | after ms (wall / CPU) | speed-up (wall / CPU) |",
            "|---|---|---|---|",
            *image_rows,
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--images", type=int, default=20, help="episodes whose screens are drawn")
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
