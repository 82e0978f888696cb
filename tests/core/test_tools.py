"""Tests of papergym.core.tools: schemas from functions, argument validation, tool-call parsing."""

from __future__ import annotations

import json
import math
import os
from typing import Literal, Optional, TypedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from papergym.core.tools import (
    ParseResult,
    Tool,
    ToolCall,
    ToolError,
    parse_tool_calls,
    run_tool_call,
    validate_call,
)

# ------------------------------------------------------------------------------------------------ fixtures


class Passenger(TypedDict, total=False):
    name: str
    age: int


def book_flight(
    origin: str,
    passengers: int,
    price: float,
    refundable: bool,
    tags: list[str],
    extras: dict,
    seats: dict[str, int],
    cabin: Literal["economy", "business"],
    note: Optional[str],  # noqa: UP045 (Optional is one of the spellings the schema must read)
    stops: int | None = None,
    meal: Literal["veg", "fish"] | None = None,
    who: Passenger | None = None,
    currency: str = "EUR",
) -> str:
    """Book a flight for one or more passengers.

    Longer description that is not part of the summary.

    Args:
        origin: IATA code of the departure airport,
            e.g. "CDG".
        passengers (int): how many people travel.
        price: the maximum price.
        refundable: whether the ticket can be refunded.
        tags: free labels.
        extras: anything else.
        seats: seat count per row.
        cabin: the cabin class.
        note: a note for the airline.
        stops: the most stops allowed.
        meal: a meal preference.
        who: the lead passenger.
        currency: ISO code of the price's currency.

    Returns:
        A confirmation code.
    """
    return f"{origin}-{passengers}"


@pytest.fixture(scope="module")
def flight() -> Tool:
    return Tool.from_function(book_flight)


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict:
    """Current weather in a city.

    Args:
        city: the city name.
        unit: the temperature unit.
    """
    if city == "Atlantis":
        raise ToolError(f"city not found: {city}")
    if city == "Bug":
        return 1 / 0  # a bug in the tool, which must surface
    return {"temp": 21, "city": city, "unit": unit}


def echo(text: str) -> str:
    """Echo the text."""
    return text


TOOLS = {tool.name: tool for tool in (Tool.from_function(get_weather), Tool.from_function(echo))}


# ------------------------------------------------------------------------------------------------- schemas


def test_schema_types(flight: Tool) -> None:
    props = flight.parameters["properties"]
    assert props["origin"]["type"] == "string"
    assert props["passengers"] == {"type": "integer", "description": "how many people travel."}
    assert props["price"]["type"] == "number"
    assert props["refundable"]["type"] == "boolean"
    assert props["tags"]["type"] == "array" and props["tags"]["items"] == {"type": "string"}
    assert props["extras"]["type"] == "object" and "additionalProperties" not in props["extras"]
    assert props["seats"]["additionalProperties"] == {"type": "integer"}
    assert props["cabin"]["enum"] == ["economy", "business"] and props["cabin"]["type"] == "string"
    assert props["note"]["type"] == ["string", "null"]
    assert props["stops"]["type"] == ["integer", "null"] and props["stops"]["default"] is None
    assert props["meal"]["enum"] == ["veg", "fish", None]
    assert props["currency"]["default"] == "EUR"
    who = props["who"]
    assert who["type"] == ["object", "null"] and who["required"] == []
    assert who["properties"] == {"name": {"type": "string"}, "age": {"type": "integer"}}
    assert who["additionalProperties"] is False


def test_schema_required_and_descriptions(flight: Tool) -> None:
    params = flight.parameters
    assert params["type"] == "object"
    assert params["required"] == [
        "origin", "passengers", "price", "refundable", "tags", "extras", "seats", "cabin", "note",
    ]  # fmt: skip
    assert flight.description == "Book a flight for one or more passengers."
    assert params["properties"]["origin"]["description"] == 'IATA code of the departure airport, e.g. "CDG".'
    assert params["properties"]["currency"]["description"] == "ISO code of the price's currency."
    assert "Returns" not in json.dumps(params)  # the Returns section is not a parameter


