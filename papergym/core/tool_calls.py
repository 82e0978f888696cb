"""Parsing tool calls out of model text.

`parse_tool_calls` reads the calls in a completion, in either of two styles:

- tag (Qwen / Hermes): ``<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>``, one block per call,
  anywhere in the text;
- python: the whole message is ``f(x=1)``, ``[f(x=1), g(y=2)]`` or one such call per line, optionally
  inside a single code fence. Values are read with ``ast.literal_eval``; nothing is ever evaluated.

Model text never makes this module raise: a malformed call becomes a `ParseResult` whose ``error`` is a
short message the model can act on.
"""

from __future__ import annotations

import ast
import json
import keyword
import math
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["ParseResult", "ToolCall", "ToolError", "parse_tool_calls"]

_OPEN = "<tool_call>"
_CLOSE = "</tool_call>"
_ECHO_CHARS = 200
_MESSAGE_CHARS = 1000
_MAX_DEPTH = 32
"""Deepest nesting of lists / objects accepted in arguments; real tool arguments are shallow."""

# A line that starts like a call (``name(`` or ``[name(``): the message attempted a python-style call.
# Two patterns rather than one with re.MULTILINE: a leading "\n" lets the regex engine skip ahead fast.
_CALL_FIRST = re.compile(r"[ \t]*\[?[ \t]*[A-Za-z_][\w.]*\(")
_CALL_LATER = re.compile(r"\n[ \t]*\[?[ \t]*[A-Za-z_][\w.]*\(")


class ToolError(Exception):
    """Raised by a tool for a domain error ("order not found"); `run_tool_call` shows it to the model."""


class _Invalid(Exception):
    """Internal: a value in a tool call is not acceptable; the message is for the model.

    ``path`` collects the keys / indices from the bad value up to the root as the error unwinds, so
    that the location is only spelled out on failure.
    """

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.path: list[str] = []

    def where(self, root: str) -> str:
        return f"{root}{''.join(reversed(self.path))} {self.problem}"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# Module-level so that each parse does not build a decoder (json.loads with keywords does).
_REJECT_NAN = json.JSONDecoder(parse_constant=_reject_constant)


def _safe(message: str) -> str:
    """``message`` capped in length and made encodable as UTF-8 (lone surrogates escaped)."""
    if len(message) > _MESSAGE_CHARS:
        message = message[: _MESSAGE_CHARS - 3] + "..."
    return message.encode("utf-8", "backslashreplace").decode("utf-8")


def _echo(text: str) -> str:
    """A short, escaped quotation of model text for an error message."""
    if len(text) > _ECHO_CHARS:
        return repr(text[:_ECHO_CHARS]) + "..."
    return repr(text)


_JSON_TYPES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "boolean"),  # before int: a bool is an int in python, not in JSON
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    ((list, tuple), "array"),
    (Mapping, "object"),
)


def _type_name(value: Any) -> str:
    """The JSON name of a value's type."""
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), type(value).__name__)


def _show(value: Any) -> str:
    """A short JSON rendering of a value for an error message (never raises)."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (ValueError, TypeError, RecursionError):
        return f"<{_type_name(value)}>"
    return text if len(text) <= _ECHO_CHARS else text[:_ECHO_CHARS] + "..."


def _json_default(value: Any) -> Any:
    """Lets ``json.dumps`` write mappings that are not dicts."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _py_str(text: str) -> str:
    """``repr(text)``, with tags spelled ``\\x3c`` so that the call is not read as tag style."""
    literal = repr(text)
    if "tool_call>" in literal:
        literal = literal.replace(_OPEN, "\\x3ctool_call>").replace(_CLOSE, "\\x3c/tool_call>")
    return literal


def _py_literal(value: Any) -> str:
    """A python literal for a JSON-like value that ``ast.literal_eval`` reads back equal."""
    if isinstance(value, str):
        return _py_str(value)
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write the non-finite number {value!r} as a literal")
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_py_literal(item) for item in value) + "]"
    if isinstance(value, Mapping):
        items = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"object keys must be strings, got {key!r}")
            items.append(f"{_py_str(key)}: {_py_literal(item)}")
        return "{" + ", ".join(items) + "}"
    raise ValueError(f"cannot write a {type(value).__name__} as a JSON-like literal")


