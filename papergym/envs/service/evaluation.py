"""tau2-exact evaluation of a finished conversation, and the `ScriptedJudge` of generated assertions.

The outcome is the product of the components listed in the task's ``reward_basis`` (tau2's
``evaluator.py``):

- ``DB``: the final database equals the one obtained by replaying the gold actions on the initial
  database (gold replay errors are ignored, as in tau2), so any extra or wrong write fails;
- ``ENV_ASSERTION``: every assertion function returns its expected value on the final database;
- ``COMMUNICATE``: each string is stated by some agent message: tau2's case-insensitive substring test
  (commas removed) with ``communicate="substring"``, or `papergym.envs.service.communicate`'s strict
  per-kind matcher with ``communicate="strict"`` (the default of generated tasks), counting a value only
  in agent messages after the agent's first successful tool call and, on generated tasks, after the
  lookups that show that value (its ``communicate_sources``, matched on their id arguments);
- ``NL_ASSERTION``: every assertion holds according to the judge; without a judge, a loaded task's
  assertions are listed as unevaluated and left out of the product (never counted as passed);
- ``ACTION``: every gold action is matched by some tool call of the episode on its ``compare_args``.

A conversation that did not end by a user's stop scores 0 and runs no check.

``scoring="strict"`` (opt-in, beyond tau2; tau2's scores stay exact with the default ``"exact"``) adds
three checks to every task whatever its ``reward_basis``, closing leaks tau2's users report
(tau2-bench issues #81 / #224, #320, #298):

- ``action``: every gold action is matched, as ``ACTION`` above (tau2's tasks list expected actions but
  leave ``ACTION`` out of their basis);
- ``handoff``: the agent called `TRANSFER_TOOL` successfully exactly when the gold actions do;
- ``confirmation``: every successful call of a mutating tool (the domain's ``WRITE`` tools) follows a
  user confirmation given since the previous one: an agent message asking a question, answered by a
  user message that agrees (`affirms`), with no later question answered otherwise before the call; one
  confirmation covers one mutation (inferred
  from the policies' "obtain explicit user confirmation (yes) to proceed" before each update).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from papergym.backends.protocols import Judge
from papergym.envs.service.communicate import CommunicateMode, communicated
from papergym.envs.service.db import ServiceDB
from papergym.envs.service.domain import Toolkit
from papergym.envs.service.tasks import ServiceTask

JUDGE_PASS = 0.5
"""A judge score at or above this counts as the assertion holding (inferred: tau2's judge is binary)."""
NL_JUDGE_TEMPLATE = (
    "Below is a customer-service conversation and one assertion about the agent's behaviour.\n\n"
    "Assertion: {criterion}\n\nScenario:\n{prompt}\n\nConversation:\n{response}\n\n"
    "Reply with a bare number and nothing else: 1 if the assertion holds, 0 if it does not."
)
"""A `ModelJudge` template for tau2 nl_assertions (its score is the first number in [0, 1] of the reply)."""
REFUSAL_PHRASES: tuple[str, ...] = (
    "cannot",
    "can't",
    "can not",
    "unable to",
    "not able to",
    "not allowed",
    "not eligible",
    "does not allow",
    "doesn't allow",
    "not permitted",
)
"""Phrases that make an agent message a refusal for the ``refused`` predicate (inferred: the wording of
tau2's "Agent should refuse to proceed" assertions, decided on what the agent said)."""
TRANSFER_TOOL = "transfer_to_human_agents"
"""tau2's handoff tool (every domain)."""
Tau2Scoring = Literal["exact", "strict"]
_AGREE = re.compile(r"\b(yes|yeah|yep|sure|ok|okay|confirm|confirmed|go ahead|proceed|please do)\b")
_DECLINE = re.compile(r"\b(no|nope|not|don't|do not|never|cancel that)\b")


@dataclass
class Outcome:
    """The evaluation of one episode.

    Attributes:
        reward: the product of the evaluated basis components (0.0 for a premature end).
        checks: per-component results, keyed ``db``, ``env_assertion``, ``communicate``, ``nl_assertion``,
            ``action`` (only the task's basis components that were evaluated), and under strict scoring
            ``action``, ``handoff`` and ``confirmation``.
        unevaluated: the assertions that were not run.
        db_diff: where the ``db`` check failed, the differing records (``table``, ``key``, ``final``,
            ``gold``; a missing record is None).
    """

    reward: float
    checks: dict[str, bool] = field(default_factory=dict)
    unevaluated: list[str] = field(default_factory=list)
    db_diff: list[dict[str, Any]] = field(default_factory=list)


def render_transcript(events: Sequence[Mapping[str, Any]]) -> str:
    """The conversation as text for a judge: ``[user]``, ``[assistant]`` and ``[tool_call]`` lines."""
    lines = []
    for e in events:
        if e["kind"] == "tool":
            lines.append(f"[tool_call] {e['name']} {json.dumps(e['arguments'], sort_keys=True)}")
        elif e["kind"] == "device":
            lines.append(f"[user_tool_call] {e['name']} {json.dumps(e['arguments'], sort_keys=True)}")
        else:
            lines.append(f"[{'assistant' if e['kind'] == 'agent' else 'user'}] {e['text']}")
    return "\n".join(lines)


class ScriptedJudge:
    """The default `Judge` of generated tasks: decides a predicate on the rendered transcript.

    Predicates (the ``criterion``): ``said:TEXT`` / ``not_said:TEXT`` (case-insensitive, in an agent
    message), ``called:TOOL`` / ``not_called:TOOL``, and ``refused`` (some agent message holds one of
    `REFUSAL_PHRASES`). Scores are 1.0 or 0.0.
    """

    def score(self, prompt: str, response: str, *, criterion: str = "", seed: int | None = None) -> float:
        kind, _, arg = criterion.partition(":")
        lines = response.splitlines()
        if kind == "refused":
            said = [line.lower() for line in lines if line.startswith("[assistant] ")]
            return float(any(p in line for line in said for p in REFUSAL_PHRASES))
        if kind in ("said", "not_said"):
            hit = any(line.startswith("[assistant] ") and arg.lower() in line.lower() for line in lines)
        elif kind in ("called", "not_called"):
            hit = any(line.startswith(f"[tool_call] {arg} ") for line in lines)
        else:
            raise ValueError(
                f"unknown ScriptedJudge predicate {criterion!r}; use said/not_said/called/not_called/refused"
            )
        return float(hit if not kind.startswith("not_") else not hit)


def _communicated(
    task: ServiceTask, events: Sequence[Mapping[str, Any]], communicate: CommunicateMode
) -> bool:
    """The COMMUNICATE check. Every agent message counts for tau2's substring test. Under ``"strict"``
    a value counts only in a message after the agent's first successful tool call (an answer given
    before looking anything up is a guess) and, on generated tasks, after a successful call matching
    each group of the value's ``communicate_sources`` (a value stated after an unrelated lookup is a
    guess too)."""
    crit = task.criteria
    messages = [e["text"] for e in events if e["kind"] == "agent"]
    if communicate == "substring":
        return communicated(crit.communicate_info, messages, communicate)
    sources = crit.communicate_sources or [()] * len(crit.communicate_info)
    eligible: list[set[int]] = [set() for _ in crit.communicate_info]
    calls: list[tuple[str, Mapping[str, Any]]] = []
    index = -1
    for e in events:
        if e["kind"] == "tool" and not e["error"]:
            calls.append((e["name"], e["arguments"]))
        elif e["kind"] == "agent":
            index += 1
            for value, groups in enumerate(sources):
                if calls and all(any(a.matches(n, args) for a in g for n, args in calls) for g in groups):
                    eligible[value].add(index)
    return communicated(crit.communicate_info, messages, communicate, eligible)


def affirms(text: str) -> bool:
    """Whether a user message agrees to what the agent asked (a yes-word and no negation; inferred)."""
    low = text.lower()
    return _AGREE.search(low) is not None and _DECLINE.search(low) is None


def confirmed_mutations(events: Sequence[Mapping[str, Any]], mutating: Sequence[str]) -> bool:
    """Every successful call of a ``mutating`` tool follows its own user confirmation (see the module)."""
    asked = confirmed = False
    for e in events:
        if e["kind"] == "agent":
            asked = "?" in e["text"]
        elif e["kind"] == "user":
            if asked:  # the answer to the agent's question: a yes confirms, anything else withdraws
                confirmed = affirms(e["text"])
            asked = False
        elif e["kind"] == "tool" and not e["error"] and e["name"] in mutating:
            if not confirmed:
                return False
            confirmed = False
    return True


def _matched(task: ServiceTask, events: Sequence[Mapping[str, Any]]) -> bool:
    calls = [(e["name"], e["arguments"]) for e in events if e["kind"] in ("tool", "device")]
    return all(any(a.matches(n, args) for n, args in calls) for a in task.criteria.actions)


def replay_gold(task: ServiceTask, toolkit: type[Toolkit], base: Mapping[str, Any]) -> ServiceDB:
    """The initial database with the task's initialization and gold actions applied, as tau2 builds it.

    tau2 replays every gold action, the user's (``requestor="user"``: telecom's phone) as well as the
    agent's, on one environment, and ignores a gold call's error; so does this.
    """
    db = ServiceDB(base)
    tools = toolkit(db)
    for name, arguments in task.initialization_actions:
        tools.call(name, arguments, validate=False)
    for action in task.criteria.actions:
        tools.call(action.name, action.arguments, validate=False)
    return db


def evaluate(
    task: ServiceTask,
    *,
    toolkit: type[Toolkit],
    base: Mapping[str, Any],
    final: ServiceDB,
    events: Sequence[Mapping[str, Any]],
    stopped: bool,
    judge: Judge | None,
    seed: int | None = None,
    communicate: CommunicateMode = "substring",
    scoring: Tau2Scoring = "exact",
) -> Outcome:
    """Score a finished episode as tau2 does.

    Args:
        task: the task.
        toolkit: the domain's toolkit class.
        base: the initial database (shared base of ``final``).
        final: the episode's database.
        events: the episode's events (``kind`` user / agent / tool).
        stopped: the conversation ended by the user's stop token.
        judge: the judge for loaded natural-language assertions (None: leave them unevaluated).
        seed: passed to the judge.
        communicate: the COMMUNICATE setting, ``"substring"`` (tau2-exact) or ``"strict"``.
        scoring: ``"exact"`` (tau2's checks) or ``"strict"`` (also ``action``, ``handoff`` and
            ``confirmation`` on every task; see the module).
    """
    if not stopped:
        return Outcome(0.0)
    basis = set(task.criteria.reward_basis)
    crit = task.criteria
    checks: dict[str, bool] = {}
    unevaluated: list[str] = []
    db_diff: list[dict[str, Any]] = []
    if "DB" in basis:
        gold = replay_gold(task, toolkit, base)
        checks["db"] = final.same_state(gold)
        if not checks["db"]:
            db_diff = [
                {"table": t, "key": k, "final": final.get(t, k), "gold": gold.get(t, k)}
                for t, k in sorted(final.touched() | gold.touched())
                if final.get(t, k) != gold.get(t, k)
            ]
    if "ENV_ASSERTION" in basis:
        tools = toolkit(final)
        checks["env_assertion"] = all(
            tools.assertion(a.func_name, a.arguments) == a.assert_value for a in crit.env_assertions
        )
    if "COMMUNICATE" in basis:
        checks["communicate"] = _communicated(task, events, communicate)
    if "ACTION" in basis or scoring == "strict":
        checks["action"] = _matched(task, events)
    if scoring == "strict":
        transferred = any(
            e["kind"] == "tool" and not e["error"] and e["name"] == TRANSFER_TOOL for e in events
        )
        checks["handoff"] = transferred == any(a.name == TRANSFER_TOOL for a in crit.actions)
        checks["confirmation"] = confirmed_mutations(events, toolkit.WRITE)
    elif scoring != "exact":
        raise ValueError(f"scoring must be 'exact' or 'strict', got {scoring!r}")
    if "NL_ASSERTION" in basis and crit.nl_assertions:
        transcript = render_transcript(events)
        if crit.nl_predicates:
            scripted = ScriptedJudge()
            checks["nl_assertion"] = all(
                scripted.score("", transcript, criterion=p) >= JUDGE_PASS for p in crit.nl_predicates
            )
        elif judge is not None:
            prompt = task.scenario_text()
            checks["nl_assertion"] = all(
                judge.score(prompt, transcript, criterion=text, seed=seed) >= JUDGE_PASS
                for text in crit.nl_assertions
            )
        else:
            unevaluated = [f"nl_assertion: {text}" for text in crit.nl_assertions]
    reward = 1.0 if all(checks.values()) else 0.0
    return Outcome(reward, checks, unevaluated, db_diff)