def test_schema_openai_format(flight: Tool) -> None:
    schema = flight.schema()
    assert schema["type"] == "function"
    assert schema["function"]["name"] == "book_flight"
    assert schema["function"]["parameters"] is flight.parameters
    json.dumps(schema)  # JSON-ready


class Point(TypedDict):
    x: int
    y: int


def test_typeddict_required_keys() -> None:
    def move(to: Point) -> None:
        """Move."""

    schema = Tool.from_function(move).parameters["properties"]["to"]
    assert schema["required"] == ["x", "y"] and schema["additionalProperties"] is False


def test_unresolvable_hint_is_a_clear_type_error() -> None:
    def f(x: Undefined) -> None:  # type: ignore[name-defined]  # noqa: F821
        """Uses a name that does not exist."""

    with pytest.raises(TypeError, match="cannot resolve its type hints"):
        Tool.from_function(f)


def test_from_function_name_override_and_no_docstring() -> None:
    def f(x: int) -> int:
        return x

    tool = Tool.from_function(f, name="double")
    assert tool.name == "double" and tool.description == ""
    assert tool(x=3) == 3


def _no_hint(x, y: int) -> None:  # type: ignore[no-untyped-def]
    """No hint on x."""


def _var_args(*args: int) -> None:
    """Varargs."""


def _var_kwargs(**kwargs: int) -> None:
    """Kwargs."""


def _positional_only(x: int, /) -> None:
    """Positional only."""


def _unsupported(x: set[int]) -> None:
    """A set."""


def _int_keys(x: dict[int, str]) -> None:
    """Int keys."""


@pytest.mark.parametrize(
    ("fn", "fragment"),
    [
        (_no_hint, "'x': has no type hint"),
        (_var_args, "*args / **kwargs"),
        (_var_kwargs, "*args / **kwargs"),
        (_positional_only, "positional-only"),
        (_unsupported, "unsupported type"),
        (_int_keys, "dict keys must be str"),
    ],
)
def test_from_function_programmer_errors(fn: object, fragment: str) -> None:
    with pytest.raises(TypeError, match="parameter") as info:
        Tool.from_function(fn)  # type: ignore[arg-type]
    assert fragment in str(info.value)


def test_tool_rejects_bad_schema() -> None:
    with pytest.raises(ValueError, match="type"):
        Tool("t", "d", {"properties": {}})
    with pytest.raises(TypeError, match="no function"):
        Tool("t", "d", {"type": "object"})()


# ---------------------------------------------------------------------------------------------- validation

VALID = {
    "origin": "CDG",
    "passengers": 2,
    "price": 300,  # an int is a number
    "refundable": False,
    "tags": ["a", "b"],
    "extras": {"x": [1]},
    "seats": {"12": 2},
    "cabin": "economy",
    "note": None,
}


def test_validate_ok(flight: Tool) -> None:
    assert flight.validate(VALID) is None
    assert flight.validate({**VALID, "stops": 1, "meal": None, "who": {"name": "Ann"}}) is None


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        ({"origin": None}, ["missing required argument 'origin'"]),
        ({"origin": None, "cabin": None}, ["missing required arguments 'origin', 'cabin'"]),
        ({"town": "Paris"}, ['unknown argument "town"', "valid arguments: origin (required)", "currency"]),
        ({"passengers": "2"}, ["'passengers' must be integer, got string \"2\""]),
        ({"passengers": True}, ["'passengers' must be integer, got boolean true"]),
        ({"passengers": 2.0}, ["'passengers' must be integer, got number 2.0"]),
        ({"price": "cheap"}, ["'price' must be number, got string"]),
        ({"refundable": 1}, ["'refundable' must be boolean, got integer 1"]),
        ({"cabin": "first"}, ['\'cabin\' must be one of ["economy", "business"], got "first"']),
        ({"tags": ["a", 3]}, ["'tags[1]' must be string, got integer 3"]),
        ({"seats": {"r1": "two"}}, ["'seats['r1']' must be integer"]),
        ({"note": 5}, ["'note' must be string or null, got integer 5"]),
        ({"meal": "beef"}, ['\'meal\' must be one of ["veg", "fish", null]']),
        ({"who": {"name": "Ann", "age": "old"}}, ["'who.age' must be integer, got string \"old\""]),
        ({"who": {"nom": "Ann"}}, ["'who' has unknown key 'nom'; valid keys: name, age"]),
        ({"who": "Ann"}, ["'who' must be object or null, got string"]),
        ({"stops": True}, ["'stops' must be integer or null, got boolean"]),
    ],
)
def test_validate_messages(flight: Tool, change: dict, fragments: list[str]) -> None:
    arguments = {
        k: v for k, v in {**VALID, **change}.items() if not (k in change and v is None and k != "note")
    }
    message = flight.validate(arguments)
    assert message is not None and message.startswith("book_flight: ")
    for fragment in fragments:
        assert fragment in message


