"""System templates: Wi-Fi, Bluetooth, brightness, opening apps, the clipboard, the clock and the recorder."""

from __future__ import annotations

import random

from papergym.envs.mobile_gui.apps.base import fid
from papergym.envs.mobile_gui.oracle import Fill, Finish, OpenApp, Seq, SetSwitch, Step, Tap, TapAt
from papergym.envs.mobile_gui.phone import CLIPBOARD_PREFIX, PhoneState
from papergym.envs.mobile_gui.templates.base import Params, Template, register
from papergym.envs.mobile_gui.views import Screen

OPENABLE = (
    ("contacts", "Contacts"),
    ("clock", "Clock"),
    ("calendar", "Simple Calendar Pro"),
    ("tasks", "Tasks"),
    ("recorder", "Audio Recorder"),
    ("music", "Retro Music"),
    ("files", "Files"),
    ("markor", "Markor"),
)


class Toggle(Template):
    """``Turn wifi|bluetooth {on_or_off}.``; the *Verify variants start in the goal state."""

    apps = ("settings",)

    def __init__(self, name: str, key: str, on: bool, verification: bool, optimal_steps: int) -> None:
        self.name, self.key, self.on, self.verification = name, key, on, verification
        self.optimal_steps = optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        state.settings[self.key] = self.on if self.verification else not self.on
        return {"on": self.on}

    def goal(self, p: Params) -> str:
        return f"Turn {'wifi' if self.key == 'wifi' else 'bluetooth'} {'on' if p['on'] else 'off'}."

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return bool(state.settings[self.key]) == p["on"]

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        e = screen.find(self.key)
        return e is not None and e.checked == p["on"]

    def plan(self, p: Params) -> Step:
        return Seq(OpenApp("Settings"), SetSwitch(self.key, p["on"]), Finish())


class Brightness(Template):
    """``Turn brightness to the {max_or_min} value.``"""

    apps = ("settings",)

    def __init__(self, name: str, high: bool, verification: bool, optimal_steps: int) -> None:
        self.name, self.high, self.verification, self.optimal_steps = name, high, verification, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        target = 100 if self.high else 0
        state.settings["brightness"] = target if self.verification else rng.randrange(20, 81)
        return {"target": target}

    def goal(self, p: Params) -> str:
        return f"Turn brightness to the {'max' if self.high else 'min'} value."

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return state.settings["brightness"] == p["target"]

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        e = screen.find("brightness")
        return e is not None and e.text == str(p["target"])

    def plan(self, p: Params) -> Step:
        steps: list[Step] = [OpenApp("Settings")]
        if not self.verification:
            steps.append(TapAt("brightness", 1.0 if self.high else 0.0))
        return Seq(*steps, Finish())


