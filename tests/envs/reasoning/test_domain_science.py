"""Tests of the science domain of Reasoning-v0 that go beyond the shared ones in test_domains_common.py."""

from __future__ import annotations

import math
import re

import pytest

from papergym.envs.reasoning.domains import science
from papergym.envs.reasoning.domains.science import DOMAIN, TEMPLATES, read_quantity
from tests.envs.reasoning._helpers import LEVELS, generated

UNIT_STEP = (1.0, 0.1, 0.01, 0.001, 0.0001, 0.00001)


@pytest.mark.parametrize("level", LEVELS)
def test_gold_is_rounded_as_asked(level: int) -> None:
    for problem in generated("science", level):
        data = problem.data
        assert f"Give the answer in {data['unit']}, rounded to" in problem.prompt
        decimals = data["decimals"]
        assert (
            (f"{decimals} decimal place" in problem.prompt)
            if decimals
            else ("nearest whole" in problem.prompt)
        )
        assert re.fullmatch(rf"-?\d+(\.\d{{{decimals}}})?", problem.answer) and problem.answer.count(".") == (
            decimals > 0
        )
        assert abs(float(problem.answer) - data["value"]) <= UNIT_STEP[decimals] / 2 + 1e-9 * abs(
            data["value"]
        )


@pytest.mark.parametrize("level", LEVELS)
def test_tolerance_is_half_a_unit_of_the_last_place(level: int) -> None:
    for problem in generated("science", level):
        value, step = problem.data["value"], UNIT_STEP[problem.data["decimals"]]
        gold = float(problem.answer)
        for near in (value + 0.4 * step, value - 0.4 * step):
            assert DOMAIN.is_correct(problem, repr(near))
        for far in (value + 0.6 * step, value - 0.6 * step, gold + 2 * step, gold - 2 * step):
            assert not DOMAIN.is_correct(problem, repr(far))
        # one unit off in the last place, on the side away from the exact value
        off_by_one = gold + step if gold >= value else gold - step
        assert not DOMAIN.is_correct(problem, f"{off_by_one:.{problem.data['decimals']}f}")
        for junk in ("", "wrong", "\\boxed{}", problem.answer + " apples", "about " + problem.answer):
            assert not DOMAIN.is_correct(problem, junk)


@pytest.mark.parametrize("level", LEVELS)
def test_the_number_may_carry_the_requested_unit(level: int) -> None:
    for problem in generated("science", level):
        unit, gold = problem.data["unit"], problem.answer
        for text in (
            f"{gold} {unit}",
            f"{gold}{unit}",
            f"\\text{{{gold} {unit}}}",
            f"{gold} \\text{{{unit}}}",
        ):
            assert DOMAIN.is_correct(problem, text), text
        long_name = science._UNITS[unit][0]
        assert DOMAIN.is_correct(problem, f"{gold} {long_name}")
        other = "kg" if unit != "kg" else "m"
        assert not DOMAIN.is_correct(problem, f"{gold} {other}")


def test_read_quantity() -> None:
    assert read_quantity("12.5 m/s", "m/s") == 12.5
    assert read_quantity("12.5 meters per second", "m/s") == 12.5
    assert read_quantity("-40 °F", "°F") == -40.0 and read_quantity("-40 degrees Fahrenheit", "°F") == -40.0
    assert read_quantity("300 K", "K") == 300.0 and read_quantity("9.81 m/s^2", "m/s²") == 9.81
    assert read_quantity("3 km", "m") is None and read_quantity("12 ms", "s") is None
    assert read_quantity("12.5 km/h", "m/s") is None and read_quantity("m/s", "m/s") is None


def test_conversion_factors_are_the_textbook_ones() -> None:
    sizes = science._CONVERSIONS
    facts = [
        (sizes["length"]["mi"] / sizes["length"]["km"], 1.609344),
        (sizes["length"]["ft"] / sizes["length"]["in"], 12.0),
        (sizes["length"]["yd"] / sizes["length"]["ft"], 3.0),
        (sizes["mass"]["lb"] / sizes["mass"]["oz"], 16.0),
        (sizes["mass"]["lb"] / sizes["mass"]["g"], 453.59237),
        (sizes["time"]["day"] / sizes["time"]["min"], 1440.0),
        (sizes["speed"]["km/h"] / sizes["speed"]["m/s"], 1 / 3.6),
        (sizes["speed"]["mph"] / sizes["speed"]["km/h"], 1.609344),
        (sizes["energy"]["kWh"] / sizes["energy"]["kJ"], 3600.0),
        (sizes["energy"]["kcal"] / sizes["energy"]["cal"], 1000.0),
        (sizes["pressure"]["atm"] / sizes["pressure"]["mmHg"], 760.0),
        (sizes["pressure"]["atm"] / sizes["pressure"]["kPa"], 101.325),
    ]
    for got, want in facts:
        assert math.isclose(got, want, rel_tol=1e-9)
    assert science._from_celsius(100.0, "°F") == 212.0 and science._from_celsius(0.0, "K") == 273.15
    assert math.isclose(science._celsius(-40.0, "°F"), -40.0) and science._celsius(373.15, "K") == 100.0


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_G, _R = 9.8, 8.314
# Each formula template's value recomputed from the numbers its question shows, in order.
_RECOMPUTE = {
    "speed": lambda d, t: d / t,
    "distance": lambda v, t: v * t,
    "travel_time": lambda d, v: d / v,
    "acceleration": lambda v0, v1, t: (v1 - v0) / t,
    "force": lambda m, a: m * a,
    "work": lambda f, d: f * d,
    "kinetic_energy": lambda m, v: m * v**2 / 2,
    "potential_energy": lambda m, h, g: m * g * h,
    "voltage": lambda i, r: i * r,
    "current": lambda v, r: v / r,
    "resistance": lambda v, i: v / i,
    "electric_power": lambda v, i: v * i,
    "density": lambda m, vol: m / vol,
    "pressure": lambda f, area: f / area,
    "gas_pressure": lambda n, t, vol, r: n * r * t / vol,
    "gas_moles": lambda p, t, vol, r: p * vol / (r * t),
    "weight": lambda g, m: m * g,
    "momentum": lambda m, v: m * v,
    "mechanical_power": lambda w, t: w / t,
    "speed_km_min": lambda km, minutes: km * 1000 / (minutes * 60),
    "speed_to_kmh": lambda d, t: d / t * 3.6,
    "force_from_speeds": lambda m, v0, v1, t: m * (v1 - v0) / t,
    "work_from_acceleration": lambda m, a, d: m * a * d,
    "potential_energy_kj": lambda m, h, g: m * g * h / 1000,
    "kinetic_energy_kmh": lambda m, kmh: m * (kmh / 3.6) ** 2 / 2 / 1000,
    "heater_energy": lambda v, i, hours: v * i * hours / 1000,
    "resistor_power": lambda i, r: i**2 * r,
    "gas_pressure_celsius": lambda n, c, litres, r: n * r * (c + 273.15) / (litres / 1000) / 1000,
    "gas_moles_litres": lambda kpa, c, litres, r: kpa * litres / (r * (c + 273.15)),
    "density_weight": lambda rho, vol, g: rho * vol * g,
    "pressure_of_mass": lambda m, cm2, g: m * g / (cm2 / 10_000) / 1000,
    "free_fall_speed": lambda h, g: math.sqrt(2 * g * h),
    "charge": lambda v, r, minutes: v / r * minutes * 60,
    "distance_kmh_minutes": lambda kmh, minutes: kmh / 3.6 * minutes * 60,
}


