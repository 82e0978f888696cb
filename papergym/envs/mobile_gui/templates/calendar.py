"""Simple Calendar Pro templates: adding, deleting and asking about events.

Relative dates ("tomorrow", "this Friday", "in two weeks") are resolved from the date the status bar
shows; the oracle reads it there.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from papergym.envs.mobile_gui.oracle import Finish, OpenApp, Read, Scan, Seq, Step, Tap
from papergym.envs.mobile_gui.phone import PhoneState
from papergym.envs.mobile_gui.templates.base import Params, Template, norm, register, same_list
from papergym.envs.mobile_gui.templates.common import add_record, delete_row, row_containing
from papergym.envs.mobile_gui.views import Screen
from papergym.envs.mobile_gui.world import EVENT_TITLES, FIRST, day, random_event, weekday

DESCRIPTIONS = ("Bring the slides.", "Discuss the roadmap.", "Remember the receipts.", "Room booked.")


def phrase(date: str, today: str) -> str:
    """How a goal names a date: today, tomorrow, or "on October 15 2026"."""
    if date == today:
        return "today"
    if date == day(today, 1):
        return "tomorrow"
    d = dt.date.fromisoformat(date)
    return f"on {d.strftime('%B')} {d.day} {d.year}"


def today_of(screen: Screen) -> str:
    bar = screen.find("status_bar")
    return bar.text.split()[0] if bar is not None else ""


def now_of(screen: Screen) -> str:
    bar = screen.find("status_bar")
    return bar.text.split()[1] if bar is not None else ""


def rows_of(mem: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Calendar list rows read by a scan: (date, time, title)."""
    out = []
    for text in mem.get("rows", {}).values():
        when, _, title = text.partition(" · ")
        date, _, time = when.partition(" ")
        out.append((date, time, title))
    return out


def next_weekday(today: str, name: str) -> str:
    for k in range(1, 8):
        if weekday(day(today, k)) == name:
            return day(today, k)
    return today


class AddEvent(Template):
    """``when``: ``date`` (explicit), ``tomorrow``, ``two_weeks``, ``weekday``, or ``repeat``."""

    apps = ("calendar",)

    def __init__(self, name: str, when: str, optimal_steps: int) -> None:
        self.name, self.when, self.optimal_steps = name, when, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        used = {e["title"] for e in state.records("events")}
        p: Params = {
            "title": rng.choice([t for t in EVENT_TITLES if t not in used]),
            "description": rng.choice(DESCRIPTIONS),
            "hour": rng.randint(8, 19),
            "weekday": weekday(day(state.today, rng.randint(1, 6))),
            "repeat": rng.choice(("Daily", "Weekly", "Monthly", "Yearly")),
        }
        offset = {"tomorrow": 1, "two_weeks": 14}.get(self.when, rng.randint(2, 30))
        p["date"] = (
            next_weekday(state.today, p["weekday"]) if self.when == "weekday" else day(state.today, offset)
        )
        return p

    def goal(self, p: Params) -> str:
        what = f"at {p['hour']}h with the title '{p['title']}' and the description '{p['description']}'"
        y, m, d = p["date"].split("-")
        if self.when == "repeat":
            return (
                "In Simple Calendar Pro, create a recurring "
                f"calendar event titled '{p['title']}' starting on "
                f"{y}-{m}-{d} at {p['hour']}h. The event recurs {p['repeat'].lower()}, forever, and has the "
                f"description '{p['description']}'."
            )
        where = {
            "tomorrow": "for tomorrow",
            "two_weeks": "in two weeks from today",
            "weekday": f"for this {p['weekday']}",
        }.get(self.when, f"on {y}-{m}-{d}")
        return (
            "In Simple Calendar Pro, create a calendar event "
            f"{where} {what}. The event should last for 60 mins."
        )

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        for e in state.records("events"):
            if (e["title"], e["date"], e["time"]) == (p["title"], p["date"], f"{p['hour']:02d}:00") and norm(
                e["description"]
            ) == norm(p["description"]):
                return self.when != "repeat" or e["repeat"] == p["repeat"]
        return False

    def creates(self, p: Params) -> dict[str, int]:
        return {"events": 1}

    def evidence(self, p: Params) -> list[str]:
        return [f"{p['date']} {p['hour']:02d}:00 · {p['title']}"]

    def plan(self, p: Params) -> Step:
        when = self.when

        def date(mem: dict[str, Any]) -> str:
            today = mem["today"]
            if when == "tomorrow":
                return day(today, 1)
            if when == "two_weeks":
                return day(today, 14)
            if when == "weekday":
                return next_weekday(today, p["weekday"])
            return p["date"]

        values: dict[str, Any] = {
            "title": p["title"],
            "date": date,
            "time": f"{p['hour']:02d}:00",
            "duration": "60",
            "description": p["description"],
        }
        if when == "repeat":
            values["repeat"] = p["repeat"]
        return Seq(Read("today", today_of), OpenApp("Simple Calendar Pro"), add_record(values), Finish())


