"""App layouts: the default one and a held-out one for out-of-distribution tests (WM-R1's OOD
evaluation on new app layouts, papers/envs.md §1.7): primary actions moved from the floating button
to the app bar, fixed buttons moved from the bottom to the top, renamed labels and a dark theme.
Resource ids never change (they are what `tap(id=...)` addresses)."""

from __future__ import annotations

from papergym.envs.mobile_gui.views import Layout

DEFAULT = Layout("default")
HELDOUT = Layout(
    "heldout",
    actions_in_appbar=True,
    footer_on_top=True,
    theme="dark",
    labels={
        "Save": "Done",
        "Delete": "Remove",
        "Add": "New",
        "Add expense": "New expense",
        "New recipe": "Create recipe",
        "Create contact": "Add contact",
        "New event": "Add event",
        "New note": "Compose",
        "Start chat": "Compose message",
        "Send": "Send message",
        "Cancel": "Dismiss",
        "Edit": "Modify",
        "Move": "Move to…",
        "Copy": "Duplicate to…",
        "New folder": "Create folder",
        "New playlist": "Create playlist",
        "Add songs": "Add tracks",
        "Record": "Start recording",
        "Stop": "Finish",
        "Start": "Go",
        "Pause": "Hold",
        "Resume": "Continue",
        "Create": "OK",
        "Resend": "Send again",
        "Copy text": "Copy message",
        "Paste": "Insert clipboard",
        "Add to playing queue": "Play next",
        "Save to Downloads": "Export",
    },
    row_h=170,
)
LAYOUTS: dict[str, Layout] = {"default": DEFAULT, "heldout": HELDOUT}
