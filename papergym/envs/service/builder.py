"""`TaskBuilder`: assembles a generated task's scenario, gold actions, oracle plan and checks together.

A template calls `call` with both the concrete arguments (the gold action, known to the generator)
and the plan's expressions for them (what the oracle resolves from tool results and user turns), so the
gold actions and the oracle's calls cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from papergym.envs.service.plan import Call, Say
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