class DeleteEvents(Template):
    """``which``: ``date`` (all on a date), ``weekday`` (all this weekday) or ``one`` (one at a time)."""

    edits_existing = True  # it deletes, edits or moves records present at reset

    apps = ("calendar",)

    def __init__(self, name: str, which: str, optimal_steps: int) -> None:
        self.name, self.which, self.optimal_steps = name, which, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        events = state.records("events")
        target = (
            day(state.today, rng.randint(1, 6))
            if self.which == "weekday"
            else day(state.today, rng.randint(1, 20))
        )
        events[:] = [e for e in events if e["date"] != target]
        titles = rng.sample([t for t in EVENT_TITLES if t not in {e["title"] for e in events}], 2)
        for k, t in enumerate(titles):
            state.add(
                "events", random_event(rng, state.today, 0, date=target, title=t, time=f"{10 + 3 * k}:00")
            )
        p = {
            "date": target,
            "weekday": weekday(target),
            "title": titles[0],
            "hour": 10,
            "others": len(state.records("events")) - (1 if self.which == "one" else 2),
        }
        return p

    def goal(self, p: Params) -> str:
        y, m, d = p["date"].split("-")
        if self.which == "weekday":
            return f"In Simple Calendar Pro, delete all events scheduled for this {p['weekday']}."
        if self.which == "one":
            return (
                f"In Simple Calendar Pro, delete the calendar event on {y}-{m}-{d} at {p['hour']}h with the "
                f"title '{p['title']}'"
            )
        return f"In Simple Calendar Pro, delete all the calendar events on {y}-{m}-{d}"

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        events = state.records("events")
        if self.which == "one":
            gone = not any(e["title"] == p["title"] and e["date"] == p["date"] for e in events)
        else:
            gone = not any(e["date"] == p["date"] for e in events)
        return gone and len(events) == p["others"]

    def absent(self, p: Params) -> list[str]:
        return [f"{p['date']} 10:00 · {p['title']}"] if self.which == "one" else [f"{p['date']} "]

    def plan(self, p: Params) -> Step:
        if self.which == "one":
            return Seq(
                OpenApp("Simple Calendar Pro"),
                delete_row(row_containing(f"{p['date']} 10:00 · {p['title']}")),
                Finish(),
            )
        which = self.which

        def deletes(mem: dict[str, Any]) -> list[Step]:
            date = next_weekday(mem["today"], p["weekday"]) if which == "weekday" else p["date"]
            ids = [rid for rid, text in mem.get("rows", {}).items() if text.startswith(date + " ")]
            return [delete_row(rid) for rid in ids]

        return Seq(
            Read("today", today_of),
            OpenApp("Simple Calendar Pro"),
            Scan("rows"),
            Seq(dynamic=deletes),
            Finish(),
        )


