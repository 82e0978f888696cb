"""A screen drawn as a phone with PIL (extra ``vision``): a dark bezel with rounded corners around the
1080x2400 screen, each element drawn at its bounds with readable text. Deterministic: a pure function of
the screen (PIL's embedded font)."""

from __future__ import annotations

import io
from functools import lru_cache
from typing import Any

from papergym.core.errors import require
from papergym.envs.mobile_gui.render_html import THEMES
from papergym.envs.mobile_gui.views import HEIGHT, WIDTH, Screen

BEZEL = 40
FONT_SIZE = 38


@lru_cache(maxsize=4)
def _font(size: int) -> Any:
    image_font = require("PIL.ImageFont", "vision")
    return image_font.load_default(size=size)


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


@lru_cache(maxsize=8)
def _frame(theme: str) -> Any:
    """The empty phone of a theme (bezel and screen background): drawn once, copied per screen."""
    image_mod = require("PIL.Image", "vision")
    draw_mod = require("PIL.ImageDraw", "vision")
    bg = _rgb(THEMES[theme]["bg"])
    img = image_mod.new("RGB", (WIDTH + 2 * BEZEL, HEIGHT + 2 * BEZEL), (255, 255, 255))
    draw = draw_mod.Draw(img)
    draw.rounded_rectangle((0, 0, img.width - 1, img.height - 1), radius=90, fill=(20, 20, 24))
    draw.rounded_rectangle((BEZEL, BEZEL, BEZEL + WIDTH, BEZEL + HEIGHT), radius=50, fill=bg)
    return img


def clear_caches() -> None:
    """Forget the cached fonts and phone frames (the benchmark's uncached baseline)."""
    _font.cache_clear()
    _frame.cache_clear()


def encode_screen(image: Any, *, quality: int = 85) -> bytes:
    """A screen as JPEG bytes for a VLM request: ~10x faster than PIL's default PNG at this size
    (benchmarks/mobile_speed.py); text stays legible at the default quality."""
    buf = io.BytesIO()
    image.save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def render_image(screen: Screen) -> Any:
    """The screen as a phone-shaped RGB ``PIL.Image`` ((WIDTH + 2*BEZEL) x (HEIGHT + 2*BEZEL))."""
    draw_mod = require("PIL.ImageDraw", "vision")
    theme = screen.theme if screen.theme in THEMES else "light"
    colours = {k: _rgb(v) for k, v in THEMES[theme].items()}
    img = _frame(theme).copy()
    draw = draw_mod.Draw(img)
    font = _font(FONT_SIZE)
    small = _font(FONT_SIZE - 8)
    for e in screen.elements:
        x0, y0, x1, y1 = (v + BEZEL for v in e.bounds)
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
        use = small if e.cls in ("AppIcon", "StatusBar") else font
        ty = y0 + 95 if e.cls == "AppIcon" else (y0 + y1) // 2 - FONT_SIZE // 2
        label = _fit(draw, text.replace("\n", " "), use, x1 - x0 - (200 if e.checked is not None else 50))
        colour = fg if e.text else tuple(c // 2 + 64 for c in fg)
        draw.text((x0 + 30, ty), label, font=use, fill=colour)
    return img
