"""Simple SMS Messenger: conversations by number, a compose screen, resend and copy from a message's menu,
and Retro Music: songs, playlists (create, add songs, export to Downloads) and the playing queue."""

from __future__ import annotations

import re
from typing import Any

from papergym.envs.mobile_gui.apps.base import dialog
from papergym.envs.mobile_gui.phone import NavEntry, PhoneState
from papergym.envs.mobile_gui.views import Command, Item, ScreenSpec


def digits(number: str) -> str:
    return re.sub(r"\D", "", number)


def contact_name(state: PhoneState, number: str) -> str | None:
    for c in state.records("contacts"):
        if digits(c["phone"]) == digits(number):
            return f"{c['first']} {c['last']}".strip()
    return None


class SmsApp:
    key, label, collection = "sms", "Simple SMS Messenger", "sms"

    def root(self) -> NavEntry:
        return NavEntry(self.key, "threads")

    def build(self, state: PhoneState, entry: NavEntry) -> ScreenSpec:
        msgs = state.records(self.collection)
        if entry.screen == "thread":
            number = entry.arg
            items = []
            for m in sorted(
                (m for m in msgs if digits(m["number"]) == digits(number)), key=lambda m: m["seq"]
            ):
                who = "Me" if m["outgoing"] else (contact_name(state, number) or number)
                items.append(
                    Item(f"msg_{m['id']}", "TextView", f"{who}: {m['text']}", long_cmd=("msg_menu", m["id"]))
                )
            items.append(Item("message", "EditText", "", role="footer", editable=True, hint="Type a message"))
            items.append(Item("send", "Button", "Send", ("send",), role="footer"))
            return ScreenSpec(contact_name(state, number) or number, items)
        if entry.screen == "compose":
            items = [
                Item("to", "EditText", "", editable=True, hint="To (phone number)"),
                Item("message", "EditText", "", editable=True, hint="Type a message"),
                Item("send", "Button", "Send", ("send",), role="footer"),
            ]
            return ScreenSpec("New conversation", items)
        latest: dict[str, dict[str, Any]] = {}
        for m in msgs:
            d = digits(m["number"])
            if d not in latest or m["seq"] > latest[d]["seq"]:
                latest[d] = m
        items = []
        for d, m in sorted(latest.items(), key=lambda kv: -kv[1]["seq"]):
            who = contact_name(state, m["number"]) or m["number"]
            items.append(Item(f"thread_{d}", "ListItem", f"{who}: {m['text']}", ("thread", m["number"])))
        items.append(Item("start_chat", "Button", "Start chat", ("compose",), role="action"))
        return ScreenSpec("Simple SMS Messenger", items, root=True)

    def send(self, state: PhoneState, number: str, text: str) -> None:
        seq = 1 + max((m["seq"] for m in state.records(self.collection)), default=0)
        state.add(self.collection, {"number": number, "text": text, "outgoing": True, "seq": seq})

    def handle(self, state: PhoneState, entry: NavEntry, cmd: Command) -> str | None:
        verb = cmd[0]
        if verb == "thread":
            state.stack.append(NavEntry(self.key, "thread", cmd[1]))
        elif verb == "compose":
            state.stack.append(NavEntry(self.key, "compose"))
        elif verb == "send":
            text = entry.draft.get("message", "")
            number = entry.arg if entry.screen == "thread" else entry.draft.get("to", "").strip()
            if not digits(number) or len(digits(number)) < 3:
                return "Enter a phone number to send to."
            if not text.strip():
                return "The message is empty."
            self.send(state, number, text)
            state.focus = None
            if entry.screen == "compose":
                state.stack[-1] = NavEntry(self.key, "thread", number)
            else:
                entry.draft["message"] = ""
        elif verb == "msg_menu":
            msg = state.get(self.collection, cmd[1])
            buttons = [("copy_msg", "Copy text", ("copy_msg", cmd[1]))]
            if msg is not None and msg["outgoing"]:
                buttons.insert(0, ("resend", "Resend", ("resend", cmd[1])))
            buttons.append(("cancel", "Cancel", ("dismiss",)))
            state.dialog = dialog("Message", buttons)
        elif verb in ("resend", "copy_msg"):
            msg = state.get(self.collection, cmd[1])
            state.dialog = None
            if msg is None:
                return "That message no longer exists."
            if verb == "resend":
                self.send(state, msg["number"], msg["text"])
            else:
                state.clipboard = msg["text"]
        else:
            return f"Unknown command {verb!r}."
        return None