def test_validate_not_a_mapping(flight: Tool) -> None:
    assert "arguments must be an object" in (flight.validate(["x"]) or "")  # type: ignore[arg-type]


def test_validate_call_unknown_tool() -> None:
    message = validate_call(ToolCall("get_wether", {"city": "Paris"}), TOOLS)
    assert message is not None
    assert 'unknown tool "get_wether"' in message
    assert "available tools: echo, get_weather" in message
    assert "Did you mean 'get_weather'?" in message
    assert validate_call(ToolCall("get_weather", {"city": "Paris"}), TOOLS) is None


# ------------------------------------------------------------------------------------------------- parsing


def _only(result: ParseResult) -> ToolCall:
    assert result.ok, result.error
    assert len(result.calls) == 1
    return result.calls[0]


def test_parse_tag_with_prose() -> None:
    call = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    text = f"Let me check.\n<tool_call>\n{call}\n</tool_call>\nok"
    assert _only(parse_tool_calls(text)) == ToolCall("get_weather", {"city": "Paris"})


def test_parse_tag_multiple() -> None:
    text = (
        '<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call> and '
        '<tool_call>{"name": "b", "arguments": {"y": [true, null, 1.5]}}</tool_call>'
    )
    result = parse_tool_calls(text)
    assert result.ok and result.error is None
    assert result.calls == (ToolCall("a", {"x": 1}), ToolCall("b", {"y": [True, None, 1.5]}))


@pytest.mark.parametrize(
    ("body", "arguments"),
    [
        ('{"name": "f", "arguments": "{\\"x\\": 1}"}', {"x": 1}),  # arguments as a JSON string
        ('{"name": "f", "arguments": ""}', {}),
        ('{"name": "f"}', {}),  # missing arguments
        ('{"name": "f", "parameters": {"x": 2}}', {"x": 2}),  # Llama-style alias
        ('```json\n{"name": "f", "arguments": {"x": 3}}\n```', {"x": 3}),  # fenced inside the tag
        ('{"name": "f", "arguments": {"s": "a\\u0000b"}}', {"s": "a\x00b"}),  # escaped NUL is fine
    ],
)
def test_parse_tag_variants(body: str, arguments: dict) -> None:
    assert _only(parse_tool_calls(f"<tool_call>{body}</tool_call>")) == ToolCall("f", arguments)


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ("get_weather(city='Paris')", [("get_weather", {"city": "Paris"})]),
        ('  f(a=1, b=-2.5, c=True, d=None, e=[1, "x"], g={"k": (1, 2)})  ', [
            ("f", {"a": 1, "b": -2.5, "c": True, "d": None, "e": [1, "x"], "g": {"k": [1, 2]}})
        ]),
        ("[a(x=1), b(y='z')]", [("a", {"x": 1}), ("b", {"y": "z"})]),
        ("a(x=1)\n\nb(y=2)", [("a", {"x": 1}), ("b", {"y": 2})]),
        ("```python\nf(x=1)\n```", [("f", {"x": 1})]),
        ("```\nf()\n```", [("f", {})]),
        ("```f(x=1)```", [("f", {"x": 1})]),
        ("`f(x=1)`", [("f", {"x": 1})]),
        ("[]", []),
    ],
)  # fmt: skip
def test_parse_python(text: str, calls: list[tuple[str, dict]]) -> None:
    result = parse_tool_calls(text)
    assert result.ok, result.error
    assert result.calls == tuple(ToolCall(name, args) for name, args in calls)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "Hello! How can I help you today?",
        "The answer is 42.",
        "Hello (friend), it's fine.",
        "x = 1",
    ],
)
def test_prose_is_no_call_and_no_error(text: str) -> None:
    assert parse_tool_calls(text) == ParseResult((), None)


