"""A screen as one self-contained HTML page, as Code2World predicts screens (papers/envs.md §1.3): a
``<div id="render-target">`` of 1080x2400 px, body margin 0, inline CSS only, no scripts, no external
resources. Elements are absolutely positioned at their bounds and carry their resource id and flags
as ``data-*`` attributes, so the page round-trips to a `Screen` (issue 8's parser reads them).
Deterministic: a pure function of the screen.
"""

from __future__ import annotations

from html import escape

from papergym.envs.mobile_gui.views import HEIGHT, WIDTH, Element, Screen

THEMES = {
    "light": {"bg": "#ffffff", "fg": "#1b1b1f", "accent": "#1a73e8", "muted": "#f1f3f4", "on": "#ffffff"},
    "dark": {"bg": "#121212", "fg": "#e8eaed", "accent": "#f29900", "muted": "#2b2b2f", "on": "#121212"},
}
_TAGS = {
    "Button": "button",
    "FloatingActionButton": "button",
    "ImageButton": "button",
    "EditText": "input",
    "Switch": "input",
    "CheckBox": "input",
}


def _style(e: Element, colours: dict[str, str]) -> str:
    x0, y0, x1, y1 = e.bounds
    bg = colours["bg"]
    fg = colours["fg"]
    if e.cls in ("Button", "FloatingActionButton", "Tab"):
        bg, fg = colours["accent"], colours["on"]
    elif e.cls in ("StatusBar", "Keyboard", "Dialog", "EditText"):
        bg = colours["muted"]
    return (
        f"position:absolute;left:{x0}px;top:{y0}px;width:{x1 - x0}px;height:{y1 - y0}px;"
        f"background:{bg};color:{fg};font-size:40px;box-sizing:border-box;overflow:hidden"
    )


def _element(e: Element, colours: dict[str, str]) -> str:
    attrs = (
        f'id="{escape(e.id)}" class="{escape(e.cls)}" style="{_style(e, colours)}" '
        f'data-bounds="{",".join(map(str, e.bounds))}"'
    )
    for flag in ("clickable", "editable", "scrollable", "focused"):
        if getattr(e, flag):
            attrs += f' data-{flag}="true"'
    if e.checked is not None:
        attrs += f' data-checked="{str(e.checked).lower()}"'
    text = escape(e.text)
    tag = _TAGS.get(e.cls, "div")
    if tag == "input" and e.cls == "EditText":
        return f'<input type="text" {attrs} value="{text}" placeholder="{escape(e.hint)}">'
    if tag == "input":
        checked = " checked" if e.checked else ""
        return f'<label {attrs}><input type="checkbox"{checked} disabled>{text}</label>'
    return f"<{tag} {attrs}>{text}</{tag}>"


def render_html(screen: Screen) -> str:
    """The screen as a self-contained HTML page (no scripts)."""
    colours = THEMES.get(screen.theme, THEMES["light"])
    body = "\n".join(_element(e, colours) for e in screen.elements)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{escape(screen.app)}: {escape(screen.title)}</title>"
        f"<style>body{{margin:0;font-family:sans-serif}}</style></head>\n"
        f'<body><div id="render-target" data-app="{escape(screen.app)}" data-title="{escape(screen.title)}" '
        f'data-theme="{escape(screen.theme)}" style="position:relative;width:{WIDTH}px;height:{HEIGHT}px;'
        f'background:{colours["bg"]};overflow:hidden">\n{body}\n</div></body></html>'
    )
