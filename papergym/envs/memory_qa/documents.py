"""Procedural long documents and their questions, as pure functions of a ``random.Random``.

A document is planned once per task (`plan_document`: the kind, the page count, an entity table
of every subject's attributes, the question, where its evidence and its distractors sit) and each
page's text is rendered on demand (`page_text`), from a generator seeded by ``(plan.seed, page)``:
a reset costs a plan, a step costs one page, never the whole document.

Every fact in a document comes from the entity table, so the document never contradicts itself.
The (subject, attribute) pairs a question asks about appear only on its evidence pages;
distractors state the same attribute of a similar-named subject (a value of the same form).
Categorical attributes have a default value that is also the most frequent one in the document:
a question whose answer is that default (or, for a comparison, the first-named option) is
*guessable*, so a right answer alone does not prove the memory held the evidence.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

KINDS: tuple[str, ...] = ("annual_report", "manual", "case_file")
QUESTION_TYPES: tuple[str, ...] = ("single", "aggregate", "compare")


@dataclass(frozen=True, slots=True)
class Attribute:
    """An attribute a subject may have: numeric (``low..high``) or categorical (``values``)."""

    name: str
    low: int = 0
    high: int = 0
    values: tuple[str, ...] = ()

    @property
    def numeric(self) -> bool:
        return not self.values

    @property
    def default(self) -> str | None:
        """The categorical default (the first value; the most frequent in every document)."""
        return self.values[0] if self.values else None


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The words of one document kind."""

    title: str
    first: tuple[str, ...]
    second: tuple[str, ...]
    attributes: tuple[Attribute, ...]
    sections: tuple[str, ...]
    narrative: tuple[str, ...]  # templates with {s} (a subject) and {t} (the document title)


VOCABULARIES: dict[str, Vocabulary] = {
    "annual_report": Vocabulary(
        "Annual Report of {org}",
        ("Northwind", "Bluepeak", "Harbor", "Silverline", "Redstone", "Oakfield", "Meridian", "Crescent"),
        ("Logistics", "Energy", "Retail", "Foods", "Systems", "Mining", "Textiles", "Media"),
        (
            Attribute("revenue in million EUR", 20, 900),
            Attribute("headcount", 40, 5000),
            Attribute("audit opinion", values=("unqualified", "qualified", "adverse", "disclaimer")),
            Attribute("reporting currency", values=("EUR", "USD", "GBP", "CHF")),
        ),
        ("Letter to shareholders", "Segment review", "Financial statements", "Risk report", "Outlook"),
        (
            "The board reviewed the performance of {s} during the year.",
            "{s} continued to invest in its core markets.",
            "Management of {s} reported steady progress on its efficiency programme.",
            "This section of the {t} summarises developments across the group.",
            "Market conditions remained mixed, and {s} adjusted its pricing accordingly.",
        ),
    ),
    "manual": Vocabulary(
        "Service Manual for the {org}",
        ("Intake", "Cooling", "Drive", "Control", "Sensor", "Boiler", "Filter", "Hydraulic"),
        ("Valve", "Pump", "Module", "Relay", "Unit", "Gate", "Motor", "Panel"),
        (
            Attribute("maximum pressure in bar", 2, 400),
            Attribute("service interval in hours", 50, 9000),
            Attribute("operating mode", values=("automatic", "manual", "eco", "boost")),
            Attribute("connector type", values=("M12", "M8", "RJ45", "USB-C")),
        ),
        ("Safety notes", "Installation", "Operation", "Maintenance", "Troubleshooting"),
        (
            "Before working on the {s}, disconnect the main supply.",
            "The {s} must be inspected by qualified personnel only.",
            "Refer to the wiring diagram when replacing the {s}.",
            "This chapter of the {t} describes routine procedures.",
            "Keep the area around the {s} free of debris.",
        ),
    ),
    "case_file": Vocabulary(
        "Case File {org}",
        ("Elena", "Marcus", "Ines", "Tobias", "Yara", "Felix", "Nadia", "Oskar"),
        ("Varga", "Lindqvist", "Moreau", "Okafor", "Brandt", "Sato", "Keller", "Duarte"),
        (
            Attribute("claim amount in EUR", 500, 90000),
            Attribute("days in custody", 1, 400),
            Attribute("case status", values=("closed", "open", "appealed", "suspended")),
            Attribute(
                "assigned court", values=("District Court", "Appeals Court", "Labour Court", "Tribunal")
            ),
        ),
        ("Summary", "Witness statements", "Exhibits", "Correspondence", "Findings"),
        (
            "The statement of {s} was recorded by the investigating officer.",
            "Counsel for {s} requested additional time to respond.",
            "{s} was informed of the hearing schedule by letter.",
            "This part of the {t} collects the relevant correspondence.",
            "No further objections concerning {s} were raised at this stage.",
        ),
    ),
}
ORGS: dict[str, tuple[str, ...]] = {
    "annual_report": ("Altamira Group", "Vesta Holdings", "Corvid Industries"),
    "manual": ("Model K-400 Line", "Series 9 Plant", "TX-20 Compressor Skid"),
    "case_file": ("No. 2024-117", "No. 2025-031", "No. 2023-884"),
}
NAMES: dict[str, tuple[str, ...]] = {
    kind: tuple(f"{a} {b}" for a in v.first for b in v.second) for kind, v in VOCABULARIES.items()
}
ATTRIBUTES: dict[str, Attribute] = {a.name: a for v in VOCABULARIES.values() for a in v.attributes}
DEFAULT_SHARE = 0.6
"""Share of categorical entity values that are the default (inferred; makes it the most frequent)."""


