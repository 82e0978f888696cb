"""SMS, music and file-manager templates, including carrying an address from one conversation to another
contact (looked up in Contacts)."""

from __future__ import annotations

import random
from typing import Any

from papergym.envs.mobile_gui.apps.messaging import digits
from papergym.envs.mobile_gui.oracle import (
    Fill,
    Finish,
    OpenApp,
    Press,
    Read,
    Seq,
    Step,
    Tap,
    TapLast,
    TapText,
)
from papergym.envs.mobile_gui.phone import PhoneState
from papergym.envs.mobile_gui.templates.base import Params, Template, register
from papergym.envs.mobile_gui.templates.common import delete_row, row_starting
from papergym.envs.mobile_gui.views import Element, Screen
from papergym.envs.mobile_gui.world import phone_number

MESSAGES = (
    "Running late, see you at 7",
    "Can you send me the report?",
    "Happy birthday!",
    "Dinner on Friday?",
    "The package arrived",
    "Call me when you can",
)
STREETS = ("42 Elm Street", "7 Harbor Road", "310 Pine Avenue", "18 Mill Lane")


def _seq(state: PhoneState) -> int:
    return 1 + max((m["seq"] for m in state.records("sms")), default=0)


def _incoming(state: PhoneState, number: str, text: str) -> None:
    state.add("sms", {"number": number, "text": text, "outgoing": False, "seq": _seq(state)})


def _sent(state: PhoneState, number: str, text: str) -> int:
    return sum(
        1
        for m in state.records("sms")
        if m["outgoing"] and digits(m["number"]) == digits(number) and m["text"] == text
    )


def _thread(text: str) -> Any:
    return lambda e: e.id.startswith("thread_") and e.text.startswith(text + ":")


class SmsTemplate(Template):
    """``kind``: ``send``, ``reply``, ``reply_recent``, ``resend``, ``clipboard`` or ``address``."""

    apps = ("sms",)

    def __init__(self, name: str, kind: str, optimal_steps: int) -> None:
        self.name, self.kind, self.optimal_steps = name, kind, optimal_steps
        if kind == "address":
            self.apps = ("sms", "contacts")

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        contacts = state.records("contacts")
        p: Params = {"number": phone_number(rng), "message": rng.choice(MESSAGES)}
        if self.kind in ("reply", "reply_recent"):
            _incoming(state, p["number"], rng.choice(MESSAGES))
        elif self.kind == "resend":
            c = rng.choice(contacts)
            p |= {"name": f"{c['first']} {c['last']}", "number": c["phone"]}
            state.add(
                "sms", {"number": c["phone"], "text": p["message"], "outgoing": True, "seq": _seq(state)}
            )
        elif self.kind == "clipboard":
            state.clipboard = p["message"]
        elif self.kind == "address":
            to, frm = rng.sample(contacts, 2)
            street = rng.choice(STREETS)
            p |= {
                "name1": f"{to['first']} {to['last']}",
                "name2": f"{frm['first']} {frm['last']}",
                "number": to["phone"],
                "message": street,
            }
            _incoming(state, frm["phone"], f"The party is at {street}. See you there!")
        p["before"] = _sent(state, p["number"], p["message"])
        return p

    def goal(self, p: Params) -> str:
        app = "in Simple SMS Messenger"
        return {
            "send": (
                "Send a text message using Simple SMS "
                f"Messenger to {p['number']} with message: {p['message']}"
            ),
            "reply": f"Reply to {p['number']} with message: {p['message']} {app}",
            "reply_recent": (
                "Reply to the most recent text message "
                f"using Simple SMS Messenger with message: {p['message']}"
            ),
            "resend": f"Resend the message I just sent to {p.get('name')} {app}",
            "clipboard": f"Send a message to {p['number']} with the clipboard content {app}",
            "address": (
                f"Text the address of the event to {p.get('name1')} that {p.get('name2')} just sent me {app}"
            ),
        }[self.kind]

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        if self.kind == "address":
            return any(
                m["outgoing"] and digits(m["number"]) == digits(p["number"]) and p["message"] in m["text"]
                for m in state.records("sms")
            )
        return _sent(state, p["number"], p["message"]) > p["before"]

    def creates(self, p: Params) -> dict[str, int]:
        """Every kind sends one message (a second copy of it is a collateral write)."""
        return {"sms": 1}

    def evidence(self, p: Params) -> list[str]:
        return [f"Me: {p['message']}"] if self.kind != "address" else [p["message"]]

    def plan(self, p: Params) -> Step:
        kind = self.kind
        compose: list[Step] = [Tap("start_chat"), Fill("to", p["number"])]
        if kind == "send":
            body: list[Step] = [*compose, Fill("message", p["message"]), Tap("send")]
        elif kind == "clipboard":
            body = [*compose, Tap("message", long=True), Tap("paste"), Tap("send")]
        elif kind == "reply":
            body = [Tap(_thread(p["number"])), Fill("message", p["message"]), Tap("send")]
        elif kind == "reply_recent":  # conversations are listed newest first
            body = [
                Tap(lambda e: e.id.startswith("thread_"), what="the newest conversation"),
                Fill("message", p["message"]),
                Tap("send"),
            ]
        elif kind == "resend":
            body = [Tap(_thread(p["name"])), TapLast(_mine, long=True), Tap("resend")]
        else:
            body = [
                Tap(_thread(p["name2"])),
                Read("address", _address),
                OpenApp("Contacts"),
                Tap(row_starting(p["name1"])),
                Read(
                    "to",
                    lambda s: (
                        s.find("detail_phone").text.removeprefix("Phone: ") if s.find("detail_phone") else ""
                    ),
                ),
                OpenApp("Simple SMS Messenger"),
                Tap("start_chat"),
                Fill("to", lambda m: m["to"]),
                Fill("message", lambda m: m["address"]),
                Tap("send"),
            ]
        return Seq(OpenApp("Simple SMS Messenger"), *body, Finish())


