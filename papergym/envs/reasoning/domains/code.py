"""Code: predict what a short generated Python program prints.

Each program is assembled from parts that carry both their source text and their meaning: while a
generator writes a line, it also computes that line's effect with ordinary Python operations on its
own values (ints, strings, lists), so the expected output is known by construction. Nothing is ever
``exec``'d or ``eval``'d; the tests cross-check the generators against the real interpreter.

Level 1 is straight-line integer arithmetic, level 2 a loop with an accumulator and an ``if``, level 3
nested loops, list and string operations, ``//`` and ``%`` (negative operands included) and a
function definition with calls.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable, Iterable, Mapping

from papergym.envs.reasoning.domains._common import (
    check_difficulty,
    infix,
    pick,
    pick_distinct,
    rand_below,
    rand_int,
)
from papergym.envs.reasoning.problem import Problem

_Generated = tuple[list[str], list[str]]
"""A generator's result: the program's lines and the lines it prints."""

_VARS = (
    "a", "b", "c", "d", "x", "y", "z", "m", "p", "q", "w", "h", "total", "count", "score", "size",
    "width", "height", "speed", "cost", "base", "step", "left", "right", "value", "delta",
)  # fmt: skip
_ACCS = ("total", "acc", "result", "s", "score", "answer", "tally", "out")
_LOOP_VARS = ("i", "j", "k", "n", "v", "t", "idx", "num")
_FUNCS = ("f", "calc", "compute", "tally_up", "mix", "walk", "fold", "spin", "crunch", "combine", "g")
_LISTS = ("items", "nums", "vals", "picked", "bag", "seen", "keep", "store")
_WORDS = (
    "python", "banana", "orbit", "keyboard", "lantern", "puzzle", "garden", "window", "rocket", "meadow",
    "silver", "thunder", "island", "pencil", "candle", "marble", "violet", "falcon", "harbor", "quantum",
    "sky", "ant", "moon", "tree", "river", "cloud", "apple", "zebra", "ocean", "paper", "stone", "maple",
)  # fmt: skip
_VOWELS = "aeiou"
_PROMPTS = (
    "What does this Python program print?",
    "Predict the exact output of the following Python program.",
    "Run this Python program in your head. What is its output?",
    "What is printed when this Python 3 program runs?",
)

_OPS: Mapping[str, tuple[int, Callable[[int, int], int]]] = {
    "+": (1, operator.add),
    "-": (1, operator.sub),
    "*": (2, operator.mul),
    "//": (2, operator.floordiv),
    "%": (2, operator.mod),
}
"""Python's binary integer operators: precedence (higher binds tighter) and meaning."""
_OP_NAMES = tuple(_OPS)

