"""Science: unit conversions and physics formula problems with a stated unit and rounding.

Level 1 is one unit conversion, level 2 one formula (kinematics, Newton's second law, work and
energy, Ohm's law and electric power, density, pressure, the ideal gas law), level 3 two chained steps
(a formula then a conversion, or two formulas). Constants: g = 9.8 m/s², R = 8.314 J/(mol·K).

Only IEEE-754 ``+ - * /`` and ``sqrt`` (all correctly rounded) are used, so the exact value and the
rounded gold string are the same on every machine. An answer is right when it lies within half a unit
of the last requested decimal place of the exact value, so either rounding of a tie passes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from math import sqrt

from papergym.envs.reasoning.answers import normalize_text, parse_number
from papergym.envs.reasoning.domains._common import NAMES, check_difficulty, pick, pick_distinct, rand_int
from papergym.envs.reasoning.problem import Problem

G = 9.8
"""Gravitational acceleration in m/s², as the prompts state it."""
R = 8.314
"""The gas constant in J/(mol·K), as the prompts state it."""

_Template = Callable[[random.Random], tuple[str, float, str]]
"""A problem template: ``rng -> (question, exact value, unit of the answer)``."""

_SCALES = (1, 10, 100, 1000)
_HALF_UNITS = (0.5, 0.05, 0.005, 0.0005, 0.00005, 0.000005)
# Each unit: its long name (as prompts spell it) and the extra spellings an answer may end with.
_UNITS: Mapping[str, tuple[str, ...]] = {
    "m": ("meters", "metres", "meter", "metre"),
    "km": ("kilometers", "kilometres", "kilometer", "kilometre"),
    "cm": ("centimeters", "centimetres", "centimeter"),
    "mm": ("millimeters", "millimetres", "millimeter"),
    "mi": ("miles", "mile"),
    "ft": ("feet", "foot"),
    "in": ("inches", "inch"),
    "yd": ("yards", "yard"),
    "kg": ("kilograms", "kilogram", "kilos"),
    "g": ("grams", "gram"),
    "mg": ("milligrams", "milligram"),
    "t": ("tonnes", "tonne", "metric tons"),
    "lb": ("pounds", "pound", "lbs"),
    "oz": ("ounces", "ounce"),
    "s": ("seconds", "second", "sec"),
    "min": ("minutes", "minute", "mins"),
    "h": ("hours", "hour", "hr", "hrs"),
    "ms": ("milliseconds", "millisecond"),
    "day": ("days",),
    "m/s": ("meters per second", "metres per second", "m s^-1", "ms^{-1}"),
    "km/h": ("kilometers per hour", "kilometres per hour", "kph", "kmh", "km/hr"),
    "mph": ("miles per hour", "mi/h"),
    "ft/s": ("feet per second",),
    "knot": ("knots", "kn"),
    "°C": ("degrees Celsius", "celsius", "^\\circ c", "^{\\circ}c", "c"),
    "°F": ("degrees Fahrenheit", "fahrenheit", "^\\circ f", "^{\\circ}f", "f"),
    "K": ("kelvin", "kelvins"),
    "J": ("joules", "joule"),
    "kJ": ("kilojoules", "kilojoule"),
    "cal": ("calories", "calorie"),
    "kcal": ("kilocalories", "kilocalorie"),
    "Wh": ("watt-hours", "watt hours"),
    "kWh": ("kilowatt-hours", "kilowatt hours"),
    "Pa": ("pascals", "pascal"),
    "kPa": ("kilopascals", "kilopascal"),
    "atm": ("atmospheres", "atmosphere"),
    "bar": ("bars",),
    "mmHg": ("millimeters of mercury", "mm hg"),
    "psi": ("pounds per square inch",),
    "m/s²": ("meters per second squared", "m/s^2", "m/s^{2}", "ms^-2", "m s^{-2}"),
    "N": ("newtons", "newton"),
    "V": ("volts", "volt"),
    "A": ("amperes", "ampere", "amps", "amp"),
    "Ω": ("ohms", "ohm", "\\omega", "\\ohm"),
    "W": ("watts", "watt"),
    "C": ("coulombs", "coulomb"),
    "kg/m³": ("kilograms per cubic meter", "kg/m^3", "kg m^-3"),
    "g/cm³": ("grams per cubic centimeter", "g/cm^3"),
    "kg·m/s": ("kg m/s", "kg*m/s", "kgm/s", "n s", "n·s"),
    "mol": ("moles", "mole"),
}
# The suffixes an answer in each unit may end with, compared without spaces after normalize_text.
_SUFFIXES: Mapping[str, tuple[str, ...]] = {
    unit: tuple(sorted({"".join(normalize_text(s).split()) for s in (unit, *names)}, key=len, reverse=True))
    for unit, names in _UNITS.items()
}

# Linear conversions: each category's units and their size in the category's base unit.
_CONVERSIONS: Mapping[str, Mapping[str, float]] = {
    "length": {"m": 1.0, "km": 1000.0, "cm": 0.01, "mm": 0.001, "mi": 1609.344, "ft": 0.3048, "in": 0.0254,
               "yd": 0.9144},
    "mass": {"kg": 1.0, "g": 0.001, "mg": 0.000001, "t": 1000.0, "lb": 0.45359237, "oz": 0.028349523125},
    "time": {"s": 1.0, "min": 60.0, "h": 3600.0, "ms": 0.001, "day": 86400.0},
    "speed": {"m/s": 1.0, "km/h": 1000.0 / 3600.0, "mph": 0.44704, "ft/s": 0.3048, "knot": 1852.0 / 3600.0},
    "energy": {"J": 1.0, "kJ": 1000.0, "cal": 4.184, "kcal": 4184.0, "Wh": 3600.0, "kWh": 3600000.0},
    "pressure": {"Pa": 1.0, "kPa": 1000.0, "atm": 101325.0, "bar": 100000.0, "mmHg": 101325.0 / 760.0,
                 "psi": 6894.757293168},
}  # fmt: skip
_CATEGORIES = (*_CONVERSIONS, "temperature")
_CONVERT_FORMS = (
    "Convert {x} {a} to {b}.",
    "Express {x} {a} in {b}.",
    "A measurement reads {x} {a}. What is it in {b}?",
    "How many {b_long} are in {x} {a_long}?",
)
# Powers of ten written out, so no platform's pow() is involved in a value.
_POWERS: Mapping[int, float] = {
    -3: 0.001,
    -2: 0.01,
    -1: 0.1,
    0: 1.0,
    1: 10.0,
    2: 100.0,
    3: 1000.0,
    4: 10000.0,
}
_TEMPERATURE_RANGES = {"°C": (-40, 150), "°F": (-40, 300), "K": (200, 450)}


def _num(rng: random.Random, low: int, high: int, decimals: int = 0) -> tuple[float, str]:
    """A value ``randint(low, high) / 10**decimals`` and its text with exactly that many decimals."""
    k = rand_int(rng, low, high)
    if decimals == 0:
        return float(k), str(k)
    value = k / _SCALES[decimals]
    return value, f"{value:.{decimals}f}"


def _celsius(value: float, unit: str) -> float:
    if unit == "°C":
        return value
    return (value - 32.0) * 5.0 / 9.0 if unit == "°F" else value - 273.15


def _from_celsius(value: float, unit: str) -> float:
    if unit == "°C":
        return value
    return value * 9.0 / 5.0 + 32.0 if unit == "°F" else value + 273.15


# --- level 1 -------------------------------------------------------------------------------------


def _conversion(rng: random.Random) -> tuple[str, float, str]:
    category = pick(rng, _CATEGORIES)
    if category == "temperature":
        source, target = pick_distinct(rng, ("°C", "°F", "K"), 2)
        low, high = _TEMPERATURE_RANGES[source]
        decimals = pick(rng, (0, 1))
        x, text = _num(rng, low * _SCALES[decimals], high * _SCALES[decimals], decimals)
        value = _from_celsius(_celsius(x, source), target)
        form = pick(rng, _CONVERT_FORMS[:3])  # "how many degrees Celsius are in ..." reads oddly
    else:
        sizes = _CONVERSIONS[category]
        source, target = pick_distinct(rng, tuple(sizes), 2)
        ratio = sizes[source] / sizes[target]
        while not 0.000001 <= ratio <= 1000000.0:  # milligrams to tonnes would need absurd numbers
            source, target = pick_distinct(rng, tuple(sizes), 2)
            ratio = sizes[source] / sizes[target]
        k, shift = rand_int(rng, 12, 999), 0
        # shift the decimal point until the answer has a handy size (between 0.1 and 100000)
        while k * ratio * _POWERS[shift] > 100000.0 and shift > -3:
            shift -= 1
        while k * ratio * _POWERS[shift] < 0.1 and shift < 4:
            shift += 1
        x = k * _POWERS[shift] if shift >= 0 else k / _SCALES[-shift]
        text = str(k * 10**shift) if shift >= 0 else f"{x:.{-shift}f}"
        value = x * sizes[source] / sizes[target]
        form = pick(rng, _CONVERT_FORMS)
    question = form.format(x=text, a=source, b=target, a_long=_UNITS[source][0], b_long=_UNITS[target][0])
    return question, value, target


# --- level 2: one formula ------------------------------------------------------------------------


def _speed(rng: random.Random) -> tuple[str, float, str]:
    (d, d_text), (t, t_text) = _num(rng, 100, 5000), _num(rng, 100, 3000, 1)
    name = pick(rng, NAMES)
    return f"{name} runs {d_text} m in {t_text} s. What is {name}'s average speed?", d / t, "m/s"


def _distance(rng: random.Random) -> tuple[str, float, str]:
    (v, v_text), (t, t_text) = _num(rng, 20, 150, 1), _num(rng, 10, 600)
    return (
        f"A cyclist rides at a constant {v_text} m/s for {t_text} s. How far does the cyclist go?",
        v * t,
        "m",
    )


def _travel_time(rng: random.Random) -> tuple[str, float, str]:
    (d, d_text), (v, v_text) = _num(rng, 50, 3000), _num(rng, 20, 250, 1)
    return f"A drone flies {d_text} m at a constant {v_text} m/s. How long does the flight take?", d / v, "s"


def _acceleration(rng: random.Random) -> tuple[str, float, str]:
    (v0, v0_text), (t, t_text) = _num(rng, 0, 20), _num(rng, 15, 150, 1)
    v1, v1_text = _num(rng, int(v0) + 3, int(v0) + 40)
    vehicle = pick(rng, ("car", "sprinter", "train", "scooter", "bus"))
    return (
        f"A {vehicle} speeds up from {v0_text} m/s to {v1_text} m/s in {t_text} s. "
        "What is its average acceleration?",
        (v1 - v0) / t,
        "m/s²",
    )


def _force(rng: random.Random) -> tuple[str, float, str]:
    (m, m_text), (a, a_text) = _num(rng, 5, 2500, 1), _num(rng, 5, 120, 1)
    return f"What net force gives a {m_text} kg object an acceleration of {a_text} m/s²?", m * a, "N"


def _work(rng: random.Random) -> tuple[str, float, str]:
    (f, f_text), (d, d_text) = _num(rng, 10, 900), _num(rng, 5, 400, 1)
    name = pick(rng, NAMES)
    return (
        f"{name} pushes a crate with a constant {f_text} N force along its path for {d_text} m. "
        f"How much work does {name} do?",
        f * d,
        "J",
    )


def _kinetic_energy(rng: random.Random) -> tuple[str, float, str]:
    (m, m_text), (v, v_text) = _num(rng, 1, 2000, 1), _num(rng, 10, 400, 1)
    thing = pick(rng, ("ball", "cart", "sled", "drone", "bike"))
    return f"A {m_text} kg {thing} moves at {v_text} m/s. What is its kinetic energy?", 0.5 * m * v * v, "J"


def _potential_energy(rng: random.Random) -> tuple[str, float, str]:
    (m, m_text), (h, h_text) = _num(rng, 1, 900, 1), _num(rng, 5, 500, 1)
    return (
        f"A {m_text} kg box is lifted {h_text} m. Using g = 9.8 m/s², how much gravitational potential "
        "energy does it gain?",
        m * G * h,
        "J",
    )


def _voltage(rng: random.Random) -> tuple[str, float, str]:
    (i, i_text), (r, r_text) = _num(rng, 1, 500, 2), _num(rng, 10, 5000, 1)
    return (
        f"A current of {i_text} A flows through a {r_text} Ω resistor. What is the voltage across it?",
        i * r,
        "V",
    )


def _current(rng: random.Random) -> tuple[str, float, str]:
    (v, v_text), (r, r_text) = _num(rng, 15, 2400, 1), _num(rng, 10, 2000)
    return f"A {v_text} V source is connected across a {r_text} Ω resistor. What current flows?", v / r, "A"


def _resistance(rng: random.Random) -> tuple[str, float, str]:
    (v, v_text), (i, i_text) = _num(rng, 15, 2400, 1), _num(rng, 5, 300, 2)
    return (
        f"A {v_text} V battery drives {i_text} A through a lamp. What is the lamp's resistance?",
        v / i,
        "Ω",
    )


def _electric_power(rng: random.Random) -> tuple[str, float, str]:
    (v, v_text), (i, i_text) = _num(rng, 15, 2400, 1), _num(rng, 5, 1500, 2)
    device = pick(rng, ("kettle", "motor", "heater", "fan", "pump"))
    return f"A {device} runs on {v_text} V and draws {i_text} A. What power does it use?", v * i, "W"


def _density(rng: random.Random) -> tuple[str, float, str]:
    (m, m_text), (vol, vol_text) = _num(rng, 5, 900, 1), _num(rng, 2, 500, 3)
    return (
        f"A block has a mass of {m_text} kg and a volume of {vol_text} m³. What is its density?",
        m / vol,
        "kg/m³",
    )


def _pressure(rng: random.Random) -> tuple[str, float, str]:
    (f, f_text), (area, area_text) = _num(rng, 50, 9000), _num(rng, 5, 400, 2)
    return (
        f"A force of {f_text} N presses evenly on an area of {area_text} m². What is the pressure?",
        f / area,
        "Pa",
    )


def _gas_pressure(rng: random.Random) -> tuple[str, float, str]:
    (n, n_text), (t, t_text), (vol, vol_text) = (
        _num(rng, 5, 300, 2),
        _num(rng, 250, 500),
        _num(rng, 5, 200, 3),
    )
    return (
        f"{n_text} mol of an ideal gas at {t_text} K fills {vol_text} m³. Using R = 8.314 J/(mol·K), "
        "what is its pressure?",
        n * R * t / vol,
        "Pa",
    )


def _gas_moles(rng: random.Random) -> tuple[str, float, str]:
    (p, p_text), (vol, vol_text), (t, t_text) = (
        _num(rng, 50000, 300000),
        _num(rng, 5, 500, 3),
        _num(rng, 250, 500),
    )
    return (
        f"An ideal gas at {p_text} Pa and {t_text} K occupies {vol_text} m³. Using R = 8.314 J/(mol·K), "
        "how many moles of gas are there?",
        p * vol / (R * t),
        "mol",
    )


def _weight(rng: random.Random) -> tuple[str, float, str]:
    m, m_text = _num(rng, 5, 3000, 1)
    return f"Using g = 9.8 m/s², what is the weight of a {m_text} kg suitcase?", m * G, "N"


def _momentum(rng: random.Random) -> tuple[str, float, str]:
    (m, m_text), (v, v_text) = _num(rng, 1, 3000, 1), _num(rng, 5, 400, 1)
    return f"What is the momentum of a {m_text} kg cart moving at {v_text} m/s?", m * v, "kg·m/s"


def _mechanical_power(rng: random.Random) -> tuple[str, float, str]:
    (w, w_text), (t, t_text) = _num(rng, 100, 90000), _num(rng, 20, 1200, 1)
    machine = pick(rng, ("crane", "winch", "lift motor", "pump"))
    return f"A {machine} does {w_text} J of work in {t_text} s. What is its average power?", w / t, "W"


_LEVEL2: tuple[_Template, ...] = (
    _speed, _distance, _travel_time, _acceleration, _force, _work, _kinetic_energy, _potential_energy,
    _voltage, _current, _resistance, _electric_power, _density, _pressure, _gas_pressure, _gas_moles,
    _weight, _momentum, _mechanical_power,
)  # fmt: skip


# --- level 3: two chained steps ------------------------------------------------------------------


def _speed_km_min(rng: random.Random) -> tuple[str, float, str]:
    (d, d_text), (t, t_text) = _num(rng, 10, 500, 1), _num(rng, 5, 180)
    return (
        f"A train travels {d_text} km in {t_text} minutes. What is its average speed in m/s?",
        d * 1000.0 / (t * 60.0),
        "m/s",
    )


def _speed_to_kmh(rng: random.Random) -> tuple[str, float, str]:
    (d, d_text), (t, t_text) = _num(rng, 100, 10000), _num(rng, 100, 3000, 1)
    name = pick(rng, NAMES)
    return f"{name} skates {d_text} m in {t_text} s. What is the average speed in km/h?", d / t * 3.6, "km/h"


def _force_from_speeds(rng: random.Random) -> tuple[str, float, str]:
    (m, m_text), (v0, v0_text), (t, t_text) = _num(rng, 5, 2000, 1), _num(rng, 0, 15), _num(rng, 10, 120, 1)
    v1, v1_text = _num(rng, int(v0) + 2, int(v0) + 30)
    return (
        f"A {m_text} kg cart speeds up steadily from {v0_text} m/s to {v1_text} m/s in {t_text} s. "
        "What net force acts on it?",
        m * (v1 - v0) / t,
        "N",
    )


def _work_from_acceleration(rng: random.Random) -> tuple[str, float, str]:
    (m, m_text), (a, a_text), (d, d_text) = _num(rng, 5, 900, 1), _num(rng, 5, 60, 1), _num(rng, 5, 300, 1)
    return (
        f"A net force accelerates a {m_text} kg crate at {a_text} m/s² along {d_text} m. "
        "How much work does that force do?",
        m * a * d,
        "J",
    )


def _potential_energy_kj(rng: random.Random) -> tuple[str, float, str]:
    (m, m_text), (h, h_text) = _num(rng, 10, 5000, 1), _num(rng, 5, 900, 1)
    return (
        f"A crane lifts a {m_text} kg load by {h_text} m. Using g = 9.8 m/s², how much potential energy does "
        "the load gain, in kJ?",
        m * G * h / 1000.0,
        "kJ",
    )


def _kinetic_energy_kmh(rng: random.Random) -> tuple[str, float, str]:
    (m, m_text), (v, v_text) = _num(rng, 500, 30000, 1), _num(rng, 10, 130)
    speed = v / 3.6
    return (
        f"A {m_text} kg vehicle drives at {v_text} km/h. What is its kinetic energy in kJ?",
        0.5 * m * speed * speed / 1000.0,
        "kJ",
    )


def _heater_energy(rng: random.Random) -> tuple[str, float, str]:
    (v, v_text), (i, i_text), (t, t_text) = _num(rng, 110, 240), _num(rng, 5, 150, 1), _num(rng, 5, 120, 1)
    return (
        f"A heater runs on {v_text} V, draws {i_text} A and is on for {t_text} hours. "
        "How much energy does it use, in kWh?",
        v * i * t / 1000.0,
        "kWh",
    )


def _resistor_power(rng: random.Random) -> tuple[str, float, str]:
    (i, i_text), (r, r_text) = _num(rng, 5, 500, 2), _num(rng, 5, 2000, 1)
    return (
        f"A current of {i_text} A flows through a {r_text} Ω resistor. How much power does the resistor "
        "dissipate?",
        i * r * i,
        "W",
    )


def _gas_pressure_celsius(rng: random.Random) -> tuple[str, float, str]:
    (n, n_text), (c, c_text), (litres, l_text) = _num(rng, 5, 500, 2), _num(rng, -20, 150), _num(rng, 5, 500)
    return (
        f"{n_text} mol of an ideal gas at {c_text} °C fills a {l_text} L container. "
        "Using R = 8.314 J/(mol·K), what is its pressure in kPa?",
        n * R * (c + 273.15) / (litres / 1000.0) / 1000.0,
        "kPa",
    )


def _gas_moles_litres(rng: random.Random) -> tuple[str, float, str]:
    (p, p_text), (litres, l_text), (c, c_text) = _num(rng, 50, 400), _num(rng, 1, 200), _num(rng, -20, 150)
    return (
        f"An ideal gas at {p_text} kPa and {c_text} °C occupies {l_text} L. Using R = 8.314 J/(mol·K), "
        "how many moles of gas are there?",
        p * 1000.0 * (litres / 1000.0) / (R * (c + 273.15)),
        "mol",
    )


def _density_weight(rng: random.Random) -> tuple[str, float, str]:
    (rho, rho_text), (vol, vol_text) = _num(rng, 200, 11000), _num(rng, 1, 900, 3)
    return (
        f"A solid block has density {rho_text} kg/m³ and volume {vol_text} m³. Using g = 9.8 m/s², "
        "what is its weight?",
        rho * vol * G,
        "N",
    )


def _pressure_of_mass(rng: random.Random) -> tuple[str, float, str]:
    (m, m_text), (area, area_text) = _num(rng, 10, 3000, 1), _num(rng, 20, 5000)
    return (
        f"A {m_text} kg statue rests on a base of area {area_text} cm². Using g = 9.8 m/s², what pressure "
        "does it exert on the floor, in kPa?",
        m * G / (area / 10000.0) / 1000.0,
        "kPa",
    )


def _free_fall_speed(rng: random.Random) -> tuple[str, float, str]:
    h, h_text = _num(rng, 5, 2000, 1)
    return (
        f"A stone is dropped from rest from a height of {h_text} m. Ignoring air resistance and using "
        "g = 9.8 m/s², how fast is it moving when it lands?",
        sqrt(2.0 * G * h),
        "m/s",
    )


def _charge(rng: random.Random) -> tuple[str, float, str]:
    (v, v_text), (r, r_text), (t, t_text) = _num(rng, 15, 240, 1), _num(rng, 10, 2000), _num(rng, 1, 120)
    return (
        f"A {v_text} V source drives a current through a {r_text} Ω resistor for {t_text} minutes. "
        "How much charge flows, in coulombs?",
        v / r * t * 60.0,
        "C",
    )


def _distance_kmh_minutes(rng: random.Random) -> tuple[str, float, str]:
    (v, v_text), (t, t_text) = _num(rng, 20, 300), _num(rng, 5, 240)
    vehicle = pick(rng, ("bus", "truck", "car", "ferry"))
    return (
        f"A {vehicle} travels at {v_text} km/h for {t_text} minutes. How many meters does it cover?",
        v * (1000.0 / 60.0) * t,
        "m",
    )


_LEVEL3: tuple[_Template, ...] = (
    _speed_km_min, _speed_to_kmh, _force_from_speeds, _work_from_acceleration, _potential_energy_kj,
    _kinetic_energy_kmh, _heater_energy, _resistor_power, _gas_pressure_celsius, _gas_moles_litres,
    _density_weight, _pressure_of_mass, _free_fall_speed, _charge, _distance_kmh_minutes,
)  # fmt: skip

TEMPLATES: Mapping[int, tuple[str, ...]] = {
    1: ("conversion",),
    2: tuple(t.__name__.lstrip("_") for t in _LEVEL2),
    3: tuple(t.__name__.lstrip("_") for t in _LEVEL3),
}
"""The name of every template per level, as recorded in ``Problem.data["template"]``."""


def _decimals(rng: random.Random, value: float) -> int:
    """How many decimal places to ask for: enough for two to four significant figures."""
    size = abs(value)
    if size < 0.01:
        return 5
    if size < 0.1:
        return 4
    if size < 1.0:
        return 3
    if size < 10.0:
        return pick(rng, (2, 3))
    if size < 1000.0:
        return pick(rng, (1, 2))
    return pick(rng, (0, 1)) if size < 100000.0 else 0


def _rounding(decimals: int) -> str:
    if decimals == 0:
        return "rounded to the nearest whole number"
    return f"rounded to {decimals} decimal place{'s' if decimals > 1 else ''}"


def read_quantity(answer: str, unit: str) -> float | None:
    """The number in ``answer``, optionally followed by ``unit`` or one of its spellings; else None.

    >>> read_quantity("12.5 m/s", "m/s"), read_quantity("\\\\text{3 km}", "km"), read_quantity("3 km", "m")
    (12.5, 3.0, None)
    """
    value = parse_number(answer)
    if value is not None:
        return value
    compact = "".join(normalize_text(answer).split())
    for suffix in _SUFFIXES.get(unit, ()):
        if compact.endswith(suffix) and len(compact) > len(suffix):
            value = parse_number(compact[: -len(suffix)])
            if value is not None:
                return value
    return None


class ScienceDomain:
    """Unit conversions and formula problems, checked numerically to the requested rounding.

    Attributes:
        name: ``"science"``.
        levels: 3.
        answer_format: ``"boxed"``: the answer goes inside ``\\boxed{...}``.

    ``Problem.data`` holds ``value`` (the exact result), ``decimals`` (the requested rounding),
    ``unit`` and ``template``.

    >>> import random
    >>> problem = DOMAIN.generate(random.Random(1), 2)
    >>> with_unit = f"{problem.answer} {problem.data['unit']}"
    >>> DOMAIN.is_correct(problem, problem.answer), DOMAIN.is_correct(problem, with_unit)
    (True, True)
    """

    name = "science"
    levels = 3
    answer_format = "boxed"

    def generate(self, rng: random.Random, difficulty: int) -> Problem:
        """A problem at ``difficulty`` (1..3), drawn only from ``rng``.

        Raises:
            ValueError: ``difficulty`` is not in 1..3.
        """
        check_difficulty(difficulty, self.levels, self.name)
        template = _conversion if difficulty == 1 else pick(rng, _LEVEL2 if difficulty == 2 else _LEVEL3)
        question, value, unit = template(rng)
        decimals = _decimals(rng, value)
        answer = f"{value:.{decimals}f}"
        if answer.startswith("-") and not answer.strip("-0."):
            answer = answer[1:]  # "-0.00" is just zero
        prompt = f"{question} Give the answer in {unit}, {_rounding(decimals)}."
        data = {"template": template.__name__.lstrip("_"), "value": value, "decimals": decimals, "unit": unit}
        return Problem(self.name, prompt, answer, difficulty, data)

    def is_correct(self, problem: Problem, answer: str) -> bool:
        """Whether ``answer`` is within half a unit of the last requested place of the exact value.

        The number may be followed by the requested unit (``"12.5 m/s"``).
        """
        if not isinstance(answer, str):
            return False
        value = read_quantity(answer, problem.data["unit"])
        if value is None:
            return False
        exact = problem.data["value"]
        # The tiny relative slack absorbs binary rounding of a value that sits exactly on a tie.
        return abs(value - exact) <= _HALF_UNITS[problem.data["decimals"]] + 1e-9 * max(1.0, abs(exact))


DOMAIN = ScienceDomain()
"""The science domain instance the multi-domain env draws from."""
