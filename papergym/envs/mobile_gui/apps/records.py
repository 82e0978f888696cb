"""The record-keeping apps: contacts, calendar, tasks, expenses, recipes, sports tracker, Joplin notes,
Markor (a markdown editor with folders) and the file manager. Each is a `RecordApp` description."""

from __future__ import annotations

from typing import Any

from papergym.envs.mobile_gui.apps.base import Field, RecordApp
from papergym.envs.mobile_gui.phone import PhoneState
from papergym.envs.mobile_gui.views import Item

PHONE_LABELS = ("Mobile", "Home", "Work", "Other")
PRIORITIES = ("High", "Medium", "Low")
REPEATS = ("None", "Daily", "Weekly", "Monthly", "Yearly")
EXPENSE_CATEGORIES = ("Food", "Housing", "Transport", "Health", "Entertainment", "Others")


class ContactsApp(RecordApp):
    key, label, collection = "contacts", "Contacts", "contacts"
    fields = (
        Field("first", "First name", required=True),
        Field("last", "Last name"),
        Field("phone", "Phone", required=True),
        Field("phone_label", "Phone label", "choice", PHONE_LABELS, default="Mobile"),
    )
    add_label = "Create contact"

    def row_text(self, rec: dict[str, Any]) -> str:
        return f"{rec['first']} {rec['last']}".strip()

    def sort_key(self, rec: dict[str, Any]) -> Any:
        return (rec["first"].lower(), rec["last"].lower(), rec["id"])


class CalendarApp(RecordApp):
    key, label, collection = "calendar", "Simple Calendar Pro", "events"
    fields = (
        Field("title", "Title", required=True),
        Field("date", "Date", "date", required=True),
        Field("time", "Start time", "time", required=True),
        Field("duration", "Duration (minutes)", "number", default="60"),
        Field("location", "Location"),
        Field("description", "Description"),
        Field("attendees", "Attendees"),
        Field("repeat", "Repeat", "choice", REPEATS, default="None"),
    )
    add_label = "New event"

    def row_text(self, rec: dict[str, Any]) -> str:
        return f"{rec['date']} {rec['time']} · {rec['title']}"

    def sort_key(self, rec: dict[str, Any]) -> Any:
        return (rec["date"], rec["time"], rec["id"])


class TasksApp(RecordApp):
    key, label, collection = "tasks", "Tasks", "tasks"
    fields = (
        Field("title", "Title", required=True),
        Field("due", "Due date", "date"),
        Field("priority", "Priority", "choice", PRIORITIES, default="Medium"),
        Field("completed", "Completed", "bool"),
        Field("completed_on", "Completed on", "date"),
    )
    add_label = "New task"

    def row_text(self, rec: dict[str, Any]) -> str:
        status = f"done {rec.get('completed_on', '')}".strip() if rec["completed"] else "open"
        return f"{rec['title']} · due {rec['due']} · {rec['priority']} · {status}"

    def sort_key(self, rec: dict[str, Any]) -> Any:
        return (rec["due"], rec["id"])


class ExpensesApp(RecordApp):
    key, label, collection = "expenses", "Pro Expense", "expenses"
    fields = (
        Field("name", "Name", required=True),
        Field("amount", "Amount", "number", required=True),
        Field("category", "Category", "choice", EXPENSE_CATEGORIES, default="Others"),
        Field("note", "Note"),
    )
    add_label = "Add expense"

    def row_text(self, rec: dict[str, Any]) -> str:
        return f"{rec['name']} · ${rec['amount']} · {rec['category']} · {rec['note']}"


class RecipesApp(RecordApp):
    key, label, collection = "recipes", "Broccoli", "recipes"
    fields = (
        Field("title", "Title", required=True),
        Field("description", "Description"),
        Field("servings", "Servings"),
        Field("prep_time", "Preparation time"),
        Field("ingredients", "Ingredients"),
        Field("directions", "Directions"),
    )
    add_label = "New recipe"

    def row_text(self, rec: dict[str, Any]) -> str:
        return f"{rec['title']} · {rec['description']} · {rec['servings']} · {rec['prep_time']}"

    def sort_key(self, rec: dict[str, Any]) -> Any:
        return (rec["title"].lower(), rec["id"])


