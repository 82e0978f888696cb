"""Multi-hop questions over the knowledge base, in 2WikiMultihopQA's four styles, and answer scoring.

Each `QAItem` carries the gold answer, its aliases, the gold evidence chain (passage ids) and a
`Hop` plan: which entity's passage to retrieve and which relation to read from it. The plan names
entities only through the question or through values read at earlier hops, so a policy that follows
it (the oracle) acts on retrieved text alone.

Styles (2WikiMultihopQA, Ho et al. 2020): ``compositional`` (a relation of a relation),
``comparison`` (two entities, one attribute), ``inference`` (a composed kinship relation),
``bridge_comparison`` (compare two entities through a bridge entity each).
"""

from __future__ import annotations

import random
import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from papergym.envs.search.knowledge_base import KnowledgeBase

QUESTION_TYPES: tuple[str, ...] = ("compositional", "comparison", "inference", "bridge_comparison")


@dataclass(frozen=True, slots=True)
class Hop:
    """One step of a question's evidence chain.

    Attributes:
        name_from: ``-1``: the entity is named in the question (``name``); ``i >= 0``: its name is the
            value read at hop ``i``.
        name: the entity's name when ``name_from == -1``, else "".
        qualifier: the occupation that tells a person from a namesake ("" for other entities);
            for ``name_from >= 0`` it is read along with the name.
        read: the relation read from the passage (`papergym.envs.search.knowledge_base.read_attribute`).
    """

    name_from: int
    name: str
    qualifier: str
    read: str


@dataclass(frozen=True, slots=True)
class QAItem:
    """One question.

    Attributes:
        qid: a stable id.
        qtype: one of `QUESTION_TYPES`, or "external" for loaded questions.
        question: the question text.
        answers: the gold answer first, then its aliases.
        evidence: the gold evidence chain, as passage ids in hop order.
        hops: the plan (empty for loaded questions).
        combine: how the answer follows from the hop values: ``last`` (the last value),
            ``earlier`` / ``later`` (the option whose compared value is smaller / larger).
        options: the two options of a comparison (their names), in question order.
    """

    qid: str
    qtype: str
    question: str
    answers: tuple[str, ...]
    evidence: tuple[str, ...]
    hops: tuple[Hop, ...] = ()
    combine: str = "last"
    options: tuple[str, ...] = ()


def _person_hop(kb: KnowledgeBase, eid: int, read: str) -> Hop:
    e = kb.entities[eid]
    return Hop(-1, e.name, str(e.attrs["occupation"]), read)


def _city_answers(kb: KnowledgeBase, city: int) -> tuple[str, ...]:
    c = kb.entities[city]
    return (c.name, f"{c.name}, {kb.entities[c.attrs['country']].name}")  # type: ignore[index]


def _compositional(kb: KnowledgeBase, rng: random.Random) -> QAItem:
    work = kb.entities[rng.choice(kb.of_kind("work"))]
    creator = kb.entities[work.attrs["creator"]]  # type: ignore[index]
    role = "director" if work.attrs["medium"] == "film" else "author"
    hops = (Hop(-1, work.name, "", "creator"), Hop(0, "", "", "birthplace"))
    evidence = (f"p{work.eid}", f"p{creator.eid}")
    if rng.random() < 0.5 or "employer" not in creator.attrs:
        question = f"Where was the {role} of the {work.attrs['medium']} {work.name} born?"
        answers = _city_answers(kb, creator.attrs["birthplace"])  # type: ignore[arg-type]
    else:
        question = f"Which organisation did the {role} of the {work.attrs['medium']} {work.name} work for?"
        answers = (kb.entities[creator.attrs["employer"]].name,)  # type: ignore[index]
        hops = (hops[0], Hop(0, "", "", "employer"))
    return QAItem("", "compositional", question, answers, evidence, hops)


def _comparison(kb: KnowledgeBase, rng: random.Random) -> QAItem:
    if rng.random() < 0.5:
        people = kb.of_kind("person")
        while True:
            a, b = (kb.entities[rng.choice(people)] for _ in range(2))
            distinct = a.attrs["birth_year"] != b.attrs["birth_year"] and a.name != b.name
            if distinct and not kb.has_namesake(a.eid) and not kb.has_namesake(b.eid):
                break
        first = rng.random() < 0.5
        question = f"Who was born {'first' if first else 'later'}, {a.name} or {b.name}?"
        hops = (_person_hop(kb, a.eid, "birth_year"), _person_hop(kb, b.eid, "birth_year"))
    else:
        works = kb.of_kind("work")
        while True:
            a, b = (kb.entities[rng.choice(works)] for _ in range(2))
            if a.attrs["year"] != b.attrs["year"] and a.name != b.name:
                break
        first = rng.random() < 0.5
        question = f"Which work came out {'first' if first else 'later'}, {a.name} or {b.name}?"
        hops = (Hop(-1, a.name, "", "year"), Hop(-1, b.name, "", "year"))
    key = "birth_year" if a.kind == "person" else "year"
    earlier = a if a.attrs[key] < b.attrs[key] else b  # type: ignore[operator]
    winner = earlier if first else (b if earlier is a else a)
    combine = "earlier" if first else "later"
    evidence = (f"p{a.eid}", f"p{b.eid}")
    return QAItem("", "comparison", question, (winner.name,), evidence, hops, combine, (a.name, b.name))


