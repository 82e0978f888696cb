"""The accessibility-tree text of a screen: one line per element, in drawing order.

Each line reads ``[id] Class "text" (x0,y0,x1,y1) flags``: the resource id (``tap(id=...)``
addresses it), the class, the text, the bounds in pixels of the 1080x2400 screen and the flags
clickable / editable / scrollable / checked / unchecked / focused. Deterministic: a pure function of
the screen.
"""

from __future__ import annotations

from papergym.envs.mobile_gui.views import Element, Screen


def element_line(e: Element) -> str:
    flags = []
    if e.clickable:
        flags.append("clickable")
    if e.editable:
        flags.append("editable")
    if e.scrollable:
        flags.append("scrollable")
    if e.checked is not None:
        flags.append("checked" if e.checked else "unchecked")
    if e.focused:
        flags.append("focused")
    text = e.text.replace("\n", "\\n")
    hint = f' hint="{e.hint}"' if e.hint and not e.text else ""
    x0, y0, x1, y1 = e.bounds
    return f'[{e.id}] {e.cls} "{text}"{hint} ({x0},{y0},{x1},{y1}) {" ".join(flags)}'.rstrip()


def render_text(screen: Screen) -> str:
    """The screen as accessibility-tree text."""
    head = f"App: {screen.app} | Screen: {screen.title}"
    return "\n".join([head, *(element_line(e) for e in screen.elements)])
