"""A procedurally generated fictional knowledge base, rendered as Wikipedia-style passages.

Every name is built from invented syllables, so no answer can come from a language model's memory.
The base holds countries, cities, organisations, people (with a father, a birthplace, an employer)
and works (films and novels, each with a creator). About one person in twelve shares the full name
of another person with a different occupation (a namesake): their passages are titled
``"Name (occupation)"`` and act as distractors for every question that goes through either one.

Passages follow fixed sentence patterns, and `read_attribute` reads a relation back out of a
passage's text; the oracle and the oracle critic use it, so both act only on text that was retrieved.
"""

from __future__ import annotations

import bisect
import random
import re
from dataclasses import dataclass, field

from papergym.core.tasks import stable_seed

_ONSETS = (
    "b",
    "d",
    "f",
    "g",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "z",
    "br",
    "dr",
    "gr",
    "kl",
    "st",
    "th",
)
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou")
_CODAS = ("", "", "n", "r", "s", "l", "m", "nd", "rk", "st")
OCCUPATIONS: tuple[str, ...] = (
    "film director",
    "novelist",
    "painter",
    "footballer",
    "chemist",
    "politician",
    "merchant",
    "architect",
    "composer",
    "journalist",
)
_GENRES = ("drama", "comedy", "thriller", "historical", "romance", "war", "mystery", "adventure")
_TITLE_WORDS = (
    "Gate", "River", "Winter", "Crown", "Harbour", "Lantern", "Silence", "Orchard", "Tower", "Voyage",
    "Mirror", "Garden", "Storm", "Bridge", "Letter", "Shadow", "Island", "Road", "Bell", "Feather",
)  # fmt: skip
_ORG_KINDS = ("company", "bank", "university", "shipping line", "publishing house", "trade union")
_FILLERS = (
    "It is often mentioned in regional histories.",
    "Little else is recorded about its early years.",
    "Several later accounts disagree on minor details.",
    "It was the subject of a local exhibition.",
    "Archives about it are kept in a provincial library.",
    "",
    "",
)
NAMESAKE_SHARE = 1 / 12
"""Share of people who copy another person's full name (inferred: enough distractors to matter)."""


@dataclass(slots=True)
class Entity:
    """One entity of the knowledge base.

    Attributes:
        eid: its index in `KnowledgeBase.entities` (also its passage's index).
        kind: ``country``, ``city``, ``org``, ``person`` or ``work``.
        name: its name as other passages mention it.
        title: its passage's title (``"Name (occupation)"`` for people with namesakes).
        attrs: its attributes and relations (relations hold entity ids).
    """

    eid: int
    kind: str
    name: str
    title: str
    attrs: dict[str, object] = field(default_factory=dict)


