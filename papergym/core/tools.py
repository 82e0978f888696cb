"""Tools an agent can call: typed python functions as JSON schemas, validated and run.

A `Tool` wraps a typed function; its JSON schema comes from the signature and the Google docstring.
`run_tool_call` turns argument errors and `ToolError` into error results, and lets every other exception
through, since it is a bug in the tool, not in the model's text. Parsing calls out of model text lives in
`papergym.core.tool_calls` (re-exported here).
"""

from __future__ import annotations

import difflib
import inspect
import json
import math
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from papergym.core.tool_calls import (
    ParseResult,
    ToolCall,
    ToolError,
    _safe,
    _show,
    _type_name,
    parse_tool_calls,
)

__all__ = [
    "ParseResult",
    "Tool",
    "ToolCall",
    "ToolError",
    "parse_tool_calls",
    "run_tool_call",
    "validate_call",
]

_MAX_PROBLEMS = 5
_ARG_LINE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_ARGS_HEADERS = frozenset({"Args", "Arguments", "Parameters"})
_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Returns?|Yields?|Raises|Examples?|Notes?|Attributes|Warnings?|"
    r"See Also|Todo|References)\s*:\s*$"
)


def _parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary paragraph and the ``Args:`` descriptions of a Google-style docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()):
            break
        summary.append(line.strip())
    descriptions: dict[str, str] = {}
    in_args = False
    current: str | None = None
    entry_indent: int | None = None
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            header = _SECTION.match(stripped)
            in_args = header is not None and header.group(1) in _ARGS_HEADERS
            current, entry_indent = None, None
            continue
        if not in_args:
            continue
        match = _ARG_LINE.match(stripped)
        if match and (entry_indent is None or indent <= entry_indent):
            entry_indent, current = indent, match.group(1)
            descriptions[current] = match.group(2).strip()
        elif current is not None:
            descriptions[current] = f"{descriptions[current]} {stripped}".strip()
    return " ".join(summary), descriptions


_SUPPORTED = "use str, int, float, bool, list[T], dict[str, T], Literal[...], X | None or a TypedDict"


def _type_schema(tp: Any, where: str) -> dict[str, Any]:
    """The JSON schema of a type hint; TypeError for a type a model cannot write as JSON."""
    if tp is Any:
        return {}
    simple = {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}
    if isinstance(tp, type) and tp in simple:
        return {"type": simple[tp]}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is list or origin is list:
        return {"type": "array", "items": _type_schema(args[0], f"{where}[]")} if args else {"type": "array"}
    if tp is dict or origin is dict:
        if not args:
            return {"type": "object"}
        if args[0] is not str:
            raise TypeError(f"{where}: dict keys must be str (JSON object keys), got {args[0]!r}")
        return {"type": "object", "additionalProperties": _type_schema(args[1], f"{where}[]")}
    if origin is Literal:
        schema: dict[str, Any] = {}
        kinds = {_type_name(value) for value in args}
        if len(kinds) == 1 and kinds <= {"string", "integer", "boolean"}:
            schema["type"] = kinds.pop()
        schema["enum"] = list(args)
        return schema
    if origin is Union or (hasattr(types, "UnionType") and isinstance(tp, types.UnionType)):
        members = [m for m in args if m is not type(None)]
        if len(members) == 1 and len(args) == 2:
            inner = _type_schema(members[0], where)
            if isinstance(inner.get("type"), str):
                nullable = {**inner, "type": [inner["type"], "null"]}
                if "enum" in inner:
                    nullable["enum"] = [*inner["enum"], None]
                return nullable
            return {"anyOf": [inner, {"type": "null"}]}
        return {"anyOf": [_type_schema(m, where) for m in args]}
    if typing.is_typeddict(tp):
        hints = typing.get_type_hints(tp)
        required_keys = getattr(tp, "__required_keys__", frozenset(hints))
        return {
            "type": "object",
            "properties": {key: _type_schema(hint, f"{where}.{key}") for key, hint in hints.items()},
            "required": [key for key in hints if key in required_keys],
            "additionalProperties": False,
        }
    raise TypeError(f"{where}: unsupported type {tp!r}; {_SUPPORTED}")


_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "boolean": bool,
    "null": type(None),
    "array": (list, tuple),
    "object": Mapping,
}
"""JSON schema type -> the Python types that satisfy it ("number" is handled apart: bool is excluded)."""


def _is_type(value: Any, kind: str) -> bool:
    """Whether ``value`` has JSON Schema type ``kind`` (an int is a number; a bool is neither)."""
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "integer" and isinstance(value, bool):
        return False
    return isinstance(value, _JSON_TYPES.get(kind, object))


