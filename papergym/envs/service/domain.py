"""The pluggable parts of a service domain: `Toolkit` (tools over a `ServiceDB`) and `Domain`.

A domain is: a database schema and a seeded generator of databases in it (`Domain.generate_db`), a
`Toolkit` subclass whose public typed methods are the agent's tools (tau2's names, arguments and
semantics), the policy text, task templates with oracle plans (`Domain.generate_task`) and a policy
guard for writes. `ServiceAgentEnv` knows nothing domain-specific beyond this interface; a new
domain (telecom, with the user's own device tools) subclasses both classes and registers itself in
`papergym.envs.service.domains.DOMAINS`.

Tool methods raise `ToolError` for a domain error ("Order not found"); the toolkit turns it into an
error result and rolls the database back to where it was before the call.
"""

from __future__ import annotations

import abc
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from papergym.backends.model_roles import ModelUser
from papergym.backends.protocols import ChatModel, UserSimulator
from papergym.core.tool_calls import ToolError
from papergym.core.tools import Tool
from papergym.envs.service.db import ServiceDB
from papergym.envs.service.tasks import ServiceTask

_ENCODER = json.JSONEncoder(ensure_ascii=False)
"""One encoder for every result: ``json.dumps`` with keywords builds a new one per call."""
_TEXTS: dict[int, tuple[Any, dict[tuple[str, str], str]]] = {}
"""id(base) -> (base, (table, key) -> JSON text) for `Toolkit.encoded` (the base is kept alive with it)."""

__all__ = ["CallResult", "Domain", "Session", "ToolError", "Toolkit"]


@dataclass(slots=True)
class Session:
    """What the policy guard knows of the conversation: the authenticated user, if any."""

    user_id: str | None = None


@dataclass(slots=True)
class CallResult:
    """One executed tool call.

    Attributes:
        text: what the agent sees (the JSON result, or the error message).
        value: the result as data (None on error).
        error: whether the call failed (unknown tool, bad arguments, domain or policy error).
        invalid: the call itself was malformed (unknown tool or arguments that do not fit the schema).
    """

    text: str
    value: Any = None
    error: bool = False
    invalid: bool = False