class _Names:
    """Unique invented words from a seeded generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def word(self, syllables: int) -> str:
        rng = self.rng
        while True:
            parts = [rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables)]
            word = "".join(parts).capitalize()
            if word not in self.used:
                self.used.add(word)
                return word


class KnowledgeBase:
    """The fictional world: entities and one passage per entity.

    Args:
        seed: the world's seed.
        n_passages: the number of passages (one per entity); at least 200.

    >>> kb = KnowledgeBase(seed=0, n_passages=300)
    >>> len(kb.passages()) == 300 and len(kb.of_kind("work")) > 0
    True
    """

    def __init__(self, seed: int = 0, n_passages: int = 10_000) -> None:
        if n_passages < 200:
            raise ValueError(
                f"n_passages must be >= 200 (a world needs room for namesakes), got {n_passages}"
            )
        self.seed = int(seed)
        self.n_passages = int(n_passages)
        rng = random.Random(stable_seed("papergym-search-kb", seed, n_passages))
        self.entities: list[Entity] = []
        self._by_kind: dict[str, list[int]] = {}
        self._build(rng, n_passages)
        self._texts = [self._render(e, rng) for e in self.entities]
        self.title_index: dict[str, int] = {e.title: e.eid for e in self.entities}
        self.namesakes: dict[str, list[int]] = {}
        for pid in self._by_kind["person"]:
            self.namesakes.setdefault(self.entities[pid].name, []).append(pid)

    # ------------------------------------------------------------------ building
    def _add(self, kind: str, name: str, **attrs: object) -> Entity:
        entity = Entity(len(self.entities), kind, name, name, dict(attrs))
        self.entities.append(entity)
        self._by_kind.setdefault(kind, []).append(entity.eid)
        return entity

    def _build(self, rng: random.Random, n: int) -> None:
        names = _Names(rng)
        n_countries = max(6, n // 400)
        n_cities = max(20, n // 12)
        n_orgs = max(15, n // 10)
        n_people = n // 2
        n_works = n - n_countries - n_cities - n_orgs - n_people
        countries = [self._add("country", names.word(2)) for _ in range(n_countries)]
        for i in range(n_cities):
            country = countries[i % n_countries] if i < n_countries else rng.choice(countries)
            city = self._add("city", names.word(rng.choice((2, 3))), country=country.eid)
            city.attrs["population"] = rng.randrange(5, 900) * 1000
            country.attrs.setdefault("capital", city.eid)
        cities = self._by_kind["city"]
        orgs = [
            self._add(
                "org",
                f"{names.word(2)} {rng.choice(_ORG_KINDS).title()}",
                hq=rng.choice(cities),
                founded=rng.randrange(1850, 2000),
            )
            for _ in range(n_orgs)
        ]
        given = [names.word(2) for _ in range(max(60, int(n**0.5) * 3))]
        family = [names.word(rng.choice((2, 3))) for _ in range(max(120, int(n**0.5) * 6))]
        full_names: set[str] = set()  # names free to be copied once
        taken: set[str] = set()
        years: list[int] = []
        people: list[Entity] = []
        for i in range(n_people):
            year = 1850 + (140 * i) // n_people + rng.randrange(0, 10)
            occupation = rng.choice(OCCUPATIONS)
            copy_of = None
            if len(people) > 20 and rng.random() < NAMESAKE_SHARE:
                copy_of = people[rng.randrange(len(people))]
            if (
                copy_of is not None
                and copy_of.attrs["occupation"] != occupation
                and copy_of.name in full_names
            ):
                name = copy_of.name
                full_names.discard(name)  # at most two people per name
            else:
                name = f"{rng.choice(given)} {rng.choice(family)}"
                while name in taken:
                    name = f"{rng.choice(given)} {rng.choice(family)}"
                full_names.add(name)
                taken.add(name)
            person = self._add(
                "person", name, birth_year=year, birthplace=rng.choice(cities), occupation=occupation
            )
            limit = bisect.bisect_right(years, year - 20)
            if i >= n_people // 8 and limit > 0:
                person.attrs["father"] = people[rng.randrange(limit)].eid
            if rng.random() < 0.7:
                person.attrs["employer"] = rng.choice(orgs).eid
            people.append(person)
            years.append(year)
        for org in orgs:
            founder = rng.choice(people)
            org.attrs["founder"] = founder.eid
        creators = {
            "film": [p for p in people if p.attrs["occupation"] == "film director"],
            "novel": [p for p in people if p.attrs["occupation"] == "novelist"],
        }
        for _ in range(n_works):
            medium = rng.choice(("film", "novel"))
            creator = rng.choice(creators[medium])
            title = f"The {names.word(2)} {rng.choice(_TITLE_WORDS)}"
            year = min(int(creator.attrs["birth_year"]) + rng.randrange(22, 60), 2024)  # type: ignore[call-overload]
            self._add("work", title, medium=medium, creator=creator.eid, year=year, genre=rng.choice(_GENRES))
        by_name: dict[str, list[Entity]] = {}
        for person in people:
            by_name.setdefault(person.name, []).append(person)
        for group in by_name.values():
            if len(group) > 1:
                for person in group:
                    person.title = f"{person.name} ({person.attrs['occupation']})"

    # ------------------------------------------------------------------ rendering
    def _render(self, e: Entity, rng: random.Random) -> str:
        a = e.attrs
        ent = self.entities
        if e.kind == "country":
            text = f"{e.name} is a country. Its capital is {ent[a['capital']].name}."  # type: ignore[index]
        elif e.kind == "city":
            text = (
                f"{e.name} is a city in {ent[a['country']].name}. "  # type: ignore[index]
                f"It has a population of about {a['population']:,}."
            )
        elif e.kind == "org":
            founder = ent[a["founder"]]  # type: ignore[index]
            text = (
                f"{e.name} is an organisation founded in {a['founded']} by {founder.name}, a "
                f"{founder.attrs['occupation']}. Its headquarters are in {ent[a['hq']].name}."  # type: ignore[index]
            )
        elif e.kind == "person":
            place = ent[a["birthplace"]]  # type: ignore[index]
            country = ent[place.attrs["country"]]  # type: ignore[index]
            text = (
                f"{e.name} (born {a['birth_year']} in {place.name}) is a {a['occupation']} "
                f"from {country.name}."
            )
            if "father" in a:
                father = ent[a["father"]]  # type: ignore[index]
                text += f" Their father was {father.name}, a {father.attrs['occupation']}."
            if "employer" in a:
                text += f" They worked for {ent[a['employer']].name}."  # type: ignore[index]
        else:
            verb = "directed" if a["medium"] == "film" else "written"
            creator = ent[a["creator"]]  # type: ignore[index]
            text = f"{e.name} is a {a['year']} {a['genre']} {a['medium']} {verb} by {creator.name}."
        filler = rng.choice(_FILLERS)
        return f"{text} {filler}" if filler else text

    # ------------------------------------------------------------------ access
    def passages(self) -> list[tuple[str, str, str]]:
        """``(id, title, text)`` of every passage; the id is ``"p<index>"``."""
        return [(f"p{e.eid}", e.title, t) for e, t in zip(self.entities, self._texts, strict=False)]

    def text(self, eid: int) -> str:
        """The passage text of entity ``eid``."""
        return self._texts[eid]

    def of_kind(self, kind: str) -> list[int]:
        """The ids of every entity of ``kind``."""
        return self._by_kind.get(kind, [])

    def has_namesake(self, eid: int) -> bool:
        """Whether another person shares this person's name."""
        return len(self.namesakes.get(self.entities[eid].name, ())) > 1


