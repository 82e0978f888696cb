"""A screen drawn with PIL (extra ``vision``): the 1080x2400 screenshot WM-R1's policy sees (papers/envs.md
§1.2), optionally inside a dark phone bezel with rounded corners; each element drawn at its bounds with
readable text. Deterministic: a pure function of the screen (PIL's embedded font).

Drawing is cached between screens (issue 25): the fonts, the empty phone or screenshot canvas of each
theme, each label's fitted text and each label's rasterised glyph run (its anti-aliased mask) are made once
and reused, so a screen costs a canvas copy and the blends of its masks. ``cache=False`` draws everything
afresh with PIL's own `ImageDraw.text` (the path before caching: the benchmarks' baseline and the tests'
reference); both give the same pixels.
"""

from __future__ import annotations

import io
from functools import lru_cache
from typing import Any

from papergym.core.errors import require
from papergym.envs.mobile_gui.render_html import THEMES
from papergym.envs.mobile_gui.views import HEIGHT, WIDTH, Screen

BEZEL = 40
FONT_SIZE = 38
TEXT_CACHE = 256
"""Labels kept rasterised (least recently used go first; inferred: an episode shows well under a hundred
distinct labels, and a label's mask is ~10-20 KiB, so a few MiB in all)."""
JPEG_QUALITY = 85
"""`encode_screen`'s default JPEG quality (inferred): the 38 px labels stay legible, ~120 KiB a screen."""


def _load_font(size: int) -> Any:
    image_font = require("PIL.ImageFont", "vision")
    return image_font.load_default(size=size)


_font = lru_cache(maxsize=4)(_load_font)


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _fit(draw: Any, text: str, font: Any, width: int) -> str:
    """The text cut (with an ellipsis) to fit ``width`` pixels."""
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "…", font=font) > width:
        text = text[:-1]
    return text + "…"


@lru_cache(maxsize=1)
def _measure() -> Any:
    """A drawing context of the phone's mode, for measuring text (`ImageDraw.textlength`)."""
    image_mod = require("PIL.Image", "vision")
    draw_mod = require("PIL.ImageDraw", "vision")
    return draw_mod.Draw(image_mod.new("RGB", (1, 1)))


@lru_cache(maxsize=TEXT_CACHE)
def _label(text: str, size: int, width: int) -> tuple[Any, tuple[int, int]]:
    """The text fitted to ``width`` as one line's anti-aliased mask and offset, rasterised as
    `ImageDraw.text` does for an RGB image at integer coordinates (mode ``L``, anchor ``la``, start
    ``(0, 0)``)."""
    font = _font(size)
    fitted = _fit(_measure(), text, font, width)
    return font.getmask2(fitted, "L", None, None, None, 0, "la", 0, (0.0, 0.0), stroke_filled=True)


def _draw_canvas(theme: str, bezel: bool) -> Any:
    """The empty phone of a theme (bezel and screen background) or, without the bezel, the empty
    screenshot."""
    image_mod = require("PIL.Image", "vision")
    draw_mod = require("PIL.ImageDraw", "vision")
    bg = _rgb(THEMES[theme]["bg"])
    if not bezel:
        return image_mod.new("RGB", (WIDTH, HEIGHT), bg)
    img = image_mod.new("RGB", (WIDTH + 2 * BEZEL, HEIGHT + 2 * BEZEL), (255, 255, 255))
    draw = draw_mod.Draw(img)
    draw.rounded_rectangle((0, 0, img.width - 1, img.height - 1), radius=90, fill=(20, 20, 24))
    draw.rounded_rectangle((BEZEL, BEZEL, BEZEL + WIDTH, BEZEL + HEIGHT), radius=50, fill=bg)
    return img


_canvas = lru_cache(maxsize=8)(_draw_canvas)


def clear_caches() -> None:
    """Forget the cached fonts, canvases, fitted texts and glyph runs."""
    for cached in (_font, _canvas, _label, _measure):
        cached.cache_clear()


def label_cache_info() -> Any:
    """The label cache's hits, misses and size (``functools`` ``CacheInfo``), for benchmarks."""
    return _label.cache_info()


class _Painter:
    """Draws labels on one image: through the caches, or afresh with PIL's `ImageDraw.text`."""

    def __init__(self, draw: Any, cache: bool) -> None:
        self.draw = draw
        self.cache = cache
        self.fonts: dict[int, Any] = {}

    def font(self, size: int) -> Any:
        if size not in self.fonts:
            self.fonts[size] = _font(size) if self.cache else _load_font(size)
        return self.fonts[size]

    def label(self, xy: tuple[int, int], text: str, size: int, width: int, colour: tuple[int, ...]) -> None:
        """``text`` cut to ``width`` pixels, drawn at ``xy``."""
        if not self.cache:
            font = self.font(size)
            self.draw.text(xy, _fit(self.draw, text, font, width), font=font, fill=colour)
            return
        mask, (dx, dy) = _label(text, size, width)
        core = self.draw.draw  # PIL's drawing core: the call `ImageDraw.text` ends in, so the pixels match
        core.draw_bitmap((xy[0] + dx, xy[1] + dy), mask, core.draw_ink(colour))


