"""`papergym/ServiceAgent-v0`: a tau2-bench-compatible customer-service agent env (retail, airline)."""

from __future__ import annotations

import copy
import dataclasses
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from papergym.backends.model_roles import ModelJudge
from papergym.backends.protocols import ChatModel, DeviceUser, Judge, TaskBoundUser, UserSimulator
from papergym.backends.resolve import resolve_backend
from papergym.core import info_keys as K
from papergym.core.errors import BackendError
from papergym.core.tasks import DEFAULT_SPLIT_SIZES, Task, parse_task_id, stable_seed
from papergym.core.text_env import ObsMode, TextEnv, Turn
from papergym.core.tool_calls import ToolCall, parse_tool_calls
from papergym.envs.service.communicate import CommunicateMode
from papergym.envs.service.db import ServiceDB
from papergym.envs.service.domain import CallResult, Domain, Session
from papergym.envs.service.domains import get_domain
from papergym.envs.service.evaluation import NL_JUDGE_TEMPLATE, Outcome, ScriptedJudge, Tau2Scoring, evaluate
from papergym.envs.service.plan import Call, Lit, PlanContext, PlanError, Say, render_step
from papergym.envs.service.provenance import ProvenanceLog
from papergym.envs.service.tasks import ServiceTask
from papergym.envs.service.tau2_data import Tau2Folder, load_tau2_folder
from papergym.envs.service.user import GIVE_UP, ScriptedUser, stop_token

MAX_STEPS = 100
"""tau2's orchestrator default max_steps (envs.md §2.2)."""
MAX_ERRORS = 10
"""tau2's limit on tool-execution errors (envs.md §2.2)."""
DB_SEED = 2026
"""The seed of the generated default database (one per domain, shared by both splits)."""
CLOSING = "Your request has been handled."
"""What the oracle says once its plan is done (a statement, so the user ends the call)."""
AGENT_INSTRUCTIONS = (
    "You are a customer service agent that helps the user according to the <policy> below. In each turn "
    "you either send a message to the user or make one tool call, never both. To call a tool, write only "
    '<tool_call>{{"name": ..., "arguments": {{...}}}}</tool_call>. The user ends the conversation.'
)
"""tau2's agent prompt, in papergym's words."""
COMPACT_INSTRUCTIONS = (
    "You are a customer service agent. In each turn you either send a message to the user or make one tool "
    'call, never both. To call a tool, write only <tool_call>{"name": ..., "arguments": {...}}</tool_call>. '
    "The user ends the conversation."
)
"""The agent prompt of ``prompt="compact"`` (no policy section to refer to)."""
PromptMode = Literal["full", "compact"]
"""What the first observation holds: tau2's full prompt, or the compact one of small-context models."""
CONFIRM = "I am about to call {name} with {arguments}. Do you confirm (yes/no)?"
"""What the oracle asks before each gold write under ``tau2_scoring="strict"``."""


@cache
def _generated(domain_name: str) -> tuple[dict[str, Any], Any]:
    domain = get_domain(domain_name)
    db = domain.generate_db(DB_SEED)
    return db, domain.world(db)


@cache
def _schemas(domain_name: str) -> tuple[dict[str, Any], ...]:
    return tuple(t.schema() for t in get_domain(domain_name).toolkit.tools().values())


@cache
def _system_prompt(domain_name: str, policy: str) -> str:
    # built once: json.dumps with indent runs the pure-python encoder (milliseconds per call)
    tools = json.dumps(list(_schemas(domain_name)), indent=1)
    return (
        f"<instructions>\n{AGENT_INSTRUCTIONS}\n</instructions>\n<policy>\n{policy}\n</policy>\n"
        f"<tools>\n{tools}\n</tools>"
    )


@cache
def _compact_prompt(domain_name: str) -> str:
    # one line per tool: its name and argument names (required ones first), no descriptions or types
    lines = []
    for schema in _schemas(domain_name):
        function = schema["function"]
        parameters = function.get("parameters", {})
        required = list(parameters.get("required", ()))
        optional = [k for k in parameters.get("properties", {}) if k not in required]
        arguments = [*required, *(f"{k}?" for k in optional)]
        lines.append(f"{function['name']}({', '.join(arguments)})")
    tools = "\n".join(lines)
    return f"<instructions>\n{COMPACT_INSTRUCTIONS}\n</instructions>\n<tools>\n{tools}\n</tools>"


