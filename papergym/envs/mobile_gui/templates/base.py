"""`Template`: one AndroidWorld task template (same intent and success condition) on papergym's apps.

A template draws its parameters and the phone's initial contents from a seeded ``random.Random``,
states the goal, checks success on the simulator state (``check``) and, for world-model envs, on the
final screen (``screen_check``), and gives the oracle's plan. A question's answer counts only if the
screen content it is read from was shown to the agent at some step (`must_see`; inferred, see
`Template.must_see`), and only without a collateral write: no record beyond those the task creates
(`Template.creates`), no change to records it was not asked to touch (`Template.edits_existing`). Step
budget rule:
``budget = 2 * optimal_steps + 10`` real steps, where ``optimal_steps`` is AndroidWorld's for the
template (task_metadata.json; inferred: AndroidWorld itself allows ``int(10 * complexity)``).
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from papergym.envs.mobile_gui.apps import make_apps
from papergym.envs.mobile_gui.oracle import Step
from papergym.envs.mobile_gui.phone import PhoneState
from papergym.envs.mobile_gui.views import Screen
from papergym.envs.mobile_gui.world import base_state

Params = dict[str, Any]
INITIAL_RECORDS = "_initial_records"  # params key: the records at reset, for the collateral check
MUST_SEE = "_must_see"  # params key: the (screen title or None, text) pairs a question's answer is read from
APPS = make_apps()
APP_LABELS: dict[str, str] = {key: app.label for key, app in APPS.items()}
Shown = Collection[tuple[str, str]]
"""What the agent was shown in an episode: (screen title, element text) for every element of every screen."""


def screen_texts(screen: Screen) -> set[tuple[str, str]]:
    """The (title, text) pairs one screen shows (what `Shown` accumulates)."""
    return {(screen.title, e.text) for e in screen.elements if e.text}


def was_shown(must_see: Iterable[Iterable[str | None]], shown: Shown) -> bool:
    """Every required ``(title, text)`` was shown; a title of None matches any screen."""
    texts = {text for _, text in shown}
    return all((title, text) in shown if title is not None else text in texts for title, text in must_see)


def budget(optimal_steps: int) -> int:
    """The step budget of a template with AndroidWorld's ``optimal_steps`` (rule in the module docstring)."""
    return 2 * optimal_steps + 10


def norm(text: str) -> str:
    """Case-, space- and punctuation-insensitive form of an answer."""
    return re.sub(r"[^a-z0-9:,.\- ]", "", " ".join(str(text).lower().split())).strip(" .")


def same_list(answer: str, expected: Iterable[str]) -> bool:
    """A comma-separated answer names exactly the expected items (any order, case, repetition)."""
    got = {norm(a) for a in str(answer).split(",") if norm(a)}
    return got == {norm(e) for e in expected}


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def number_answer(answer: str, expected: float) -> bool:
    """The answer states exactly one number, and it is ``expected``.

    Answer kinds, and how each template checks them: a number must be the only number in the answer
    (``"5, 6, 7"``, ``"5 or maybe 10"`` and ``"5 (not 6)"`` fail; surrounding words such as a unit are
    allowed); names, titles, dates and yes/no are compared whole after `norm` (so a list or an extra
    alternative never equals them); lists are compared as sets with `same_list` (a missing or an extra
    item fails).
    """
    found = _NUMBER.findall(str(answer))
    return len(found) == 1 and abs(float(found[0]) - float(expected)) < 1e-6


def new_records(p: Params, state: PhoneState) -> dict[str, list[dict[str, Any]]]:
    """The records of each collection whose id was not there at reset (collections empty or absent at
    reset included; collections that gained nothing are left out)."""
    before = {c: {r["id"] for r in recs} for c, recs in p.get(INITIAL_RECORDS, {}).items()}
    out: dict[str, list[dict[str, Any]]] = {}
    for collection, records in state.data.items():
        new = [r for r in records if r["id"] not in before.get(collection, set())]
        if new:
            out[collection] = new
    return out


def records_kept(p: Params, state: PhoneState, editable: Collection[str] = ()) -> bool:
    """Every record present at reset is still there, unchanged, outside the ``editable`` collections (new
    records are `only_created`'s concern)."""
    for collection, records in p.get(INITIAL_RECORDS, {}).items():
        if collection in editable:
            continue
        now = {r["id"]: r for r in state.data.get(collection, [])}
        if any(now.get(r["id"]) != r for r in records):
            return False
    return True


def only_created(p: Params, state: PhoneState, creates: Mapping[str, int]) -> bool:
    """Each collection gained exactly ``creates[collection]`` records since reset (0 where unnamed): no
    junk record beside the task's own, in its app or any other."""
    gained = {c: len(recs) for c, recs in new_records(p, state).items()}
    return gained == {c: n for c, n in creates.items() if n}


