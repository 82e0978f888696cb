"""Markor (markdown files and folders) and Joplin (notes, to-dos, notebooks) templates."""

from __future__ import annotations

import random
from typing import Any

from papergym.envs.mobile_gui.apps.base import fid
from papergym.envs.mobile_gui.apps.messaging import digits
from papergym.envs.mobile_gui.oracle import Fill, Finish, OpenApp, Press, Read, Scan, Seq, Step, Tap, TapText
from papergym.envs.mobile_gui.phone import PhoneState
from papergym.envs.mobile_gui.templates.base import Params, Template, norm, number_answer, register
from papergym.envs.mobile_gui.templates.common import add_record, delete_row, row_containing, row_starting
from papergym.envs.mobile_gui.views import Screen
from papergym.envs.mobile_gui.world import FIRST, NOTE_WORDS, phone_number

TEXTS = (
    "Call the bank on Monday.",
    "Ideas for the garden: tulips, mint.",
    "Pack the charger and passport.",
    "Draft agenda for the offsite.",
    "Book recommendations from Lena.",
)
HEADERS = ("# Summary", "TODO: review", "Updated draft", "## Key points")


def _note_name(rng: random.Random, state: PhoneState) -> str:
    used = {n["name"] for n in state.records("notes")}
    return rng.choice([f"{w}_{k}.md" for w in NOTE_WORDS for k in range(10, 20) if f"{w}_{k}.md" not in used])


def _note(state: PhoneState, name: str) -> dict[str, Any] | None:
    return next((n for n in state.records("notes") if n["name"] == name), None)


class CreateNote(Template):
    """``MarkorCreateNote``; with ``sms``, also text its content to a number (``MarkorCreateNoteAndSms``)."""

    apps = ("markor",)

    def __init__(self, name: str, sms: bool, optimal_steps: int) -> None:
        self.name, self.sms, self.optimal_steps = name, sms, optimal_steps
        if sms:
            self.apps = ("markor", "sms")

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        return {"file_name": _note_name(rng, state), "text": rng.choice(TEXTS), "number": phone_number(rng)}

    def goal(self, p: Params) -> str:
        goal = f"Create a new note in Markor named {p['file_name']} with the following text: {p['text']}"
        if self.sms:
            goal += (
                f". Share the entire content of the note with the phone number {p['number']} via SMS using "
                "Simple SMS Messenger"
            )
        return goal

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        note = _note(state, p["file_name"])
        ok = note is not None and note["content"].strip() == p["text"]
        if self.sms:
            ok = ok and any(
                m["outgoing"]
                and digits(m["number"]) == digits(p["number"])
                and m["text"].strip() == p["text"]
                for m in state.records("sms")
            )
        return ok

    def creates(self, p: Params) -> dict[str, int]:
        return {"notes": 1, "sms": 1} if self.sms else {"notes": 1}

    def evidence(self, p: Params) -> list[str]:
        return [p["text"]]

    def plan(self, p: Params) -> Step:
        steps: list[Step] = [OpenApp("Markor"), add_record({"name": p["file_name"], "content": p["text"]})]
        if self.sms:
            steps += [
                OpenApp("Simple SMS Messenger"),
                Tap("start_chat"),
                Fill("to", p["number"]),
                Fill("message", p["text"]),
                Tap("send"),
            ]
        return Seq(*steps, Finish())


