"""Question templates over the Tasks app and the OpenTracks sports tracker, answered from the lists."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from papergym.envs.mobile_gui.oracle import Finish, OpenApp, Read, Scan, Seq, Step
from papergym.envs.mobile_gui.phone import PhoneState
from papergym.envs.mobile_gui.templates.base import Params, Template, number_answer, register, same_list
from papergym.envs.mobile_gui.templates.calendar import phrase, today_of
from papergym.envs.mobile_gui.world import SPORTS, TASK_TITLES, day, random_activity, random_task

TITLES = (
    " Answer with the titles only. If there are multiples "
    "titles, format your answer in a comma separated list."
)


def task_rows(mem: dict[str, Any]) -> list[dict[str, Any]]:
    """Tasks list rows read by a scan: ``Title · due D · Priority · open|done D``."""
    out = []
    for text in mem.get("rows", {}).values():
        parts = text.split(" · ")
        if len(parts) != 4:
            continue
        done = parts[3].startswith("done")
        out.append(
            {
                "title": parts[0],
                "due": parts[1].removeprefix("due "),
                "priority": parts[2],
                "completed": done,
                "completed_on": parts[3].removeprefix("done").strip() if done else "",
            }
        )
    return out


class TasksQuestion(Template):
    apps, question = ("tasks",), True

    def __init__(self, name: str, kind: str, optimal_steps: int) -> None:
        self.name, self.kind, self.optimal_steps = name, kind, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        date = day(state.today, rng.randint(0, 6))
        used = {t["title"] for t in state.records("tasks")}
        fresh = [t for t in TASK_TITLES if t not in used]
        rng.shuffle(fresh)
        for k in range(3):
            done = k == 0
            state.add(
                "tasks",
                random_task(
                    rng,
                    state.today,
                    fresh[k],
                    due=date,
                    completed=done,
                    completed_on=date if done else "",
                    priority="High" if k < 2 else "Low",
                ),
            )
        p = {"date": date, "today": state.today, "date_phrase": phrase(date, state.today)}
        p["expected"] = self.answer(p, state.records("tasks"))
        return p

    def answer(self, p: Params, tasks: list[dict[str, Any]]) -> Any:
        date, kind = p["date"], self.kind
        if kind == "completed_on":
            return sorted({t["title"] for t in tasks if t["completed"] and t["completed_on"] == date})
        if kind == "due_next_week":
            last = day(p["today"], 7)
            return sum(1 for t in tasks if p["today"] < t["due"] <= last and not t["completed"])
        if kind == "due_on":
            return sorted({t["title"] for t in tasks if t["due"] == date})
        if kind == "high":
            return sorted({t["title"] for t in tasks if t["priority"] == "High" and not t["completed"]})
        if kind == "high_on":
            return sorted({t["title"] for t in tasks if t["priority"] == "High" and t["due"] == date})
        return sorted({t["title"] for t in tasks if t["due"] == date and not t["completed"]})

    def goal(self, p: Params) -> str:
        d = p["date_phrase"]
        return {
            "completed_on": f"Which tasks have I completed for {d.removeprefix('on ')} in Tasks app?{TITLES}",
            "due_next_week": (
                "How many tasks do I have due next week "
                "in Tasks app? Express your answer as a single integer."
            ),
            "due_on": f"What tasks do I have due {d} in Tasks app?{TITLES}",
            "high": f"What are my high priority tasks in Tasks app?{TITLES}",
            "high_on": f"Which tasks with high priority are due {d} in the Tasks app?{TITLES}",
            "incomplete_on": (
                "What incomplete tasks do I have still "
                f"have to do by {d.removeprefix('on ')} in Tasks app?{TITLES}"
            ),
        }[self.kind]

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        if answer is None:
            return False
        if self.kind == "due_next_week":
            return number_answer(answer, p["expected"])
        return same_list(answer, p["expected"])

    def plan(self, p: Params) -> Step:
        probe = dict(p)

        def answer(mem: dict[str, Any]) -> str:
            probe["today"] = mem["today"]
            got = self.answer(probe, task_rows(mem))
            return str(got) if isinstance(got, int) else ", ".join(got)

        return Seq(Read("today", today_of), OpenApp("Tasks"), Scan("rows"), Finish(answer))


def activity_rows(mem: dict[str, Any]) -> list[dict[str, Any]]:
    """Sports tracker rows: ``date start · category · name · N min · M m``."""
    out = []
    for text in mem.get("rows", {}).values():
        parts = text.split(" · ")
        if len(parts) != 5:
            continue
        out.append(
            {
                "date": parts[0].split()[0],
                "category": parts[1],
                "duration": parts[3].removesuffix(" min"),
                "distance": parts[4].removesuffix(" m"),
            }
        )
    return out


def week_start(today: str) -> str:
    d = dt.date.fromisoformat(today)
    return (d - dt.timedelta(days=d.weekday())).isoformat()


class SportsQuestion(Template):
    apps, question = ("sports",), True

    def __init__(self, name: str, kind: str, optimal_steps: int) -> None:
        self.name, self.kind, self.optimal_steps = name, kind, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        cat = rng.choice(SPORTS)
        today = state.today
        monday_offset = -dt.date.fromisoformat(today).weekday()
        for _ in range(3):
            state.add("activities", random_activity(rng, today, rng.randint(monday_offset, 0), category=cat))
        date = day(today, rng.randint(-6, -1))
        acts = state.records("activities")
        if self.kind == "on_date":
            state.add("activities", random_activity(rng, today, 0, date=date))
        if self.kind == "duration":  # one activity of the category that day
            acts[:] = [a for a in acts if not (a["date"] == date and a["category"] == cat)]
            state.add("activities", random_activity(rng, today, 0, date=date, category=cat))
        start, end = day(today, -12), day(today, -2)
        p = {
            "category": cat,
            "date": date,
            "today": today,
            "start_date": start,
            "end_date": end,
            "date_phrase": phrase(date, today),
        }
        p["expected"] = self.answer(p, acts)
        return p

    def answer(self, p: Params, acts: list[dict[str, Any]]) -> Any:
        cat, kind = p["category"], self.kind
        week = [a for a in acts if week_start(p["today"]) <= a["date"] <= p["today"] and a["category"] == cat]
        if kind == "count_week":
            return len(week)
        if kind == "on_date":
            return sorted({a["category"] for a in acts if a["date"] == p["date"]})
        if kind == "duration":
            return sum(int(a["duration"]) for a in acts if a["date"] == p["date"] and a["category"] == cat)
        if kind == "longest_week":
            return max((int(a["distance"]) for a in week), default=0)
        if kind == "total_distance":
            return sum(
                int(a["distance"])
                for a in acts
                if a["category"] == cat and p["start_date"] <= a["date"] <= p["end_date"]
            )
        return sum(int(a["duration"]) for a in week)

    def goal(self, p: Params) -> str:
        cat, app = p["category"], "in the OpenTracks app"
        return {
            "count_week": (
                f"How many {cat} activities did I do this "
                f"week {app}? Express your answer as a single integer."
            ),
            "on_date": (
                f"What activities did I do {p['date_phrase']} {app}? Answer with the category only. If there "
                "are multiples categories, format your answer in a comma separated list."
            ),
            "duration": (
                f"How long was my {cat} activity {p['date_phrase']} {app}? Express your answer in minutes "
                "as a single integer."
            ),
            "longest_week": (
                f"What was the longest distance covered in a {cat} activity {app} this week? Express "
                "your answer in meters as a single integer."
            ),
            "total_distance": (
                f"What was the total distance covered for {cat} activities {app} from {p['start_date']} "
                f"to {p['end_date']}? Express your answer in meters as a single integer."
            ),
            "total_duration_week": (
                f"What was the total duration of {cat} activities {app} this week? Express your "
                "answer in minutes as a single integer."
            ),
        }[self.kind]

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        if answer is None:
            return False
        if self.kind == "on_date":
            return same_list(answer, p["expected"])
        return number_answer(answer, p["expected"])

    def plan(self, p: Params) -> Step:
        probe = dict(p)

        def answer(mem: dict[str, Any]) -> str:
            probe["today"] = mem["today"]
            got = self.answer(probe, activity_rows(mem))
            return str(got) if isinstance(got, int) else ", ".join(got)

        return Seq(Read("today", today_of), OpenApp("OpenTracks"), Scan("rows"), Finish(answer))


register(
    TasksQuestion("TasksCompletedTasksForDate", "completed_on", 5),
    TasksQuestion("TasksDueNextWeek", "due_next_week", 6),
    TasksQuestion("TasksDueOnDate", "due_on", 2),
    TasksQuestion("TasksHighPriorityTasks", "high", 2),
    TasksQuestion("TasksHighPriorityTasksDueOnDate", "high_on", 5),
    TasksQuestion("TasksIncompleteTasksOnDate", "incomplete_on", 2),
    SportsQuestion("SportsTrackerActivitiesCountForWeek", "count_week", 3),
    SportsQuestion("SportsTrackerActivitiesOnDate", "on_date", 10),
    SportsQuestion("SportsTrackerActivityDuration", "duration", 6),
    SportsQuestion("SportsTrackerLongestDistanceActivity", "longest_week", 2),
    SportsQuestion("SportsTrackerTotalDistanceForCategoryOverInterval", "total_distance", 11),
    SportsQuestion("SportsTrackerTotalDurationForCategoryThisWeek", "total_duration_week", 8),
)
