"""Page images for visual-document use: a page's text drawn on a white page with PIL.

PIL is optional (``pip install "papergym[vision]"``) and imported only when an image is drawn.
"""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from papergym.core.errors import require

PAGE_SIZE: tuple[int, int] = (612, 792)
"""Width and height in pixels (a US-letter page at 72 dpi; inferred)."""
MARGIN = 36
LINE_HEIGHT = 14
WRAP = 92


def render_page_image(text: str, *, size: tuple[int, int] = PAGE_SIZE) -> Any:
    """Draw ``text`` (a page of a document) as an RGB ``PIL.Image.Image``.

    The first line (the running header) is drawn as the page header with a rule under it; table
    rows (lines starting with ``|``) are drawn as ruled rows; long lines wrap. Text that does not
    fit is cut at the bottom margin.

    Args:
        text: the page text.
        size: ``(width, height)`` in pixels.

    Raises:
        DependencyNotInstalled: Pillow is not installed.
    """
    image_mod = require("PIL.Image", "vision")
    draw_mod = require("PIL.ImageDraw", "vision")
    font_mod = require("PIL.ImageFont", "vision")
    width, height = size
    image = image_mod.new("RGB", (width, height), "white")
    draw = draw_mod.Draw(image)
    font = font_mod.load_default()
    y = MARGIN
    lines = text.splitlines() or [""]
    draw.text((MARGIN, y), lines[0], fill=(40, 40, 120), font=font)
    y += LINE_HEIGHT + 4
    draw.line((MARGIN, y, width - MARGIN, y), fill=(160, 160, 160))
    y += 6
    for line in lines[1:]:
        if line.startswith("|---"):
            continue
        wrapped = textwrap.wrap(line, WRAP) or [""]
        for part in wrapped:
            if y + LINE_HEIGHT > height - MARGIN:
                return image
            if line.startswith("|"):
                draw.rectangle((MARGIN, y - 1, width - MARGIN, y + LINE_HEIGHT - 2), outline=(200, 200, 200))
            draw.text((MARGIN + 4, y), part, fill="black", font=font)
            y += LINE_HEIGHT
    return image


def page_array(text: str, *, size: tuple[int, int] = PAGE_SIZE) -> np.ndarray:
    """`render_page_image` as a ``uint8`` array of shape ``(height, width, 3)``."""
    return np.asarray(render_page_image(text, size=size), dtype=np.uint8)