class Toolkit:
    """Tools over one episode's `ServiceDB`. Subclasses define typed, Google-documented methods.

    Class attributes:
        READ / WRITE / GENERIC: the tool names by tau2 tool type; every listed name is a method.
        ASSERTIONS: names of methods usable in tau2 ``env_assertions`` (not shown to the agent).
        USER: the user's own tools (telecom's phone): only the user simulator calls them, via `call_user`.
        HIDDEN: functions that only trusted replays run (tau2 ``initialization_actions``).
    """

    READ: ClassVar[tuple[str, ...]] = ()
    WRITE: ClassVar[tuple[str, ...]] = ()
    GENERIC: ClassVar[tuple[str, ...]] = ()
    ASSERTIONS: ClassVar[tuple[str, ...]] = ()
    USER: ClassVar[tuple[str, ...]] = ()
    HIDDEN: ClassVar[tuple[str, ...]] = ()

    def __init__(self, db: ServiceDB) -> None:
        self.db = db

    @classmethod
    def tool_names(cls) -> tuple[str, ...]:
        return (*cls.READ, *cls.WRITE, *cls.GENERIC)

    @classmethod
    def tools(cls) -> dict[str, Tool]:
        """The tools' schemas (built once per class from the methods' signatures and docstrings)."""
        return _schemas(cls, cls.tool_names())

    @classmethod
    def user_tools(cls) -> dict[str, Tool]:
        """The schemas of the user's own tools (`USER`)."""
        return _schemas(cls, cls.USER)

    def call_user(self, name: str, arguments: Mapping[str, Any]) -> CallResult:
        """Run one of the user's own tools (validated against `user_tools`), atomically as `call`."""
        tool = self.user_tools().get(name)
        if tool is None:
            return CallResult(f"Error: Tool '{name}' not found.", None, True, True)
        problem = tool.validate(arguments)
        if problem is not None:
            return CallResult(f"Error: {problem}", None, True, True)
        return self.call(name, arguments, validate=False)

    def call(self, name: str, arguments: Mapping[str, Any], *, validate: bool = True) -> CallResult:
        """Run one tool call atomically: a failing call leaves the database exactly as before.

        Args:
            name: the tool's name.
            arguments: its arguments.
            validate: check the name and arguments against the schemas first (off for trusted replays).

        Returns:
            The result; never raises for a bad name, bad arguments or a domain error.
        """
        tools = self.tools()
        if validate:
            tool = tools.get(name)
            if tool is None:
                return CallResult(f"Error: Tool '{name}' not found.", None, True, True)  # tau2's text
            problem = tool.validate(arguments)
            if problem is not None:
                return CallResult(f"Error: {problem}", None, True, True)
        elif name not in tools and name not in self.USER and name not in self.HIDDEN:
            return CallResult(f"Error: Tool '{name}' not found.", None, True, True)
        mark = self.db.begin()
        try:
            value = getattr(self, name)(**arguments)
        except ToolError as exc:
            self.db.rollback(mark)
            return CallResult(f"Error: {exc}", None, True)
        except TypeError as exc:  # wrong argument names in an unvalidated replay
            self.db.rollback(mark)
            return CallResult(f"Error: {exc}", None, True, True)
        self.db.commit()
        text = value if isinstance(value, str) else _ENCODER.encode(value)
        return CallResult(text, value)

    def encoded(self, table: str, key: str) -> str | None:
        """Record ``key`` of ``table`` as JSON text; None if absent.

        The text of a record this episode has not written is cached per shared base record, so a large
        read-only record (a product with all its variants) is encoded once per process, not per call.
        Use it for tables with few, large records: the cache holds every record it was asked for.
        """
        record = self.db.get(table, key)
        if record is None:
            return None
        base = self.db.base
        if base.get(table, {}).get(key) is not record:  # written in this episode
            return _ENCODER.encode(record)
        entry = _TEXTS.get(id(base))
        if entry is None or entry[0] is not base:
            entry = _TEXTS[id(base)] = (base, {})
        text = entry[1].get((table, key))
        if text is None:
            text = entry[1][(table, key)] = _ENCODER.encode(record)
        return text

    def assertion(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Run an env-assertion function by name (raises ValueError for an unknown one)."""
        if name not in self.ASSERTIONS:
            raise ValueError(f"unknown env assertion {name!r}; known: {self.ASSERTIONS}")
        return getattr(self, name)(**arguments)


@cache
def _schemas(cls: type[Toolkit], names: tuple[str, ...]) -> dict[str, Tool]:
    probe = cls.__new__(cls)  # a bound method gives the signature without ``self``
    out: dict[str, Tool] = {}
    for name in names:
        tool = Tool.from_function(getattr(probe, name), name=name)
        out[name] = Tool(tool.name, tool.description, tool.parameters)  # schema only: no instance kept
    return out


@dataclass(frozen=True)
class Template:
    """A task template: ``build(rng, world, split) -> ServiceTask | None`` (None: no fitting entity).

    Attributes:
        name: unique within the domain.
        build: draws only from ``rng``.
        delayed: a value read early must be used several steps later.
    """

    name: str
    build: Callable[[random.Random, Any, str], ServiceTask | None]
    delayed: bool = False


@dataclass
class Domain(abc.ABC):
    """A service domain.

    Attributes:
        name: ``"retail"``, ``"airline"``, ...
        toolkit: the `Toolkit` subclass.
        policy: the policy text shown to the agent.
        templates: the task templates of the generated default.
    """

    name: str
    toolkit: type[Toolkit]
    policy: str
    templates: Sequence[Template] = field(default_factory=tuple)

    @abc.abstractmethod
    def generate_db(self, seed: int) -> dict[str, Any]:
        """A database in the domain's schema, drawn from ``seed`` only."""

    @abc.abstractmethod
    def world(self, db: Mapping[str, Any]) -> Any:
        """Indexes over a generated database that the templates draw entities from (per split)."""

    def authenticate(self, name: str, result: Any) -> str | None:
        """The user id a successful READ call authenticates (e.g. a user lookup), or None."""
        return None

    def guard(self, db: ServiceDB, session: Session, name: str, arguments: Mapping[str, Any]) -> str | None:
        """A policy violation that blocks the WRITE call ``name``, as a message; None to allow it."""
        return None

    tau2_files: ClassVar[tuple[str, ...]] = ("db.json", "policy.md")
    """The database and policy files of a tau2 data folder of this domain (tasks: `tau2_data`)."""

    def load_tau2_db(self, folder: Path) -> dict[str, Any]:
        """The database of a tau2 data folder (``db.json``; telecom reads TOML)."""
        with open(folder / "db.json", encoding="utf-8") as f:
            return json.load(f)

    def load_tau2_policy(self, folder: Path) -> str:
        """The policy text of a tau2 data folder."""
        return (folder / "policy.md").read_text(encoding="utf-8")

    def scripted_user(self, task: ServiceTask) -> Any:
        """The domain's own `ScriptedUser` for ``task`` (None: the generic one)."""
        return None

    def model_user(self, model: ChatModel) -> UserSimulator:
        """The user a bare `ChatModel` plays in this domain (``user=model``): a `ModelUser`."""
        return ModelUser(model)

    def user_action_request(self, name: str, arguments: Mapping[str, Any]) -> str:
        """How the oracle asks the user to run one of their own tools (a tau2 gold action of the user)."""
        args = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        return f"Please do this on your side: {name}({args})."

    def generate_task(self, rng: random.Random, world: Any, split: str) -> ServiceTask:
        """A task from a template drawn uniformly with ``rng``.

        A template whose entity draw does not fit (no such order, no gift card, ...) draws again, up to
        50 times, so that every template keeps its share of the tasks; then the next template is tried.
        """
        first = rng.randrange(len(self.templates))
        for k in range(len(self.templates)):
            template = self.templates[(first + k) % len(self.templates)]
            for _ in range(50):
                task = template.build(rng, world, split)
                if task is not None:
                    return task
        raise RuntimeError(f"{self.name}: no template found an entity; the database is too small")