class OpenAppTask(Template):
    name, optimal_steps, apps = "OpenAppTaskEval", 2, ("home",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        key, label = rng.choice(OPENABLE)
        return {"key": key, "label": label}

    def goal(self, p: Params) -> str:
        return (
            f"Open the {p['label']} app. Clear any pop-ups that may appear by granting all permissions "
            "that are required."
        )

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return state.top.app == p["key"]

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        return screen.app == p["label"]

    def plan(self, p: Params) -> Step:
        return Seq(Tap("all_apps"), Tap(f"app_{p['key']}"), Finish())


class WifiOffBluetoothOn(Template):
    name, optimal_steps, apps = "TurnOffWifiAndTurnOnBluetooth", 5, ("settings",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        state.settings.update(wifi=True, bluetooth=False)
        return {}

    def goal(self, p: Params) -> str:
        return "Turn off WiFi, then enable bluetooth"

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return not state.settings["wifi"] and state.settings["bluetooth"]

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        w, b = screen.find("wifi"), screen.find("bluetooth")
        return w is not None and b is not None and w.checked is False and b.checked is True

    def plan(self, p: Params) -> Step:
        return Seq(OpenApp("Settings"), SetSwitch("wifi", False), SetSwitch("bluetooth", True), Finish())


class WifiOnOpenApp(Template):
    name, optimal_steps, apps = "TurnOnWifiAndOpenApp", 4, ("settings",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        state.settings["wifi"] = False
        key, label = rng.choice(OPENABLE)
        return {"key": key, "label": label}

    def goal(self, p: Params) -> str:
        return f"Turn on Wifi, then open the {p['label']} app"

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return bool(state.settings["wifi"]) and state.top.app == p["key"]

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        bar = screen.find("status_bar")
        return screen.app == p["label"] and bar is not None and "wifi:on" in bar.text

    def plan(self, p: Params) -> Step:
        return Seq(OpenApp("Settings"), SetSwitch("wifi", True), OpenApp(p["label"]), Finish())


class CopyToClipboard(Template):
    name, optimal_steps, apps = "SystemCopyToClipboard", 2, ("markor",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        return {"text": rng.choice(("Meet at 6pm", "Gate B12", "Order 48213", "wifi password: tulip42"))}

    def goal(self, p: Params) -> str:
        return f"Copy the following text to the clipboard: {p['text']}"

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return state.clipboard == p["text"]

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        """The status bar previews the clipboard: it must hold the text (typing it is not copying it)."""
        bar = screen.find("status_bar")
        return bar is not None and bar.text.endswith(f"{CLIPBOARD_PREFIX}{p['text']}")

    def plan(self, p: Params) -> Step:
        content = fid("content")
        return Seq(
            OpenApp("Markor"),
            Tap("add"),
            Fill(content, p["text"]),
            Tap(content, long=True),
            Tap("copy"),
            Finish(),
        )


class StopwatchRunning(Template):
    name, optimal_steps, apps = "ClockStopWatchRunning", 3, ("clock",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        state.clock["stopwatch"] = rng.choice(("stopped", "paused"))
        return {}

    def goal(self, p: Params) -> str:
        return "Run the stopwatch."

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return state.clock.get("stopwatch") == "running"

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        e = screen.find("stopwatch_state")
        return e is not None and e.text == "Running"

    def plan(self, p: Params) -> Step:
        return Seq(OpenApp("Clock"), Tap("stopwatch_start"), Finish())


class StopwatchPausedVerify(Template):
    name, optimal_steps, apps, verification = "ClockStopWatchPausedVerify", 1, ("clock",), True

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        state.clock["stopwatch"] = "paused"
        return {}

    def goal(self, p: Params) -> str:
        return "Pause the stopwatch."

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return state.clock.get("stopwatch") == "paused"

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        e = screen.find("stopwatch_state")
        return e is not None and e.text == "Paused"

    def plan(self, p: Params) -> Step:
        return Seq(OpenApp("Clock"), Finish())


class TimerEntry(Template):
    name, optimal_steps, apps = "ClockTimerEntry", 3, ("clock",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        return {"hours": rng.randint(0, 3), "minutes": rng.randint(1, 59), "seconds": rng.randint(1, 59)}

    def goal(self, p: Params) -> str:
        return (
            f"Create a timer with {p['hours']} hours, {p['minutes']} minutes, and {p['seconds']} seconds. "
            "Do not start the timer."
        )

    def _fields(self, draft: dict[str, str], p: Params) -> bool:
        try:
            return all(
                int(draft.get(f"timer_{k}", "") or -1) == p[k] for k in ("hours", "minutes", "seconds")
            )
        except ValueError:
            return False

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        top = state.top
        timer = state.clock.get("timer", {})
        return (
            top.app == "clock"
            and top.screen == "timer"
            and not timer.get("running")
            and self._fields(top.draft, p)
        )

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        draft = {e.id: e.text for e in screen.elements if e.id.startswith("timer_")}
        start = screen.find("timer_start")
        return start is not None and start.text != "Stop" and self._fields(draft, p)

    def plan(self, p: Params) -> Step:
        fills = [Fill(f"timer_{k}", str(p[k])) for k in ("hours", "minutes", "seconds")]
        return Seq(OpenApp("Clock"), Tap("tab_timer"), *fills, Finish())


class RecordAudio(Template):
    apps = ("recorder",)

    def __init__(self, named: bool) -> None:
        self.named = named
        self.name = "AudioRecorderRecordAudioWithFileName" if named else "AudioRecorderRecordAudio"
        self.optimal_steps = 10 if named else 6

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        name = (
            f"{rng.choice(('lecture', 'idea', 'interview', 'song'))}_{rng.randint(10, 99)}"
            if self.named
            else ""
        )
        return {"n0": len(state.records("recordings")), "file_name": name}

    def goal(self, p: Params) -> str:
        if self.named:
            return f'Record an audio clip and save it with name "{p["file_name"]}" using Audio Recorder app.'
        return "Record an audio clip using Audio Recorder app and save it."

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        recs = state.records("recordings")
        if self.named:
            return any(r["name"] == p["file_name"] for r in recs)
        return len(recs) > p["n0"]

    def creates(self, p: Params) -> dict[str, int]:
        return {"recordings": 1}

    def evidence(self, p: Params) -> list[str]:
        return [p["file_name"]] if self.named else [f"Recording {p['n0'] + 1}"]

    def plan(self, p: Params) -> Step:
        steps: list[Step] = [OpenApp("Audio Recorder"), Tap("record"), Tap("stop")]
        if self.named:
            steps.append(Fill("rec_name", p["file_name"]))
        return Seq(*steps, Tap("save"), Finish())


register(
    *(
        Toggle(f"SystemBluetoothTurn{'On' if on else 'Off'}{'Verify' if v else ''}", "bluetooth", on, v, 2)
        for on in (True, False)
        for v in (False, True)
    ),
    *(
        Toggle(f"SystemWifiTurn{'On' if on else 'Off'}{'Verify' if v else ''}", "wifi", on, v, 3)
        for on in (True, False)
        for v in (False, True)
    ),
    Brightness("SystemBrightnessMax", True, False, 3),
    Brightness("SystemBrightnessMaxVerify", True, True, 2),
    Brightness("SystemBrightnessMin", False, False, 3),
    Brightness("SystemBrightnessMinVerify", False, True, 3),
    OpenAppTask(),
    WifiOffBluetoothOn(),
    WifiOnOpenApp(),
    CopyToClipboard(),
    StopwatchRunning(),
    StopwatchPausedVerify(),
    TimerEntry(),
    RecordAudio(False),
    RecordAudio(True),
)
