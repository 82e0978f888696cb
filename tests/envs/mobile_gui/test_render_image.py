"""Drawn screens: the cached drawing gives PIL's uncached pixels, the bare screenshot, VLM encoding, and
MobileGUI-v0's ``screen="image"`` observations."""

from __future__ import annotations

import io

import gymnasium as gym
import numpy as np
import pytest

import papergym  # noqa: F401
from papergym.envs.mobile_gui import render_image as ri
from papergym.envs.mobile_gui.templates import REGISTRY
from papergym.envs.mobile_gui.views import HEIGHT, WIDTH, Element, Screen

Image = pytest.importorskip("PIL.Image")


def _oracle_screens(layout: str, templates: list[str], steps: int = 4) -> list[Screen]:
    env = gym.make("papergym/MobileGUI-v0", layout=layout).unwrapped
    screens = []
    for i, name in enumerate(templates):
        env.reset(seed=i, options={"template": name})
        screens.append(env.current_screen())
        for _ in range(steps):
            *_, terminated, truncated, _ = env.step(env.oracle_action())
            screens.append(env.current_screen())
            if terminated or truncated:
                break
    return screens


def _long_labels() -> Screen:
    """Labels cut with an ellipsis, a hint, a switch, a seek bar and the keyboard."""
    els = (
        Element("status_bar", "StatusBar", "2026-04-04 08:00  wifi:on  bt:off", (0, 0, WIDTH, 80)),
        Element("row_1", "ListItem", "A very long row text " * 8, (0, 230, WIDTH, 380), True),
        Element("sw", "Switch", "Wi-Fi " * 30, (0, 380, WIDTH, 530), True, checked=True),
        Element("field", "EditText", "", (0, 530, WIDTH, 680), editable=True, focused=True, hint="Name"),
        Element("seek", "SeekBar", "40", (0, 680, WIDTH, 830)),
        Element("keyboard", "Keyboard", "keyboard", (0, 1540, WIDTH, 2240)),
    )
    return Screen("Settings", "Network", els)


@pytest.mark.parametrize("layout", ["default", "heldout"])
def test_cached_drawing_has_the_uncached_pixels(layout: str) -> None:
    screens = [*_oracle_screens(layout, list(REGISTRY)[::9]), _long_labels()]
    ri.clear_caches()
    for bezel in (True, False):
        for screen in screens:
            cached = np.asarray(ri.render_image(screen, bezel=bezel))
            assert np.array_equal(cached, np.asarray(ri.render_image(screen, bezel=bezel, cache=False)))
            # and again from a warm cache
            assert np.array_equal(cached, np.asarray(ri.render_image(screen, bezel=bezel)))
    info = ri.label_cache_info()
    assert info.hits > 0 and 0 < info.currsize <= ri.TEXT_CACHE


def test_the_label_cache_stays_bounded() -> None:
    ri.clear_caches()
    for i in range(ri.TEXT_CACHE + 50):
        ri.render_image(
            Screen("Home", "Home", (Element("t", "TextView", f"label {i}", (0, 80, WIDTH, 230)),))
        )
    assert ri.label_cache_info().currsize == ri.TEXT_CACHE


def test_bare_screenshot_is_the_phones_screen() -> None:
    screen = _oracle_screens("default", ["ContactsAddContact"], steps=2)[-1]
    phone = np.asarray(ri.render_image(screen))
    bare = np.asarray(ri.render_image(screen, bezel=False))
    assert phone.shape == (HEIGHT + 2 * ri.BEZEL, WIDTH + 2 * ri.BEZEL, 3) and bare.shape == (
        HEIGHT,
        WIDTH,
        3,
    )
    b = ri.BEZEL
    # equal away from the phone's rounded screen corners (a screenshot is square)
    assert np.array_equal(bare[100 : HEIGHT - 100], phone[b + 100 : b + HEIGHT - 100, b : b + WIDTH])
    assert bare[HEIGHT - 1, 0].tolist() == [255, 255, 255]  # the light theme's background, not the bezel


def test_encode_screen_sends_a_jpeg_no_larger_than_max_pixels() -> None:
    screen = _long_labels()
    image = ri.render_image(screen, bezel=False)
    full = Image.open(io.BytesIO(ri.encode_screen(image)))
    assert full.format == "JPEG" and full.size == (WIDTH, HEIGHT)
    array = np.asarray(image)
    small = Image.open(io.BytesIO(ri.encode_screen(array, max_pixels=1280 * 28 * 28)))
    assert small.size == (WIDTH // 2, HEIGHT // 2)  # the smallest integer factor under the cap
    assert ri.encode_screen(image, quality=30) != ri.encode_screen(image)
    with pytest.raises(ValueError, match="quality"):
        ri.encode_screen(image, quality=0)
    with pytest.raises(ValueError, match="max_pixels"):
        ri.encode_screen(image, max_pixels=0)


@pytest.mark.parametrize("obs_mode", ["text", "chat"])
def test_image_observations_show_the_current_screenshot(obs_mode: str) -> None:
    env = gym.make("papergym/MobileGUI-v0", screen="image", obs_mode=obs_mode)
    obs, _ = env.reset(seed=2, options={"template": "SystemWifiTurnOn"})
    u = env.unwrapped
    assert obs in env.observation_space and obs["image"].shape == (HEIGHT, WIDTH, 3)
    first = obs["image"]
    assert np.array_equal(first, np.asarray(ri.render_image(u.current_screen(), bezel=False)))
    text = obs["text"] if obs_mode == "text" else obs["text"][-1]["content"]
    assert text.rstrip().endswith("Screen:\n<image>") and "[status_bar]" not in text
    assert "may name an element by the id" not in (text if obs_mode == "text" else obs["text"][0]["content"])
    obs, *_ = env.step(u.oracle_action())
    assert obs in env.observation_space
    assert not np.array_equal(obs["image"], first)  # the oracle's first tap opened another screen
    assert np.array_equal(obs["image"], np.asarray(ri.render_image(u.current_screen(), bezel=False)))
