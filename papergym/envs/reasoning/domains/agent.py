"""Agent: choose the right tool call for a user's request.

The prompt shows a few tools' JSON schemas (2, 4 or 6 by level, always including the right one) and a
request; the answer is the one call that fulfils it, in python style ``name(arg=value, ...)`` or as a
``<tool_call>`` JSON block (`papergym.core.tools.parse_tool_calls` reads both).

Level 1 asks with required arguments only, in the formats the schemas use, next to one unrelated
tool. Level 2 adds optional arguments, dates in words, and distractors with similar names and
arguments. Level 3 adds values to normalise as the request states them: number words, 12-hour times,
durations in hours, currency and unit names, a stay given in nights, and enum values chosen by
description ("there are six of us" -> ``ride_type="xl"``).
"""

from __future__ import annotations

import datetime
import json
import math
import random
from collections.abc import Callable, Mapping
from typing import Any

from papergym.core.tools import Tool, ToolCall, parse_tool_calls
from papergym.envs.reasoning.domains import agent_vocabulary as vocab
from papergym.envs.reasoning.domains._common import check_difficulty, pick, pick_distinct, rand_int
from papergym.envs.reasoning.problem import Problem

_Request = tuple[str, dict[str, Any]]
_Generator = Callable[[random.Random, int], _Request]
"""A request maker: ``(rng, level) -> (request text, gold arguments)``."""

_TOOLS: list[Tool] = []
_FAMILY: dict[str, str] = {}
_GENERATORS: dict[str, _Generator] = {}
_S, _I, _N = "string", "integer", "number"
_DATE, _TIME = "Date as YYYY-MM-DD.", "24-hour time as HH:MM."


def _tool(
    family: str, name: str, description: str, /, **params: tuple[Any, ...]
) -> Callable[[_Generator], _Generator]:
    """Declares a catalogue tool; the decorated function makes its requests.

    Each parameter is ``(type, description)`` when required or ``(type, description, default)`` when
    optional (a None default is not shown). The type is a JSON type name or a tuple of strings (an
    enum). Tools of one family are each other's distractors. Schemas are built once, at import.
    """
    properties: dict[str, Any] = {}
    required = []
    for key, (kind, text, *default) in params.items():
        schema: dict[str, Any] = (
            {"type": _S, "enum": list(kind)} if isinstance(kind, tuple) else {"type": kind}
        )
        schema["description"] = text
        if not default:
            required.append(key)
        elif default[0] is not None:
            schema["default"] = default[0]
        properties[key] = schema
    _TOOLS.append(Tool(name, description, {"type": "object", "properties": properties, "required": required}))
    _FAMILY[name] = family

    def register(fn: _Generator) -> _Generator:
        _GENERATORS[name] = fn
        return fn

    return register


# Values to draw come from `agent_vocabulary`.

_FIRST_DAY = datetime.date(2025, 1, 1).toordinal()


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _say_date(day: datetime.date, level: int) -> str:
    """A date as the request states it: ISO at level 1, in words above."""
    if level == 1:
        return day.isoformat()
    if level == 2:
        return f"{vocab.MONTHS[day.month - 1]} {day.day}, {day.year}"
    return f"the {_ordinal(day.day)} of {vocab.MONTHS[day.month - 1]} {day.year}"


def _date(rng: random.Random, level: int) -> tuple[datetime.date, str]:
    """A day in 2025-2026 and how the request states it."""
    day = datetime.date.fromordinal(_FIRST_DAY + rand_int(rng, 0, 729))
    return day, _say_date(day, level)


def _clock(rng: random.Random, level: int) -> tuple[str, str]:
    """A time of day as HH:MM and as the request states it (12-hour at level 3)."""
    hour, minute = rand_int(rng, 6, 22), pick(rng, (0, 15, 30, 45))
    gold = f"{hour:02d}:{minute:02d}"
    if level < 3:
        return gold, gold
    half = "am" if hour < 12 else "pm"
    return gold, f"{hour % 12 or 12}:{minute:02d} {half}" if minute else f"{hour % 12 or 12} {half}"


def _count(rng: random.Random, low: int, high: int, level: int) -> tuple[int, str]:
    """A small count and how the request states it (a word at level 3)."""
    n = rand_int(rng, low, high)
    return n, vocab.WORDS[n] if level == 3 and n < len(vocab.WORDS) else str(n)