def test_formula_values_follow_from_their_prompts() -> None:
    assert set(_RECOMPUTE) == set(TEMPLATES[2]) | set(TEMPLATES[3])
    seen = set()
    for level in (2, 3):
        for problem in generated("science", level):
            question = problem.prompt.split(" Give the answer in ")[0]
            numbers = [float(x) for x in _NUMBER.findall(question)]
            template = problem.data["template"]
            if template in ("potential_energy", "potential_energy_kj", "density_weight", "pressure_of_mass"):
                assert numbers[-1] == _G
            if template.startswith("gas"):
                assert numbers[-1] == _R
            assert math.isclose(_RECOMPUTE[template](*numbers), problem.data["value"], rel_tol=1e-9), question
            seen.add(template)
    assert seen == set(_RECOMPUTE)


_TEXTBOOK = {  # sizes in SI base units, written independently of the module's table
    "m": 1, "km": 1000, "cm": 0.01, "mm": 0.001, "mi": 1609.344, "ft": 0.3048, "in": 0.0254, "yd": 0.9144,
    "kg": 1, "g": 0.001, "mg": 1e-6, "t": 1000, "lb": 0.45359237, "oz": 0.45359237 / 16,
    "s": 1, "min": 60, "h": 3600, "ms": 0.001, "day": 86400,
    "m/s": 1, "km/h": 1 / 3.6, "mph": 0.44704, "ft/s": 0.3048, "knot": 1852 / 3600,
    "J": 1, "kJ": 1000, "cal": 4.184, "kcal": 4184, "Wh": 3600, "kWh": 3.6e6,
    "Pa": 1, "kPa": 1000, "atm": 101325, "bar": 1e5, "mmHg": 101325 / 760, "psi": 6894.757293168,
}  # fmt: skip
_TO_KELVIN = {"K": lambda x: x, "°C": lambda x: x + 273.15, "°F": lambda x: (x - 32) * 5 / 9 + 273.15}
_FROM_KELVIN = {"K": lambda k: k, "°C": lambda k: k - 273.15, "°F": lambda k: (k - 273.15) * 1.8 + 32}


def test_conversions_follow_from_their_prompts() -> None:
    long_names = {names[0]: unit for unit, names in science._UNITS.items()}
    for problem in generated("science", 1):
        question = problem.prompt.split(" Give the answer in ")[0]
        match = re.fullmatch(r"How many (.+) are in (-?[\d.]+) (.+)\?", question)
        if match:
            target, x, source = long_names[match[1]], float(match[2]), long_names[match[3]]
        else:
            match = re.search(r"(-?[\d.]+) (\S+)(?: to |\. What is it in | in )(\S+?)[.?]$", question)
            assert match, question
            x, source, target = float(match[1]), match[2], match[3]
        assert target == problem.data["unit"]
        if source in _TO_KELVIN:
            expected = _FROM_KELVIN[target](_TO_KELVIN[source](x))
        else:
            expected = x * _TEXTBOOK[source] / _TEXTBOOK[target]
        assert math.isclose(expected, problem.data["value"], rel_tol=1e-9, abs_tol=1e-9), question


@pytest.mark.parametrize("level", LEVELS)
def test_every_template_and_category_is_drawn(level: int) -> None:
    assert {problem.data["template"] for problem in generated("science", level)} == set(TEMPLATES[level])
    assert len(TEMPLATES[2]) + len(TEMPLATES[3]) >= 15
    if level == 1:
        categories = {
            next(c for c, sizes in science._CONVERSIONS.items() if p.data["unit"] in sizes)
            if p.data["unit"] not in _TO_KELVIN
            else "temperature"
            for p in generated("science", 1)
        }
        assert categories == {"length", "mass", "time", "speed", "energy", "pressure", "temperature"}