@dataclass(frozen=True, slots=True)
class Question:
    """A question with its gold answer and evidence.

    Attributes:
        text: the question as shown to the agent.
        qtype: ``"single"``, ``"aggregate"`` or ``"compare"``.
        attribute: the attribute asked about.
        subjects: the subjects it names, in order.
        answer: the gold answer (canonical form).
        evidence: the gold evidence facts, ``(subject, attribute, value, page)`` with 0-based pages.
        guessable: the answer equals the prior guess (`prior_guess`), evidence or not.
    """

    text: str
    qtype: str
    attribute: str
    subjects: tuple[str, ...]
    answer: str
    evidence: tuple[tuple[str, str, str, int], ...]
    guessable: bool

    @property
    def evidence_pages(self) -> tuple[int, ...]:
        """The gold evidence pages, sorted, 0-based."""
        return tuple(sorted({page for *_, page in self.evidence}))


_BITS = 16  # bits of the document's random table per (subject, attribute) value
MAX_SUBJECTS = 24


@dataclass(frozen=True, slots=True)
class DocumentPlan:
    """Everything needed to render a document's pages and judge its question.

    Every entity value is read from one random integer (``table``, `_BITS` bits per (subject,
    attribute)) unless ``overrides`` forces it: planning allocates almost nothing, so a reset
    stays cheap.

    Attributes:
        kind: one of `KINDS`.
        title: the document's title.
        n_pages: the page count.
        seed: the page generators' base seed.
        subjects: every subject of the document (the question's first).
        table: the random bits the entity values are read from.
        overrides: ``{(subject, attribute): value}`` forced by the question and its distractors.
        question: the question.
        placed: ``{page: ((subject, attribute, role), ...)}`` with role ``"evidence"``,
            ``"distractor"`` or ``"xref:<page>"`` (a cross-reference to an evidence page).
        protected: the (subject, attribute) pairs stated only where `placed` puts them.
    """

    kind: str
    title: str
    n_pages: int
    seed: int
    subjects: tuple[str, ...]
    table: int
    overrides: dict[tuple[str, str], str]
    question: Question
    placed: dict[int, tuple[tuple[str, str, str], ...]]
    protected: frozenset[tuple[str, str]]

    def value(self, subject: str, attribute: str) -> str:
        """The value of ``attribute`` of ``subject`` (the single source of every fact)."""
        forced = self.overrides.get((subject, attribute))
        if forced is not None:
            return forced
        attributes = VOCABULARIES[self.kind].attributes
        j = next(i for i, a in enumerate(attributes) if a.name == attribute)
        slot = self.subjects.index(subject) * len(attributes) + j
        return _draw(attributes[j], (self.table >> (_BITS * slot)) & ((1 << _BITS) - 1))

    @property
    def entities(self) -> dict[str, dict[str, str]]:
        """``{subject: {attribute: value}}`` for the whole document (built on demand)."""
        names = [a.name for a in VOCABULARIES[self.kind].attributes]
        return {s: {a: self.value(s, a) for a in names} for s in self.subjects}


def _draw(attribute: Attribute, bits: int) -> str:
    """A value of ``attribute`` from `_BITS` uniform random bits."""
    u = bits / (1 << _BITS)
    if attribute.numeric:
        return str(attribute.low + int(u * (attribute.high - attribute.low + 1)))
    if u < DEFAULT_SHARE:
        return attribute.values[0]
    return attribute.values[1 + int((u - DEFAULT_SHARE) / (1 - DEFAULT_SHARE) * (len(attribute.values) - 1))]