def _mine(e: Element) -> bool:
    return e.id.startswith("msg_") and e.text.startswith("Me: ")


def _address(screen: Screen) -> str:
    for e in reversed(screen.elements):
        if e.id.startswith("msg_") and " at " in e.text:
            return e.text.split(" at ", 1)[1].split(".")[0]
    return ""


class Playlist(Template):
    """``kind``: ``create``, ``save`` (create, then export to Downloads) or ``queue``."""

    apps = ("music",)

    def __init__(self, name: str, kind: str, optimal_steps: int) -> None:
        self.name, self.kind, self.optimal_steps = name, kind, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        songs = rng.sample([s["title"] for s in state.records("songs")], 3)
        return {
            "playlist_name": f"{rng.choice(('Road trip', 'Focus', 'Workout', 'Chill'))} {rng.randint(1, 99)}",
            "names": songs,
        }

    def goal(self, p: Params) -> str:
        names = ", ".join(p["names"])
        if self.kind == "queue":
            return f"Add the following songs, in order, {names} to my playing queue in Retro music."
        goal = (
            f'Create a playlist in Retro Music titled "{p["playlist_name"]}" '
            f"with the following songs, in order: {names}"
        )
        if self.kind == "save":
            goal += ". Then export the playlist to the Downloads directory on the device."
        return goal

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        titles = {s["id"]: s["title"] for s in state.records("songs")}
        if self.kind == "queue":
            return [titles.get(i) for i in state.queue] == p["names"]
        ok = any(
            pl["name"] == p["playlist_name"] and [titles.get(i) for i in pl["songs"]] == p["names"]
            for pl in state.records("playlists")
        )
        if self.kind == "save":
            ok = ok and any(
                f["name"] == f"{p['playlist_name']}.m3u" and f["folder"] == "Download"
                for f in state.records("files")
            )
        return ok

    def creates(self, p: Params) -> dict[str, int]:
        """The queue is no collection; ``save``'s export writes one file to Downloads."""
        return {"queue": {}, "create": {"playlists": 1}, "save": {"playlists": 1, "files": 1}}[self.kind]

    def evidence(self, p: Params) -> list[str]:
        return [p["names"][-1]] if self.kind != "save" else [p["playlist_name"], p["names"][-1]]

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        """``create`` ends on the song picker, which lists every song: the last song's row must be marked
        added, as must every other task song the screen shows."""
        if self.kind != "create":
            return super().screen_check(p, screen, answer)
        rows = [e.text for e in screen.elements if e.id.startswith("pick_")]
        added = {n for n in p["names"] for t in rows if t.startswith(f"{n} · ") and t.endswith(" (added)")}
        listed = {n for n in p["names"] for t in rows if t.startswith(f"{n} · ")}
        return p["names"][-1] in added and listed <= added

    def plan(self, p: Params) -> Step:
        if self.kind == "queue":
            adds = [
                Seq(TapText(t, prefix=True, long=True, id_prefix="song_"), Tap("enqueue")) for t in p["names"]
            ]
            return Seq(OpenApp("Retro Music"), *adds, Tap("tab_queue"), Finish())
        picks = [TapText(t, prefix=True, id_prefix="pick_") for t in p["names"]]
        steps: list[Step] = [
            OpenApp("Retro Music"),
            Tap("tab_playlists"),
            Tap("new_playlist"),
            Fill("playlist_name", p["playlist_name"]),
            Tap("create"),
            Tap("add_songs"),
            *picks,
        ]
        if self.kind == "save":
            steps += [Press("back"), Tap("export")]
        return Seq(*steps, Finish())