class NoteFromClipboard(Template):
    name, optimal_steps, apps = "MarkorCreateNoteFromClipboard", 7, ("markor",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        state.clipboard = rng.choice(TEXTS)
        return {"file_name": _note_name(rng, state), "text": state.clipboard}

    def goal(self, p: Params) -> str:
        return (
            f"Create a note in Markor named {p['file_name']}. Perform "
            "a paste operation in the note and save the note."
        )

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        note = _note(state, p["file_name"])
        return note is not None and note["content"].strip() == p["text"]

    def creates(self, p: Params) -> dict[str, int]:
        return {"notes": 1}

    def evidence(self, p: Params) -> list[str]:
        return [p["text"]]

    def plan(self, p: Params) -> Step:
        content = fid("content")
        return Seq(
            OpenApp("Markor"),
            Tap("add"),
            Fill(fid("name"), p["file_name"]),
            Tap(content, long=True),
            Tap("paste"),
            Tap("save"),
            Finish(),
        )


class DeleteNotes(Template):
    """``which``: ``named``, ``newest`` or ``all``."""

    edits_existing = True  # it deletes, edits or moves records present at reset

    apps = ("markor",)

    def __init__(self, name: str, which: str, optimal_steps: int) -> None:
        self.name, self.which, self.optimal_steps = name, which, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        notes = state.records("notes")
        newest = max(notes, key=lambda n: n["modified"])
        target = rng.choice(notes)["name"] if self.which == "named" else newest["name"]
        return {"file_name": target, "n0": len(notes)}

    def goal(self, p: Params) -> str:
        return {
            "named": f"Delete the note in Markor named {p['file_name']}.",
            "newest": "Delete the newest note in Markor.",
            "all": "Delete all my notes in Markor.",
        }[self.which]

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        names = [n["name"] for n in state.records("notes")]
        if self.which == "all":
            return not names
        return p["file_name"] not in names and len(names) == p["n0"] - 1

    def absent(self, p: Params) -> list[str]:
        return [] if self.which == "all" else [p["file_name"]]

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        rows_left = self.which == "all" and any(e.id.startswith("row_") for e in screen.elements)
        return not rows_left and super().screen_check(p, screen, answer)

    def plan(self, p: Params) -> Step:
        if self.which == "named":
            return Seq(OpenApp("Markor"), delete_row(row_starting(p["file_name"])), Finish())
        if self.which == "newest":  # Markor lists the newest first
            return Seq(
                OpenApp("Markor"), delete_row(lambda e: e.id.startswith("row_"), "the first note"), Finish()
            )
        return Seq(
            OpenApp("Markor"),
            Scan("rows"),
            Seq(dynamic=lambda mem: [delete_row(rid) for rid in mem.get("rows", {})]),
            Finish(),
        )


class EditNote(Template):
    """``mode``: ``header`` (prepend a line), ``header_blank`` (prepend with a blank line) or ``replace``."""

    edits_existing = True  # it deletes, edits or moves records present at reset

    apps = ("markor",)

    def __init__(self, name: str, mode: str, optimal_steps: int) -> None:
        self.name, self.mode, self.optimal_steps = name, mode, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        note = rng.choice(state.records("notes"))
        return {
            "file_name": note["name"],
            "original": note["content"],
            "header": rng.choice(HEADERS),
            "updated": rng.choice(TEXTS),
        }

    def goal(self, p: Params) -> str:
        if self.mode == "replace":
            return f'Update the content of {p["file_name"]} to "{p["updated"]}" in Markor.'
        if self.mode == "header_blank":
            return (
                f"Update the Markor note {p['file_name']} by adding "
                "the following text, along with a new blank "
                f'line before the existing content: "{p["header"]}".'
            )
        return f"Edit {p['file_name']} in Markor. Add to the top of the note {p['header']}"

    def _want(self, header: str, original: str, updated: str) -> str:
        if self.mode == "replace":
            return updated
        return f"{header}\n\n{original}" if self.mode == "header_blank" else f"{header}\n{original}"

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        note = _note(state, p["file_name"])
        return note is not None and note["content"].strip() == self._want(
            p["header"], p["original"], p["updated"]
        )

    def evidence(self, p: Params) -> list[str]:
        return [(p["updated"] if self.mode == "replace" else p["header"])]

    def plan(self, p: Params) -> Step:
        content = fid("content")

        def new(mem: dict[str, Any]) -> str:
            return self._want(p["header"], mem["original"], p["updated"])

        return Seq(
            OpenApp("Markor"),
            Tap(row_starting(p["file_name"])),
            Tap("edit"),
            Read("original", lambda s: s.find(content).text if s.find(content) else ""),
            Fill(content, new),
            Tap("save"),
            Finish(),
        )


class CreateFolder(Template):
    name, optimal_steps, apps = "MarkorCreateFolder", 4, ("markor",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        return {
            "folder_name": f"{rng.choice(('Projects', 'Travel', 'Recipes', 'Journal'))}{rng.randint(1, 99)}"
        }

    def goal(self, p: Params) -> str:
        return f"Create a new folder in Markor named {p['folder_name']}."

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return any(f["name"] == p["folder_name"] for f in state.records("note_folders"))

    def creates(self, p: Params) -> dict[str, int]:
        return {"note_folders": 1}

    def evidence(self, p: Params) -> list[str]:
        return [f"[folder] {p['folder_name']}"]

    def plan(self, p: Params) -> Step:
        return Seq(
            OpenApp("Markor"),
            Tap("new_folder"),
            Fill("folder_name", p["folder_name"]),
            Tap("create"),
            Finish(),
        )


class MoveNote(Template):
    edits_existing = True  # it deletes, edits or moves records present at reset
    name, optimal_steps, apps = "MarkorMoveNote", 7, ("markor",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        src, dst = rng.sample(("Work", "Personal", "Ideas"), 2)
        for f in (src, dst):
            state.add("note_folders", {"name": f, "parent": ""})
        name = _note_name(rng, state)
        state.add("notes", {"name": name, "content": rng.choice(TEXTS), "folder": src, "modified": 50})
        return {"file_name": name, "source_folder": src, "destination_folder": dst}

    def goal(self, p: Params) -> str:
        return (
            f"In Markor, move the note {p['file_name']} from "
            f"{p['source_folder']} to {p['destination_folder']}."
        )

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        note = _note(state, p["file_name"])
        return note is not None and note["folder"] == p["destination_folder"]

    def evidence(self, p: Params) -> list[str]:
        return [f"Folder: {p['destination_folder']}"]

    def plan(self, p: Params) -> Step:
        return Seq(
            OpenApp("Markor"),
            Tap(f"folder_{p['source_folder']}"),
            Tap(row_starting(p["file_name"])),
            Tap("move"),
            TapText(p["destination_folder"], id_prefix="to_"),
            Finish(),
        )


class MergeNotes(Template):
    """The three notes are read, not changed: they must be kept (the goal asks for a new note only)."""

    name, optimal_steps, apps = "MarkorMergeNotes", 39, ("markor",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        names = [n["name"] for n in state.records("notes")][:3]
        return {
            "names": names,
            "new": _note_name(rng, state),
            "want": "\n".join(_note(state, n)["content"] for n in names),
        }  # type: ignore[index]

    def goal(self, p: Params) -> str:
        a, b, c = p["names"]
        return (
            f"Merge the contents of Markor notes {a}, {b} and {c} "
            "(in the same order) into a new Markor note named "
            f"{p['new']} and save it. Add a new line between the content of each note."
        )

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        note = _note(state, p["new"])
        return note is not None and note["content"].strip() == p["want"]

    def creates(self, p: Params) -> dict[str, int]:
        return {"notes": 1}

    def evidence(self, p: Params) -> list[str]:
        return [p["new"]]

    def plan(self, p: Params) -> Step:
        reads: list[Step] = []
        for k, name in enumerate(p["names"]):
            reads += [Tap(row_starting(name)), Scan(f"c{k}", "detail_line"), Press("back")]

        def merged(mem: dict[str, Any]) -> str:
            return "\n".join("\n".join(mem[f"c{k}"].values()) for k in range(len(p["names"])))

        return Seq(OpenApp("Markor"), *reads, add_record({"name": p["new"], "content": merged}), Finish())


class JoplinQuestion(Template):
    """``kind``: ``is_todo``, ``attendees``, ``ingredient`` or ``todo_count``."""

    apps, question = ("joplin",), True

    def __init__(self, name: str, kind: str, optimal_steps: int) -> None:
        self.name, self.kind, self.optimal_steps = name, kind, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        folder = rng.choice(("Personal", "Work"))
        if self.kind == "attendees":
            people = rng.sample(FIRST, rng.randint(2, 6))
            title = f"Meeting {rng.choice(('kickoff', 'retro', 'planning'))}"
            body = "Agenda: updates\nAttendees:\n" + "\n".join(f"- {n}" for n in people) + "\nNext: follow up"
            state.add(
                "joplin", {"title": title, "folder": folder, "is_todo": False, "done": False, "body": body}
            )
            return {"title": title, "expected": str(len(people))}
        if self.kind == "ingredient":
            title = rng.choice(("Pancakes", "Bread", "Soup"))
            amount = f"{rng.randint(1, 4)} cups"
            body = f"Ingredients:\n- {amount} flour\n- 2 eggs\n- 1 teaspoon salt"
            state.add(
                "joplin", {"title": title, "folder": folder, "is_todo": False, "done": False, "body": body}
            )
            return {"title": title, "ingredient": "flour", "expected": amount}
        if self.kind == "is_todo":
            title = f"{rng.choice(('Renew', 'Check', 'Review'))} {rng.choice(NOTE_WORDS)}"
            todo = rng.random() < 0.5
            state.add(
                "joplin",
                {"title": title, "folder": folder, "is_todo": todo, "done": False, "body": "Details."},
            )
            return {"title": title, "expected": str(todo)}
        for k in range(rng.randint(1, 4)):
            state.add(
                "joplin",
                {"title": f"Chore {k + 1}", "folder": folder, "is_todo": True, "done": False, "body": ""},
            )
        n = sum(
            1 for j in state.records("joplin") if j["folder"] == folder and j["is_todo"] and not j["done"]
        )
        return {"folder": folder, "expected": str(n)}

    def must_see(self, p: Params, state: PhoneState) -> list[tuple[str | None, str]]:
        """A to-do count is read from the whole list; the other questions from the note's detail screen."""
        if self.kind == "todo_count":
            return super().must_see(p, state)
        note = [j for j in state.records("joplin") if j["title"] == p["title"]][-1]  # the one setup added
        return self.detail_shown(note, ("type",) if self.kind == "is_todo" else None)

    def goal(self, p: Params) -> str:
        return {
            "is_todo": (
                f"Is the note titled '{p.get('title')}' in the "
                "Joplin app marked as a todo item? Respond with "
                "either 'True' if it is a todo or 'False' if not."
            ),
            "attendees": (
                "How many attendees were present in the meeting "
                f"titled '{p.get('title')}' in the Joplin app? "
                "Express your answer as just a single number."
            ),
            "ingredient": (
                f"What quantity of {p.get('ingredient')} do I need for the recipe '{p.get('title')}' in the "
                "Joplin app? Express your answer in the format <amount> <unit> without using abbreviations."
            ),
            "todo_count": (
                f"How many to-dos do I have in the '{p.get('folder')}' folder in the Joplin app? Express "
                "your answer as just a single number."
            ),
        }[self.kind]

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        if answer is None:
            return False
        if self.kind in ("attendees", "todo_count"):
            return number_answer(answer, int(p["expected"]))
        return norm(answer) == norm(p["expected"])

    def plan(self, p: Params) -> Step:
        if self.kind == "todo_count":
            folder = p["folder"]

            def count(mem: dict[str, Any]) -> str:
                return str(
                    sum(
                        1 for t in mem["rows"].values() if t.startswith("[ ] ") and t.endswith(f" · {folder}")
                    )
                )

            return Seq(OpenApp("Joplin"), Scan("rows"), Finish(count))
        opened = Seq(OpenApp("Joplin"), Tap(row_containing(f"{p['title']} · ")), Scan("body", "detail_"))
        if self.kind == "is_todo":
            return Seq(
                opened, Finish(lambda m: str(any(t.startswith("Type: To-do") for t in m["body"].values())))
            )
        if self.kind == "attendees":
            return Seq(
                opened, Finish(lambda m: str(sum(1 for t in m["body"].values() if t.startswith("- "))))
            )
        want = p["ingredient"]

        def amount(mem: dict[str, Any]) -> str:
            line = next(
                (t for t in mem["body"].values() if t.startswith("- ") and t.endswith(" " + want)), ""
            )
            return line.removeprefix("- ").removesuffix(" " + want)

        return Seq(opened, Finish(amount))


register(
    CreateNote("MarkorCreateNote", False, 8),
    CreateNote("MarkorCreateNoteAndSms", True, 9),
    NoteFromClipboard(),
    DeleteNotes("MarkorDeleteNote", "named", 5),
    DeleteNotes("MarkorDeleteNewestNote", "newest", 4),
    DeleteNotes("MarkorDeleteAllNotes", "all", 7),
    EditNote("MarkorEditNote", "header", 4),
    EditNote("MarkorAddNoteHeader", "header_blank", 6),
    EditNote("MarkorChangeNoteContent", "replace", 5),
    CreateFolder(),
    MoveNote(),
    MergeNotes(),
    JoplinQuestion("NotesIsTodo", "is_todo", 2),
    JoplinQuestion("NotesMeetingAttendeeCount", "attendees", 3),
    JoplinQuestion("NotesRecipeIngredientCount", "ingredient", 2),
    JoplinQuestion("NotesTodoItemCount", "todo_count", 5),
)