class MusicApp:
    key, label = "music", "Retro Music"

    def root(self) -> NavEntry:
        return NavEntry(self.key, "songs")

    def _song(self, state: PhoneState, sid: int) -> dict[str, Any] | None:
        return state.get("songs", sid)

    def build(self, state: PhoneState, entry: NavEntry) -> ScreenSpec:
        songs = sorted(state.records("songs"), key=lambda s: (s["title"], s["id"]))
        if entry.screen == "playlists":
            items = [
                Item(
                    f"playlist_{p['id']}",
                    "ListItem",
                    f"{p['name']} · {len(p['songs'])} songs",
                    ("playlist", p["id"]),
                )
                for p in state.records("playlists")
            ]
            items.append(Item("new_playlist", "Button", "New playlist", ("ask_playlist",), role="action"))
            return ScreenSpec("Playlists", items)
        if entry.screen in ("playlist", "picker"):
            pl = state.get("playlists", entry.arg)
            if pl is None:
                return ScreenSpec("Not found", [Item("empty", "TextView", "This playlist no longer exists.")])
            if entry.screen == "picker":
                items = [
                    Item(
                        f"pick_{s['id']}",
                        "ListItem",
                        self._line(s) + (" (added)" if s["id"] in pl["songs"] else ""),
                        ("pick", pl["id"], s["id"]),
                    )
                    for s in songs
                ]
                return ScreenSpec(f"Add to {pl['name']}", items)
            items = []
            for k, sid in enumerate(pl["songs"]):
                s = self._song(state, sid)
                items.append(Item(f"item_{k}", "TextView", self._line(s) if s else "(missing)"))
            total = sum(_seconds(s["duration"]) for sid in pl["songs"] if (s := self._song(state, sid)))
            items.insert(
                0,
                Item(
                    "total",
                    "TextView",
                    f"{len(pl['songs'])} songs · {total // 60}:{total % 60:02d}",
                    role="header",
                ),
            )
            items.append(Item("add_songs", "Button", "Add songs", ("picker", pl["id"]), role="action"))
            items.append(Item("export", "Button", "Save to Downloads", ("export", pl["id"]), role="footer"))
            return ScreenSpec(pl["name"], items)
        if entry.screen == "queue":
            items = []
            for k, sid in enumerate(state.queue):
                s = self._song(state, sid)
                items.append(Item(f"queue_{k}", "TextView", self._line(s) if s else "(missing)"))
            return ScreenSpec("Playing queue", items)
        items = [
            Item("tab_playlists", "Button", "Playlists", ("go", "playlists"), role="header"),
            Item("tab_queue", "Button", "Queue", ("go", "queue"), role="header"),
        ]
        items.extend(
            Item(
                f"song_{s['id']}",
                "ListItem",
                self._line(s),
                ("play", s["id"]),
                long_cmd=("song_menu", s["id"]),
            )
            for s in songs
        )
        return ScreenSpec("Retro Music", items, root=True)

    @staticmethod
    def _line(s: dict[str, Any]) -> str:
        return f"{s['title']} · {s['artist']} · {s['duration']}"

    def handle(self, state: PhoneState, entry: NavEntry, cmd: Command) -> str | None:
        verb = cmd[0]
        if verb == "go":
            state.stack.append(NavEntry(self.key, cmd[1]))
        elif verb == "playlist":
            state.stack.append(NavEntry(self.key, "playlist", cmd[1]))
        elif verb == "picker":
            state.stack.append(NavEntry(self.key, "picker", cmd[1]))
        elif verb == "pick":
            pl = state.get("playlists", cmd[1])
            if pl is not None:
                pl["songs"].append(cmd[2])
        elif verb == "play":
            state.log.append(f"music:play:{cmd[1]}")
        elif verb == "song_menu":
            state.dialog = dialog(
                "Song",
                [
                    ("enqueue", "Add to playing queue", ("enqueue", cmd[1])),
                    ("cancel", "Cancel", ("dismiss",)),
                ],
            )
        elif verb == "enqueue":
            state.queue.append(cmd[1])
            state.dialog = None
        elif verb == "ask_playlist":
            state.dialog = dialog(
                "New playlist",
                [("cancel", "Cancel", ("dismiss",)), ("create", "Create", ("make_playlist",))],
                field_id="playlist_name",
            )
        elif verb == "make_playlist":
            name = str((state.dialog or {}).get("field_text", "")).strip()
            if not name:
                return "A playlist needs a name."
            state.dialog = None
            pl = state.add("playlists", {"name": name, "songs": []})
            state.stack.append(NavEntry(self.key, "playlist", pl["id"]))
        elif verb == "export":
            pl = state.get("playlists", cmd[1])
            if pl is not None:
                lines = [self._line(s) for sid in pl["songs"] if (s := self._song(state, sid))]
                state.add(
                    "files",
                    {"name": f"{pl['name']}.m3u", "folder": "Download", "size": f"{len(lines)} entries"},
                )
        else:
            return f"Unknown command {verb!r}."
        return None


def _seconds(duration: str) -> int:
    m, _, s = duration.partition(":")
    return int(m) * 60 + int(s or 0)