# One-variable terms: (source with {v} for the variable and {c} for a literal, meaning).
_TERMS: tuple[tuple[str, Callable[[int, int], int]], ...] = (
    ("{v}", lambda v, c: v),
    ("{v} * {c}", lambda v, c: v * c),
    ("{v} + {c}", lambda v, c: v + c),
    ("{v} // {c}", lambda v, c: v // c),
    ("{v} % {c}", lambda v, c: v % c),
    ("{c} - {v}", lambda v, c: c - v),
    ("{v} * {v}", lambda v, c: v * v),
    ("({v} - {c}) // 2", lambda v, c: (v - c) // 2),
)
# Two-variable terms for nested loops: (source with {i}, {j} and {c}, meaning).
_PAIR_TERMS: tuple[tuple[str, Callable[[int, int, int], int]], ...] = (
    ("{i} * {j}", lambda i, j, c: i * j),
    ("{i} * {j} % {c}", lambda i, j, c: i * j % c),
    ("{i} + {j}", lambda i, j, c: i + j),
    ("{i} - {j}", lambda i, j, c: i - j),
    ("({i} + {j}) // {c}", lambda i, j, c: (i + j) // c),
    ("{i} * {c} - {j}", lambda i, j, c: i * c - j),
    ("({i} - {j}) % {c}", lambda i, j, c: (i - j) % c),
    ("({j} - {i}) // {c}", lambda i, j, c: (j - i) // c),
)
# Conditions on an int: (source with {v}, {k} and {r}, meaning).
_CONDITIONS: tuple[tuple[str, Callable[[int, int, int], bool]], ...] = (
    ("{v} % {k} == {r}", lambda v, k, r: v % k == r),
    ("{v} % {k} != {r}", lambda v, k, r: v % k != r),
    ("{v} > {r}", lambda v, k, r: v > r),
    ("{v} < {r}", lambda v, k, r: v < r),
    ("{v} >= {r}", lambda v, k, r: v >= r),
    ("{v} <= {r}", lambda v, k, r: v <= r),
)
_AUGMENTS: tuple[tuple[str, Callable[[int, int], int]], ...] = (("+=", operator.add), ("-=", operator.sub))


def _show(values: Iterable[object]) -> str:
    """What ``print(*values)`` writes (without the newline): ``str`` of each, space separated."""
    return " ".join(map(str, values))


def _condition(rng: random.Random, var: str, low: int, high: int) -> tuple[str, Callable[[int], bool]]:
    """A condition on ``var``, whose values run over ``low..high``: its source and its meaning."""
    source, meaning = pick(rng, _CONDITIONS)
    if "{k}" in source:
        k = rand_int(rng, 2, 5)
        r = rand_int(rng, 0, k - 1)
    else:
        k, r = 0, rand_int(rng, low, high)
    return source.format(v=var, k=k, r=r), lambda v: meaning(v, k, r)


def _term(rng: random.Random, var: str) -> tuple[str, Callable[[int], int]]:
    """A term in ``var``: its source and its meaning."""
    source, meaning = pick(rng, _TERMS)
    c = rand_int(rng, 2, 7)
    return source.format(v=var, c=c), lambda v: meaning(v, c)


def _range(rng: random.Random) -> tuple[str, range]:
    """The arguments of a short ``range(...)`` (possibly starting below zero) and the range itself."""
    start, step = pick(rng, (0, 0, 1, 2, -3, -5, rand_int(rng, -6, 6))), pick(rng, (1, 1, 1, 2, 3))
    stop = start + rand_int(rng, 3, 10) * step
    if step != 1:
        return f"{start}, {stop}, {step}", range(start, stop, step)
    return (f"{stop}" if start == 0 else f"{start}, {stop}"), range(start, stop)


# --- level 1 -------------------------------------------------------------------------------------


def _operand(rng: random.Random, env: list[tuple[str, int]], op: str) -> tuple[str, int]:
    """A right operand for ``op``: a known variable or a literal; never zero after ``//`` or ``%``."""
    if rng.random() < 0.5:
        name, value = pick(rng, env)
        if value != 0 or op not in ("//", "%"):
            return name, value
    value = rand_int(rng, 2, 9) if op in ("*", "//", "%") else rand_int(rng, 1, 40)
    return str(value), value


def _straight_line(rng: random.Random) -> _Generated:
    names = pick_distinct(rng, _VARS, 4)
    env: list[tuple[str, int]] = []
    lines: list[str] = []
    for index, name in enumerate(names[: rand_int(rng, 3, 4)]):
        if index < 2:
            value = rand_int(rng, -12, 30) if index == 0 else rand_int(rng, 2, 15)
            text = str(value)
        else:
            left, left_value = pick(rng, env)
            op = pick(rng, _OP_NAMES)
            right, right_value = _operand(rng, env, op)
            prec, meaning = _OPS[op]
            text, value = infix(left, 3, op, right, 3, prec), meaning(left_value, right_value)
            if rng.random() < 0.5:  # a second operator, so precedence matters
                op2 = pick(rng, _OP_NAMES)
                right2, right2_value = _operand(rng, env, op2)
                prec2, meaning2 = _OPS[op2]
                text, value = infix(text, prec, op2, right2, 3, prec2), meaning2(value, right2_value)
        lines.append(f"{name} = {text}")
        env.append((name, value))
    if rng.random() < 0.5:  # rebinding a variable tests reading order
        index = rand_below(rng, len(env))
        name, old = env[index]
        aug, meaning = pick(rng, _AUGMENTS)
        amount = rand_int(rng, 1, 9)
        lines.append(f"{name} {aug} {amount}")
        env[index] = (name, meaning(old, amount))
    (first, first_value), (last, last_value) = env[0], env[-1]
    form = rand_below(rng, 3)
    if form == 0:
        lines.append(f"print({last})")
        output = [str(last_value)]
    elif form == 1:
        lines.append(f"print({first}, {last})")
        output = [_show((first_value, last_value))]
    else:
        op = pick(rng, ("+", "-", "*"))
        lines.append(f"print({last} {op} {first})")
        output = [str(_OPS[op][1](last_value, first_value))]
    return lines, output


# --- level 2 -------------------------------------------------------------------------------------


def _for_accumulate(rng: random.Random) -> _Generated:
    var = pick(rng, _LOOP_VARS)
    accs = pick_distinct(rng, _ACCS, rand_int(rng, 1, 2))
    inits = [pick(rng, (0, 0, 1, rand_int(rng, -5, 10))) for _ in accs]
    range_args, values = _range(rng)
    cond, test = _condition(rng, var, min(values), max(values))
    then_aug, then_op = pick(rng, _AUGMENTS)
    then_term, then_value = _term(rng, var)
    has_else = len(accs) == 2 or rng.random() < 0.6
    else_aug, else_op = pick(rng, _AUGMENTS)
    else_term, else_value = _term(rng, var)
    lines = [f"{acc} = {init}" for acc, init in zip(accs, inits, strict=True)]
    lines += [
        f"for {var} in range({range_args}):",
        f"    if {cond}:",
        f"        {accs[0]} {then_aug} {then_term}",
    ]
    if has_else:
        lines += ["    else:", f"        {accs[-1]} {else_aug} {else_term}"]
    totals = list(inits)
    for v in values:
        if test(v):
            totals[0] = then_op(totals[0], then_value(v))
        elif has_else:
            totals[-1] = else_op(totals[-1], else_value(v))
    lines.append(f"print({', '.join(accs)})")
    return lines, [_show(totals)]


def _while_reduce(rng: random.Random) -> _Generated:
    var, counter = pick(rng, _LOOP_VARS), pick(rng, ("steps", "count", "moves", "rounds"))
    start, bound, k, s = rand_int(rng, 20, 120), rand_int(rng, 0, 9), rand_int(rng, 2, 5), rand_int(rng, 1, 7)
    lines = [
        f"{var} = {start}",
        f"{counter} = 0",
        f"while {var} > {bound}:",
        f"    if {var} % {k} == 0:",
        f"        {var} = {var} // {k}",
        "    else:",
        f"        {var} -= {s}",
        f"    {counter} += 1",
        f"print({counter}, {var})",
    ]
    n, steps = start, 0
    while n > bound:  # terminates: n > bound >= 0 shrinks every pass
        n = n // k if n % k == 0 else n - s
        steps += 1
    return lines, [_show((steps, n))]


def _while_accumulate(rng: random.Random) -> _Generated:
    var, acc = pick(rng, _LOOP_VARS), pick(rng, _ACCS)
    start, step, limit = rand_int(rng, 1, 6), rand_int(rng, 1, 4), rand_int(rng, 15, 80)
    cond, test = _condition(rng, var, start, start + 4 * step)
    c, bump = rand_int(rng, 2, 5), rand_int(rng, 1, 3)
    lines = [
        f"{acc} = 0",
        f"{var} = {start}",
        f"while {acc} < {limit}:",
        f"    if {cond}:",
        f"        {acc} += {var} * {c}",
        "    else:",
        f"        {acc} += {bump}",
        f"    {var} += {step}",
        f"print({var}, {acc})",
    ]
    total, v = 0, start
    while total < limit:  # terminates: total grows by at least 1 per pass
        total += v * c if test(v) else bump
        v += step
    return lines, [_show((v, total))]


# Updates of a running value x by a loop index i: (source with {x}, {i}, {m}, {q}, meaning).
_UPDATES: tuple[tuple[str, Callable[[int, int, int, int], int]], ...] = (
    ("({x} * {m} + {i}) % {q}", lambda x, i, m, q: (x * m + i) % q),
    ("{x} + {i} * {m} - {q}", lambda x, i, m, q: x + i * m - q),
    ("({x} + {m}) % {q} - {i}", lambda x, i, m, q: (x + m) % q - i),
    ("{x} * {m} // {q} + {i}", lambda x, i, m, q: x * m // q + i),
)


def _for_print(rng: random.Random) -> _Generated:
    x, i = pick(rng, ("x", "y", "z", "cur", "state", "val")), pick(rng, _LOOP_VARS)
    x0, count, m, q = rand_int(rng, -5, 9), rand_int(rng, 3, 7), rand_int(rng, 2, 7), rand_int(rng, 3, 11)
    source, meaning = pick(rng, _UPDATES)
    cond, test = _condition(rng, x, -3, 8)
    lines = [
        f"{x} = {x0}",
        f"for {i} in range({count}):",
        f"    {x} = {source.format(x=x, i=i, m=m, q=q)}",
        f"    if {cond}:",
        f"        print({i}, {x})",
        f'print("end", {x})',
    ]
    output, value = [], x0
    for index in range(count):
        value = meaning(value, index, m, q)
        if test(value):
            output.append(_show((index, value)))
    output.append(_show(("end", value)))
    return lines, output


# --- level 3 -------------------------------------------------------------------------------------

# Inner loops of a nested pair: (range arguments with {i} and {p} or {c}, meaning).
_INNER: tuple[tuple[str, Callable[[int, int, int], range]], ...] = (
    ("{i}", lambda i, n, c: range(i)),
    ("{c}", lambda i, n, c: range(c)),
    ("{i}, {p}", lambda i, n, c: range(i, n)),
    ("{i} + 1", lambda i, n, c: range(i + 1)),
)


def _function_nested(rng: random.Random) -> _Generated:
    func, acc = pick(rng, _FUNCS), pick(rng, _ACCS)
    param = pick(rng, ("n", "size", "limit", "m"))
    i, j = pick_distinct(rng, ("i", "j", "k", "r", "u"), 2)
    from_one = rng.random() < 0.5
    inner_source, inner = pick(rng, _INNER)
    term_source, term = pick(rng, _PAIR_TERMS)
    c, init = rand_int(rng, 2, 5), pick(rng, (0, 0, 1, 10))
    guarded = rng.random() < 0.5
    outer = f"1, {param} + 1" if from_one else param
    body = f"{acc} += {term_source.format(i=i, j=j, c=c)}"
    lines = [
        f"def {func}({param}):",
        f"    {acc} = {init}",
        f"    for {i} in range({outer}):",
        f"        for {j} in range({inner_source.format(i=i, p=param, c=c)}):",
    ]
    lines += (
        [f"            if {i} != {j}:", f"                {body}"] if guarded else [f"            {body}"]
    )
    lines += [f"    return {acc}", ""]

    def call(n: int) -> int:
        total = init
        for a in range(1, n + 1) if from_one else range(n):
            for b in inner(a, n, c):
                if not guarded or a != b:
                    total += term(a, b, c)
        return total

    x, y, d = rand_int(rng, 2, 7), rand_int(rng, 2, 7), rand_int(rng, 2, 9)
    op = pick(rng, ("//", "%"))
    lines += [f"print({func}({x}))", f"print({func}({y}) {op} {d}, {func}({x}) - {func}({y}))"]
    fx, fy = call(x), call(y)
    return lines, [str(fx), _show((_OPS[op][1](fy, d), fx - fy))]


def _list_build(rng: random.Random) -> _Generated:
    lst, var = pick(rng, _LISTS), pick(rng, _LOOP_VARS)
    range_args, values = _range(rng)
    cond, test = _condition(rng, var, min(values), max(values))
    term_source, term = _term(rng, var)
    lines = [
        f"{lst} = []",
        f"for {var} in range({range_args}):",
        f"    if {cond}:",
        f"        {lst}.append({term_source})",
    ]
    items = [term(v) for v in values if test(v)]
    lines += [f"print({lst})", f"print(sum({lst}), len({lst}))"]
    output = [str(items), _show((sum(items), len(items)))]
    tail = rand_below(rng, 3)
    if tail == 0:
        start = rand_int(rng, 0, 3)
        stop = start + rand_int(rng, 1, 3)
        lines.append(f"print({lst}[{start}:{stop}])")
        output.append(str(items[start:stop]))
    elif tail == 1:
        lines.append(f"print(list(reversed({lst})))")
        output.append(str(list(reversed(items))))
    else:
        lines.append(f"print({lst}[::-1][:2])")
        output.append(str(items[::-1][:2]))
    return lines, output


# Character sources, conditions and actions of the string walk: (source, meaning).
_SOURCES: tuple[tuple[str, Callable[[str], Iterable[str]]], ...] = (
    ("{w}", lambda w: w),
    ("reversed({w})", reversed),
    ("{w}[::-1]", lambda w: w[::-1]),
    ("{w}[1:]", lambda w: w[1:]),
    ("{w}[::2]", lambda w: w[::2]),
)
_CHAR_TESTS: tuple[tuple[str, Callable[[str, str], bool]], ...] = (
    ('{ch} in "aeiou"', lambda ch, x: ch in _VOWELS),
    ('{ch} < "{x}"', lambda ch, x: ch < x),
    ('{ch} == "{x}"', lambda ch, x: ch == x),
    ('{ch} not in "{x}"', lambda ch, x: ch not in x),
)
_CHAR_ACTIONS: tuple[tuple[str, Callable[[str, str], str]], ...] = (
    ("{o} += {ch}.upper()", lambda o, ch: o + ch.upper()),
    ("{o} = {ch} + {o}", lambda o, ch: ch + o),
    ("{o} += {ch} * 2", lambda o, ch: o + ch * 2),
    ("{o} += {ch}", lambda o, ch: o + ch),
    ('{o} += "-"', lambda o, ch: o + "-"),
)


def _string_walk(rng: random.Random) -> _Generated:
    word = pick(rng, _WORDS)
    w, out, ch = pick(rng, ("word", "text", "s", "name")), pick(rng, ("out", "res", "built")), "ch"
    source, chars = pick(rng, _SOURCES)
    test_source, test = pick(rng, _CHAR_TESTS)
    x = pick(rng, word) if "==" in test_source else pick(rng, "dfhkmprt") + pick(rng, _VOWELS)
    x = x[0] if "<" in test_source else x
    then_index = rand_below(rng, len(_CHAR_ACTIONS))
    else_index = (then_index + 1 + rand_below(rng, len(_CHAR_ACTIONS) - 1)) % len(_CHAR_ACTIONS)
    (then_source, then_do), (else_source, else_do) = _CHAR_ACTIONS[then_index], _CHAR_ACTIONS[else_index]
    lines = [
        f'{w} = "{word}"',
        f'{out} = ""',
        f"for {ch} in {source.format(w=w)}:",
        f"    if {test_source.format(ch=ch, x=x)}:",
        f"        {then_source.format(o=out, ch=ch)}",
        "    else:",
        f"        {else_source.format(o=out, ch=ch)}",
        f"print({out})",
    ]
    built = ""
    for letter in chars(word):
        built = then_do(built, letter) if test(letter, x) else else_do(built, letter)
    start = rand_int(rng, 0, max(0, len(built) - 2))
    stop = start + rand_int(rng, 1, 4)
    lines.append(f"print(len({out}), {out}[{start}:{stop}].upper())")
    return lines, [built, _show((len(built), built[start:stop].upper()))]


def _word_join(rng: random.Random) -> _Generated:
    words = pick_distinct(rng, _WORDS, rand_int(rng, 3, 5))
    ws, parts, w = pick(rng, ("words", "names", "tokens")), pick(rng, ("parts", "pieces", "chunks")), "w"
    cmp, size, cut = pick(rng, ("<", ">", "<=", ">=")), rand_int(rng, 4, 6), rand_int(rng, 1, 3)
    shorten = rand_below(rng, 3)
    sep = pick(rng, ("-", " ", "", "+", ", "))
    shortened = (f"{w}[:{cut}]", f"{w}[-{cut}:]", f"{w}[::-1]")[shorten]
    lines = [
        f"{ws} = [{', '.join(repr(word) for word in words)}]",
        f"{parts} = []",
        f"for {w} in {ws}:",
        f"    if len({w}) {cmp} {size}:",
        f"        {parts}.append({w}.upper())",
        "    else:",
        f"        {parts}.append({shortened})",
        f'print("{sep}".join({parts}))',
        f'print(len({parts}), len("".join({parts})), {parts}[-1])',
    ]
    compare = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge}[cmp]
    pieces = [
        word.upper() if compare(len(word), size) else (word[:cut], word[-cut:], word[::-1])[shorten]
        for word in words
    ]
    joined = "".join(pieces)
    return lines, [sep.join(pieces), _show((len(pieces), len(joined), pieces[-1]))]


# Digit-by-digit folds: (update source with {a}, {n}, {b}; initial value; meaning).
_FOLDS: tuple[tuple[str, int, Callable[[int, int, int], int]], ...] = (
    ("{a} + {n} % {b}", 0, lambda a, n, b: a + n % b),
    ("{a} * {b} + {n} % {b}", 0, lambda a, n, b: a * b + n % b),
    ("{a} + 1", 0, lambda a, n, b: a + 1),
    ("max({a}, {n} % {b})", 0, lambda a, n, b: max(a, n % b)),
    ("{a} * 2 + {n} % {b}", 1, lambda a, n, b: a * 2 + n % b),
)


def _digits(rng: random.Random) -> _Generated:
    func, acc = pick(rng, _FUNCS), pick(rng, _ACCS)
    base = pick(rng, (10, 10, 2, 3, 5, 7, 8))
    source, init, fold = pick(rng, _FOLDS)
    lines = [
        f"def {func}(n):",
        f"    {acc} = {init}",
        "    while n > 0:",
        f"        {acc} = {source.format(a=acc, n='n', b=base)}",
        f"        n //= {base}",
        f"    return {acc}",
        "",
    ]

    def call(n: int) -> int:
        total = init
        while n > 0:
            total = fold(total, n, base)
            n //= base
        return total

    x, y, d = rand_int(rng, 10, 999), rand_int(rng, 10, 999), rand_int(rng, 2, 9)
    op = pick(rng, ("//", "%"))
    lines += [f"print({func}({x}))", f"print({func}({y}) {op} {d}, -{y} // {base}, -{y} % {base})"]
    return lines, [str(call(x)), _show((_OPS[op][1](call(y), d), -y // base, -y % base))]


def _grid(rng: random.Random) -> _Generated:
    i, j = pick_distinct(rng, ("i", "j", "r", "c", "a", "b"), 2)
    row, sep = pick(rng, ("row", "line", "cells")), pick(rng, (" ", ",", " | ", ""))
    r0, c0 = rand_int(rng, -2, 2), rand_int(rng, -2, 2)
    rows, cols = range(r0, r0 + rand_int(rng, 2, 4)), range(c0, c0 + rand_int(rng, 2, 4))
    term_source, term = pick(rng, _PAIR_TERMS)
    c = rand_int(rng, 2, 5)
    lines = [
        f"for {i} in range({rows.start}, {rows.stop}):",
        f"    {row} = []",
        f"    for {j} in range({cols.start}, {cols.stop}):",
        f"        {row}.append(str({term_source.format(i=i, j=j, c=c)}))",
        f'    print("{sep}".join({row}))',
    ]
    return lines, [sep.join(str(term(a, b, c)) for b in cols) for a in rows]


# Per-value results with negative operands: (source with {v}, {d}, meaning).
_FLOORS: tuple[tuple[str, Callable[[int, int], object]], ...] = (
    ("{v} // {d}", lambda v, d: v // d),
    ("{v} % {d}", lambda v, d: v % d),
    ("{v} // {d} + {v} % {d}", lambda v, d: v // d + v % d),
    ("-{v} // {d}", lambda v, d: -v // d),
    ("[{v} // {d}, {v} % {d}]", lambda v, d: [v // d, v % d]),
)


def _floor_mod_list(rng: random.Random) -> _Generated:
    vals, res, v = pick(rng, ("values", "data", "xs")), pick(rng, ("results", "ys", "mapped")), "v"
    numbers = [rand_int(rng, -30, 30) for _ in range(rand_int(rng, 3, 5))]
    source, meaning = pick(rng, _FLOORS)
    d = pick(rng, (2, 3, 4, 5, 7, -3, -4))
    d_text = f"({d})" if d < 0 else str(d)  # "-v // -3" reads badly; the parentheses change nothing
    lines = [
        f"{vals} = {numbers}",
        f"{res} = []",
        f"for {v} in {vals}:",
        f"    {res}.append({source.format(v=v, d=d_text)})",
        f"print({res})",
        f"print(len({res}), {res}[0], {res}[-1])",
    ]
    results = [meaning(n, d) for n in numbers]
    return lines, [str(results), _show((len(results), results[0], results[-1]))]


_LEVEL1 = (_straight_line,)
_LEVEL2 = (_for_accumulate, _while_reduce, _while_accumulate, _for_print)
_LEVEL3 = (_function_nested, _list_build, _string_walk, _word_join, _digits, _grid, _floor_mod_list)
TEMPLATES: Mapping[int, tuple[str, ...]] = {
    level: tuple(g.__name__.lstrip("_") for g in gens)
    for level, gens in ((1, _LEVEL1), (2, _LEVEL2), (3, _LEVEL3))
}
"""The name of every program family per level, as recorded in ``Problem.data["family"]``."""


def normalize_output(text: str) -> str:
    """Program output compared line by line: no trailing spaces, no leading or trailing blank lines.

    >>> normalize_output("1 2  \\r\\n[3]\\n\\n")
    '1 2\\n[3]'
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # Both ends are stripped like extract_answer strips a tagged answer, so gold and oracle agree.
    return "\n".join(line.rstrip() for line in lines).strip()


class CodeDomain:
    """Output prediction for short generated Python programs, checked by exact (normalised) match.

    Attributes:
        name: ``"code"``.
        levels: 3.
        answer_format: ``"tag"``: the answer goes inside ``<answer>...</answer>``.

    >>> import random
    >>> problem = DOMAIN.generate(random.Random(3), 1)
    >>> DOMAIN.is_correct(problem, problem.answer + "\\n"), DOMAIN.is_correct(problem, "42 42 42")
    (True, False)
    """

    name = "code"
    levels = 3
    answer_format = "tag"

    def generate(self, rng: random.Random, difficulty: int) -> Problem:
        """A program at ``difficulty`` (1..3) and what it prints, drawn only from ``rng``.

        Raises:
            ValueError: ``difficulty`` is not in 1..3.
        """
        check_difficulty(difficulty, self.levels, self.name)
        family = pick(rng, (_LEVEL1, _LEVEL2, _LEVEL3)[difficulty - 1])
        lines, output = family(rng)
        program = "\n".join(lines)
        prompt = f"{pick(rng, _PROMPTS)}\n\n```python\n{program}\n```"
        data = {"family": family.__name__.lstrip("_"), "program": program}
        return Problem(self.name, prompt, normalize_output("\n".join(output)), difficulty, data)

    def is_correct(self, problem: Problem, answer: str) -> bool:
        """Whether ``answer`` is the program's output, ignoring trailing spaces and blank edge lines."""
        if not isinstance(answer, str):
            return False
        return normalize_output(answer) == problem.answer


DOMAIN = CodeDomain()
"""The code domain instance the multi-domain env draws from."""