GARBAGE = {
    "unclosed tag": ('<tool_call>{"name": "f"', "not closed"),
    "nested tags": ('<tool_call><tool_call>{"name": "f"}</tool_call></tool_call>', "tags cannot be nested"),
    "stray close": ("text </tool_call>", "without an opening"),
    "close before open": ('</tool_call><tool_call>{"name": "f"}</tool_call>', "without an opening"),
    "empty tag": ("<tool_call> </tool_call>", "is empty"),
    "invalid json": ('<tool_call>{"name": "f", }</tool_call>', "invalid JSON"),
    "json list": ('<tool_call>[{"name": "f"}]</tool_call>', "got array"),
    "name missing": ('<tool_call>{"arguments": {}}</tool_call>', '"name" must be a non-empty string'),
    "name empty": ('<tool_call>{"name": " "}</tool_call>', '"name" must be a non-empty string'),
    "name not str": ('<tool_call>{"name": 3}</tool_call>', '"name" must be a non-empty string'),
    "arguments list": ('<tool_call>{"name": "f", "arguments": [1]}</tool_call>', "must be a JSON object"),
    "arguments bad string": ('<tool_call>{"name": "f", "arguments": "x=1"}</tool_call>', "not a JSON object"),
    "nan": ('<tool_call>{"name": "f", "arguments": {"x": NaN}}</tool_call>', "NaN is not valid JSON"),
    "huge float": ('<tool_call>{"name": "f", "arguments": {"x": 1e999}}</tool_call>', "not a finite number"),
    "control char": (
        '<tool_call>{"name": "f", "arguments": {"x": "a\x01b"}}</tool_call>',
        "control character",
    ),
    "surrogate escape": (
        '<tool_call>{"name": "f", "arguments": {"x": "\\ud800"}}</tool_call>',
        "arguments['x'] contains an invalid character",
    ),
    "raw surrogate": (
        '<tool_call>{"name": "f", "arguments": {"x": "\ud800"}}</tool_call>',
        "invalid character",
    ),
    "surrogate name": ('<tool_call>{"name": "\\udfff"}</tool_call>', "the tool name contains"),
    "huge int json": ('<tool_call>{"name": "f", "arguments": {"x": ' + "9" * 5000 + "}}</tool_call>", "JSON"),
    "deep json": (
        '<tool_call>{"name": "f", "arguments": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}</tool_call>",
        "nested",
    ),
    "json too deep for arguments": (
        '<tool_call>{"name": "f", "arguments": {"x": ' + "[" * 40 + "]" * 40 + "}}</tool_call>",
        "nested deeper than 32",
    ),
    "bare json": ('{"name": "f", "arguments": {}}', "must be inside tags"),
    "attribute call": ("os.system(command='rm -rf /')", "'os.system' is not a tool name"),
    "call of call": ("f(x=1)(y=2)", "is not a tool name"),
    "positional": ("get_weather('Paris')", "positional argument"),
    "star args": ("f(*args)", "positional argument"),
    "kwargs unpacking": ("f(**{'a': 1})", "**unpacking"),
    "repeated keyword": ("f(x=1, x=2)", "given twice"),
    "non literal": ("f(x=__import__('os').system('echo hi'))", "must be a literal"),
    "name value": ("f(x=y)", "must be a literal"),
    "arithmetic": ("f(x=1 + 2)", "must be a literal"),
    "json true": ("f(flag=true)", "write the python literal True"),
    "set": ("f(x={1, 2})", "is a set"),
    "bytes": ("f(x=b'a')", "is a bytes"),
    "complex": ("f(x=1j)", "is a complex"),
    "ellipsis": ("f(x=...)", "ellipsis"),
    "int key": ("f(x={1: 2})", "key that is not a string"),
    "inf": ("f(x=1e400)", "not a finite number"),
    "py surrogate": ("f(x='\\ud800')", "invalid character"),
    "py raw surrogate": ("f(x='\ud800')", "could not parse"),
    "py nul": ("f(x='a\x00')", "could not parse"),
    "call with prose": ("I will call it now:\nget_weather(city='Paris')", "could not parse"),
    "call then assignment": ("f(x=1)\ny = 2", "must be the whole message"),
    "unbalanced": ("f(x=[1, 2)", "could not parse"),
    "deep brackets": ("f(x=" + "[" * 300 + "]" * 300 + ")", "could not parse"),
    "deep unary": ("f(x=" + "-" * 20_000 + "1)", "nested too deeply"),
    "huge int": ("f(x=" + "9" * 5000 + ")", "could not parse"),
    "too long": ("x" * 70_000, "too long"),
}


