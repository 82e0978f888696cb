"""Service tasks in tau2-bench's format (the folder loader is `papergym.envs.service.tau2_data`).

A task has a user scenario (persona and instructions: the reason for the call, what the user knows,
what they do not know, how to behave) and evaluation criteria (expected actions, environment
assertions, information to communicate, natural-language assertions, and the ``reward_basis`` listing
which of these gate the reward). Field names follow tau2's ``data_model/tasks.py`` so that its
``tasks.json`` loads unmodified. Generated tasks add papergym-only fields: the scripted user's facts
(`UserScript`), the oracle's plan and the natural-language assertions' predicates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

REWARD_TYPES: tuple[str, ...] = ("DB", "ENV_ASSERTION", "COMMUNICATE", "NL_ASSERTION", "ACTION")
DEFAULT_REWARD_BASIS: tuple[str, ...] = ("DB", "COMMUNICATE")
"""tau2's default basis when a task does not list one (envs.md §2.2)."""
TAU2_FILES: tuple[str, ...] = ("db.json", "tasks.json", "split_tasks.json", "policy.md")


@dataclass(slots=True)
class Instructions:
    """tau2's ``StructuredUserInstructions``."""

    domain: str
    reason_for_call: str
    known_info: str | None = None
    unknown_info: str | None = None
    task_instructions: str = ""


@dataclass(slots=True)
class UserScript:
    """What the `ScriptedUser` needs beyond the prose scenario (generated tasks only).

    Attributes:
        facts: what the user can tell when asked, by topic (``"email"``, ``"name"``, ``"zip"``,
            ``"order_id"``, ...); a topic absent here is answered "I don't know".
        requests: follow-up requests, said one at a time once the agent finishes the previous one.
        confirm: whether the user agrees when the agent asks for confirmation.
        stop: the token the user ends with.
    """

    facts: dict[str, str] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    confirm: bool = True
    stop: str = "###STOP###"


