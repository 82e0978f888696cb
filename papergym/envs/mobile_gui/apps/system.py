"""The home screen and app launcher, system settings, the clock and the audio recorder."""

from __future__ import annotations

from papergym.envs.mobile_gui.apps.base import dialog
from papergym.envs.mobile_gui.phone import NavEntry, PhoneState
from papergym.envs.mobile_gui.views import Command, Item, ScreenSpec

DOCK = ("sms", "contacts", "settings", "clock")


class HomeApp:
    """The home screen (a dock and an "All apps" button) and the launcher grid of every app."""

    key, label = "home", "Home"

    def __init__(self, labels: dict[str, str]) -> None:
        self._labels = dict(labels)

    def root(self) -> NavEntry:
        return NavEntry("home", "home")

    def build(self, state: PhoneState, entry: NavEntry) -> ScreenSpec:
        labels = self._labels
        if entry.screen == "launcher":
            items = [
                Item(f"app_{k}", "AppIcon", v, ("launch", k))
                for k, v in sorted(labels.items(), key=lambda kv: kv[1].lower())
            ]
            return ScreenSpec("All apps", items, grid=4)
        items = [Item(f"app_{k}", "AppIcon", labels[k], ("launch", k)) for k in DOCK if k in labels]
        items.append(Item("all_apps", "AppIcon", "All apps", ("push", "launcher", None)))
        return ScreenSpec("Home", items, root=True, grid=4)

    def handle(self, state: PhoneState, entry: NavEntry, cmd: Command) -> str | None:
        return f"Unknown command {cmd[0]!r}."


class SettingsApp:
    key, label = "settings", "Settings"

    def root(self) -> NavEntry:
        return NavEntry(self.key, "main")

    def build(self, state: PhoneState, entry: NavEntry) -> ScreenSpec:
        st = state.settings
        items = [
            Item("wifi", "Switch", "Wi-Fi", ("toggle", "wifi"), checked=bool(st["wifi"])),
            Item("bluetooth", "Switch", "Bluetooth", ("toggle", "bluetooth"), checked=bool(st["bluetooth"])),
            Item("brightness_label", "TextView", f"Brightness: {st['brightness']}%"),
            Item("brightness", "SeekBar", str(st["brightness"]), ("slider", "brightness")),
        ]
        return ScreenSpec("Settings", items, root=True)

    def handle(self, state: PhoneState, entry: NavEntry, cmd: Command) -> str | None:
        if cmd[0] == "toggle":
            state.settings[cmd[1]] = not state.settings[cmd[1]]
            return None
        if cmd[0] == "slider":  # ("slider", key, fraction in [0, 1]) from the tap position
            frac = float(cmd[2]) if len(cmd) > 2 else 0.5
            state.settings[cmd[1]] = round(100 * min(1.0, max(0.0, frac)))
            return None
        return f"Unknown command {cmd[0]!r}."


class ClockApp:
    """A stopwatch (start, pause, reset) and a timer entered as hours, minutes and seconds."""

    key, label = "clock", "Clock"

    def root(self) -> NavEntry:
        return NavEntry(self.key, "stopwatch")

    def build(self, state: PhoneState, entry: NavEntry) -> ScreenSpec:
        clock = state.clock
        items = [
            Item(
                "tab_stopwatch",
                "Tab",
                "Stopwatch",
                ("tab", "stopwatch"),
                role="header",
                checked=entry.screen == "stopwatch",
            ),
            Item(
                "tab_timer", "Tab", "Timer", ("tab", "timer"), role="header", checked=entry.screen == "timer"
            ),
        ]
        if entry.screen == "timer":
            timer = clock.setdefault("timer", {"running": False})
            for key in ("hours", "minutes", "seconds"):
                items.append(Item(f"timer_{key}", "EditText", "", editable=True, hint=key.capitalize()))
            label = "Stop" if timer.get("running") else "Start"
            items.append(Item("timer_start", "Button", label, ("timer",), role="footer"))
            return ScreenSpec("Timer", items, root=True)
        sw = clock.setdefault("stopwatch", "stopped")
        items.append(
            Item(
                "stopwatch_state",
                "TextView",
                {"stopped": "00:00.0", "running": "Running", "paused": "Paused"}[sw],
            )
        )
        main = {"stopped": "Start", "running": "Pause", "paused": "Resume"}[sw]
        items.append(Item("stopwatch_start", "Button", main, ("stopwatch",), role="footer"))
        if sw != "stopped":
            items.append(Item("stopwatch_reset", "Button", "Reset", ("stopwatch_reset",), role="footer"))
        return ScreenSpec("Stopwatch", items, root=True)

    def handle(self, state: PhoneState, entry: NavEntry, cmd: Command) -> str | None:
        clock = state.clock
        if cmd[0] == "tab":
            if cmd[1] != entry.screen:
                state.stack[-1] = NavEntry(self.key, cmd[1])
                state.focus = None
        elif cmd[0] == "stopwatch":
            sw = clock.get("stopwatch", "stopped")
            clock["stopwatch"] = "paused" if sw == "running" else "running"
        elif cmd[0] == "stopwatch_reset":
            clock["stopwatch"] = "stopped"
        elif cmd[0] == "timer":
            timer = clock.setdefault("timer", {"running": False})
            if timer.get("running"):
                timer["running"] = False
            else:
                timer.update({k: entry.draft.get(f"timer_{k}", "") for k in ("hours", "minutes", "seconds")})
                timer["running"] = True
        else:
            return f"Unknown command {cmd[0]!r}."
        return None


class RecorderApp:
    """Recordings list; record, stop, then name and save the clip in a dialog."""

    key, label, collection = "recorder", "Audio Recorder", "recordings"

    def root(self) -> NavEntry:
        return NavEntry(self.key, "list")

    def build(self, state: PhoneState, entry: NavEntry) -> ScreenSpec:
        if entry.screen == "recording":
            items = [
                Item("rec_state", "TextView", "Recording… 00:07"),
                Item("stop", "Button", "Stop", ("stop",), role="footer"),
            ]
            return ScreenSpec("Recording", items)
        items = [
            Item(f"row_{r['id']}", "ListItem", f"{r['name']} · {r['length']}")
            for r in state.records(self.collection)
        ]
        items.append(Item("record", "Button", "Record", ("record",), role="action"))
        return ScreenSpec("Audio Recorder", items, root=True)

    def handle(self, state: PhoneState, entry: NavEntry, cmd: Command) -> str | None:
        if cmd[0] == "record":
            state.stack.append(NavEntry(self.key, "recording"))
        elif cmd[0] == "stop":
            n = len(state.records(self.collection)) + 1
            state.dialog = dialog(
                "Save recording",
                [("discard", "Discard", ("discard",)), ("save", "Save", ("save_rec",))],
                field_id="rec_name",
                field_text=f"Recording {n}",
            )
        elif cmd[0] in ("save_rec", "discard"):
            name = str((state.dialog or {}).get("field_text", "")).strip()
            if cmd[0] == "save_rec":
                if not name:
                    return "A recording needs a name."
                state.add(self.collection, {"name": name, "length": "00:07"})
            state.dialog = None
            state.stack.pop()
        else:
            return f"Unknown command {cmd[0]!r}."
        return None