@pytest.mark.parametrize("case", sorted(GARBAGE))
def test_garbage_gives_error(case: str) -> None:
    text, fragment = GARBAGE[case]
    result = parse_tool_calls(text, max_chars=10**6 if case != "too long" else 65_536)
    assert not result.ok and result.calls == ()
    assert result.error is not None and fragment in result.error
    result.error.encode("utf-8")  # the message itself is valid text
    assert len(result.error) <= 1000


def test_non_literal_is_never_executed(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    monkeypatch.setattr(os, "system", lambda command: ran.append(command) or 0)
    for text in ["f(x=__import__('os').system('echo hi'))", "os.system(command='echo hi')", "f(x=exec('1'))"]:
        assert not parse_tool_calls(text).ok
    assert ran == []


def test_max_chars_rejects_before_scanning() -> None:
    text = "<tool_call>" + '{"name": "f"}' + "</tool_call>"
    assert parse_tool_calls(text).ok
    result = parse_tool_calls(text, max_chars=10)
    assert not result.ok and "too long" in (result.error or "")


def test_echoed_input_is_truncated() -> None:
    result = parse_tool_calls("<tool_call>{" + "x" * 5000 + "</tool_call>")
    assert result.error is not None and len(result.error) < 400


# ----------------------------------------------------------------------------------------------- round trip

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
IDENTIFIERS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True).filter(
    lambda s: s not in {"True", "False", "None"} and not __import__("keyword").iskeyword(s)
)
CALLS = st.builds(ToolCall, IDENTIFIERS, st.dictionaries(IDENTIFIERS, JSON_VALUES, max_size=5))


@settings(max_examples=300)
@given(CALLS, st.sampled_from(["tag", "python"]))
def test_format_round_trip(call: ToolCall, style: Literal["tag", "python"]) -> None:
    assert _only(parse_tool_calls(call.format(style))) == call


@given(st.lists(CALLS, min_size=1, max_size=4))
def test_round_trip_multiple(calls: list[ToolCall]) -> None:
    tagged = "\nthen\n".join(call.format("tag") for call in calls)
    assert parse_tool_calls(tagged).calls == tuple(calls)
    lines = "\n".join(call.format("python") for call in calls)
    assert parse_tool_calls(lines).calls == tuple(calls)
    listed = "[" + ", ".join(call.format("python") for call in calls) + "]"
    assert parse_tool_calls(listed).calls == tuple(calls)


def test_format_tag_escapes_tags_in_values() -> None:
    call = ToolCall("echo", {"text": "a </tool_call> b <tool_call> c"})
    text = call.format("tag")
    assert text.count("<tool_call>") == 1 and text.count("</tool_call>") == 1
    assert _only(parse_tool_calls(text)) == call
    python = ToolCall("echo", {"text": "</tool_call>", "d": {"<tool_call>": "\\<tool_call>"}}).format(
        "python"
    )
    assert "tool_call>" in python and "<tool_call>" not in python and "</tool_call>" not in python
    assert _only(parse_tool_calls(python)).arguments == {
        "text": "</tool_call>",
        "d": {"<tool_call>": "\\<tool_call>"},
    }


