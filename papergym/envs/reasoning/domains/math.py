"""Math: integer arithmetic, parenthesised expressions and word problems with exact answers.

Level 1 is two-operand integer arithmetic, level 2 mixes multi-step expressions with one- or two-step
word problems, level 3 is multi-step word problems (percentages, fractions, averages, rates). Every
answer is exact: an integer, a terminating decimal, or a reduced fraction ``a/b``; all arithmetic is
done on integers, so the gold string is the same on every machine.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from math import gcd

from papergym.envs.reasoning.answers import exact_number
from papergym.envs.reasoning.domains._common import NAMES, check_difficulty, infix, pick, rand_below, rand_int
from papergym.envs.reasoning.problem import Problem

_Template = Callable[[random.Random], tuple[str, int, int]]
"""A word-problem template: ``rng -> (prompt, numerator, denominator)`` of the exact answer."""

_EXACT = " Give the exact answer (a reduced fraction a/b if it is not a terminating decimal)."

_GOODS = (
    "notebooks", "pens", "apples", "mugs", "candles", "sandwiches", "stickers", "batteries", "lemons",
    "socks", "comic books", "muffins", "plant pots", "tennis balls", "postcards",
)  # fmt: skip
_THINGS = ("marbles", "cards", "stamps", "shells", "coins", "beads", "cookies", "seeds", "buttons", "crayons")
_VEHICLES = ("car", "bus", "train", "truck", "ferry", "van", "motorbike")
_PEOPLE = ("students", "visitors", "players", "campers", "passengers", "guests")
_L1_FORMS = ("What is {}?", "Compute {}.", "Calculate {}.", "Evaluate {}.", "Find the value of {}.")
_L2_FORMS = ("Evaluate {}.", "Compute {}.", "What is the value of {}?", "Calculate {}.")
_GROUPS = (
    ("school", "join a club"),
    ("company", "work remotely"),
    ("town", "own a bike"),
    ("camp", "can swim"),
)
_DIVISORS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
_PRECEDENCE = {"+": 1, "-": 1, "×": 2, "÷": 2}


def format_ratio(numerator: int, denominator: int) -> str:
    """The canonical string of the exact value ``numerator / denominator``.

    An integer, else a terminating decimal without trailing zeros, else the reduced fraction ``a/b``.

    >>> format_ratio(6, 4), format_ratio(-7, 28), format_ratio(10, 12), format_ratio(450, 100)
    ('1.5', '-0.25', '5/6', '4.5')
    """
    if denominator < 0:
        numerator, denominator = -numerator, -denominator
    common = gcd(numerator, denominator)
    numerator, denominator = numerator // common, denominator // common
    if denominator == 1:
        return str(numerator)
    rest, twos, fives = denominator, 0, 0
    while rest % 2 == 0:
        rest, twos = rest // 2, twos + 1
    while rest % 5 == 0:
        rest, fives = rest // 5, fives + 1
    if rest != 1:
        return f"{numerator}/{denominator}"
    places = max(twos, fives)
    whole, fraction = divmod(abs(numerator) * 10**places // denominator, 10**places)
    sign = "-" if numerator < 0 else ""
    return f"{sign}{whole}.{fraction:0{places}d}"


def _money(cents: int) -> str:
    """``$12`` or ``$12.05``: how a price reads in a prompt."""
    dollars, rest = divmod(cents, 100)
    return f"${dollars}" if rest == 0 else f"${dollars}.{rest:02d}"


def _two_names(rng: random.Random) -> tuple[str, str]:
    first = rand_below(rng, len(NAMES))
    second = (first + 1 + rand_below(rng, len(NAMES) - 1)) % len(NAMES)
    return NAMES[first], NAMES[second]


# --- level 1 -------------------------------------------------------------------------------------


def _two_operand(rng: random.Random) -> tuple[str, int]:
    op = rand_below(rng, 4)
    if op == 0:
        a, b = rand_int(rng, -99, 999), rand_int(rng, 2, 999)
        expr, value = f"{a} + {b}", a + b
    elif op == 1:
        a, b = rand_int(rng, 2, 999), rand_int(rng, 2, 999)
        expr, value = f"{a} - {b}", a - b
    elif op == 2:
        a, b = rand_int(rng, 2, 99), rand_int(rng, 2, 99)
        expr, value = f"{a} × {b}", a * b
    else:
        b, value = rand_int(rng, 2, 25), rand_int(rng, 2, 99)
        expr = f"{b * value} ÷ {b}"
    return pick(rng, _L1_FORMS).format(expr), value


# --- level 2 -------------------------------------------------------------------------------------


def _expression(rng: random.Random, leaves: int) -> tuple[str, int, int]:
    """A random expression tree over small integers: ``(text, value, precedence)``.

    Parentheses appear exactly where precedence needs them (and around a right operand of equal
    precedence, which keeps ``a - (b - c)`` explicit). Division is only ever exact.
    """
    if leaves == 1:
        value = rand_int(rng, 1, 15)
        return str(value), value, 3
    split = rand_int(rng, 1, leaves - 1)
    left, left_value, left_prec = _expression(rng, split)
    op = pick(rng, "+-×÷")
    divisors = [d for d in _DIVISORS if left_value % d == 0] if op == "÷" and left_value else []
    if divisors:
        # a divisor of the left value, so the quotient is exact
        divisor = pick(rng, divisors)
        right, right_value, right_prec = str(divisor), divisor, 3
    else:
        op = "-" if op == "÷" else op
        right, right_value, right_prec = _expression(rng, leaves - split)
        if op == "×" and abs(left_value * right_value) > 2000:
            op = "+"  # keeps values small enough to be worked by hand
    prec = _PRECEDENCE[op]
    text = infix(left, left_prec, op, right, right_prec, prec)
    if op == "+":
        value = left_value + right_value
    elif op == "-":
        value = left_value - right_value
    elif op == "×":
        value = left_value * right_value
    else:
        value = left_value // right_value
    return text, value, prec


def _shop_change(rng: random.Random) -> tuple[str, int, int]:
    name, goods = pick(rng, NAMES), pick(rng, _GOODS)
    count, price = rand_int(rng, 2, 9), rand_int(rng, 1, 24) * 25
    total = count * price
    bill = next(b for b in (1000, 2000, 5000, 10000, 20000) if b >= total)
    return (
        f"{name} buys {count} {goods} at {_money(price)} each and pays with a {_money(bill)} bill. "
        f"How much change, in dollars, does {name} get back?",
        bill - total,
        100,
    )


def _shop_total(rng: random.Random) -> tuple[str, int, int]:
    name = pick(rng, NAMES)
    first = rand_below(rng, len(_GOODS))
    second = (first + 1 + rand_below(rng, len(_GOODS) - 1)) % len(_GOODS)
    n1, p1, n2, p2 = (
        rand_int(rng, 2, 8),
        rand_int(rng, 2, 40) * 25,
        rand_int(rng, 2, 8),
        rand_int(rng, 2, 40) * 25,
    )
    return (
        f"{name} buys {n1} {_GOODS[first]} at {_money(p1)} each and {n2} {_GOODS[second]} at "
        f"{_money(p2)} each. How much does {name} spend in total, in dollars?",
        n1 * p1 + n2 * p2,
        100,
    )


def _ages_sum(rng: random.Random) -> tuple[str, int, int]:
    older, younger = _two_names(rng)
    gap, age, later = rand_int(rng, 2, 30), rand_int(rng, 3, 40), rand_int(rng, 2, 15)
    return (
        f"{older} is {gap} years older than {younger}. {younger} is {age} years old. "
        f"What will be the sum of their ages in {later} years?",
        2 * age + gap + 2 * later,
        1,
    )


def _ages_times(rng: random.Random) -> tuple[str, int, int]:
    parent, child = _two_names(rng)
    times, age, later = rand_int(rng, 2, 6), rand_int(rng, 2, 14), rand_int(rng, 2, 20)
    return (
        f"{parent} is {times} times as old as {child}, who is {age}. "
        f"How old will {parent} be in {later} years?",
        times * age + later,
        1,
    )


def _ages_past(rng: random.Random) -> tuple[str, int, int]:
    name = pick(rng, NAMES)
    later, future_age = rand_int(rng, 2, 15), rand_int(rng, 25, 80)
    ago = rand_int(rng, 1, future_age - later - 1)
    return (
        f"In {later} years {name} will be {future_age} years old. How old was {name} {ago} years ago?",
        future_age - later - ago,
        1,
    )


def _travel(rng: random.Random) -> tuple[str, int, int]:
    vehicle = pick(rng, _VEHICLES)
    v1, t1, v2, t2 = (
        rand_int(rng, 3, 24) * 5,
        rand_int(rng, 1, 6),
        rand_int(rng, 3, 24) * 5,
        rand_int(rng, 1, 6),
    )
    return (
        f"A {vehicle} travels at {v1} km per hour for {t1} hours, then at {v2} km per hour for {t2} hours. "
        "How many kilometers does it travel in total?",
        v1 * t1 + v2 * t2,
        1,
    )


def _typing(rng: random.Random) -> tuple[str, int, int]:
    name, rate, minutes = pick(rng, NAMES), rand_int(rng, 20, 90), rand_int(rng, 3, 40)
    return (
        f"{name} types {rate} words per minute. How many minutes does {name} need to type "
        f"{rate * minutes} words?",
        minutes,
        1,
    )


def _share(rng: random.Random) -> tuple[str, int, int]:
    name, things = pick(rng, NAMES), pick(rng, _THINGS)
    each, friends = rand_int(rng, 2, 12), rand_int(rng, 2, 9)
    have = each * friends + rand_int(rng, 1, 60)
    return (
        f"{name} has {have} {things} and gives {each} to each of {friends} friends. "
        f"How many {things} does {name} have left?",
        have - each * friends,
        1,
    )


def _savings(rng: random.Random) -> tuple[str, int, int]:
    name, weekly, weeks = pick(rng, NAMES), rand_int(rng, 3, 60), rand_int(rng, 3, 20)
    spent = rand_int(rng, 1, weekly * weeks - 1)
    return (
        f"{name} saves ${weekly} every week for {weeks} weeks, then spends ${spent} on a gift. "
        "How many dollars are left?",
        weekly * weeks - spent,
        1,
    )


def _buses(rng: random.Random) -> tuple[str, int, int]:
    people, seats = pick(rng, _PEOPLE), rand_int(rng, 12, 60)
    count = rand_int(rng, 2 * seats, 9 * seats)
    return (
        f"There are {count} {people} and each bus holds {seats} of them. "
        f"How many buses are needed to carry all the {people}?",
        -(-count // seats),
        1,
    )


def _recipe(rng: random.Random) -> tuple[str, int, int]:
    cups, batch, scale = rand_int(rng, 2, 9), rand_int(rng, 6, 30), rand_int(rng, 2, 8)
    dish = pick(rng, ("cookies", "pancakes", "muffins", "rolls", "waffles"))
    return (
        f"A recipe uses {cups} cups of flour to make {batch} {dish}. "
        f"How many cups of flour are needed for {batch * scale} {dish}?",
        cups * scale,
        1,
    )


def _temperature(rng: random.Random) -> tuple[str, int, int]:
    start, rise, hours, drop = (
        rand_int(rng, -15, 20),
        rand_int(rng, 1, 6),
        rand_int(rng, 2, 9),
        rand_int(rng, 1, 25),
    )
    return (
        f"At dawn the temperature was {start} degrees. It rose {rise} degrees every hour for {hours} hours, "
        f"then fell {drop} degrees. What was the temperature then, in degrees?",
        start + rise * hours - drop,
        1,
    )


def _reading(rng: random.Random) -> tuple[str, int, int]:
    name, per_day, days = pick(rng, NAMES), rand_int(rng, 5, 40), rand_int(rng, 2, 12)
    pages = per_day * days + rand_int(rng, 1, 300)
    return (
        f"{name}'s book has {pages} pages. {name} reads {per_day} pages a day for {days} days. "
        "How many pages are left to read?",
        pages - per_day * days,
        1,
    )


def _unit_price(rng: random.Random) -> tuple[str, int, int]:
    goods, unit = pick(rng, _GOODS), rand_int(rng, 2, 80) * 5
    count, wanted = rand_int(rng, 2, 9), rand_int(rng, 2, 15)
    return (
        f"{count} {goods} cost {_money(unit * count)}. At the same price each, how much do {wanted} "
        f"{goods} cost, in dollars?",
        unit * wanted,
        100,
    )


def _fence(rng: random.Random) -> tuple[str, int, int]:
    length, width, cost = rand_int(rng, 4, 40), rand_int(rng, 3, 30), rand_int(rng, 2, 25)
    place = pick(rng, ("garden", "yard", "paddock", "playground", "orchard"))
    return (
        f"A rectangular {place} is {length} m long and {width} m wide. Fencing costs ${cost} per meter. "
        f"How many dollars does it cost to fence the whole {place}?",
        2 * (length + width) * cost,
        1,
    )


_LEVEL2: tuple[_Template, ...] = (
    _shop_change, _shop_total, _ages_sum, _ages_times, _ages_past, _travel, _typing, _share, _savings,
    _buses, _recipe, _temperature, _reading, _unit_price, _fence,
)  # fmt: skip


# --- level 3 -------------------------------------------------------------------------------------


def _discount_tax(rng: random.Random) -> tuple[str, int, int]:
    goods = pick(rng, ("jacket", "bicycle", "lamp", "backpack", "guitar", "tent", "printer"))
    price, discount, tax = rand_int(rng, 5, 100) * 4, rand_int(rng, 1, 10) * 5, rand_int(rng, 1, 4) * 5
    # price is a multiple of 4 and both rates multiples of 5, so the final price is whole cents.
    return (
        f"A {goods} costs ${price}. It is discounted by {discount}%, and then a {tax}% sales tax is added "
        "to the discounted price. What is the final price, in dollars?",
        price * (100 - discount) * (100 + tax) // 100,
        100,
    )


def _original_price(rng: random.Random) -> tuple[str, int, int]:
    goods = pick(rng, ("coat", "camera", "desk", "scooter", "watch", "kettle", "sofa"))
    original, discount = rand_int(rng, 8, 300), rand_int(rng, 1, 15) * 5
    return (
        f"After a {discount}% discount, a {goods} costs {_money(original * (100 - discount))}. "
        "What was its original price, in dollars?",
        original,
        1,
    )


def _percent_of_percent(rng: random.Random) -> tuple[str, int, int]:
    size, i, j = rand_int(rng, 1, 6), rand_int(rng, 2, 18), rand_int(rng, 2, 18)
    group, club = pick(rng, _GROUPS)
    return (
        f"A {group} has {400 * size} members. {5 * i}% of them {club}, and {5 * j}% of those also volunteer. "
        "How many members volunteer?",
        size * i * j,
        1,
    )


def _fraction_left(rng: random.Random) -> tuple[str, int, int]:
    name, things = pick(rng, NAMES), pick(rng, _THINGS)
    q1, q2 = rand_int(rng, 2, 6), rand_int(rng, 2, 6)
    p1, p2, units = rand_int(rng, 1, q1 - 1), rand_int(rng, 1, q2 - 1), rand_int(rng, 1, 6)
    total = q1 * q2 * units
    return (
        f"{name} had {total} {things}. {name} gave away {p1}/{q1} of them and then lost {p2}/{q2} of the "
        f"rest. How many {things} does {name} have now?",
        total * (q1 - p1) * (q2 - p2) // (q1 * q2),
        1,
    )


def _fraction_sum(rng: random.Random) -> tuple[str, int, int]:
    name = pick(rng, NAMES)
    b, d = rand_int(rng, 2, 12), rand_int(rng, 2, 12)
    a, c = rand_int(rng, 1, 2 * b), rand_int(rng, 1, 2 * d)
    while gcd(a, b) != 1:  # show each fraction in lowest terms (a+1 is coprime to b within a few steps)
        a += 1
    while gcd(c, d) != 1:
        c += 1
    return (
        f"{name} walked {a}/{b} km in the morning and {c}/{d} km in the evening. "
        "How many kilometers did " + name + " walk in total?" + _EXACT,
        a * d + c * b,
        b * d,
    )


def _average_needed(rng: random.Random) -> tuple[str, int, int]:
    name, tests = pick(rng, NAMES), rand_int(rng, 3, 5)
    scores = [rand_int(rng, 55, 100) for _ in range(tests)]
    needed = rand_int(rng, 60, 100)
    needed -= (sum(scores) + needed) % (tests + 1)  # makes the target average a whole number
    average = (sum(scores) + needed) // (tests + 1)
    return (
        f"{name} scored {', '.join(map(str, scores))} on {tests} tests. What score does {name} need on the "
        f"next test to have an average of exactly {average} over all {tests + 1} tests?",
        needed,
        1,
    )


def _class_average(rng: random.Random) -> tuple[str, int, int]:
    n1, a1, n2, a2 = (
        rand_int(rng, 10, 35),
        rand_int(rng, 55, 95),
        rand_int(rng, 10, 35),
        rand_int(rng, 55, 95),
    )
    return (
        f"One class of {n1} students averaged {a1} points on a test and another class of {n2} students "
        "averaged " + str(a2) + " points. What is the average over all the students?" + _EXACT,
        n1 * a1 + n2 * a2,
        n1 + n2,
    )


def _work_together(rng: random.Random) -> tuple[str, int, int]:
    first, second = _two_names(rng)
    a, b = rand_int(rng, 2, 15), rand_int(rng, 2, 15)
    job = pick(rng, ("paint a fence", "clean the house", "mow the lawn", "sort the mail", "wash the car"))
    return (
        f"{first} can {job} alone in {a} hours and {second} can do it alone in {b} hours. Working "
        "together at these rates, how many hours do they take?" + _EXACT,
        a * b,
        a + b,
    )


def _fill_drain(rng: random.Random) -> tuple[str, int, int]:
    fill = rand_int(rng, 2, 12)
    drain = fill + rand_int(rng, 1, 12)
    tank = pick(rng, ("tank", "pool", "cistern", "reservoir"))
    return (
        f"A pipe fills a {tank} in {fill} hours and a drain empties it in {drain} hours. If both are open, "
        f"how many hours does it take to fill the empty {tank}?" + _EXACT,
        fill * drain,
        drain - fill,
    )


def _trip_average_speed(rng: random.Random) -> tuple[str, int, int]:
    vehicle = pick(rng, _VEHICLES)
    v1, t1, v2, t2 = (
        rand_int(rng, 4, 24) * 5,
        rand_int(rng, 1, 5),
        rand_int(rng, 4, 24) * 5,
        rand_int(rng, 1, 5),
    )
    return (
        f"A {vehicle} covers {v1 * t1} km at {v1} km/h and then {v2 * t2} km at {v2} km/h. What is its "
        "average speed over the whole trip, in km/h?" + _EXACT,
        v1 * t1 + v2 * t2,
        t1 + t2,
    )


def _trains_meet(rng: random.Random) -> tuple[str, int, int]:
    v1, v2 = rand_int(rng, 6, 30) * 5, rand_int(rng, 6, 30) * 5
    distance = rand_int(rng, 2, 12) * 50
    return (
        f"Two trains start {distance} km apart and travel toward each other at {v1} km/h and {v2} km/h. "
        "After how many minutes do they meet?" + _EXACT,
        60 * distance,
        v1 + v2,
    )


def _simple_interest(rng: random.Random) -> tuple[str, int, int]:
    name, principal = pick(rng, NAMES), rand_int(rng, 2, 100) * 50
    half_percents, years = rand_int(rng, 2, 16), rand_int(rng, 2, 10)  # the rate in steps of 0.5%
    rate_text = f"{half_percents // 2}" + (".5" if half_percents % 2 else "")
    return (
        f"{name} deposits ${principal} at {rate_text}% simple interest per year. How many dollars are in the "
        f"account after {years} years?",
        principal * (200 + half_percents * years),
        200,
    )


def _mixture(rng: random.Random) -> tuple[str, int, int]:
    x, y, a, b = (
        rand_int(rng, 2, 12),
        rand_int(rng, 2, 12),
        rand_int(rng, 1, 19) * 5,
        rand_int(rng, 1, 19) * 5,
    )
    solute = pick(rng, ("salt", "sugar", "alcohol", "acid"))
    return (
        f"{x} liters of a {a}% {solute} solution are mixed with {y} liters of a {b}% {solute} solution. "
        f"What percent of the mixture is {solute}?" + _EXACT,
        x * a + y * b,
        x + y,
    )


def _ratio_split(rng: random.Random) -> tuple[str, int, int]:
    first, second = _two_names(rng)
    p, q, r, k = rand_int(rng, 1, 7), rand_int(rng, 1, 7), rand_int(rng, 2, 5), rand_int(rng, 1, 20)
    return (
        f"{first} and {second} share ${(p + q) * r * k} in the ratio {p}:{q}. {first} then spends 1/{r} "
        f"of that share. How many dollars does {first} have left?",
        p * k * (r - 1),
        1,
    )


def _profit(rng: random.Random) -> tuple[str, int, int]:
    name, goods = pick(rng, NAMES), pick(rng, _GOODS)
    count, cost, price = rand_int(rng, 10, 60), rand_int(rng, 2, 40) * 25, rand_int(rng, 4, 60) * 50
    sold = rand_int(rng, 1, count - 1)
    return (
        f"{name} buys {count} {goods} at {_money(cost)} each, sells {sold} of them at {_money(price)} each "
        "and the rest at half that price. What is the profit in dollars (negative for a loss)?",
        sold * price + (count - sold) * price // 2 - count * cost,
        100,
    )


def _speed_scale(rng: random.Random) -> tuple[str, int, int]:
    name, km, minutes, hours = (
        pick(rng, NAMES),
        rand_int(rng, 2, 30),
        rand_int(rng, 10, 90),
        rand_int(rng, 2, 5),
    )
    mode = pick(rng, ("cycles", "runs", "rows", "skates", "walks"))
    return (
        f"{name} {mode} {km} km in {minutes} minutes. At the same speed, how many kilometers does {name} "
        f"cover in {hours} hours?" + _EXACT,
        km * 60 * hours,
        minutes,
    )


_LEVEL3: tuple[_Template, ...] = (
    _discount_tax, _original_price, _percent_of_percent, _fraction_left, _fraction_sum, _average_needed,
    _class_average, _work_together, _fill_drain, _trip_average_speed, _trains_meet, _simple_interest,
    _mixture, _ratio_split, _profit, _speed_scale,
)  # fmt: skip


TEMPLATES: Mapping[int, tuple[str, ...]] = {
    1: ("two_operand",),
    2: ("expression", *(t.__name__.lstrip("_") for t in _LEVEL2)),
    3: tuple(t.__name__.lstrip("_") for t in _LEVEL3),
}
"""The name of every template per level, as recorded in ``Problem.data["template"]``."""


class MathDomain:
    """Arithmetic and word problems with exact numeric answers, checked by numeric equality.

    Attributes:
        name: ``"math"``.
        levels: 3.
        answer_format: ``"boxed"``: the answer goes inside ``\\boxed{...}``.

    >>> import random
    >>> problem = DOMAIN.generate(random.Random(0), 1)
    >>> DOMAIN.is_correct(problem, problem.answer), DOMAIN.is_correct(problem, "not a number")
    (True, False)
    """

    name = "math"
    levels = 3
    answer_format = "boxed"

    def generate(self, rng: random.Random, difficulty: int) -> Problem:
        """A problem at ``difficulty`` (1..3), drawn only from ``rng``.

        Raises:
            ValueError: ``difficulty`` is not in 1..3.
        """
        check_difficulty(difficulty, self.levels, self.name)
        if difficulty == 1:
            prompt, value = _two_operand(rng)
            return Problem(self.name, prompt, str(value), 1, {"template": "two_operand"})
        if difficulty == 2:
            index = rand_below(rng, len(_LEVEL2) + 10)  # about 40% bare expressions
            if index >= len(_LEVEL2):
                text, value, _ = _expression(rng, rand_int(rng, 3, 4))
                prompt = pick(rng, _L2_FORMS).format(text)
                return Problem(self.name, prompt, str(value), 2, {"template": "expression"})
            template = _LEVEL2[index]
        else:
            template = pick(rng, _LEVEL3)
        prompt, numerator, denominator = template(rng)
        answer = format_ratio(numerator, denominator)
        return Problem(self.name, prompt, answer, difficulty, {"template": template.__name__.lstrip("_")})

    def is_correct(self, problem: Problem, answer: str) -> bool:
        """Whether ``answer`` is exactly the gold number (fractions, decimals, ``$`` and ``%`` allowed).

        The comparison is exact (rationals, no tolerance): every prompt asks for the exact value, so a
        non-terminating fraction rounded to any number of decimals is wrong, and a text holding more than
        one number (a list, "X or Y") is not a number at all.
        """
        if not isinstance(answer, str):
            return False
        text = answer.strip().replace("\\$", "").replace("\\%", "").rstrip("%")
        value, gold = exact_number(text), exact_number(problem.answer)
        return value is not None and value == gold


DOMAIN = MathDomain()
"""The math domain instance the multi-domain env draws from."""