def fact_line(subject: str, attribute: str, value: str) -> str:
    """The canonical one-line form of a fact (what the oracle keeps in memory)."""
    return f"{subject} - {attribute}: {value}"


def prior_guess(question: Question) -> str:
    """The answer a reader without evidence would give (`prior_answer` of the question). Reads no answer."""
    return prior_answer(question.qtype, question.attribute, question.subjects)


def prior_answer(qtype: str, attribute: str, subjects: Sequence[str]) -> str:
    """The answer a question of type ``qtype`` about ``attribute`` of ``subjects`` allows without evidence:
    the attribute's default (single, categorical), the first-named option (compare), else ``"unknown"``."""
    if qtype == "compare":
        return subjects[0]
    spec = ATTRIBUTES[attribute]
    if qtype == "single" and not spec.numeric:
        return spec.default or "unknown"
    return "unknown"


def _value(rng: random.Random, attribute: Attribute, *, default: bool | None = None) -> str:
    if attribute.numeric:
        return str(rng.randint(attribute.low, attribute.high))
    if default is None:
        default = rng.random() < DEFAULT_SHARE
    return attribute.values[0] if default else rng.choice(attribute.values[1:])


def _sibling(rng: random.Random, name: str, vocab: Vocabulary, taken: set[str]) -> str | None:
    """A subject sharing one word with ``name`` (a distractor that looks like the answer's)."""
    first, second = name.split(" ", 1)
    options = [f"{first} {w}" for w in vocab.second] + [f"{w} {second}" for w in vocab.first]
    options = [o for o in options if o not in taken]
    return rng.choice(options) if options else None


def plan_document(
    rng: random.Random,
    difficulty: int,
    *,
    pages: tuple[int, int] = (20, 60),
    kinds: tuple[str, ...] = KINDS,
    guessable_share: float = 0.3,
) -> DocumentPlan:
    """Plan one document and its question, drawing only from ``rng``.

    Args:
        rng: the task's generator.
        difficulty: 1..3; the number of distractors per evidence fact.
        pages: the page count's range (inclusive).
        kinds: the document kinds to draw from.
        guessable_share: the probability that the question is guessable.
    """
    kind = kinds[rng.randrange(len(kinds))] if len(kinds) > 1 else kinds[0]
    vocab = VOCABULARIES[kind]
    n_pages = rng.randint(pages[0], pages[1])
    names = rng.sample(NAMES[kind], 10)
    guessable = rng.random() < guessable_share
    numeric = [a for a in vocab.attributes if a.numeric]
    categorical = [a for a in vocab.attributes if not a.numeric]
    qtype = rng.choice(("single", "compare")) if guessable else QUESTION_TYPES[rng.randrange(3)]
    if qtype == "single" and (guessable or rng.random() < 0.5):
        attribute = rng.choice(categorical)
    else:
        attribute = rng.choice(numeric)
    n_subjects = {"single": 1, "aggregate": rng.randint(2, 3), "compare": 2}[qtype]
    subjects = tuple(names[:n_subjects])
    table = rng.getrandbits(_BITS * len(vocab.attributes) * MAX_SUBJECTS)
    overrides: dict[tuple[str, str], str] = {}
    taken = set(names)
    draft = DocumentPlan(kind, "", n_pages, 0, tuple(names), table, overrides, None, {}, frozenset())  # type: ignore[arg-type]
    if qtype == "single" and not attribute.numeric:
        overrides[subjects[0], attribute.name] = _value(rng, attribute, default=guessable)
    if qtype == "compare":
        a, b = int(draft.value(subjects[0], attribute.name)), int(draft.value(subjects[1], attribute.name))
        if a == b:  # no ties: the comparison must have one answer
            b = b + 1 if b < attribute.high else b - 1
            overrides[subjects[1], attribute.name] = str(b)
        if (a > b) != guessable:  # the prior guess (the first-named) wins exactly when guessable
            subjects = subjects[::-1]
    gold = [draft.value(s, attribute.name) for s in subjects]
    if qtype == "single":
        answer, text = gold[0], f"What is the {attribute.name} of {subjects[0]}?"
    elif qtype == "aggregate":
        answer = str(sum(int(v) for v in gold))
        listed = ", ".join(subjects[:-1]) + f" and {subjects[-1]}"
        text = f"What is the total {attribute.name} of {listed}?"
    else:
        answer = subjects[0] if int(gold[0]) > int(gold[1]) else subjects[1]
        text = f"Which has the higher {attribute.name}, {subjects[0]} or {subjects[1]}?"
    evidence_pages = rng.sample(range(n_pages), len(subjects))
    placed: dict[int, list[tuple[str, str, str]]] = {}
    protected = {(s, attribute.name) for s in subjects}
    for subject, page in zip(subjects, evidence_pages, strict=True):
        placed.setdefault(page, []).append((subject, attribute.name, "evidence"))
        for _ in range(difficulty):
            sibling = _sibling(rng, subject, vocab, taken)
            if sibling is None:
                break
            taken.add(sibling)
            names.append(sibling)
            if attribute.numeric:  # a near value of the same form
                near = int(gold[subjects.index(subject)]) + rng.choice((-3, -2, -1, 1, 2, 3))
                overrides[sibling, attribute.name] = str(max(attribute.low, near))
            else:
                overrides[sibling, attribute.name] = _value(rng, attribute)
            protected.add((sibling, attribute.name))
            where = page if rng.random() < 0.5 else rng.randrange(n_pages)
            placed.setdefault(where, []).append((sibling, attribute.name, "distractor"))
        xref = rng.randrange(n_pages)
        if xref != page:
            placed.setdefault(xref, []).append((subject, attribute.name, f"xref:{page}"))
    evidence = tuple(
        (s, attribute.name, g, p) for s, g, p in zip(subjects, gold, evidence_pages, strict=True)
    )
    org = rng.choice(ORGS[kind])
    question = Question(text, qtype, attribute.name, subjects, answer, evidence, guessable)
    return DocumentPlan(
        kind,
        vocab.title.format(org=org),
        n_pages,
        rng.getrandbits(62),
        tuple(names),
        table,
        overrides,
        question,
        {page: tuple(items) for page, items in placed.items()},
        frozenset(protected),
    )