def encode_screen(image: Any, *, quality: int = JPEG_QUALITY, max_pixels: int | None = None) -> bytes:
    """A screen as JPEG bytes for a VLM request (an ``image_url`` data URL, an upload).

    JPEG at ``quality`` with PIL's default 4:2:0 chroma subsampling: ~10x cheaper than PIL's default PNG
    at this size, and no slower to decode (benchmarks/mobile_speed.py, mobile section of its README).

    Args:
        image: a ``PIL.Image`` (`render_image`'s) or an ``(H, W, 3)`` uint8 array (an ``"image"``
            observation, ``render()``).
        quality: JPEG quality, 1-95.
        max_pixels: shrink by the smallest integer factor that brings width x height to at most this
            (box filter, `PIL.Image.Image.reduce`), as a VLM's processor caps its input (Qwen2.5-VL's
            ``max_pixels``) so the bytes sent are no larger than what the model sees; None keeps the size.
    """
    if not 1 <= quality <= 95:
        raise ValueError(f"quality must be in 1..95, got {quality}")
    if max_pixels is not None and max_pixels < 1:
        raise ValueError(f"max_pixels must be >= 1 or None, got {max_pixels}")
    if not hasattr(image, "save"):
        image = require("PIL.Image", "vision").fromarray(image)
    if max_pixels is not None:
        factor = 1
        while (image.width // factor) * (image.height // factor) > max_pixels:
            factor += 1
        if factor > 1:
            image = image.reduce(factor)
    buf = io.BytesIO()
    image.save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def render_image(screen: Screen, *, bezel: bool = True, cache: bool = True) -> Any:
    """The screen as an RGB ``PIL.Image``.

    Args:
        screen: what to draw.
        bezel: inside a phone ((WIDTH + 2*BEZEL) x (HEIGHT + 2*BEZEL), ``render()``'s picture) or, False,
            the bare WIDTH x HEIGHT screenshot (what a VLM policy sees: ``screen="image"``).
        cache: reuse fonts, canvases and glyph runs across screens (same pixels; False is the uncached
            baseline).
    """
    draw_mod = require("PIL.ImageDraw", "vision")
    theme = screen.theme if screen.theme in THEMES else "light"
    colours = {k: _rgb(v) for k, v in THEMES[theme].items()}
    img = (_canvas if cache else _draw_canvas)(theme, bezel).copy()
    draw = draw_mod.Draw(img)
    paint = _Painter(draw, cache)
    off = BEZEL if bezel else 0
    for e in screen.elements:
        x0, y0, x1, y1 = (v + off for v in e.bounds)
        if x1 <= x0 or y1 <= y0 or e.cls == "RecyclerView":
            continue
        fg = colours["fg"]
        if e.cls in ("Button", "FloatingActionButton", "Tab"):
            radius = 40 if e.cls == "FloatingActionButton" else 18
            draw.rounded_rectangle((x0 + 8, y0 + 10, x1 - 8, y1 - 10), radius=radius, fill=colours["accent"])
            fg = colours["on"]
        elif e.cls in ("StatusBar", "Keyboard", "Dialog"):
            draw.rectangle((x0, y0, x1, y1), fill=colours["muted"])
        elif e.cls == "EditText":
            draw.rectangle(
                (x0 + 20, y0 + 12, x1 - 20, y1 - 12), outline=colours["accent"] if e.focused else fg, width=3
            )
        elif e.cls == "ListItem":
            draw.line((x0 + 20, y1 - 1, x1 - 20, y1 - 1), fill=colours["muted"], width=2)
        elif e.cls == "AppIcon":
            cx = (x0 + x1) // 2
            draw.ellipse((cx - 40, y0 + 10, cx + 40, y0 + 90), fill=colours["accent"])
        elif e.cls == "SeekBar":
            mid = (y0 + y1) // 2
            draw.line((x0 + 20, mid, x1 - 20, mid), fill=fg, width=6)
            value = int(e.text) if e.text.isdigit() else 0
            knob = x0 + 20 + (x1 - x0 - 40) * value // 100
            draw.ellipse((knob - 22, mid - 22, knob + 22, mid + 22), fill=colours["accent"])
            continue
        if e.checked is not None:
            box = (x1 - 150, (y0 + y1) // 2 - 30, x1 - 40, (y0 + y1) // 2 + 30)
            draw.rounded_rectangle(box, radius=30, fill=colours["accent"] if e.checked else colours["muted"])
        text = "<" if e.id == "up" else (e.text or e.hint)
        if e.cls == "Keyboard":
            text = "Q W E R T Y U I O P   A S D F G H J K L   Z X C V B N M"
        if not text:
            continue
        size = FONT_SIZE - 8 if e.cls in ("AppIcon", "StatusBar") else FONT_SIZE
        ty = y0 + 95 if e.cls == "AppIcon" else (y0 + y1) // 2 - FONT_SIZE // 2
        width = x1 - x0 - (200 if e.checked is not None else 50)
        colour = fg if e.text else tuple(c // 2 + 64 for c in fg)
        paint.label((x0 + 30, ty), text.replace("\n", " "), size, width, colour)
    return img
