"""`TaskBuilder`: assembles a generated task's scenario, gold actions, oracle plan and checks together.

A template calls `call` with both the concrete arguments (the gold action, known to the generator)
and the plan's expressions for them (what the oracle resolves from tool results and user turns), so the
gold actions and the oracle's calls cannot drift apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from papergym.envs.service.plan import Call, Pick, Res, Say
from papergym.envs.service.tasks import Action, Criteria, Instructions, ServiceTask, UserScript


@dataclass
class TaskBuilder:
    """Collects one generated task.

    Attributes:
        domain: the domain's name.
        template: the template's name.
    """

    domain: str
    template: str
    plan: list[Say | Call] = field(default_factory=list)
    gold: list[Action] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    communicate: list[str] = field(default_factory=list)
    sources: list[tuple[tuple[Action, ...], ...]] = field(default_factory=list)
    nl: list[tuple[str, str]] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    confirm: bool = True
    stop: str = "###STOP###"

    def say(self, template: str, *args: Any) -> None:
        """The oracle says ``template.format(*resolved args)``."""
        self.plan.append(Say(template, tuple(args)))

    def call(
        self, name: str, gold: Mapping[str, Any], plan: Mapping[str, Any] | None = None, label: str = ""
    ) -> None:
        """A gold action with concrete ``gold`` arguments, which the oracle computes from ``plan``."""
        plan = dict(gold) if plan is None else dict(plan)
        if set(plan) != set(gold):
            raise ValueError(
                f"{self.template}: plan and gold arguments of {name} differ: {set(plan) ^ set(gold)}"
            )
        self.gold.append(Action(f"{self.template}_{len(self.gold)}", name, dict(gold)))
        self.plan.append(Call(name, plan, label))

    def tell(self, value: str) -> None:
        """``value`` is to be communicated, as the last `say` states it: it counts only once the agent has
        made the lookups that say reads (per label: the gold call, matched on its id arguments)."""
        said = next((step for step in reversed(self.plan) if isinstance(step, Say)), None)
        groups = _labels(said.args) if said is not None else []
        self.communicate.append(value)
        self.sources.append(tuple(tuple(self._source(label) for label in group) for group in groups))

    def _source(self, label: str) -> Action:
        calls = [i for i, step in enumerate(self.plan) if isinstance(step, Call)]
        index = next(k for k, i in reversed(list(enumerate(calls))) if self.plan[i].label == label)
        gold = self.gold[index]
        ids = [k for k in gold.arguments if k == "id" or k.endswith("_id")]
        return Action(gold.action_id, gold.name, dict(gold.arguments), compare_args=ids)

    def assertion(self, text: str, predicate: str) -> None:
        """A natural-language assertion and the `ScriptedJudge` predicate that decides it."""
        self.nl.append((text, predicate))

    def build(self, task_id: str, reason: str, known: str, instructions: str = "") -> ServiceTask:
        """The task. ``reason`` is the user's opening; ``known`` describes what they know, in prose.

        A refusal task (one with a ``not_called:`` assertion) also asserts, as tau2's "Agent should
        refuse to proceed" does, that the agent said a refusal and made every gold lookup that justifies
        it; a transfer task (the user stops with ``###TRANSFER###``), that the agent made every gold call,
        the transfer included. So never acting does not pass.
        """
        refusal = any(p.startswith("not_called:") for _, p in self.nl)
        if refusal or self.stop == "###TRANSFER###":
            for action in self.gold:
                self.assertion(f"The agent calls {action.name}.", f"called:{action.name}")
        if refusal:
            self.assertion("The agent refuses to proceed.", "refused")
        basis = ("DB", "COMMUNICATE", "NL_ASSERTION") if self.nl else ("DB", "COMMUNICATE")
        return ServiceTask(
            id=task_id,
            domain=self.domain,
            persona=None,
            instructions=Instructions(
                domain=self.domain,
                reason_for_call=reason,
                known_info=known,
                unknown_info=" ".join(self.unknown) or None,
                task_instructions=instructions
                or "Answer the agent's questions with what you know, confirm the actions you asked for, "
                "and end the conversation once your requests are handled.",
            ),
            criteria=Criteria(
                actions=list(self.gold),
                communicate_info=list(self.communicate),
                communicate_sources=list(self.sources),
                nl_assertions=[text for text, _ in self.nl],
                nl_predicates=[predicate for _, predicate in self.nl],
                reward_basis=basis,
            ),
            script=UserScript(
                facts=dict(self.facts), requests=list(self.requests), confirm=self.confirm, stop=self.stop
            ),
            plan=tuple(self.plan),
            template=self.template,
        )


def _labels(value: Any) -> list[tuple[str, ...]]:
    """The labelled results a plan expression reads: one group per `Res`, a `Pick`'s labels as one group
    of alternatives."""
    if isinstance(value, Res):
        return [(value.label,), *_labels(value.path)]
    if isinstance(value, Pick):
        return [tuple(value.labels), *_labels(value.where), *_labels(value.out)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [g for f in dataclasses.fields(value) for g in _labels(getattr(value, f.name))]
    if isinstance(value, list | tuple):
        return [g for v in value for g in _labels(v)]
    if isinstance(value, Mapping):
        return [g for v in value.values() for g in _labels(v)]
    return []