@dataclass(slots=True)
class Action:
    """An expected tool call (tau2's ``Action``)."""

    action_id: str
    name: str
    arguments: dict[str, Any]
    requestor: str = "assistant"
    compare_args: list[str] | None = None

    def matches(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """tau2's rule: same name, and equal values on ``compare_args`` (all the call's arguments if None)."""
        if name != self.name:
            return False
        keys = list(arguments) if self.compare_args is None else self.compare_args
        return {k: v for k, v in arguments.items() if k in keys} == {
            k: v for k, v in self.arguments.items() if k in keys
        }


@dataclass(slots=True)
class EnvAssertion:
    """A function of the domain's assertion toolkit that must return ``assert_value``."""

    func_name: str
    arguments: dict[str, Any]
    assert_value: bool = True
    env_type: str = "assistant"
    message: str | None = None


@dataclass(slots=True)
class Criteria:
    """tau2's ``EvaluationCriteria``, plus papergym-only fields of generated tasks: ``nl_predicates``, the
    `ScriptedJudge`'s forms of the assertions; ``communicate_sources``, per ``communicate_info`` value the
    lookups that show it (groups of alternative calls, one call of each group needed before the value
    counts as stated; empty for loaded tasks)."""

    actions: list[Action] = field(default_factory=list)
    env_assertions: list[EnvAssertion] = field(default_factory=list)
    communicate_info: list[str] = field(default_factory=list)
    nl_assertions: list[str] = field(default_factory=list)
    reward_basis: tuple[str, ...] = DEFAULT_REWARD_BASIS
    nl_predicates: list[str] = field(default_factory=list)
    communicate_sources: list[tuple[tuple[Action, ...], ...]] = field(default_factory=list)


@dataclass(slots=True)
class ServiceTask:
    """One task: the scenario the user plays and the criteria the episode is judged by.

    Attributes:
        id: the task's id (tau2's id for loaded tasks).
        domain: ``"retail"``, ``"airline"``, ...
        persona: the user's persona, or None.
        instructions: structured instructions, or tau2's free-text form.
        criteria: the evaluation criteria.
        initialization_actions: tau2 ``initial_state.initialization_actions`` (domain function calls run
            on the fresh database before the episode), as ``(func_name, arguments)``.
        script: the scripted user's facts (None for loaded tasks: the user then works from the prose).
        plan: the oracle's plan (generated tasks); None: the oracle replays the gold actions.
        template: the generating template's name ("" for loaded tasks).
    """

    id: str
    domain: str
    persona: str | None
    instructions: Instructions | str
    criteria: Criteria
    initialization_actions: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    script: UserScript | None = None
    plan: tuple[Any, ...] | None = None
    template: str = ""

    def scenario_text(self) -> str:
        """The scenario as tau2 renders it into the user simulator's prompt."""
        ins = self.instructions
        parts = [f"Persona:\n{self.persona}"] if self.persona else []
        if isinstance(ins, str):
            parts.append(f"Instructions:\n{ins}")
        else:
            parts.append(f"Domain: {ins.domain}\nReason for call:\n\t{ins.reason_for_call}")
            if ins.known_info:
                parts.append(f"Known info:\n\t{ins.known_info}")
            if ins.unknown_info:
                parts.append(f"Unknown info:\n\t{ins.unknown_info}")
            if ins.task_instructions:
                parts.append(f"Task instructions:\n\t{ins.task_instructions}")
        return "\n".join(parts)

    @property
    def reason_for_call(self) -> str:
        ins = self.instructions
        return ins if isinstance(ins, str) else ins.reason_for_call


def task_from_tau2(record: Mapping[str, Any], domain: str) -> ServiceTask:
    """A `ServiceTask` from one entry of tau2's ``tasks.json``.

    Raises:
        ValueError: the record lacks an id or a user scenario, or names an unknown reward type.
    """
    if "id" not in record or "user_scenario" not in record:
        raise ValueError(f"not a tau2 task record (needs 'id' and 'user_scenario'): keys {sorted(record)}")
    scenario = record["user_scenario"] or {}
    raw = scenario.get("instructions") or ""
    instructions: Instructions | str
    if isinstance(raw, Mapping):
        instructions = Instructions(
            domain=str(raw.get("domain") or domain),
            reason_for_call=str(raw.get("reason_for_call") or ""),
            known_info=raw.get("known_info"),
            unknown_info=raw.get("unknown_info"),
            task_instructions=str(raw.get("task_instructions") or ""),
        )
    else:
        instructions = str(raw)
    ev = record.get("evaluation_criteria") or {}
    basis = tuple(ev.get("reward_basis") or DEFAULT_REWARD_BASIS)
    unknown = set(basis) - set(REWARD_TYPES)
    if unknown:
        raise ValueError(f"task {record['id']}: unknown reward_basis entries {sorted(unknown)}")
    actions = [
        Action(
            action_id=str(a.get("action_id") or f"{record['id']}_{i}"),
            name=a["name"],
            arguments=dict(a.get("arguments") or {}),
            requestor=a.get("requestor") or "assistant",
            compare_args=a.get("compare_args"),
        )
        for i, a in enumerate(ev.get("actions") or [])
    ]
    assertions = [
        EnvAssertion(
            func_name=e["func_name"],
            arguments=dict(e.get("arguments") or {}),
            assert_value=bool(e.get("assert_value", True)),
            env_type=e.get("env_type") or "assistant",
            message=e.get("message"),
        )
        for e in ev.get("env_assertions") or []
    ]
    init = (record.get("initial_state") or {}).get("initialization_actions") or []
    return ServiceTask(
        id=str(record["id"]),
        domain=domain,
        persona=scenario.get("persona"),
        instructions=instructions,
        criteria=Criteria(
            actions=actions,
            env_assertions=assertions,
            communicate_info=[str(s) for s in ev.get("communicate_info") or []],
            nl_assertions=[str(s) for s in ev.get("nl_assertions") or []],
            reward_basis=basis,
        ),
        initialization_actions=[(a["func_name"], dict(a.get("arguments") or {})) for a in init],
    )