@cache
def _tau2(folder: str, domain_name: str, task_set: str = "default") -> Tau2Folder:
    return load_tau2_folder(folder, domain_name, task_set)


@dataclass
class _State:
    """One episode's state (snapshotted; the base database is shared, not copied)."""

    task: ServiceTask
    db: ServiceDB
    session: Session = field(default_factory=Session)
    dialogue: list[dict[str, str]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    errors: int = 0
    plan_pos: int = 0
    plan_ctx: PlanContext = field(default_factory=PlanContext)
    plan_await: str = ""
    failure: dict[str, Any] | None = None
    outcome: Outcome | None = None
    stopped: bool = False
    provenance: ProvenanceLog = field(default_factory=ProvenanceLog)


class ServiceAgentEnv(TextEnv):
    """A customer-service agent serving a simulated user with tools over a database (tau2-bench).

    ## Description
    The agent talks with a simulated customer and calls the domain's tools (tau2-bench's names,
    arguments and semantics) on a JSON database to serve them within the domain policy. By default the
    database and the tasks are generated by seed in tau2's schema (fixed train / test splits of users);
    ``tau2_data=`` runs tau2's own ``db.json`` / ``tasks.json`` / ``split_tasks.json`` / ``policy.md``
    unmodified.

    ## Observation
    Text: the first observation holds the instructions, the policy, the tools' JSON schemas and the
    user's opening message; later ones hold a tool result or the user's reply. ``info["tools"]`` and
    ``info["policy"]`` (at reset) hold the schemas and the policy.

    ## Action
    A message to the user, or one tool call ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
    (python style ``name(k=v)`` is read too). Only the user ends the conversation: a stop token in the
    agent's message (also inside ``<think>``) is passed to the user like any other text.

    ## Reward
    At the end, the additive term ``outcome``: tau2's product of the task's ``reward_basis`` checks (DB
    replay, env assertions, communicated info, NL assertions, actions), listed in ``info["checks"]``.
    Communicated info is matched strictly on generated tasks (the one value stated for its slot, see
    `papergym.envs.service.communicate`) and by tau2's substring test on tau2 data (``communicate=``).
    Generated refusal tasks also require the refusal to be said and the lookups that justify it.
    Unparseable actions and malformed tool calls add ``format`` (-0.1). Loaded NL assertions without a
    ``judge`` are listed in ``info["unevaluated"]``, excluded from reward and success.

    ## Episode End
    Terminated when the user writes a stop token (``###STOP###``, ``###TRANSFER###``,
    ``###OUT-OF-SCOPE###``) and the episode is evaluated. Every other termination scores 0: the
    scripted user giving up (``###GIVE-UP###``) after ``ScriptedUser(max_confusions=2)`` agent messages
    in a row that it could not understand (it asks again after each; garbage and bare stop tokens are
    not understood), and ``max_errors`` failed tool calls. Truncated (scoring 0) at ``max_steps`` and
    when the user simulator raises `BackendError` (``info["error"]``).

    ## Arguments
    - ``domain``: ``"retail"``, ``"airline"`` or ``"telecom"``.
    - ``tau2_data``: a tau2 domain folder to run instead of the generated default, as tau2 ships it.
    - ``tau2_task_set``: which task file of ``tau2_data``: ``"default"`` (``tasks.json``), ``"small"``
      (``tasks_small.json``) or ``"full"`` (``tasks_full.json``); splits keep the ids the file holds.
    - ``user`` (the backend rule of `papergym.backends`): None or ``"scripted"`` is the deterministic
      `ScriptedUser`; a `UserSimulator` is used as is (bound per task by its ``for_task``); a bare
      `ChatModel` plays the user as `ModelUser` (telecom: `DeviceModelUser`, with the phone's tools).
    - ``use_judge``: judge loaded tau2 NL assertions with ``judge`` (default off: they are listed in
      ``info["unevaluated"]`` and excluded from reward and success). Generated tasks' assertions are
      always decided by their `ScriptedJudge` predicates.
    - ``judge``: the `Judge` of ``use_judge`` (it needs one: papergym ships no offline judge of free-text
      assertions); a bare `ChatModel` becomes ``ModelJudge(model, template=NL_JUDGE_TEMPLATE)``.
    - ``enforce_policy``: refuse writes before authentication or on another user's records (default:
      on for generated tasks, off for tau2 data, whose tools do not check it).
    - ``max_steps``, ``max_errors``: tau2's limits (100 and 10).
    - ``communicate``: ``"strict"`` or ``"substring"`` (tau2's test); default strict on generated
      tasks, substring on ``tau2_data``, so tau2's scores stay exact.
    - ``tau2_scoring``: ``"exact"`` (default: tau2's own checks, so tau2's scores stay exact) or
      ``"strict"`` (opt-in, beyond tau2, only with ``tau2_data``): every task also requires its gold
      actions (``action``), a transfer to a human exactly when the gold transfers (``handoff``) and
      a user confirmation before every mutating tool call (``confirmation``; see
      `papergym.envs.service.evaluation`); the oracle then asks for it before each gold write.
      ``communicate`` then defaults to strict too.
    - ``provenance``: record ``info["provenance"]`` per step (default on; IAPO's rule annotator reads it).
    - ``prompt``: ``"full"`` (default: the instructions, the policy and the tools' JSON schemas, as tau2
      shows them) or ``"compact"`` (beyond tau2, for small-context models such as papergym's tiny LM: the
      instructions and one line per tool, ``name(required, optional?)``, without descriptions, types or
      the policy text; about a tenth of the full prompt's tokens). Tasks, tools, the user, the policy
      guard and scoring are unchanged; ``info["tools"]`` and ``info["policy"]`` still hold the schemas and
      the policy. A compact-prompt agent must learn the policy from its training data (an SFT warm start
      on oracle demonstrations), so compact and full scores are not comparable.
    - ``obs_mode``, ``render_mode``, ``format_penalty``: as `TextEnv`.

    ## Paper
    tau2-bench (sierra-research/tau2-bench), as used by SpeechGym and IAPO (papers/envs.md §2.2-2.3).

    ## Version History
    - v0: retail and airline (generated and tau2 data); telecom (the user's own phone, tau2 TOML data);
      per-step ``info["provenance"]`` for IAPO's influence credit.
    - v0 (2026-12-04, unreleased, so no version bump; results from earlier commits are not comparable):
      generated tasks score COMMUNICATE strictly (one value per slot, ``communicate="strict"``; tau2's
      substring rule only with ``tau2_data``) and a stated value counts only after a successful lookup that
      shows it (``Criteria.communicate_sources``); refusal / transfer tasks check their gold calls; the
      scripted user gives up after ``max_confusions``; opt-in ``tau2_scoring="strict"`` on tau2 data;
      telecom phone texts, records and the four tools tau2 has (``connect_vpn``, ``set_apn_settings``,
      ``check_app_status``, ``check_installed_apps``) now read as tau2's.
    - v0 (2026-12-05, unreleased): opt-in ``prompt="compact"`` (the default prompt is unchanged).

    >>> import gymnasium as gym, papergym
    >>> env = gym.make("papergym/ServiceAgent-v0")
    >>> obs, info = env.reset(seed=0)
    >>> "cancel_pending_order" in obs, info["tools"][0]["function"]["name"]
    (True, 'find_user_id_by_email')
    >>> done = False
    >>> while not done:
    ...     obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
    ...     done = terminated or truncated
    >>> reward, info["success"]
    (1.0, True)
    """

    canned_actions = (
        "Could you please tell me your email address?",
        '<tool_call>{"name": "calculate", "arguments": {"expression": "2 + 2"}}</tool_call>',
        "###STOP###",
    )

    def __init__(
        self,
        *,
        domain: str = "retail",
        tau2_data: str | Path | None = None,
        tau2_task_set: str = "default",
        user: UserSimulator | ChatModel | str | None = None,
        use_judge: bool = False,
        judge: Judge | ChatModel | None = None,
        enforce_policy: bool | None = None,
        max_steps: int = MAX_STEPS,
        max_errors: int = MAX_ERRORS,
        obs_mode: ObsMode = "text",
        render_mode: str | None = None,
        format_penalty: float = 0.1,
        provenance: bool = True,
        communicate: CommunicateMode | None = None,
        tau2_scoring: Tau2Scoring = "exact",
        prompt: PromptMode = "full",
    ) -> None:
        super().__init__(obs_mode=obs_mode, render_mode=render_mode, format_penalty=format_penalty)
        if max_steps < 1 or max_errors < 1:
            raise ValueError(f"max_steps and max_errors must be >= 1, got {max_steps}, {max_errors}")
        self.domain_name = domain
        self._domain()  # fail fast on an unknown domain
        self.tau2_data = None if tau2_data is None else str(tau2_data)
        self.tau2_task_set = str(tau2_task_set)
        self.user: UserSimulator = resolve_backend(
            user,
            role="user",
            method="reply",
            default=ScriptedUser,
            names={"scripted": ScriptedUser},
            wrap=self._domain().model_user,  # type: ignore[arg-type]  # a bare ChatModel (checked there)
        )
        self.judge: Judge | None = None
        if use_judge:
            if judge is None:
                raise ValueError(
                    "use_judge=True needs judge= (a Judge or a ChatModel): papergym has no offline judge "
                    "of free-text assertions"
                )
            self.judge = resolve_backend(
                judge,
                role="judge",
                method="score",
                default=ScriptedJudge,  # unreachable: judge is not None here
                wrap=lambda model: ModelJudge(model, template=NL_JUDGE_TEMPLATE),  # type: ignore[arg-type]
            )
        elif judge is not None:
            raise ValueError("judge= is used only with use_judge=True (judging loaded NL assertions)")
        self.enforce_policy = (self.tau2_data is None) if enforce_policy is None else bool(enforce_policy)
        self.max_steps = int(max_steps)
        self.max_errors = int(max_errors)
        self.provenance = bool(provenance)
        if communicate not in (None, "strict", "substring"):
            raise ValueError(f"communicate must be 'strict', 'substring' or None, got {communicate!r}")
        if tau2_scoring not in ("exact", "strict"):
            raise ValueError(f"tau2_scoring must be 'exact' or 'strict', got {tau2_scoring!r}")
        if tau2_scoring == "strict" and self.tau2_data is None:
            raise ValueError("tau2_scoring='strict' scores tau2's own data: pass tau2_data= too")
        self.tau2_scoring: Tau2Scoring = tau2_scoring
        if prompt not in ("full", "compact"):
            raise ValueError(f"prompt must be 'full' or 'compact', got {prompt!r}")
        self.prompt: PromptMode = prompt
        exact = self.tau2_data is not None and tau2_scoring == "exact"
        self.communicate: CommunicateMode = communicate or ("substring" if exact else "strict")
        if self.tau2_data is not None:
            loaded = self._loaded()
            self.splits: tuple[str, ...] = loaded.nonempty_splits()
            if not self.splits:
                raise ValueError(f"tau2_data={self.tau2_data!r} ({self.tau2_task_set} task set) has no tasks")
        else:
            self.splits = ("train", "test")
        self._confirming: dict[str, tuple[Any, ...]] = {}
        self._s: _State | None = None
        self._bound_user: UserSimulator | None = None

    # ------------------------------------------------------------------ data
    def _domain(self) -> Domain:
        return get_domain(self.domain_name)

    def _loaded(self) -> Tau2Folder:
        if self.tau2_data is None:  # only the tau2_data paths call this
            raise RuntimeError("this env generates its tasks; it has no tau2 folder (tau2_data=None)")
        return _tau2(self.tau2_data, self.domain_name, self.tau2_task_set)

    def _base(self) -> dict[str, Any]:
        return self._loaded().db if self.tau2_data else _generated(self.domain_name)[0]

    def _policy(self) -> str:
        return self._loaded().policy if self.tau2_data else self._domain().policy

    def generated_task(self, split: str, index: int) -> ServiceTask:
        """Generated task ``index`` of ``split`` (the same on every machine)."""
        if split not in DEFAULT_SPLIT_SIZES or not 0 <= index < DEFAULT_SPLIT_SIZES[split]:
            raise ValueError(
                f"generated tasks are train/test with index in 0..{DEFAULT_SPLIT_SIZES.get(split, 1) - 1}"
            )
        world = _generated(self.domain_name)[1]
        rng = random.Random(stable_seed("service", self.domain_name, split, index))
        task = self._domain().generate_task(rng, world, split)
        task.id = f"{self.domain_name}/{split}/L1/{index}"
        return task

    def _new_task(self, options: Mapping[str, Any]) -> Task:
        split = options.get("split", self.splits[0])
        if self.tau2_data is not None:
            loaded = self._loaded()
            if "task_id" in options:
                task_id = str(options["task_id"])
                if task_id not in loaded.tasks:
                    raise ValueError(f"unknown tau2 task id {task_id!r}; ids are those of tasks.json")
                split = next((s for s in self.splits if task_id in loaded.splits.get(s, ())), "base")
            else:
                if split not in loaded.splits:
                    raise ValueError(f"unknown split {split!r}; this tau2 folder has {sorted(loaded.splits)}")
                ids = loaded.splits[split]
                if not ids:
                    raise ValueError(
                        f"split {split!r} of tau2_data={self.tau2_data!r} holds none of the "
                        f"{self.tau2_task_set} task set's tasks; splits with tasks: {list(self.splits)}"
                    )
                task_id = ids[int(self.np_random.integers(len(ids)))]
            index = list(loaded.tasks).index(task_id)
            return Task(task_id, f"tau2-{self.domain_name}", split, 1, index, loaded.tasks[task_id])
        if "task_id" in options:
            family, split, _, index = parse_task_id(options["task_id"])
            if family != self.domain_name:
                raise ValueError(f"task_id {options['task_id']!r} is not a {self.domain_name!r} task")
        else:
            if split not in self.splits:
                raise ValueError(f"unknown split {split!r}; choose one of {self.splits}")
            index = int(self.np_random.integers(DEFAULT_SPLIT_SIZES[split]))
        task = self.generated_task(split, index)
        return Task(task.id, self.domain_name, split, 1, index, task)

    # ------------------------------------------------------------------ episode
    def _system_prompt(self, task: Task) -> str:
        if self.prompt == "compact":
            return _compact_prompt(self.domain_name)
        return _system_prompt(self.domain_name, self._policy())

    def _start(self, task: Task) -> Turn:
        service_task: ServiceTask = task.payload
        db = ServiceDB(self._base())
        tools = self._domain().toolkit(db)
        for name, arguments in service_task.initialization_actions:
            tools.call(name, arguments, validate=False)
        db.commit()
        self._s = _State(task=service_task, db=db)
        self._bind_user()
        opening = self._user_reply()
        info = {
            K.TOOLS: list(_schemas(self.domain_name)),
            K.POLICY: self._policy(),
        }
        if isinstance(opening, Turn):  # the user failed before its first word: the first step truncates
            self._s.failure = dict(opening.info[K.ERROR])
            return Turn(opening.text, info={**info, **opening.info})
        return Turn(opening, info=info)

    def _bind_user(self) -> None:
        s = self._require()
        user = self.user
        self._bound_user = user.for_task(s.task) if isinstance(user, TaskBoundUser) else user
        if isinstance(self._bound_user, DeviceUser) and self._domain().toolkit.USER:  # telecom's phone
            self._bound_user.attach_device(self._device_call)

    def _device_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run one of the user's own tools for the user simulator (recorded as a ``device`` event)."""
        s = self._require()
        result = self._domain().toolkit(s.db).call_user(name, dict(arguments))
        s.events.append(
            {
                "kind": "device",
                "name": name,
                "arguments": dict(arguments),
                "result": result.text,
                "error": result.error,
            }
        )
        return result.text

    def _user_reply(self) -> str | Turn:
        """The user's next message (appended to the dialogue), or a truncating Turn on a backend fault."""
        s = self._require()
        seed = int(self.np_random.integers(2**31))
        try:
            text = self._bound_user.reply(tuple(s.dialogue), seed=seed)  # type: ignore[union-attr]
        except BackendError as exc:
            error = {"type": type(exc).__name__, "message": str(exc)[:500], "retryable": exc.retryable}
            s.outcome = Outcome(0.0)
            return Turn(
                f"The user simulator failed: {error['message']}", truncated=True, info={K.ERROR: error}
            )
        text = str(text)
        s.dialogue.append({"role": "user", "content": text})
        s.events.append({"kind": "user", "text": text})
        s.plan_ctx.user_messages.append(text)
        return text

    def _act(self, action: str) -> Turn:
        s = self._require()
        if s.failure is not None:
            info = {K.ERROR: dict(s.failure), **self._final_info()}
            return Turn(
                "The user simulator failed at reset; the episode cannot go on.",
                {"outcome": 0.0},
                truncated=True,
                info=info,
            )
        parsed = parse_tool_calls(action)
        self._advance_oracle(parsed.calls if parsed.ok else None)
        if not parsed.ok:
            turn = self._invalid(f"Invalid action: {parsed.error}", **{K.PARSED_ACTION: None})
        elif len(parsed.calls) > 1:
            turn = self._invalid("Make one tool call at a time.", **{K.PARSED_ACTION: None})
        elif parsed.calls:
            turn = self._tool(parsed.calls[0].name, dict(parsed.calls[0].arguments))
        else:
            turn = self._message(action)
        if self.provenance:
            invalid = bool(turn.info.get(K.INVALID_ACTION))
            record = s.provenance.update(s.events, self._episode_steps(), invalid=invalid)
            turn = dataclasses.replace(turn, info={**turn.info, K.PROVENANCE: record})
        if not (turn.terminated or turn.truncated) and self._episode_steps() + 1 >= self.max_steps:
            s.outcome = Outcome(0.0)
            return Turn(
                turn.text + "\n[The step limit is reached.]",
                {**turn.reward_components, "outcome": 0.0},
                truncated=True,
                info={**turn.info, **self._final_info()},
                role=turn.role,
            )
        return turn

    def _episode_steps(self) -> int:
        return self._require_episode().steps

    def _tool(self, name: str, arguments: dict[str, Any]) -> Turn:
        s = self._require()
        domain = self._domain()
        tools = domain.toolkit(s.db)
        schema = tools.tools().get(name)
        if schema is None or schema.validate(arguments) is not None:
            result = tools.call(name, arguments)  # the unknown-tool / bad-arguments message
        elif (
            self.enforce_policy
            and name in domain.toolkit.WRITE
            and (blocked := domain.guard(s.db, s.session, name, arguments))
        ):
            result = CallResult(f"Error: {blocked}", None, True)
        else:
            result = tools.call(name, arguments, validate=False)
        result_text, value, error, invalid = result.text, result.value, result.error, result.invalid
        if not error:
            user_id = domain.authenticate(name, value)
            if user_id is not None:
                s.session.user_id = user_id
        s.errors += int(error)
        if s.plan_await:
            if not error:  # the text (decoded when the oracle reads it), never the live record
                s.plan_ctx.results[s.plan_await] = result_text
            s.plan_await = ""
        s.events.append(
            {"kind": "tool", "name": name, "arguments": arguments, "result": result_text, "error": error}
        )
        info = {
            K.TOOL_CALLS: [{"name": name, "arguments": arguments, "ok": not error}],
            K.TOOL_RESULTS: [result_text],
            K.PARSED_ACTION: name,
        }
        components = {"format": -self.format_penalty} if invalid else {}
        if invalid:
            info[K.INVALID_ACTION] = True
        if s.errors >= self.max_errors:
            s.outcome = Outcome(0.0)
            return Turn(
                result_text + f"\n[{self.max_errors} tool errors: the episode ends.]",
                {**components, "outcome": 0.0},
                terminated=True,
                info={**info, **self._final_info()},
                role="tool",
            )
        return Turn(result_text, components, info=info, role="tool")

    def _message(self, text: str) -> Turn:
        s = self._require()
        s.dialogue.append({"role": "assistant", "content": text})
        s.events.append({"kind": "agent", "text": text})
        return self._answer()

    def _answer(self) -> Turn:
        """The user's answer to the agent message last added to the dialogue, ending the episode on the
        user's stop (evaluated) or give-up (scoring 0)."""
        s = self._require()
        reply = self._user_reply()
        if isinstance(reply, Turn):
            return Turn(
                reply.text, {"outcome": 0.0}, truncated=True, info={**reply.info, **self._final_info()}
            )
        if GIVE_UP in reply:  # the user could not be served: not a user's stop, scores 0
            s.outcome = Outcome(0.0)
            return Turn(reply, {"outcome": 0.0}, terminated=True, info=self._final_info())
        if stop_token(reply) is not None:
            return self._finish(reply)
        return Turn(reply, info={K.PARSED_ACTION: None})

    def _finish(self, text: str) -> Turn:
        s = self._require()
        s.stopped = True
        s.outcome = evaluate(
            s.task,
            toolkit=self._domain().toolkit,
            base=self._base(),
            final=s.db,
            events=s.events,
            stopped=True,
            judge=self.judge,
            seed=int(self.np_random.integers(2**31)) if self.judge is not None else None,
            communicate=self.communicate,
            scoring=self.tau2_scoring,
        )
        return Turn(
            text or "[The conversation has ended.]",
            {"outcome": s.outcome.reward},
            terminated=True,
            info=self._final_info(),
        )

    def _final_info(self) -> dict[str, Any]:
        outcome = self._require().outcome or Outcome(0.0)
        info = {K.CHECKS: dict(outcome.checks), K.UNEVALUATED: list(outcome.unevaluated)}
        if outcome.db_diff:
            info[K.DB_DIFF] = copy.deepcopy(outcome.db_diff)
        return info

    def success_check(self) -> bool:
        s = self._require()
        return bool(s.stopped and s.outcome is not None and s.outcome.reward == 1.0)

    # ------------------------------------------------------------------ oracle
    def oracle_action(self) -> str:
        """The next action of a correct solution: the task's plan (generated tasks) or the gold script.

        Generated plans resolve every id from tool results and user messages. For loaded tau2 tasks
        the oracle replays the gold actions verbatim, then says the information to communicate.
        """
        s = self._require()
        plan = self._plan()
        if s.plan_pos < len(plan):
            try:
                return render_step(plan[s.plan_pos], s.plan_ctx)
            except PlanError:
                return CLOSING
        return CLOSING

    def _plan(self) -> tuple[Any, ...]:
        task = self._require().task
        plan = _gold_plan(task, self._domain())
        if self.tau2_scoring == "exact":
            return plan
        if task.id not in self._confirming:
            self._confirming[task.id] = _confirming(plan, self._domain().toolkit.WRITE)
        return self._confirming[task.id]

    def _advance_oracle(self, calls: tuple[ToolCall, ...] | None) -> None:
        """Move the plan on when the action is of the plan step's kind.

        A tool call of the step's tool (whatever its arguments) takes the place of a `Call` step, and its
        result that step's label; any message takes the place of a `Say` step. So the oracle continues
        its plan after an agent's own variant of a step (the checks then judge the variant).
        """
        s = self._require()
        plan = self._plan()
        if s.plan_pos >= len(plan) or calls is None or len(calls) > 1:
            return
        step = plan[s.plan_pos]
        if isinstance(step, Call) != bool(calls) or (calls and calls[0].name != step.name):
            return
        s.plan_pos += 1
        s.plan_await = step.label if isinstance(step, Call) and step.label else ""

    # ------------------------------------------------------------------ state
    def _require(self) -> _State:
        if self._s is None:
            raise RuntimeError("call reset() first")
        return self._s

    def _state(self) -> Any:
        return self._s

    def _load_state(self, state: Any) -> None:
        self._s = state
        self._bind_user()


def _gold_plan(task: ServiceTask, domain: Domain) -> tuple[Any, ...]:
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


def _confirming(plan: tuple[Any, ...], writes: tuple[str, ...]) -> tuple[Any, ...]:
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


CONTRACT_VARIANTS: list[dict[str, Any]] = [
    {"domain": "retail"},
    {"domain": "airline"},
    {"domain": "telecom"},
    {"domain": "telecom", "prompt": "compact"},
]
