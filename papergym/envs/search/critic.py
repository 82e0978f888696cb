"""Critics for `papergym/SearchCritic-v0`: the embedded `OracleCritic` and CAFE's critic prompt.

`OracleCritic` knows the gold evidence chain. It diagnoses the agent's drift from what the agent
retrieved and wrote (a wrong entity that shares a name, a premature conclusion in the plan, a query
that found nothing on the chain, a missing hop) and hints at the single most important correction,
never naming the answer (CAFE's critic rules, envs.md §3.2). `cafe_critic(model)` is the
model-backed `ModelCritic` with CAFE's prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from papergym.backends.model_roles import ModelCritic, render_dialogue
from papergym.backends.protocols import ChatModel, Message
from papergym.envs.search.corpus import Corpus
from papergym.envs.search.questions import QAItem, normalize_answer

CAFE_CRITIC_SYSTEM = (
    "You are a trajectory critic for a Deep Research agent. You read the user's query and the agent's "
    "trajectory so far and give feedback that helps the agent reach a correct, well-supported answer."
)
CAFE_CRITIC_TEMPLATE = (
    "<query>{question}</query>\n<trajectory>{trajectory}</trajectory>\n\n"
    "Rules:\n- Preserve the objective of the query.\n"
    "- Give the single most important correction for the agent's next plan or tool call.\n"
    "- Do not solve the task or reveal the answer.\n- Do not invent evidence.\n"
    "Write your feedback inside <feedback></feedback>."
)
_CONCLUSION = re.compile(r"\b(answer is|the answer|therefore|so it is|must be|i conclude)\b", re.IGNORECASE)
_GENERIC = (
    "Re-check your chain of evidence one hop at a time: find the passage for each entity the question "
    "depends on, by its exact name, before you answer."
)


def cafe_critic(model: ChatModel, **kwargs: object) -> ModelCritic:
    """A `ModelCritic` with CAFE's critic prompt (envs.md §3.2); extra kwargs go to `ModelCritic`.

    ``cafe_critic(PolicyChatModel(policy))`` (`papergym.baselines.policy`) is CAFE's shared critic: the
    agent's own model, weights shared, prompted as the critic.
    """
    return ModelCritic(model, system_prompt=CAFE_CRITIC_SYSTEM, template=CAFE_CRITIC_TEMPLATE, **kwargs)  # type: ignore[arg-type]


def cafe_critic_messages(question: str, trajectory: Sequence[Message]) -> list[Message]:
    """The chat messages `cafe_critic` sends for ``(question, trajectory)``: the critic role's context, as
    RDPO and the recovery SFT train it."""
    user = CAFE_CRITIC_TEMPLATE.format(question=question, trajectory=render_dialogue(trajectory))
    return [{"role": "system", "content": CAFE_CRITIC_SYSTEM}, {"role": "user", "content": user}]


def feedback_completion(text: str) -> str:
    """The critic's reply as it is trained: the feedback inside ``<feedback></feedback>`` (CAFE's format).

    >>> feedback_completion("Search the director.")
    '<feedback>Search the director.</feedback>'
    """
    return f"<feedback>{text.strip()}</feedback>"


@dataclass
class CriticView:
    """What the oracle critic sees of an episode (the env fills it in before asking).

    Attributes:
        item: the question with its gold evidence chain.
        corpus: the passages.
        retrieved: positions of every passage shown so far, in order (repeats kept).
        queries: every query searched so far.
        last_results: positions returned by the last search call.
        notes: the agent's ``<plan>`` / ``<think>`` texts so far.
    """

    item: QAItem
    corpus: Corpus
    retrieved: list[int] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    last_results: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class OracleCritic:
    """The default critic: knows the gold chain and hints at the next correction without the answer.

    Before each `feedback` call the env passes its episode through `bind`; `feedback` consumes it.

    >>> OracleCritic().feedback("Who?", []).startswith("Re-check your chain of evidence")
    True
    """

    def __init__(self) -> None:
        self._view: CriticView | None = None

    def __repr__(self) -> str:
        return "OracleCritic()"

    def bind(self, view: CriticView) -> None:
        """Give the critic the current episode."""
        self._view = view

    def feedback(self, question: str, trajectory: Sequence[Message], *, seed: int | None = None) -> str:
        """`Critic.feedback`: the diagnosis of the bound episode (generic advice when none is bound)."""
        del question, trajectory, seed
        view, self._view = (
            self._view,
            None,
        )  # one diagnosis per binding; the env does not keep the corpus here
        if view is None or not view.item.evidence:
            return _GENERIC
        hint = self._diagnose(view)
        return hint if not _leaks(hint, view.item.answers) else _GENERIC

    # ------------------------------------------------------------------ diagnosis
    def _diagnose(self, view: CriticView) -> str:
        corpus, item = view.corpus, view.item
        chain = [corpus.position[pid] for pid in item.evidence if pid in corpus.position]
        seen = set(view.retrieved)
        missing = [h for h, pos in enumerate(chain) if pos not in seen]
        notes = " ".join(view.notes[-2:]).lower()
        for h, pos in enumerate(chain):
            title = corpus.titles[pos]
            name = _name(title)
            if name == title:
                continue
            namesakes = [
                p for p in seen if p != pos and _name(corpus.titles[p]) == name and corpus.titles[p] != title
            ]
            for other in sorted(namesakes):
                wrong = corpus.titles[other]
                mentioned = _qualifier(wrong).lower() in notes if _qualifier(wrong) else False
                if h in missing or mentioned:
                    return (
                        f'Wrong entity: the passage "{wrong}" is about a different person who shares '
                        f"the name {name}. The question needs the {_qualifier(title)}: search for "
                        f'"{self._query(view, h)}" and read that passage instead.'
                    )
        if not missing:
            return (
                "You have already retrieved every passage the question needs. Re-read them carefully and "
                f"{'compare the two values it asks about' if item.combine != 'last' else 'follow the chain'}"
                " before answering; do not search again."
            )
        h = missing[0]
        target = self._describe(view, h)
        if view.notes and _CONCLUSION.search(view.notes[-1]):
            return (
                f"Premature conclusion: your plan draws a conclusion before you have found {target}. "
                f'Search for "{self._query(view, h)}" first.'
            )
        if not view.queries:
            return f'You have not searched yet. Start with {target}: search for "{self._query(view, h)}".'
        chain_set = set(chain)
        if not chain_set.intersection(view.last_results):
            return (
                f'Bad query: your last search ("{view.queries[-1]}") found nothing the question depends on. '
                f'Look for {target} instead: search for "{self._query(view, h)}".'
            )
        return f'Missing hop: you still need {target}. Search for "{self._query(view, h)}".'

    def _is_option(self, view: CriticView, h: int) -> bool:
        name = normalize_answer(_name(view.corpus.titles[view.corpus.position[view.item.evidence[h]]]))
        return any(normalize_answer(a) == name for a in view.item.answers) or any(
            normalize_answer(o) == name for o in view.item.options
        )

    def _describe(self, view: CriticView, h: int) -> str:
        hop = view.item.hops[h] if h < len(view.item.hops) else None
        if hop is not None and hop.name_from >= 0:
            return "the passage about the person your earlier evidence points to"
        if self._is_option(view, h):
            return f"the passage about the {'first' if h % 2 == 0 else 'second'} option in the question"
        return "the passage about the entity named in the question"

    def _query(self, view: CriticView, h: int) -> str:
        title = view.corpus.titles[view.corpus.position[view.item.evidence[h]]]
        if self._is_option(view, h):
            return f"the exact name of the {'first' if h % 2 == 0 else 'second'} option"
        name, qualifier = _name(title), _qualifier(title)
        return f"{name} {qualifier}" if qualifier else name


def _name(title: str) -> str:
    return title.split(" (", 1)[0]


def _qualifier(title: str) -> str:
    return title[title.index(" (") + 2 : -1] if title.endswith(")") and " (" in title else ""


def _leaks(hint: str, answers: Sequence[str]) -> bool:
    text = f" {normalize_answer(hint)} "
    return any(f" {normalize_answer(a)} " in text for a in answers if normalize_answer(a))