class SportsTrackerApp(RecordApp):
    key, label, collection = "sports", "OpenTracks", "activities"
    fields = (
        Field("name", "Name", required=True),
        Field("category", "Category", required=True),
        Field("date", "Date", "date", required=True),
        Field("start", "Start time", "time", required=True),
        Field("duration", "Duration (min)", "number", required=True),
        Field("distance", "Distance (m)", "number", required=True),
    )
    add_label = "Record"

    def row_text(self, rec: dict[str, Any]) -> str:
        return (
            f"{rec['date']} {rec['start']} · {rec['category']} · {rec['name']} · "
            f"{rec['duration']} min · {rec['distance']} m"
        )

    def sort_key(self, rec: dict[str, Any]) -> Any:
        return (rec["date"], rec["start"], rec["id"])


class JoplinApp(RecordApp):
    key, label, collection = "joplin", "Joplin", "joplin"
    fields = (
        Field("title", "Title", required=True),
        Field("folder", "Notebook"),
        Field("is_todo", "To-do", "bool"),
        Field("done", "Completed", "bool"),
        Field("body", "Body"),
    )
    add_label = "New note"

    def row_text(self, rec: dict[str, Any]) -> str:
        mark = ("[x] " if rec["done"] else "[ ] ") if rec["is_todo"] else ""
        return f"{mark}{rec['title']} · {rec['folder']}"

    def detail_lines(self, rec: dict[str, Any]) -> list[tuple[str, str]]:
        kind = "To-do" if rec["is_todo"] else "Note"
        lines = [("title", f"Title: {rec['title']}"), ("folder", f"Notebook: {rec['folder']}")]
        lines.append(
            (
                "type",
                f"Type: {kind}" + (f" ({'completed' if rec['done'] else 'open'})" if rec["is_todo"] else ""),
            )
        )
        lines.extend((f"body{k}", line) for k, line in enumerate(rec["body"].split("\n")))
        return lines

    def sort_key(self, rec: dict[str, Any]) -> Any:
        return (rec["folder"], rec["title"], rec["id"])


class MarkorApp(RecordApp):
    """A markdown editor over files in folders; newest first, as Markor sorts by modification."""

    key, label, collection = "markor", "Markor", "notes"
    folders, folder_collection, move_copy = True, "note_folders", True
    fields = (
        Field("name", "File name", required=True),
        Field("content", "Content"),
        Field("folder", "Folder"),
    )
    add_label = "New note"

    def row_text(self, rec: dict[str, Any]) -> str:
        return str(rec["name"])

    def sort_key(self, rec: dict[str, Any]) -> Any:
        return (-rec["modified"], rec["id"])

    def detail_lines(self, rec: dict[str, Any]) -> list[tuple[str, str]]:
        lines = [("name", f"File name: {rec['name']}"), ("folder", f"Folder: {rec['folder'] or '(root)'}")]
        lines.extend((f"line{k}", line) for k, line in enumerate(rec["content"].split("\n")))
        return lines

    def list_extra(self, state: PhoneState, entry: Any) -> list[Item]:
        return [Item("new_folder", "Button", "New folder", ("ask_folder",), role="header")]

    def extra(self, state: PhoneState, entry: Any, cmd: tuple[Any, ...]) -> str | None:
        from papergym.envs.mobile_gui.apps.base import dialog

        if cmd[0] == "ask_folder":
            state.dialog = dialog(
                "New folder",
                [("cancel", "Cancel", ("dismiss",)), ("create", "Create", ("make_folder", entry.arg))],
                field_id="folder_name",
            )
            return None
        if cmd[0] == "make_folder":
            name = str((state.dialog or {}).get("field_text", "")).strip()
            if not name or "/" in name:
                return "A folder needs a name without '/'."
            state.dialog = None
            state.add(self.folder_collection, {"name": name, "parent": cmd[1] or ""})
            return None
        return super().extra(state, entry, cmd)

    def on_saved(self, state: PhoneState, rec: dict[str, Any], new: bool) -> None:
        rec["modified"] = state.next_id  # a monotone clock: the newest edit sorts first
        state.next_id += 1


class FilesApp(RecordApp):
    key, label, collection = "files", "Files", "files"
    folders, folder_collection, move_copy = True, "dirs", True
    can_add = can_edit = False
    fields = (Field("name", "Name"), Field("folder", "Folder"), Field("size", "Size"))

    def row_text(self, rec: dict[str, Any]) -> str:
        return f"{rec['name']} · {rec['size']}"

    def sort_key(self, rec: dict[str, Any]) -> Any:
        return (rec["name"], rec["id"])