def _inference(kb: KnowledgeBase, rng: random.Random) -> QAItem:
    people = kb.of_kind("person")
    while True:
        person = kb.entities[rng.choice(people)]
        father_id = person.attrs.get("father")
        if father_id is not None and "father" in kb.entities[father_id].attrs:  # type: ignore[index]
            break
    father = kb.entities[father_id]  # type: ignore[index]
    grandfather = kb.entities[father.attrs["father"]]  # type: ignore[index]
    question = f"Who is the paternal grandfather of {person.name}"
    if kb.has_namesake(person.eid):
        question += f", the {person.attrs['occupation']}"
    hops = (_person_hop(kb, person.eid, "father"), Hop(0, "", "", "father"))
    evidence = (f"p{person.eid}", f"p{father.eid}")
    return QAItem("", "inference", question + "?", (grandfather.name,), evidence, hops)


def _bridge_comparison(kb: KnowledgeBase, rng: random.Random) -> QAItem:
    works = kb.of_kind("work")
    while True:
        a, b = (kb.entities[rng.choice(works)] for _ in range(2))
        ca, cb = (kb.entities[w.attrs["creator"]] for w in (a, b))  # type: ignore[index]
        if a.attrs["medium"] == b.attrs["medium"] and ca.attrs["birth_year"] != cb.attrs["birth_year"]:
            break
    role = "director" if a.attrs["medium"] == "film" else "author"
    first = rng.random() < 0.5
    question = (
        f"Which {a.attrs['medium']} has the {role} who was born {'first' if first else 'later'}, "
        f"{a.name} or {b.name}?"
    )
    earlier = a if ca.attrs["birth_year"] < cb.attrs["birth_year"] else b  # type: ignore[operator]
    winner = earlier if first else (b if earlier is a else a)
    hops = (
        Hop(-1, a.name, "", "creator"),
        Hop(-1, b.name, "", "creator"),
        Hop(0, "", "", "birth_year"),
        Hop(1, "", "", "birth_year"),
    )
    evidence = (f"p{a.eid}", f"p{b.eid}", f"p{ca.eid}", f"p{cb.eid}")
    combine = "earlier" if first else "later"
    return QAItem(
        "", "bridge_comparison", question, (winner.name,), evidence, hops, combine, (a.name, b.name)
    )


_MAKERS = {
    "compositional": _compositional,
    "comparison": _comparison,
    "inference": _inference,
    "bridge_comparison": _bridge_comparison,
}


def make_question(kb: KnowledgeBase, rng: random.Random, qtype: str) -> QAItem:
    """A question of style ``qtype`` drawn with ``rng`` (``qid`` left empty for the caller to set)."""
    if qtype not in _MAKERS:
        raise ValueError(f"unknown question type {qtype!r}; choose from {QUESTION_TYPES}")
    return _MAKERS[qtype](kb, rng)


def combine_answer(item: QAItem, values: Sequence[str]) -> str:
    """The answer that follows from the values read at each hop (the oracle's last reasoning step)."""
    if item.combine == "last":
        return values[-1]
    x, y = int(values[-2]), int(values[-1])
    first_wins = (x < y) if item.combine == "earlier" else (x > y)
    return item.options[0] if first_wins else item.options[1]


# ---------------------------------------------------------------------- scoring (SQuAD / Search-R1)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation (Search-R1's ``qa_em.py``): lowercase; drop punctuation, articles, extra spaces.

    >>> normalize_answer("The  Vel-Gate!")
    'velgate'
    """
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split())


def exact_match(prediction: str, answers: Sequence[str]) -> bool:
    """Whether the normalised prediction equals a normalised gold answer or alias."""
    pred = normalize_answer(prediction)
    return any(pred == normalize_answer(a) for a in answers)


def f1_score(prediction: str, answers: Sequence[str]) -> float:
    """The best token F1 between the prediction and a gold answer or alias (SQuAD's definition).

    >>> f1_score("Ana Bo", ["Ana Bo Li"])
    0.8
    """
    pred = normalize_answer(prediction).split()
    best = 0.0
    for answer in answers:
        gold = normalize_answer(answer).split()
        common = sum((Counter(pred) & Counter(gold)).values())
        if common:
            precision, recall = common / len(pred), common / len(gold)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best