def _statement(rng: random.Random, subject: str, attribute: str, value: str) -> str:
    form = rng.randrange(3)
    if form == 0:
        return f"According to the records, the {attribute} of {subject} is {value}."
    if form == 1:
        return f"- {fact_line(subject, attribute, value)}"
    return f"For {subject}, the {attribute} stands at {value}."


def page_text(plan: DocumentPlan, page: int) -> str:
    """The text of ``page`` (0-based): heading, narrative, key facts, a table, placed facts."""
    rng = random.Random(plan.seed + page)
    vocab = VOCABULARIES[plan.kind]
    subjects = plan.subjects
    attributes = [a.name for a in vocab.attributes]
    section = vocab.sections[min(len(vocab.sections) - 1, page * len(vocab.sections) // plan.n_pages)]
    lines = [f"{plan.title} - page {page + 1} of {plan.n_pages}", f"Section: {section}", ""]
    lines.extend(
        rng.choice(vocab.narrative).format(s=rng.choice(subjects), t=plan.title)
        for _ in range(rng.randint(2, 3))
    )
    facts: list[str] = []
    for _ in range(rng.randint(1, 3)):
        subject, attribute = rng.choice(subjects), rng.choice(attributes)
        if (subject, attribute) not in plan.protected:
            facts.append(_statement(rng, subject, attribute, plan.value(subject, attribute)))
    for subject, attribute, role in plan.placed.get(page, ()):
        if role.startswith("xref:"):
            target = int(role[5:]) + 1
            facts.append(f"(See page {target} for the {attribute} of {subject}.)")
        else:
            facts.append(_statement(rng, subject, attribute, plan.value(subject, attribute)))
    rng.shuffle(facts)
    if facts:
        lines += ["", "Key facts:", *facts]
    if rng.random() < 0.5:
        column = rng.choice(attributes)
        rows = [s for s in rng.sample(subjects, 3) if (s, column) not in plan.protected]
        if rows:
            lines += ["", f"Table: {column}", f"| subject | {column} |", "|---|---|"]
            lines += [f"| {s} | {plan.value(s, column)} |" for s in rows]
    return "\n".join(lines)


_SPACE = re.compile(r"\s+")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def normalize_answer(text: str) -> str:
    """The comparison form of an answer: lower case, single spaces, no trailing punctuation; a number
    in integer form when it is whole, else its exact shortest decimal (never rounded: the questions ask
    for the exact value, so ``195065.6`` does not equal ``195066``). Commas are dropped only when they
    are well-formed thousands separators (``195,066``), so a list such as ``19,5066`` stays text."""
    text = _SPACE.sub(" ", text.strip().lower()).strip(" .;:!\"'")
    number = text.replace(",", "") if _THOUSANDS.fullmatch(text) else text
    try:
        value = float(number)
    except ValueError:
        return text
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
