"""The oracle's plan of a service task: a generated task's own plan, or a loaded tau2 task's gold actions
(the user's own as requests to the user) and then what to communicate; under strict tau2 scoring, a
confirmation question before each write."""

from __future__ import annotations

import json
from typing import Any

from papergym.envs.service.domain import Domain
from papergym.envs.service.plan import Call, Lit, Say
from papergym.envs.service.tasks import ServiceTask

CLOSING = "Your request has been handled."
"""What the oracle says once its plan is done (a statement, so the user ends the call)."""
CONFIRM = "I am about to call {name} with {arguments}. Do you confirm (yes/no)?"
"""What the oracle asks before each gold write under ``tau2_scoring="strict"``."""


def gold_plan(task: ServiceTask, domain: Domain) -> tuple[Any, ...]:
    """A generated task's plan; for a loaded task, its gold actions verbatim (the user's own as requests
    to the user), then the info to communicate."""
    if task.plan is not None:
        return task.plan
    calls = tuple(
        Call(a.name, {k: Lit(v) for k, v in a.arguments.items()})
        if a.requestor == "assistant"
        else Say(domain.user_action_request(a.name, a.arguments).replace("{", "{{").replace("}", "}}"))
        for a in task.criteria.actions
    )
    info = task.criteria.communicate_info
    closing = Say(("Here is what you asked for: " + "; ".join(info)) if info else CLOSING)
    task.plan = (*calls, closing)  # cached on the task
    return task.plan


def confirming(plan: tuple[Any, ...], writes: tuple[str, ...]) -> tuple[Any, ...]:
    """``plan`` with a confirmation question before each call of a ``writes`` tool."""
    out: list[Any] = []
    for step in plan:
        if isinstance(step, Call) and step.name in writes:
            arguments = json.dumps(
                {k: v.value if isinstance(v, Lit) else v for k, v in step.arguments.items()}
            )
            text = CONFIRM.format(name=step.name, arguments=arguments)
            out.append(Say(text.replace("{", "{{").replace("}", "}}")))
        out.append(step)
    return tuple(out)