def _clean(value: Any, depth: int = 0) -> Any:
    """Checks that ``value`` is plain JSON (finite numbers, valid Unicode, shallow) and returns it as such.

    Tuples become lists; sets, bytes, complex numbers and the like raise `_Invalid`. Exact type tests
    (the parsers only make builtins) keep this cheap, since it runs on every parsed call.
    """
    kind = type(value)
    if kind is str:
        if not value.isascii():
            _check_unicode(value)
        return value
    if kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise _Invalid("is not a finite number")
        return value
    if depth >= _MAX_DEPTH:
        raise _Invalid(f"is nested deeper than {_MAX_DEPTH} levels")
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise _Invalid(f"has a key that is not a string: {_show(key)}")
            if not key.isascii():
                _check_unicode(key, "has a key with")
            try:
                cleaned = _clean(item, depth + 1)
            except _Invalid as exc:
                exc.path.append(f"[{key!r}]")
                raise
            if cleaned is not item:  # a tuple became a list; the parsers' dicts are fresh, so edit in place
                value[key] = cleaned
        return value
    if kind is list or kind is tuple:
        out = list(value)
        for i, item in enumerate(out):
            try:
                out[i] = _clean(item, depth + 1)
            except _Invalid as exc:
                exc.path.append(f"[{i}]")
                raise
        return out
    raise _Invalid(f"is a {kind.__name__}; use only strings, numbers, booleans, None, lists and dicts")


def _check_unicode(text: str, subject: str = "contains") -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _Invalid(f"{subject} an invalid character (a lone surrogate)") from None


@dataclass(frozen=True)
class ToolCall:
    """One call of a tool by name with keyword arguments.

    Attributes:
        name: the tool's name.
        arguments: argument name -> JSON-like value.
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The call as ``{"name": ..., "arguments": {...}}`` (plain dicts, JSON-ready)."""
        return {"name": self.name, "arguments": json.loads(json.dumps(self.arguments, default=_json_default))}

    def format(self, style: Literal["tag", "python"] = "tag") -> str:
        """The call as a model would write it; `parse_tool_calls` reads it back equal.

        Args:
            style: ``"tag"`` for ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, ``"python"``
                for ``name(k=v, ...)`` with python literals (the name and argument names must then be
                python identifiers).

        Returns:
            The rendered call.

        Raises:
            ValueError: for an unknown style, a value that is not JSON-like or not finite, or (python
                style) a name that is not an identifier.
        """
        if style == "tag":
            body = json.dumps(
                {"name": self.name, "arguments": self.arguments},
                ensure_ascii=False,
                allow_nan=False,
                default=_json_default,
            )
            # A tag inside a string value would end the block early; \u003c reads back as "<".
            if "tool_call>" in body:
                body = body.replace(_OPEN, "\\u003ctool_call>").replace(_CLOSE, "\\u003c/tool_call>")
            return f"{_OPEN}{body}{_CLOSE}"
        if style == "python":
            if not self.name.isidentifier() or keyword.iskeyword(self.name):
                raise ValueError(f"tool name {self.name!r} is not a python identifier; use style='tag'")
            parts = []
            for key, value in self.arguments.items():
                if not isinstance(key, str) or not key.isidentifier() or keyword.iskeyword(key):
                    raise ValueError(f"argument name {key!r} is not a python identifier; use style='tag'")
                parts.append(f"{key}={_py_literal(value)}")
            return f"{self.name}({', '.join(parts)})"
        raise ValueError(f"unknown style {style!r}; use 'tag' or 'python'")