class Template:
    """Subclasses set the class attributes and implement `setup`, `goal`, `check` and `plan`.

    Attributes:
        name: the AndroidWorld task template it models (``info["androidworld_template"]``).
        optimal_steps: AndroidWorld's optimal step count for it.
        apps: the app keys it uses.
        question: it is answered in ``finished(content=...)``.
        verification: the goal already holds at reset (AndroidWorld's *Verify templates): the agent
            must check and finish, so only the finish makes it succeed.
        edits_existing: the task changes or deletes records present at reset, in its own apps'
            collections (`editable`; its own `check` then says which); every other record present at
            reset must be kept unchanged, and a task without the flag must keep every record present at
            reset unchanged, in every app. Editing is not adding: an editing task gains no new record
            unless `creates` says so (a copy).

    Collateral writes (tau2's DB check: the final state is the initial state plus only the task's
    change): besides `check`, `success` requires the records present at reset kept as above, and every
    collection, including ones empty or absent at reset, to gain exactly the records the task itself
    creates (`creates`, from its parameters: one contact, three expenses, one SMS and one note, ...).
    A junk record beside the task's own, a second copy of it, or a record in an app the task was not
    about fails; with `check` finding the task's record(s) among the new ones, the count leaves room for
    no other.
    """

    name = ""
    optimal_steps = 5
    apps: tuple[str, ...] = ()
    question = False
    verification = False
    edits_existing = False

    @property
    def budget(self) -> int:
        return budget(self.optimal_steps)

    def instantiate(self, rng: random.Random, difficulty: int = 1) -> tuple[Params, PhoneState]:
        """A seeded instance: the parameters and the phone's initial state (a `TaskGenerator` payload)."""
        del difficulty  # one level; AndroidWorld's difficulty is a property of the template
        state = base_state(rng)
        params = self.setup(rng, state)
        params[INITIAL_RECORDS] = copy.deepcopy(state.data)
        params[MUST_SEE] = [list(pair) for pair in self.must_see(params, state)] if self.question else []
        return params, state

    def success(
        self, p: Params, state: PhoneState, answer: str | None, shown: Shown, *, require_shown: bool = True
    ) -> bool:
        """`check`, no collateral write (the records present at reset kept, see ``edits_existing``; no new
        record but those of `creates`) and, for a question, the content its answer is read from was
        shown (`answer_shown`)."""
        kept = records_kept(p, state, self.editable() if self.edits_existing else ())
        clean = kept and only_created(p, state, self.creates(p))
        return self.check(p, state, answer) and clean and (not require_shown or self.answer_shown(p, shown))

    def creates(self, p: Params) -> dict[str, int]:
        """How many records the task itself creates, by collection (default: none). Every other count
        of new records, more or fewer, in any collection, fails `success`."""
        return {}

    def editable(self) -> set[str]:
        """The collections whose records present at reset an ``edits_existing`` task may change or
        delete: those of its own apps (records and folders)."""
        out = set()
        for key in self.apps:
            app = APPS[key]
            out |= {c for c in (getattr(app, "collection", ""), getattr(app, "folder_collection", "")) if c}
        return out

    def answer_shown(self, p: Params, shown: Shown) -> bool:
        """Every `must_see` text of the task was on a screen shown in the episode (True for non-questions)."""
        return was_shown(p.get(MUST_SEE, ()), shown)

    def must_see(self, p: Params, state: PhoneState) -> list[tuple[str | None, str]]:
        """What a question's answer is read from, as ``(screen title or None, text)`` pairs, from the state
        at reset. Inferred rule (AndroidWorld checks the answer only): a question over a list (which
        events, how many tasks, total distance) is answered from the whole list, so every row of the app's
        list must have been shown (scrolled through); templates answered from one record's detail screen
        override this with that screen's lines. The answer must come from looking, not guessing."""
        app = APPS[self.apps[0]]
        return [(None, app.row_text(r)) for r in state.records(getattr(app, "collection", ""))]

    def detail_shown(self, rec: Params, keys: Iterable[str] | None = None) -> list[tuple[str | None, str]]:
        """The lines (those named by ``keys``, default all) of ``rec``'s detail screen in the question's
        app, with that screen's title."""
        app = APPS[self.apps[0]]
        wanted = None if keys is None else set(keys)
        title = app.row_text(rec)
        return [
            (title, text) for k, text in app.detail_lines(rec) if text and (wanted is None or k in wanted)
        ]

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        """Draw the parameters and adapt the initial state (targets, distractors)."""
        raise NotImplementedError

    def goal(self, p: Params) -> str:
        raise NotImplementedError

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        """Success on the simulator state (``answer``: the ``finished`` content, None before it)."""
        raise NotImplementedError

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        """Success read from the final screen alone (a world model's judge). By default, the answer of a
        question, or every `evidence` text on the screen outside editable fields (a draft typed into a
        form and never saved does not show the task done)."""
        if self.question:
            return answer is not None and self.check(p, PhoneState(), answer)
        if self.apps and screen.app not in {APP_LABELS.get(a) for a in self.apps}:
            return False
        shown = [e.text for e in screen.elements if not e.editable]  # an unsaved draft is not done
        rows = [e.text for e in screen.elements if e.id.startswith("row_")]
        present = all(any(want in t for t in shown) for want in self.evidence(p))
        return present and not any(t.startswith(gone) for gone in self.absent(p) for t in rows)

    def evidence(self, p: Params) -> list[str]:
        """Texts the final screen shows when the task is done (the oracle ends on such a screen)."""
        return []

    def absent(self, p: Params) -> list[str]:
        """Row-text prefixes the final screen (a list of the app) no longer shows when the task is done."""
        return []

    def plan(self, p: Params) -> Step:
        raise NotImplementedError


REGISTRY: dict[str, Template] = {}


def register(*templates: Template) -> None:
    for t in templates:
        if t.name in REGISTRY:
            raise ValueError(f"template {t.name!r} registered twice")
        REGISTRY[t.name] = t
