"""Seeded phone contents: every app gets plausible records, so a task's targets sit among distractors.

All draws come from the ``random.Random`` a `TaskGenerator` passes in (seeded per task).
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from papergym.envs.mobile_gui.phone import PhoneState

FIRST = (
    "Ada",
    "Ben",
    "Chloe",
    "Diego",
    "Emma",
    "Farah",
    "Gus",
    "Hana",
    "Ivan",
    "Jade",
    "Kofi",
    "Lena",
    "Mateo",
    "Nina",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sami",
    "Tara",
    "Uma",
    "Victor",
    "Wen",
    "Yara",
)
LAST = (
    "Adler",
    "Brooks",
    "Costa",
    "Dubois",
    "Evans",
    "Fischer",
    "Garcia",
    "Hughes",
    "Ito",
    "Jensen",
    "Khan",
    "Larsen",
    "Moreau",
    "Novak",
    "Okafor",
    "Patel",
    "Quiroga",
    "Rossi",
    "Sato",
    "Tanaka",
)
EVENT_TITLES = (
    "Team sync",
    "Dentist",
    "Project review",
    "Lunch with Sam",
    "Gym session",
    "Budget meeting",
    "Piano lesson",
    "Book club",
    "Design critique",
    "Car service",
    "Yoga class",
    "Quarterly planning",
    "Coffee chat",
    "Parent meeting",
    "Flight check-in",
    "Code review",
    "Haircut",
    "Board game night",
)
LOCATIONS = (
    "Room 4B",
    "Main Street Clinic",
    "City Library",
    "Cafe Lumen",
    "Gym West",
    "Office 12",
    "Community Hall",
    "Harbor Park",
)
TASK_TITLES = (
    "Buy groceries",
    "Renew passport",
    "Call plumber",
    "Pay rent",
    "Water plants",
    "Book flights",
    "Write report",
    "Clean garage",
    "Return library books",
    "Update resume",
    "Fix bike",
    "Plan birthday",
    "Backup laptop",
    "Order printer ink",
    "Schedule checkup",
    "Sort receipts",
)
EXPENSE_NAMES = (
    "Groceries",
    "Taxi",
    "Dinner",
    "Cinema",
    "Pharmacy",
    "Rent",
    "Bus pass",
    "Coffee",
    "Books",
    "Gym fee",
    "Concert",
    "Electric bill",
    "Lunch",
    "Parking",
    "Shoes",
    "Internet",
)
RECIPE_TITLES = (
    "Lemon pasta",
    "Chickpea curry",
    "Tomato soup",
    "Veggie tacos",
    "Pancakes",
    "Greek salad",
    "Mushroom risotto",
    "Banana bread",
    "Fried rice",
    "Shakshuka",
    "Pesto gnocchi",
    "Lentil stew",
    "Caesar wrap",
    "Miso ramen",
    "Apple crumble",
    "Garlic bread",
)
INGREDIENTS = (
    "garlic",
    "onion",
    "tomato",
    "basil",
    "lemon",
    "rice",
    "flour",
    "butter",
    "egg",
    "spinach",
    "chickpeas",
    "ginger",
    "cheese",
    "carrot",
)
SONGS = (
    "Blue Harbor",
    "Midnight Train",
    "Paper Moon",
    "Golden Hour",
    "Static Hearts",
    "Northern Lights",
    "Velvet Sky",
    "Open Road",
    "Silver Lining",
    "Echo Park",
    "Wild Flowers",
    "Neon Rain",
    "Slow Motion",
    "Ocean Drive",
    "First Snow",
    "City Lights",
)
ARTISTS = ("The Tides", "Mara Vale", "Low Orbit", "June Harper", "Fox & Finch")
SPORTS = ("running", "cycling", "walking", "hiking", "swimming")
NOTE_WORDS = (
    "meeting",
    "ideas",
    "groceries",
    "travel",
    "journal",
    "reading",
    "draft",
    "todo",
    "plans",
    "budget",
)
_PEOPLE = [(f, ln) for f in FIRST for ln in LAST]
FOLDERS = ("Alarms", "DCIM", "Documents", "Download", "Music", "Pictures", "Recordings")


def day(today: str, offset: int) -> str:
    """The date ``offset`` days from ``today`` (ISO)."""
    return (dt.date.fromisoformat(today) + dt.timedelta(days=offset)).isoformat()


def weekday(date: str) -> str:
    return dt.date.fromisoformat(date).strftime("%A")


def phone_number(rng: random.Random) -> str:
    return f"+1415555{rng.randrange(1000, 10000)}"


def base_state(rng: random.Random) -> PhoneState:
    """A phone with seeded contents in every app."""
    s = PhoneState()
    s.today = dt.date(2026, rng.randint(1, 12), rng.randint(1, 28)).isoformat()
    s.now = f"{rng.randint(8, 11):02d}:00"
    s.settings = {
        "wifi": rng.random() < 0.5,
        "bluetooth": rng.random() < 0.5,
        "brightness": rng.randrange(20, 81),
    }
    s.clock = {"stopwatch": "stopped", "timer": {"running": False}}
    people = rng.sample(_PEOPLE, 8)
    for first, last in people:
        s.add("contacts", {"first": first, "last": last, "phone": phone_number(rng), "phone_label": "Mobile"})
    seq = 0
    for c in s.records("contacts")[:3]:
        for k in range(rng.randint(1, 3)):
            seq += 1
            s.add(
                "sms",
                {
                    "number": c["phone"],
                    "text": f"{rng.choice(('See you soon', 'Thanks!', 'Call me', 'On my way'))} {k + 1}",
                    "outgoing": bool(k % 2),
                    "seq": seq,
                },
            )
    for _ in range(8):
        s.add("events", random_event(rng, s.today))
    for title in rng.sample(TASK_TITLES, 6):
        s.add("tasks", random_task(rng, s.today, title))
    for name in rng.sample(EXPENSE_NAMES, 6):
        s.add("expenses", random_expense(rng, name))
    for title in rng.sample(RECIPE_TITLES, 5):
        s.add("recipes", random_recipe(rng, title))
    for _ in range(6):
        s.add("activities", random_activity(rng, s.today, rng.randint(-20, 0)))
    for k, word in enumerate(rng.sample(NOTE_WORDS, 3)):
        s.add(
            "notes",
            {"name": f"{word}_{k}.md", "content": f"Notes about {word}.", "folder": "", "modified": k},
        )
    s.add("note_folders", {"name": "Archive", "parent": ""})
    for folder in FOLDERS:
        s.add("dirs", {"name": folder, "parent": ""})
    for k in range(6):
        folder = rng.choice(FOLDERS)
        s.add(
            "files",
            {
                "name": f"{rng.choice(NOTE_WORDS)}_{k}.{rng.choice(('txt', 'jpg', 'pdf', 'mp3'))}",
                "folder": folder,
                "size": f"{rng.randint(2, 900)} KB",
            },
        )
    for k, title in enumerate(rng.sample(SONGS, 12)):
        s.add(
            "songs",
            {
                "title": title,
                "artist": ARTISTS[k % len(ARTISTS)],
                "duration": f"{rng.randint(2, 5)}:{rng.randrange(60):02d}",
            },
        )
    for k in range(2):
        s.add("recordings", {"name": f"Memo {k + 1}", "length": f"00:{rng.randint(10, 59)}"})
    for k in range(4):
        s.add(
            "joplin",
            {
                "title": f"{rng.choice(NOTE_WORDS).capitalize()} {k + 1}",
                "folder": rng.choice(("Personal", "Work")),
                "is_todo": rng.random() < 0.5,
                "done": False,
                "body": "Nothing important.",
            },
        )
    return s


def random_event(rng: random.Random, today: str, offset: int | None = None, **over: Any) -> dict[str, Any]:
    ev = {
        "title": rng.choice(EVENT_TITLES),
        "date": day(today, rng.randint(-3, 10) if offset is None else offset),
        "time": f"{rng.randint(8, 19):02d}:{rng.choice(('00', '30'))}",
        "duration": str(rng.choice((30, 60, 90))),
        "location": rng.choice(LOCATIONS),
        "description": "",
        "attendees": "",
        "repeat": "None",
    }
    ev.update(over)
    return ev


def random_task(rng: random.Random, today: str, title: str, **over: Any) -> dict[str, Any]:
    done = rng.random() < 0.4
    due = day(today, rng.randint(-5, 12))
    t = {
        "title": title,
        "due": due,
        "priority": rng.choice(("High", "Medium", "Low")),
        "completed": done,
        "completed_on": due if done else "",
    }
    t.update(over)
    return t


def random_expense(rng: random.Random, name: str, **over: Any) -> dict[str, Any]:
    e = {
        "name": name,
        "amount": str(rng.randint(3, 250)),
        "category": rng.choice(("Food", "Transport", "Entertainment", "Others", "Health")),
        "note": rng.choice(("", "work trip", "weekly", "gift", "reimbursable")),
    }
    e.update(over)
    return e


def random_recipe(rng: random.Random, title: str, **over: Any) -> dict[str, Any]:
    a, b = rng.sample(INGREDIENTS, 2)
    r = {
        "title": title,
        "description": rng.choice(("quick dinner", "family favourite", "weekend treat", "light lunch")),
        "servings": f"{rng.randint(1, 6)} servings",
        "prep_time": f"{rng.choice((10, 15, 20, 30, 45, 60))} mins",
        "ingredients": f"{a}, {b}",
        "directions": f"Chop the {a}. Cook with the {b}. Serve warm.",
    }
    r.update(over)
    return r


def random_activity(rng: random.Random, today: str, offset: int, **over: Any) -> dict[str, Any]:
    cat = rng.choice(SPORTS)
    a = {
        "name": f"{cat.capitalize()} {rng.choice(('morning', 'evening', 'lunch'))}",
        "category": cat,
        "date": day(today, offset),
        "start": f"{rng.randint(6, 19):02d}:00",
        "duration": str(rng.randint(15, 120)),
        "distance": str(rng.randint(800, 25000)),
    }
    a.update(over)
    return a