@dataclass(frozen=True)
class ParseResult:
    """What `parse_tool_calls` found.

    Attributes:
        calls: the calls, in order of appearance; empty when ``error`` is set.
        error: None on success, else a short message telling the model what was wrong.
    """

    calls: tuple[ToolCall, ...]
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the text parsed (it may still hold no call)."""
        return self.error is None


def _fail(message: str) -> ParseResult:
    return ParseResult((), _safe(message))


def parse_tool_calls(text: str, *, max_chars: int = 65_536) -> ParseResult:
    """The tool calls written in a completion.

    If the text holds ``<tool_call>``, every ``<tool_call>{json}</tool_call>`` block is a call and prose
    around the blocks is ignored. The JSON is an object with a non-empty string ``"name"`` and an object
    ``"arguments"`` (a JSON string holding an object is decoded; a missing ``"arguments"``, or the
    alias ``"parameters"``, gives ``{}`` / its value).

    Otherwise the stripped text (optionally inside one ``` fence) may be python-style calls: ``f(x=1)``,
    ``[f(x=1), g(y=2)]`` or one call per line, keyword arguments with literal values only.

    The rule for "no call" versus "error": text with no tag and no line that starts like a call
    (``name(``) is prose, ``ParseResult((), None)``, a valid message in a multi-turn env. Anything that
    attempts a call and fails (a malformed tag, invalid JSON, a positional argument, a call mixed with
    prose, a non-literal value, ...) gives ``calls=()`` and an ``error`` naming the problem, as does text
    longer than ``max_chars``. An empty python list ``[]`` is no call. Calls are not checked against any
    tool here; see `validate_call`.

    Args:
        text: the model's completion.
        max_chars: longer text is refused before it is scanned.

    Returns:
        The calls, or an error message. Never raises on any ``str``.

    >>> parse_tool_calls('<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>').calls
    (ToolCall(name='f', arguments={'x': 1}),)
    >>> parse_tool_calls("f(x='a', y=[1, 2])").calls[0].arguments
    {'x': 'a', 'y': [1, 2]}
    >>> print(parse_tool_calls("f(1)").error)
    f(...): positional argument '1'; pass every argument by name, e.g. f(name=value)
    """
    if not isinstance(text, str):
        return _fail(f"expected text, got {type(text).__name__}")
    if len(text) > max_chars:
        return _fail(f"message too long to parse for tool calls ({len(text)} characters > {max_chars})")
    try:
        if _OPEN in text:
            return _parse_tags(text)
        if _CLOSE in text:
            return _fail(f"found {_CLOSE} without an opening {_OPEN}")
        return _parse_python(text)
    except (RecursionError, MemoryError):
        return _fail("tool call is nested too deeply to parse")


def _parse_tags(text: str) -> ParseResult:
    calls: list[ToolCall] = []
    pos = 0
    start = text.find(_OPEN)
    while start != -1:
        if text.find(_CLOSE, pos, start) != -1:
            return _fail(f"found {_CLOSE} without an opening {_OPEN}")
        body_start = start + len(_OPEN)
        end = text.find(_CLOSE, body_start)
        index = len(calls) + 1
        if end == -1:
            return _fail(f"{_OPEN} #{index} is not closed; end it with {_CLOSE}")
        if text.find(_OPEN, body_start, end) != -1:
            return _fail(f"{_OPEN} #{index} contains another {_OPEN}; tags cannot be nested")
        call = _tag_body(text[body_start:end], index)
        if isinstance(call, str):
            return _fail(call)
        calls.append(call)
        pos = end + len(_CLOSE)
        start = text.find(_OPEN, pos)
    if text.find(_CLOSE, pos) != -1:
        return _fail(f"found {_CLOSE} without an opening {_OPEN}")
    return ParseResult(tuple(calls))


def _unfence(text: str) -> str:
    """The content of a code fence (or inline backticks) enclosing the whole stripped text, else the text."""
    if len(text) >= 6 and text.startswith("```") and text.endswith("```"):
        newline = text.find("\n", 3, len(text) - 3)
        # A multi-line fence's first line names the language; a one-line fence has none.
        return (text[3:-3] if newline == -1 else text[newline + 1 : -3]).strip()
    if len(text) >= 3 and text[0] == "`" and text[-1] == "`" and text[1] != "`":
        return text[1:-1].strip()
    return text


def _tag_body(body: str, index: int) -> ToolCall | str:
    """The call in one tag block, or an error message."""
    where = f"{_OPEN} #{index}"
    body = _unfence(body.strip())
    if not body:
        return f'{where} is empty; write {_OPEN}{{"name": ..., "arguments": {{...}}}}{_CLOSE}'
    try:
        obj = _REJECT_NAN.decode(body)
    except json.JSONDecodeError as exc:
        return f"{where}: invalid JSON: {exc.msg} at character {exc.pos}: {_echo(body)}"
    except ValueError as exc:  # NaN / Infinity, or an integer too long to convert
        return f"{where}: invalid JSON: {exc}"
    if not isinstance(obj, dict):
        return f'{where}: expected a JSON object with "name" and "arguments", got {_type_name(obj)}'
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        return f'{where}: "name" must be a non-empty string, got {_show(name)}'
    arguments = obj["arguments"] if "arguments" in obj else obj.get("parameters", {})
    if isinstance(arguments, str):
        # Some models write the arguments as a JSON string holding the object.
        if not arguments.strip():
            arguments = {}
        else:
            try:
                arguments = _REJECT_NAN.decode(arguments)
            except ValueError:
                return f'{where}: "arguments" is a string that is not a JSON object: {_echo(arguments)}'
    if not isinstance(arguments, dict):
        return f'{where}: "arguments" must be a JSON object, got {_type_name(arguments)}'
    try:
        _clean(name)
    except _Invalid as exc:
        return f"{where}: the tool name {exc.problem}"
    try:
        arguments = _clean(arguments)
    except _Invalid as exc:
        return f"{where}: {exc.where('arguments')}"
    return ToolCall(name, arguments)


def _parse_python(text: str) -> ParseResult:
    source = _unfence(text.strip())
    if not source:
        return ParseResult(())
    if source.startswith("{") and source.endswith("}") and '"name"' in source:
        return _fail(
            f'a JSON tool call must be inside tags: {_OPEN}{{"name": ..., "arguments": ...}}{_CLOSE}'
        )
    if _CALL_FIRST.match(source) is None and _CALL_LATER.search(source) is None:
        # No line starts like ``name(``: prose, not a failed call (the rule in parse_tool_calls).
        return ParseResult(())
    try:
        with warnings.catch_warnings():
            # Model text can trigger SyntaxWarning / DeprecationWarning (bad escapes); they are not ours.
            warnings.simplefilter("ignore")
            tree = ast.parse(source, mode="exec")
    except (SyntaxError, ValueError, OverflowError) as exc:
        if isinstance(exc, SyntaxError):
            detail = f"(line {exc.lineno}) {exc.msg}" if exc.lineno else exc.msg
        else:
            detail = str(exc)
        detail = detail.split(";")[0]  # CPython's advice to the programmer (set_int_max_str_digits) is noise
        return _fail(
            f"could not parse the tool call: {detail}. Write only the call(s), one name(arg=value, ...) per "
            f"line, or use {_OPEN} tags: {_echo(source)}"
        )
    nodes = _call_nodes(tree)
    if nodes is None:
        return _fail(
            "a python-style tool call must be the whole message: one call name(arg=value, ...) per line or "
            f"a list [a(...), b(...)], with no other text (or use {_OPEN} tags): {_echo(source)}"
        )
    calls = []
    for node in nodes:
        call = _python_call(node, source)
        if isinstance(call, str):
            return _fail(call)
        calls.append(call)
    return ParseResult(tuple(calls))


def _call_nodes(tree: ast.Module) -> list[ast.expr] | None:
    """The call expressions when the module is nothing but calls (or one list of them), else None."""
    body = tree.body
    if not body or not all(isinstance(stmt, ast.Expr) for stmt in body):
        return None
    values = [stmt.value for stmt in body if isinstance(stmt, ast.Expr)]
    if len(values) == 1 and isinstance(values[0], (ast.List, ast.Tuple)):
        values = list(values[0].elts)
    return values if all(isinstance(value, ast.Call) for value in values) else None


def _segment(source: str, node: ast.AST) -> str:
    return _echo(ast.get_source_segment(source, node) or type(node).__name__)


def _python_call(node: ast.expr, source: str) -> ToolCall | str:
    """The `ToolCall` for one ``ast.Call``, or an error message."""
    if not isinstance(node, ast.Call):  # _call_nodes guarantees calls; this keeps the types honest
        return f"expected a call, got {_segment(source, node)}"
    func = node.func
    if not isinstance(func, ast.Name):
        return (
            f"call a tool by its plain name, as name(arg=value); {_segment(source, func)} is not a tool name"
        )
    name = func.id
    if node.args:
        return (
            f"{name}(...): positional argument {_segment(source, node.args[0])}; pass every argument by "
            f"name, e.g. {name}(name=value)"
        )
    arguments: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            return f"{name}(...): **unpacking is not allowed; write each argument as name=value"
        if kw.arg in arguments:
            return f"{name}(...): argument {kw.arg!r} is given twice"
        value_node = kw.value
        if isinstance(value_node, ast.Name) and value_node.id in ("true", "false", "null"):
            fix = {"true": "True", "false": "False", "null": "None"}[value_node.id]
            return f"{name}(...): argument {kw.arg!r} = {value_node.id}: write the python literal {fix}"
        try:
            value = ast.literal_eval(value_node)
        except (ValueError, TypeError, SyntaxError, OverflowError):
            return (
                f"{name}(...): argument {kw.arg!r} must be a literal (string, number, True/False, None, "
                f"list or dict of literals), got {_segment(source, value_node)}"
            )
        try:
            arguments[kw.arg] = _clean(value)
        except _Invalid as exc:
            return f"{name}(...): {exc.where(f'argument {kw.arg!r}')}"
    return ToolCall(name, arguments)