class CalendarQuestion(Template):
    """Questions answered from the event list (``kind`` picks the question)."""

    apps, question = ("calendar",), True

    def __init__(self, name: str, kind: str, optimal_steps: int) -> None:
        self.name, self.kind, self.optimal_steps = name, kind, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        today = state.today
        date = day(today, rng.randint(0, 7))
        used = {e["title"] for e in state.records("events")}
        fresh = [t for t in EVENT_TITLES if t not in used]
        rng.shuffle(fresh)
        person = rng.choice(FIRST)
        for k in range(3):
            state.add(
                "events", random_event(rng, today, 0, date=date, title=fresh[k], time=f"{9 + 4 * k:02d}:00")
            )
        state.add(
            "events",
            random_event(rng, today, rng.randint(2, 9), title=f"Catch-up with {person}", time="16:30"),
        )
        events = state.records("events")
        p: Params = {"date": date, "today": today, "person": person, "time": "13:00", "start": "12:00"}
        p["date_phrase"] = phrase(date, today)
        p["expected"] = self.expected(
            p, [(e["date"], e["time"], e["title"]) for e in events], state.now, events
        )
        p["title"] = fresh[1]
        if self.kind == "location":
            p["expected"] = next(e["location"] for e in events if e["title"] == fresh[1])
        return p

    def expected(
        self, p: Params, rows: list[tuple[str, str, str]], now: str, events: list[dict[str, Any]]
    ) -> Any:
        date, kind = p["date"], self.kind
        if kind in ("any_on_date", "on_date"):
            return sorted({t for d, _, t in rows if d == date})
        if kind == "at_time":
            return sorted({t for d, tm, t in rows if d == date and tm == p["time"]})
        if kind == "next_week":
            last = day(p["today"], 7)
            return sorted({t for d, _, t in rows if p["today"] < d <= last})
        if kind == "time_range":
            return sorted({t for d, tm, t in rows if d == date and p["start"] <= tm <= "20:00"})
        if kind == "first_after":
            later = sorted((tm, t) for d, tm, t in rows if d == date and tm > p["start"])
            return [later[0][1]] if later else []
        if kind == "next":
            upcoming = sorted((d, tm, t) for d, tm, t in rows if (d, tm) > (p["today"], now))
            return [t for d, tm, t in upcoming if (d, tm) == upcoming[0][:2]]
        if kind == "person":
            meetings = [(d, tm) for d, tm, t in rows if t == f"Catch-up with {p['person']}"]
            if not meetings:
                return ""
            d, tm = min(meetings)
            when = dt.date.fromisoformat(d)
            return f"{when.strftime('%B')} {when.day} {when.year} {tm}"
        return None

    def must_see(self, p: Params, state: PhoneState) -> list[tuple[str | None, str]]:
        """A location is read from the event's detail screen; every other question from the whole list."""
        if self.kind != "location":
            return super().must_see(p, state)
        event = next(e for e in state.records("events") if e["title"] == p["title"])
        return self.detail_shown(event, ("location",))

    def goal(self, p: Params) -> str:
        titles = (
            " Answer with the titles only. If there are multiples "
            "titles, format your answer in a comma separated list."
        )
        app = "in Simple Calendar Pro?"
        return {
            "any_on_date": f"Do I have any events {p['date_phrase']} {app}{titles}",
            "on_date": f"What events do I have {p['date_phrase']} {app}{titles}",
            "at_time": (
                "What is on my schedule for "
                f"{p['date_phrase'].removeprefix('on ')} at {p['time']} {app}{titles}"
            ),
            "next_week": f"What events do I have in the next week {app}{titles}",
            "time_range": (
                f"Do I have any events between {p['start']} and 8pm {p['date_phrase']} {app}{titles}"
            ),
            "first_after": f"What is my first event after {p['start']} {p['date_phrase']} {app}{titles}",
            "location": f"What is the location of my {p['title']} event {app} Answer with the location only.",
            "next": f"What is my next upcoming event {app}{titles}",
            "person": (
                f"When is my next meeting with {p['person']} {app} Express your answer in the format "
                "<month name> <day> <year> <hour in 24-hour format>:<minutes in 24-hour format>."
            ),
        }[self.kind]

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        if answer is None:
            return False
        if self.kind in ("location", "person"):
            return norm(answer) == norm(p["expected"])
        return same_list(answer, p["expected"])

    def plan(self, p: Params) -> Step:
        if self.kind == "location":
            return Seq(
                OpenApp("Simple Calendar Pro"),
                Tap(row_containing(f" · {p['title']}")),
                Read("loc", lambda s: s.find("detail_location").text if s.find("detail_location") else ""),
                Finish(lambda m: m["loc"].removeprefix("Location: ")),
            )
        probe = {**p}

        def answer(mem: dict[str, Any]) -> str:
            probe["today"] = mem["today"]
            got = self.expected(probe, rows_of(mem), mem["now"], [])
            return got if isinstance(got, str) else ", ".join(got)

        return Seq(
            Read("today", today_of),
            Read("now", now_of),
            OpenApp("Simple Calendar Pro"),
            Scan("rows"),
            Finish(answer),
        )


register(
    AddEvent("SimpleCalendarAddOneEvent", "date", 17),
    AddEvent("SimpleCalendarAddOneEventTomorrow", "tomorrow", 13),
    AddEvent("SimpleCalendarAddOneEventInTwoWeeks", "two_weeks", 10),
    AddEvent("SimpleCalendarAddOneEventRelativeDay", "weekday", 17),
    AddEvent("SimpleCalendarAddRepeatingEvent", "repeat", 14),
    DeleteEvents("SimpleCalendarDeleteEvents", "date", 7),
    DeleteEvents("SimpleCalendarDeleteEventsOnRelativeDay", "weekday", 6),
    DeleteEvents("SimpleCalendarDeleteOneEvent", "one", 6),
    CalendarQuestion("SimpleCalendarAnyEventsOnDate", "any_on_date", 4),
    CalendarQuestion("SimpleCalendarEventsOnDate", "on_date", 4),
    CalendarQuestion("SimpleCalendarEventOnDateAtTime", "at_time", 3),
    CalendarQuestion("SimpleCalendarEventsInNextWeek", "next_week", 3),
    CalendarQuestion("SimpleCalendarEventsInTimeRange", "time_range", 2),
    CalendarQuestion("SimpleCalendarFirstEventAfterStartTime", "first_after", 2),
    CalendarQuestion("SimpleCalendarLocationOfEvent", "location", 4),
    CalendarQuestion("SimpleCalendarNextEvent", "next", 4),
    CalendarQuestion("SimpleCalendarNextMeetingWithPerson", "person", 5),
)