def _same(value: Any, option: Any) -> bool:
    """Enum membership without python's ``True == 1``."""
    return isinstance(value, bool) == isinstance(option, bool) and value == option


def _check(value: Any, schema: Mapping[str, Any], path: str, out: list[str]) -> None:
    """Appends to ``out`` what is wrong with ``value`` under ``schema`` (a subset of JSON Schema)."""
    if "anyOf" in schema:
        for option in schema["anyOf"]:
            trial: list[str] = []
            _check(value, option, path, trial)
            if not trial:
                return
        kinds = [o.get("type") for o in schema["anyOf"] if isinstance(o.get("type"), str)]
        out.append(f"argument '{path}' must be {' or '.join(kinds) or 'another value'}, got {_show(value)}")
        return
    kind = schema.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        if not any(_is_type(value, k) for k in kinds):
            out.append(
                f"argument '{path}' must be {' or '.join(kinds)}, got {_type_name(value)} {_show(value)}"
            )
            return
    enum = schema.get("enum")
    if enum is not None and not any(_same(value, option) for option in enum):
        out.append(f"argument '{path}' must be one of {_show(enum)}, got {_show(value)}")
        return
    if isinstance(value, (list, tuple)) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            _check(item, schema["items"], f"{path}[{i}]", out)
            if len(out) >= _MAX_PROBLEMS:
                return
    elif isinstance(value, Mapping):
        properties = schema.get("properties", {})
        missing = [key for key in schema.get("required", ()) if key not in value]
        if missing:
            out.append(f"argument '{path}' is missing required key(s) {', '.join(map(repr, missing))}")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                _check(item, properties[key], f"{path}.{key}", out)
            elif extra is False:
                out.append(f"argument '{path}' has unknown key {key!r}; valid keys: {', '.join(properties)}")
            elif isinstance(extra, Mapping):
                _check(item, extra, f"{path}[{key!r}]", out)
            if len(out) >= _MAX_PROBLEMS:
                return