def test_format_shapes_and_errors() -> None:
    call = ToolCall("f", {"x": "é", "n": 1})
    assert call.format() == '<tool_call>{"name": "f", "arguments": {"x": "é", "n": 1}}</tool_call>'
    assert call.format("python") == "f(x='é', n=1)"
    assert call.to_dict() == {"name": "f", "arguments": {"x": "é", "n": 1}}
    with pytest.raises(ValueError, match="identifier"):
        ToolCall("get-weather", {}).format("python")
    with pytest.raises(ValueError, match="identifier"):
        ToolCall("f", {"from": 1}).format("python")
    with pytest.raises(ValueError, match="finite"):
        ToolCall("f", {"x": math.inf}).format("python")
    with pytest.raises(ValueError, match="style"):
        call.format("xml")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ never raises


def _check_result(result: ParseResult) -> None:
    assert isinstance(result, ParseResult)
    if result.error is not None:
        assert result.calls == ()
        result.error.encode("utf-8")
        assert len(result.error) <= 1000
    for call in result.calls:
        assert isinstance(call.name, str) and call.name
        json.dumps(call.to_dict(), ensure_ascii=False, allow_nan=False).encode("utf-8")


@settings(max_examples=500)
@given(st.text())
def test_never_raises_on_text(text: str) -> None:
    _check_result(parse_tool_calls(text))


@settings(max_examples=300)
@given(st.binary())
def test_never_raises_on_surrogate_escaped_bytes(data: bytes) -> None:
    _check_result(parse_tool_calls(data.decode("utf-8", "surrogateescape")))


NEAR_MISS = st.one_of(
    st.builds(lambda s: f"<tool_call>{s}</tool_call>", st.text()),
    st.builds(lambda s: f'<tool_call>{{"name": "f", "arguments": {s}}}</tool_call>', st.text()),
    st.builds(lambda s: f"f({s})", st.text()),
    st.builds(lambda s: f"f(x={s})", st.text(alphabet=st.sampled_from("[]{}()'\":,-+.0123456789eTruNon \\"))),
    st.builds(lambda a, b: f"{a}<tool_call>{b}", st.text(), st.text()),
    st.builds(lambda s: f"```python\n{s}\n```", st.text()),
)


@settings(max_examples=500)
@given(NEAR_MISS)
def test_never_raises_on_near_misses(text: str) -> None:
    _check_result(parse_tool_calls(text))


# ----------------------------------------------------------------------------------------------- running


def test_run_tool_call_result_text() -> None:
    text, is_error = run_tool_call(ToolCall("get_weather", {"city": "Paris"}), TOOLS)
    assert not is_error
    assert text == '{"city": "Paris", "temp": 21, "unit": "celsius"}'  # sorted keys
    assert run_tool_call(ToolCall("echo", {"text": "hé"}), TOOLS) == ("hé", False)


def test_run_tool_call_errors() -> None:
    assert run_tool_call(ToolCall("get_weather", {"city": "Atlantis"}), TOOLS) == (
        "city not found: Atlantis",
        True,
    )
    text, is_error = run_tool_call(ToolCall("get_weather", {"town": "Paris"}), TOOLS)
    assert is_error and "missing required argument 'city'" in text and "unknown argument" in text
    text, is_error = run_tool_call(ToolCall("nope", {}), TOOLS)
    assert is_error and "unknown tool" in text


def test_run_tool_call_propagates_bugs() -> None:
    with pytest.raises(ZeroDivisionError):
        run_tool_call(ToolCall("get_weather", {"city": "Bug"}), TOOLS)


def test_parsed_call_runs_end_to_end() -> None:
    call = _only(parse_tool_calls("get_weather(city='Oslo', unit='fahrenheit')"))
    text, is_error = run_tool_call(call, TOOLS)
    assert not is_error and json.loads(text)["unit"] == "fahrenheit"