# ---------------------------------------------------------------------- reading passages back
_READERS: dict[str, re.Pattern[str]] = {
    "birth_year": re.compile(r"\(born (\d{4}) in "),
    "birthplace": re.compile(r"\(born \d{4} in ([^)]+)\)"),
    "occupation": re.compile(r"\) is an? (.+?) from "),
    "father": re.compile(r"Their father was ([^,]+), an? ([^.]+)\."),
    "employer": re.compile(r"They worked for ([^.]+)\."),
    "creator": re.compile(r" (directed|written) by ([^.]+)\."),
    "year": re.compile(r" is an? (\d{4}) "),
}
CREATOR_OCCUPATION = {"directed": "film director", "written": "novelist"}


def read_attribute(text: str, attribute: str) -> tuple[str, str] | None:
    """Read ``attribute`` from a passage's text: ``(value, qualifier)`` or None if it is absent.

    The qualifier is the occupation of a person the value names (``father``, ``creator``), else "".

    >>> read_attribute("Ana Bo (born 1901 in Tek) is a chemist from Vel.", "birthplace")
    ('Tek', '')
    >>> read_attribute("The Ko Gate is a 1950 war film directed by Ana Bo.", "creator")
    ('Ana Bo', 'film director')
    """
    pattern = _READERS.get(attribute)
    match = pattern.search(text) if pattern is not None else None
    if match is None:
        return None
    if attribute == "father":
        return match[1], match[2]
    if attribute == "creator":
        return match[2], CREATOR_OCCUPATION[match[1]]
    return match[1], ""