def _minutes(rng: random.Random, level: int) -> tuple[int, str]:
    """A duration in minutes and how the request states it (in hours at level 3 when it can)."""
    n = pick(rng, (10, 15, 20, 25, 30, 45, 60, 90, 120, 150, 180))
    if level < 3 or n < 60:
        return n, f"{n} minutes"
    hours = ("an hour", "two hours", "three hours")[n // 60 - 1]
    return n, f"{hours} and a half" if n % 60 else hours


def _amount(rng: random.Random) -> int | float:
    """A sum or measurement: a whole number or one with two decimals."""
    return rand_int(rng, 5, 5000) if rng.random() < 0.5 else rand_int(rng, 500, 500000) / 100


def _optional(rng: random.Random, level: int) -> bool:
    """Whether to state an optional argument: never at level 1, more often at level 3."""
    return level > 1 and rng.random() < (0.5 if level == 2 else 0.7)


def _choose(rng: random.Random, level: int, phrases: Mapping[str, tuple[str, str]]) -> tuple[str, str]:
    """An enum value and its phrase: ``phrases[v][0]`` names it below level 3, ``[1]`` describes it."""
    value = pick(rng, tuple(phrases))
    return value, phrases[value][level == 3]


def _maybe(rng: random.Random, level: int, args: dict[str, Any], key: str, phrases: Mapping) -> str:
    """Optionally states an enum argument: sets ``args[key]`` and returns `` <phrase>``, or ``""``."""
    if not _optional(rng, level):
        return ""
    args[key], phrase = _choose(rng, level, phrases)
    return f" {phrase}"


# ----------------------------------------------------------------------------- the catalogue, by family

_UNITS = ("celsius", "fahrenheit")
_UNIT_SAID = {"celsius": ("Use celsius.", "I think in degrees Celsius."),
              "fahrenheit": ("Use fahrenheit.", "I only understand Fahrenheit.")}  # fmt: skip


@_tool("weather", "get_current_weather", "Get the current weather in a city.",
       city=(_S, 'City name, e.g. "Paris".'), unit=(_UNITS, "Temperature unit.", "celsius"))  # fmt: skip
def _weather_now(rng: random.Random, level: int) -> _Request:
    city = pick(rng, vocab.CITIES)
    args: dict[str, Any] = {"city": city}
    text = pick(rng, ("What's the weather like in {} right now?", "Is it warm in {} at the moment?",
                      "Current conditions in {}, please."))  # fmt: skip
    return text.format(city) + _maybe(rng, level, args, "unit", _UNIT_SAID), args


@_tool("weather", "get_weather_forecast", "Get the daily weather forecast for a city.",
       city=(_S, 'City name, e.g. "Paris".'), days=(_I, "Number of days to forecast, 1-14."),
       unit=(_UNITS, "Temperature unit.", "celsius"))  # fmt: skip
def _weather_forecast(rng: random.Random, level: int) -> _Request:
    city, days = pick(rng, vocab.CITIES), rand_int(rng, 2, 10)
    args: dict[str, Any] = {"city": city, "days": days}
    span = (
        f"the next {days} days"
        if level < 3
        else "the coming week"
        if days == 7
        else f"the next {vocab.WORDS[days]} days"
    )
    return f"What will the weather be in {city} over {span}?" + _maybe(
        rng, level, args, "unit", _UNIT_SAID
    ), args


@_tool("clock", "set_timer", "Start a countdown timer.",
       minutes=(_I, "Duration in minutes."), label=(_S, "A name for the timer.", None))  # fmt: skip
def _timer(rng: random.Random, level: int) -> _Request:
    minutes, said = _minutes(rng, level)
    args: dict[str, Any] = {"minutes": minutes}
    text = f"Set a timer for {said}."
    if _optional(rng, level):
        args["label"] = pick(rng, vocab.LABELS)
        text += f' Label it "{args["label"]}".'
    return text, args


@_tool("clock", "set_alarm", "Set an alarm.", time=(_S, _TIME),
       repeat=(("once", "daily", "weekdays", "weekends"),
               "When it repeats: once, every day, Monday to Friday, or Saturday and Sunday.",
               "once"))  # fmt: skip
def _alarm(rng: random.Random, level: int) -> _Request:
    time, said = _clock(rng, level)
    args: dict[str, Any] = {"time": time}
    return f"Wake me up at {said}." + _maybe(rng, level, args, "repeat", {
        "once": ("Repeat: once.", "Just this one time."), "daily": ("Repeat: daily.", "Every single day."),
        "weekdays": ("Repeat: weekdays.", "Only on working days."),
        "weekends": ("Repeat: weekends.", "Only on Saturdays and Sundays."),
    }), args  # fmt: skip


@_tool("clock", "create_reminder", "Create a reminder.", text=(_S, "What to be reminded of."),
       date=(_S, _DATE), time=(_S, _TIME, "09:00"))  # fmt: skip
def _reminder(rng: random.Random, level: int) -> _Request:
    task, (day, said) = pick(rng, vocab.TASKS), _date(rng, level)
    args: dict[str, Any] = {"text": task, "date": day.isoformat()}
    text = f"Remind me to {task} on {said}"
    if _optional(rng, level):
        args["time"], clock = _clock(rng, level)
        text += f" at {clock}"
    return f'{text}. The reminder text should be "{task}".', args


@_tool("calendar", "create_calendar_event", "Add an event to the user's calendar.",
       title=(_S, "Event title."),
       date=(_S, _DATE), start_time=(_S, _TIME),
       duration_minutes=(_I, "Length of the event in minutes.", 60))  # fmt: skip
def _event(rng: random.Random, level: int) -> _Request:
    title, (day, said), (time, clock) = pick(rng, vocab.TITLES), _date(rng, level), _clock(rng, level)
    args: dict[str, Any] = {"title": title, "date": day.isoformat(), "start_time": time}
    text = f'Put "{title}" on my calendar on {said}, starting at {clock}.'
    if _optional(rng, level):
        args["duration_minutes"], length = _minutes(rng, level)
        text += f" It lasts {length}."
    return text, args


@_tool("calendar", "list_calendar_events", "List the events on one day of a calendar.", date=(_S, _DATE),
       calendar=(("work", "personal", "family"), "Which calendar to read.", "work"))  # fmt: skip
def _agenda(rng: random.Random, level: int) -> _Request:
    day, said = _date(rng, level)
    args: dict[str, Any] = {"date": day.isoformat()}
    return f"What do I have scheduled on {said}?" + _maybe(rng, level, args, "calendar", {
        "work": ("Check the work calendar.", "I mean my job meetings."),
        "personal": ("Check the personal calendar.", "Look at my own private plans."),
        "family": ("Check the family calendar.", "Look at what the kids and the household have on."),
    }), args  # fmt: skip


@_tool("messaging", "send_email", "Send an email.", to=(_S, "Recipient email address."),
       subject=(_S, "Subject line."), body=(_S, "Message text."),
       priority=(("low", "normal", "high"), "low (can wait), normal, or high (urgent).",
                 "normal"))  # fmt: skip
def _email(rng: random.Random, level: int) -> _Request:
    to, subject, body = (
        f"{pick(rng, vocab.PEOPLE)}@example.com",
        pick(rng, vocab.SUBJECTS),
        pick(rng, vocab.BODIES),
    )
    args: dict[str, Any] = {"to": to, "subject": subject, "body": body}
    return f'Email {to} with the subject "{subject}" and the message "{body}".' + _maybe(
        rng, level, args, "priority", {
            "low": ("Priority: low.", "No rush at all, it can wait."),
            "normal": ("Priority: normal.", "It's a routine message, so normal priority."),
            "high": ("Priority: high.", "It's urgent."),
        }), args  # fmt: skip


@_tool("messaging", "send_text_message", "Send an SMS text message.",
       phone_number=(_S, "Recipient phone number, as the user wrote it."),
       message=(_S, "Message text."))  # fmt: skip
def _sms(rng: random.Random, level: int) -> _Request:
    phone, message = f"+1-555-{rand_int(rng, 100, 999)}-{rand_int(rng, 1000, 9999)}", pick(rng, vocab.BODIES)
    return f'Text {phone} saying "{message}"', {"phone_number": phone, "message": message}


@_tool("travel", "search_flights", "Search for flights between two airports.",
       origin=(_S, "IATA code of the departure airport, e.g. CDG."),
       destination=(_S, "IATA code of the arrival airport."), date=(_S, "Departure date as YYYY-MM-DD."),
       passengers=(_I, "Number of passengers.", 1),
       cabin=(("economy", "premium_economy", "business", "first"), "Cabin class.", "economy"))  # fmt: skip
def _flights(rng: random.Random, level: int) -> _Request:
    (city_a, code_a), (city_b, code_b) = pick_distinct(rng, vocab.AIRPORTS, 2)
    day, said = _date(rng, level)
    args: dict[str, Any] = {"origin": code_a, "destination": code_b, "date": day.isoformat()}
    where = f"{code_a} to {code_b}" if level == 1 else f"{city_a} ({code_a}) to {city_b} ({code_b})"
    text = f"Find me flights from {where} on {said}."
    if _optional(rng, level):
        args["passengers"], count = _count(rng, 2, 6, level)
        text += f" We are {count} passengers."
    return text + _maybe(rng, level, args, "cabin", {
        "economy": ("Cabin: economy.", "The cheapest cabin is fine."),
        "premium_economy": ("Cabin: premium_economy.", "Premium economy, please."),
        "business": ("Cabin: business.", "We want business class."),
        "first": ("Cabin: first.", "Book first class."),
    }), args  # fmt: skip


@_tool("travel", "get_flight_status", "Get the status of a flight.",
       flight_number=(_S, "Airline code and number, e.g. AF123."), date=(_S, _DATE))  # fmt: skip
def _flight_status(rng: random.Random, level: int) -> _Request:
    number = f"{pick(rng, ('AF', 'BA', 'LH', 'UA', 'DL', 'KL', 'JL', 'QF'))}{rand_int(rng, 10, 999)}"
    day, said = _date(rng, level)
    return f"Is flight {number} on {said} on time?", {"flight_number": number, "date": day.isoformat()}


@_tool("booking", "search_hotels", "Search for hotel rooms.", city=(_S, "City name."),
       check_in=(_S, "Arrival date as YYYY-MM-DD."), check_out=(_S, "Departure date as YYYY-MM-DD."),
       guests=(_I, "Number of guests.", 2))  # fmt: skip
def _hotels(rng: random.Random, level: int) -> _Request:
    city, (day, said), nights = pick(rng, vocab.CITIES), _date(rng, level), rand_int(rng, 1, 6)
    leave = datetime.date.fromordinal(day.toordinal() + nights)
    args: dict[str, Any] = {"city": city, "check_in": day.isoformat(), "check_out": leave.isoformat()}
    if level < 3:
        text = f"Find a hotel in {city}, checking in on {said} and out on {_say_date(leave, level)}."
    else:  # the check-out date is the model's to work out
        text = f"Find a hotel in {city} for {vocab.WORDS[nights]} night{'s' * (nights > 1)} from {said}."
    if _optional(rng, level):
        args["guests"], count = _count(rng, 1, 5, level)
        text += f" It's for {count} guest{'s' * (args['guests'] > 1)}."
    return text, args


@_tool("booking", "book_restaurant", "Book a table at a restaurant.", restaurant=(_S, "Restaurant name."),
       date=(_S, _DATE), time=(_S, _TIME), party_size=(_I, "Number of people."))  # fmt: skip
def _restaurant(rng: random.Random, level: int) -> _Request:
    place, (day, said), (time, clock) = pick(rng, vocab.RESTAURANTS), _date(rng, level), _clock(rng, level)
    size, count = _count(rng, 2, 10, level)
    args = {"restaurant": place, "date": day.isoformat(), "time": time, "party_size": size}
    return f"Book a table for {count} at {place} on {said} at {clock}.", args


@_tool("convert", "convert_currency", "Convert an amount of money between currencies.",
       amount=(_N, "The amount to convert."),
       from_currency=(_S, "ISO 4217 code of the source currency, e.g. EUR."),
       to_currency=(_S, "ISO 4217 code of the target currency."))  # fmt: skip
def _convert_money(rng: random.Random, level: int) -> _Request:
    (code_a, name_a), (code_b, name_b) = pick_distinct(rng, vocab.CURRENCIES, 2)
    amount = _amount(rng)
    args = {"amount": amount, "from_currency": code_a, "to_currency": code_b}
    if level == 1:
        return f"Convert {amount} {code_a} to {code_b}.", args
    shown = f"{amount:,}" if isinstance(amount, int) else f"{amount:,.2f}"  # thousands separators to drop
    return f"How much is {shown} {name_a} in {name_b}?", args


@_tool("convert", "get_exchange_rate", "Get the current exchange rate between two currencies.",
       base_currency=(_S, "ISO 4217 currency code, e.g. EUR."),
       quote_currency=(_S, "ISO 4217 currency code."))  # fmt: skip
def _rate(rng: random.Random, level: int) -> _Request:
    (code_a, name_a), (code_b, name_b) = pick_distinct(rng, vocab.CURRENCIES, 2)
    pair = f"{code_a} and {code_b}" if level == 1 else f"{name_a} and {name_b}"
    args = {"base_currency": code_a, "quote_currency": code_b}
    return f"What is the exchange rate between {pair}, per one unit of the first?", args


@_tool("convert", "convert_units", "Convert a measurement between units.",
       value=(_N, "The value to convert."),
       from_unit=(("km", "mi", "m", "ft", "kg", "lb", "l", "gal", "c", "f"),
                  "km kilometres, mi miles, m metres, ft feet, kg kilograms, lb pounds, l litres, "
                  "gal US gallons, c degrees Celsius, f degrees Fahrenheit."),
       to_unit=(("km", "mi", "m", "ft", "kg", "lb", "l", "gal", "c", "f"),
                "The target unit (same codes)."))  # fmt: skip
def _convert_measure(rng: random.Random, level: int) -> _Request:
    unit_a, unit_b, name_a, name_b = pick(rng, vocab.UNIT_PAIRS)
    if rng.random() < 0.5:
        unit_a, unit_b, name_a, name_b = unit_b, unit_a, name_b, name_a
    value = _amount(rng)
    args = {"value": value, "from_unit": unit_a, "to_unit": unit_b}
    if level == 1:
        return f"Convert {value} {unit_a} to {unit_b}.", args
    return f"What is {value} {name_a} in {name_b}?", args


@_tool(
    "stocks", "get_stock_quote", "Get the latest price of a stock.", symbol=(_S, "Ticker symbol, e.g. AAPL.")
)
def _quote(rng: random.Random, level: int) -> _Request:
    symbol, company = pick(rng, vocab.STOCKS)
    named = symbol if level == 1 else f"{company} (ticker {symbol})"
    return f"What is {named} trading at right now?", {"symbol": symbol}


_PERIODS = {"5d": ("period 5d", "over the past five days"), "1mo": ("period 1mo", "over the last month"),
            "6mo": ("period 6mo", "over the last six months"), "1y": ("period 1y", "over the past year"),
            "5y": ("period 5y", "over the last five years")}  # fmt: skip


@_tool("stocks", "get_stock_history", "Get a stock's price history.",
       symbol=(_S, "Ticker symbol, e.g. AAPL."),
       period=(tuple(_PERIODS),
               "5d five days, 1mo one month, 6mo six months, 1y one year, 5y five years."))  # fmt: skip
def _history(rng: random.Random, level: int) -> _Request:
    (symbol, company), (period, said) = pick(rng, vocab.STOCKS), _choose(rng, level, _PERIODS)
    named = symbol if level == 1 else f"{company} (ticker {symbol})"
    return f"Show me how {named} stock has moved, {said}.", {"symbol": symbol, "period": period}


@_tool("search", "web_search", "Search the web.", query=(_S, "Search terms."),
       num_results=(_I, "How many results to return.", 5))  # fmt: skip
def _search(rng: random.Random, level: int) -> _Request:
    query = pick(rng, vocab.QUERIES)
    args: dict[str, Any] = {"query": query}
    text = f'Search the web for "{query}".'
    if _optional(rng, level):
        args["num_results"], count = _count(rng, 3, 12, level)
        text += f" I want {count} results."
    return text, args


_NEWS_LANGUAGES = {code: (f"Language: {code}.", f"Only articles in {vocab.LANGUAGES[code]}.")
                   for code in ("en", "fr", "de", "es")}  # fmt: skip


@_tool("search", "search_news", "Search recent news articles.", query=(_S, "Search terms."),
       language=(("en", "fr", "de", "es"), "en English, fr French, de German, es Spanish.", "en"),
       days=(_I, "How many past days to search.", 7))  # fmt: skip
def _news(rng: random.Random, level: int) -> _Request:
    topic = pick(rng, vocab.TOPICS)
    args: dict[str, Any] = {"query": topic}
    text = f'Find news articles about "{topic}".'
    text += _maybe(rng, level, args, "language", _NEWS_LANGUAGES)
    if _optional(rng, level):
        args["days"], count = _count(rng, 1, 12, level)
        text += f" Only from the last {count} days."
    return text, args


@_tool("search", "translate_text", "Translate text into another language.",
       text=(_S, "The text to translate."),
       target_language=(tuple(vocab.LANGUAGES),
                        "en English, fr French, de German, es Spanish, it Italian, ja Japanese.")
       )  # fmt: skip
def _translate(rng: random.Random, level: int) -> _Request:
    phrase, target = pick(rng, vocab.PHRASES), pick(rng, ("fr", "de", "es", "it", "ja"))
    into = f"(target language code {target})" if level == 1 else f"into {vocab.LANGUAGES[target]}"
    return f'Translate "{phrase}" {into}.', {"text": phrase, "target_language": target}


@_tool("transport", "request_ride", "Request a taxi ride.", pickup=(_S, "Pickup address or place."),
       dropoff=(_S, "Destination address or place."),
       ride_type=(("standard", "xl", "premium"),
                  "standard (up to 4 riders), xl (up to 6), premium (luxury car).",
                  "standard"))  # fmt: skip
def _ride(rng: random.Random, level: int) -> _Request:
    pickup, dropoff = pick_distinct(rng, vocab.PLACES, 2)
    args: dict[str, Any] = {"pickup": pickup, "dropoff": dropoff}
    return f"Get me a taxi from {pickup} to {dropoff}." + _maybe(rng, level, args, "ride_type", {
        "standard": ("Ride type: standard.", "It's just the two of us, nothing fancy."),
        "xl": ("Ride type: xl.", "There are six of us."),
        "premium": ("Ride type: premium.", "Make it a luxury car."),
    }), args  # fmt: skip


@_tool("transport", "get_directions", "Get directions between two places.",
       origin=(_S, "Start address or place."),
       destination=(_S, "End address or place."),
       mode=(("driving", "walking", "transit", "cycling"),
             "driving, walking, transit (public transport) or cycling.",
             "driving"))  # fmt: skip
def _directions(rng: random.Random, level: int) -> _Request:
    origin, destination = pick_distinct(rng, vocab.PLACES, 2)
    args: dict[str, Any] = {"origin": origin, "destination": destination}
    return f"How do I get from {origin} to {destination}?" + _maybe(rng, level, args, "mode", {
        "driving": ("Mode: driving.", "I'll take my car."), "walking": ("Mode: walking.", "I'm on foot."),
        "transit": ("Mode: transit.", "I'll take the bus or metro."),
        "cycling": ("Mode: cycling.", "By bike."),
    }), args  # fmt: skip


@_tool("home", "set_thermostat", "Set the home thermostat.",
       temperature=(_N, "Target temperature in degrees Celsius."),
       mode=(("heat", "cool", "auto"), "heat (warm the home), cool (cool it down) or auto.",
             "auto"))  # fmt: skip
def _thermostat(rng: random.Random, level: int) -> _Request:
    temperature = rand_int(rng, 32, 52) / 2  # 16.0 to 26.0 in half degrees
    args: dict[str, Any] = {"temperature": temperature}
    return f"Set the thermostat to {temperature:g} degrees Celsius." + _maybe(rng, level, args, "mode", {
        "heat": ("Mode: heat.", "It's freezing in here, warm the place up."),
        "cool": ("Mode: cool.", "It's far too hot, cool the place down."),
        "auto": ("Mode: auto.", "Let it heat or cool by itself as needed."),
    }), args  # fmt: skip


# ---------------------------------------------------------------------------------------------- the domain

TOOLS: Mapping[str, Tool] = {tool.name: tool for tool in _TOOLS}
"""The catalogue: tool name -> schema-only `Tool`."""

_NAMES = tuple(TOOLS)
_SCHEMA_TEXT = {tool.name: json.dumps(tool.schema()["function"], ensure_ascii=False) for tool in _TOOLS}
_DEFAULTS = {
    tool.name: {key: p["default"] for key, p in tool.parameters["properties"].items() if "default" in p}
    for tool in _TOOLS
}
_SIMILAR = {name: tuple(n for n in _NAMES if n != name and _FAMILY[n] == _FAMILY[name]) for name in _NAMES}
_UNRELATED = {name: tuple(n for n in _NAMES if _FAMILY[n] != _FAMILY[name]) for name in _NAMES}
_N_TOOLS = (2, 4, 6)
_INSTRUCTION = (
    "Write the one tool call that fulfils the request as name(argument=value, ...), with keyword "
    "arguments and Python literals. Pass only the arguments the request gives values for, in the formats "
    "the tool descriptions ask for."
)
_MISSING = object()


def _equal(value: Any, gold: Any) -> bool:
    """Argument equality: strings up to case and edge spaces, numbers within rel. 1e-6, bools exactly."""
    if isinstance(value, bool) or isinstance(gold, bool):
        return type(value) is type(gold) and value == gold
    if isinstance(value, (int, float)) and isinstance(gold, (int, float)):
        if isinstance(value, int) and isinstance(gold, int):
            return value == gold
        try:
            return math.isclose(value, gold, rel_tol=1e-6, abs_tol=1e-9)
        except OverflowError:  # an int too large for a float
            return False
    if isinstance(value, str) and isinstance(gold, str):
        return value.strip().casefold() == gold.strip().casefold()
    if isinstance(value, list) and isinstance(gold, list):
        return len(value) == len(gold) and all(_equal(v, g) for v, g in zip(value, gold, strict=True))
    if isinstance(value, dict) and isinstance(gold, dict):
        return value.keys() == gold.keys() and all(_equal(value[k], gold[k]) for k in gold)
    return value is None and gold is None


class AgentDomain:
    """Tool choice: pick the tool and fill in its arguments from a natural-language request.

    Attributes:
        name: ``"agent"``.
        levels: 3.
        answer_format: ``"tag"``: the answer goes inside ``<answer>...</answer>``.

    >>> import random
    >>> problem = DOMAIN.generate(random.Random(0), 1)
    >>> DOMAIN.is_correct(problem, problem.answer), DOMAIN.is_correct(problem, "web_search(query='x')")
    (True, False)
    """

    name = "agent"
    levels = 3
    answer_format = "tag"

    def generate(self, rng: random.Random, difficulty: int) -> Problem:
        """A request and the tools to choose from at ``difficulty`` (1..3), drawn only from ``rng``.

        ``Problem.answer`` is the gold call in python style; ``Problem.data`` is
        ``{"name": ..., "arguments": {...}}``.

        Raises:
            ValueError: ``difficulty`` is not in 1..3.
        """
        check_difficulty(difficulty, self.levels, self.name)
        name = pick(rng, _NAMES)
        request, arguments = _GENERATORS[name](rng, difficulty)
        extra = _N_TOOLS[difficulty - 1] - 1
        if difficulty == 1:
            shown = pick_distinct(rng, _UNRELATED[name], extra)
        else:  # similar tools first: they are the distractors that make the choice hard
            similar = pick_distinct(rng, _SIMILAR[name], min(extra, len(_SIMILAR[name])))
            shown = similar + pick_distinct(rng, _UNRELATED[name], extra - len(similar))
        shown.insert(rand_int(rng, 0, extra), name)
        schemas = "\n".join(_SCHEMA_TEXT[n] for n in shown)
        prompt = f"Tools:\n{schemas}\n\nRequest: {request}\n\n{_INSTRUCTION}"
        answer = ToolCall(name, arguments).format("python")
        return Problem(self.name, prompt, answer, difficulty, {"name": name, "arguments": arguments})

    def is_correct(self, problem: Problem, answer: str) -> bool:
        """Whether ``answer`` holds exactly the gold call, in python or ``<tool_call>`` style.

        Same tool name; every gold argument present and equal (strings up to case and surrounding
        spaces, numbers within a relative 1e-6, ints and floats alike); no other argument, except an
        optional one the gold omits given exactly its default. An argument the gold states must be
        given even when its value is the default: the request asked for it. Never raises.
        """
        data = problem.data
        gold_name, gold_args = data.get("name"), data.get("arguments")
        if not isinstance(answer, str) or not isinstance(gold_args, Mapping):
            return False
        parsed = parse_tool_calls(answer)
        if parsed.error is not None or len(parsed.calls) != 1 or parsed.calls[0].name != gold_name:
            return False
        given = parsed.calls[0].arguments
        defaults = _DEFAULTS.get(gold_name, {}) if isinstance(gold_name, str) else {}
        for key, value in given.items():
            expected = gold_args[key] if key in gold_args else defaults.get(key, _MISSING)
            if expected is _MISSING or not _equal(value, expected):
                return False
        return all(key in given for key in gold_args)


DOMAIN = AgentDomain()
"""The agent domain instance the multi-domain env draws from."""