class FileTask(Template):
    """``kind``: ``delete``, ``move`` or ``copy`` (a receipt from DCIM to Download). A delete or a move
    changes a file present at reset; a copy keeps every file and adds one (`creates`)."""

    apps = ("files",)

    def __init__(self, name: str, kind: str, optimal_steps: int) -> None:
        self.name, self.kind, self.optimal_steps = name, kind, optimal_steps
        self.edits_existing = kind != "copy"

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        src, dst = rng.sample(("Documents", "Download", "Music", "Pictures", "Recordings"), 2)
        if self.kind == "copy":
            src, dst = "DCIM", "Download"
        stem = rng.choice(("receipt", "scan", "notes", "photo"))
        name = f"{stem}_{rng.randint(100, 999)}.{rng.choice(('jpg', 'pdf'))}"
        state.add("files", {"name": name, "folder": src, "size": f"{rng.randint(20, 900)} KB"})
        return {"file_name": name, "source_folder": src, "destination_folder": dst}

    def goal(self, p: Params) -> str:
        area = "the sdk_gphone_x86_64 storage area"
        if self.kind == "delete":
            return (
                f"Delete the file {p['file_name']} from the Android filesystem "
                f"located in the {p['source_folder']} folder within {area}."
            )
        if self.kind == "copy":
            return f"Copy {p['file_name']} in DCIM and save a copy with the same name in Download"
        return (
            f"Move the file {p['file_name']} from {p['source_folder']} within {area} to the "
            f"{p['destination_folder']} within the same sdk_gphone_x86_64 storage area."
        )

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        where = {f["folder"] for f in state.records("files") if f["name"] == p["file_name"]}
        return {
            "delete": set(),
            "move": {p["destination_folder"]},
            "copy": {p["source_folder"], p["destination_folder"]},
        }[self.kind] == where

    def creates(self, p: Params) -> dict[str, int]:
        """A copy is a new file; a delete or a move creates none."""
        return {"files": 1} if self.kind == "copy" else {}

    def evidence(self, p: Params) -> list[str]:
        return [] if self.kind == "delete" else [p["file_name"]]

    def absent(self, p: Params) -> list[str]:
        return [f"{p['file_name']} ·"] if self.kind == "delete" else []

    def plan(self, p: Params) -> Step:
        open_dir: list[Step] = [OpenApp("Files"), Tap(f"folder_{p['source_folder']}")]
        if self.kind == "delete":
            return Seq(*open_dir, delete_row(row_starting(p["file_name"])), Finish())
        return Seq(
            *open_dir,
            Tap(row_starting(p["file_name"])),
            Tap(self.kind),
            TapText(p["destination_folder"], id_prefix="to_"),
            Finish(),
        )


register(
    SmsTemplate("SimpleSmsSend", "send", 6),
    SmsTemplate("SimpleSmsReply", "reply", 4),
    SmsTemplate("SimpleSmsReplyMostRecent", "reply_recent", 5),
    SmsTemplate("SimpleSmsResend", "resend", 6),
    SmsTemplate("SimpleSmsSendClipboardContent", "clipboard", 6),
    SmsTemplate("SimpleSmsSendReceivedAddress", "address", 9),
    Playlist("RetroCreatePlaylist", "create", 12),
    Playlist("RetroSavePlaylist", "save", 25),
    Playlist("RetroPlayingQueue", "queue", 16),
    FileTask("FilesDeleteFile", "delete", 4),
    FileTask("FilesMoveFile", "move", 10),
    FileTask("SaveCopyOfReceiptTaskEval", "copy", 8),
)