@dataclass(frozen=True)
class Tool:
    """A tool the model can call: a name, a description, a JSON schema of its parameters, and a function.

    Attributes:
        name: the name the model calls it by.
        description: what it does, for the model.
        parameters: JSON schema ``{"type": "object", "properties": {...}, "required": [...]}``.
        fn: the function `__call__` runs; None for a schema-only tool.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    _required: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _properties: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a tool needs a non-empty string name, got {self.name!r}")
        if not isinstance(self.parameters, dict) or self.parameters.get("type") != "object":
            raise ValueError(f'tool {self.name!r}: parameters must be a JSON schema with "type": "object"')
        # Cached because validation runs on every call a model makes.
        object.__setattr__(self, "_required", tuple(self.parameters.get("required", ())))
        object.__setattr__(self, "_properties", dict(self.parameters.get("properties", {})))

    @classmethod
    def from_function(cls, fn: Callable[..., Any], *, name: str | None = None) -> Tool:
        """A tool from a typed function; the schema comes from its type hints and Google docstring.

        The docstring's summary is the description and its ``Args:`` entries describe the parameters.
        Supported hints: str, int, float, bool, ``list[T]``, ``dict`` / ``dict[str, T]``,
        ``Literal[...]`` (an enum), ``X | None`` / ``Optional[X]``, unions and TypedDicts (total=False
        keys are optional). Parameters with defaults are optional, and JSON-like defaults are shown.

        Args:
            fn: the function; every parameter needs a type hint and must be passable by keyword.
            name: the tool's name; defaults to ``fn.__name__``.

        Returns:
            The tool.

        Raises:
            TypeError: a parameter without a hint, with an unsupported type, ``*args`` / ``**kwargs``
                or positional-only.

        >>> def add(a: int, b: int = 1) -> int:
        ...     '''Add two numbers.
        ...
        ...     Args:
        ...         a: the first.
        ...         b: the second.
        ...     '''
        ...     return a + b
        >>> Tool.from_function(add).parameters["properties"]["b"]
        {'type': 'integer', 'description': 'the second.', 'default': 1}
        """
        if not callable(fn):
            raise TypeError(f"Tool.from_function needs a function, got {type(fn).__name__}")
        tool_name = name if name is not None else getattr(fn, "__name__", "")
        if not tool_name or not isinstance(tool_name, str) or tool_name == "<lambda>":
            raise TypeError("cannot name this tool from the function; pass name=...")
        try:
            hints = typing.get_type_hints(fn)
        except (NameError, TypeError) as exc:
            raise TypeError(f"tool {tool_name!r}: cannot resolve its type hints: {exc}") from exc
        summary, docs = _parse_docstring(inspect.getdoc(fn))
        properties: dict[str, Any] = {}
        required: list[str] = []
        for param in inspect.signature(fn).parameters.values():
            where = f"tool {tool_name!r}, parameter {param.name!r}"
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"{where}: *args / **kwargs cannot be described to a model; name each one")
            if param.kind is param.POSITIONAL_ONLY:
                raise TypeError(f"{where}: positional-only, but tools are called by keyword")
            if param.name not in hints:
                raise TypeError(f"{where}: has no type hint; add one ({_SUPPORTED})")
            schema = _type_schema(hints[param.name], where)
            if param.name in docs:
                schema["description"] = docs[param.name]
            if param.default is param.empty:
                required.append(param.name)
            elif param.default is None or (
                isinstance(param.default, (str, int, float, bool))
                and not (isinstance(param.default, float) and not math.isfinite(param.default))
            ):
                schema["default"] = param.default
            properties[param.name] = schema
        parameters = {"type": "object", "properties": properties, "required": required}
        return cls(tool_name, summary, parameters, fn)

    def schema(self) -> dict[str, Any]:
        """The tool in OpenAI's function-tool format."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def validate(self, arguments: Mapping[str, Any]) -> str | None:
        """None if ``arguments`` fit the schema, else a message for the model naming each problem.

        Unknown arguments are refused unless the schema sets ``additionalProperties``. Booleans are not
        integers; integers are accepted as numbers.

        Args:
            arguments: argument name -> value.

        Returns:
            None, or the message.
        """
        if not isinstance(arguments, Mapping):
            return _safe(f"{self.name}: arguments must be an object, got {_type_name(arguments)}")
        problems: list[str] = []
        missing = [key for key in self._required if key not in arguments]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            problems.append(f"missing required argument{plural} {', '.join(map(repr, missing))}")
        extra = self.parameters.get("additionalProperties", False)
        unknown = [key for key in arguments if key not in self._properties]
        if isinstance(extra, Mapping):
            for key in unknown:
                _check(arguments[key], extra, str(key), problems)
        elif not extra and unknown:
            valid = ", ".join(
                f"{key} (required)" if key in self._required else key for key in self._properties
            )
            plural = "s" if len(unknown) > 1 else ""
            problems.append(
                f"unknown argument{plural} {', '.join(_show(k) for k in unknown)}; "
                + (f"valid arguments: {valid}" if valid else "this tool takes no arguments")
            )
        for key, value in arguments.items():
            if key in self._properties and len(problems) < _MAX_PROBLEMS:
                _check(value, self._properties[key], key, problems)
        if not problems:
            return None
        return _safe(f"{self.name}: " + "; ".join(problems[:_MAX_PROBLEMS]))

    def __call__(self, **arguments: Any) -> Any:
        """Runs the tool's function with keyword arguments (unvalidated; see `run_tool_call`)."""
        if self.fn is None:
            raise TypeError(f"tool {self.name!r} was built from a schema and has no function to call")
        return self.fn(**arguments)


def validate_call(call: ToolCall, tools: Mapping[str, Tool]) -> str | None:
    """None if ``call`` names one of ``tools`` with valid arguments, else a message for the model.

    Args:
        call: the parsed call.
        tools: tool name -> tool.

    Returns:
        None, or the message.
    """
    tool = tools.get(call.name) if isinstance(call.name, str) else None
    if tool is None:
        names = sorted(tools)
        close = difflib.get_close_matches(call.name, names, n=1) if isinstance(call.name, str) else []
        hint = f" Did you mean {close[0]!r}?" if close else ""
        available = ", ".join(names) if names else "none"
        return _safe(f"unknown tool {_show(call.name)}; available tools: {available}.{hint}")
    return tool.validate(call.arguments)


def run_tool_call(call: ToolCall, tools: Mapping[str, Tool]) -> tuple[str, bool]:
    """Validates and runs one call.

    Args:
        call: the parsed call.
        tools: tool name -> tool.

    Returns:
        ``(text, is_error)``: the result as text (a str as is, anything else as sorted-key JSON), or the
        validation / `ToolError` message with ``is_error=True``.

    Raises:
        Exception: whatever else the tool raises: that is a bug in the tool and must not be hidden.
    """
    problem = validate_call(call, tools)
    if problem is not None:
        return problem, True
    try:
        result = tools[call.name](**call.arguments)
    except ToolError as exc:
        return _safe(str(exc) or f"{call.name} failed"), True
    if isinstance(result, str):
        return result, False
    return json.dumps(result, sort_keys=True, ensure_ascii=False, default=str), False
