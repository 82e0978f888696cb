"""Extracting the final answer from a completion, and comparing answers.

The answer is the content of the last ``\\boxed{...}`` (braces may nest) or the last
``<answer>...</answer>``, whichever ends later in the text. Nothing here evaluates model text.
"""

from __future__ import annotations

import math
import re
import unicodedata
from fractions import Fraction

from papergym.core.tags import last_tagged

_BOXED = "\\boxed{"
_BRACE = re.compile(r"[{}]")
_TEXT_MACRO = re.compile(r"\\text\{([^{}]*)\}")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_FRACTION = re.compile(r"^([+-]?\d+)\s*/\s*(\d+)$")


def _last_boxed(text: str) -> tuple[int, str] | None:
    """The end position and content of the last complete ``\\boxed{...}``, braces balanced.

    One pass over the brace characters with a stack (linear: a completion of 30k unclosed
    ``\\boxed{`` must not take quadratic time).
    """
    start = text.rfind(_BOXED)
    if start == -1:
        return None
    # Fast path: the last \boxed{ closes before any nested brace (the usual "\boxed{42}").
    close = text.find("}", start)
    if close != -1 and "{" not in text[start + len(_BOXED) : close]:
        return close + 1, text[start + len(_BOXED) : close]
    best: tuple[int, str, int] | None = None  # (end, content, start of "\\boxed{")
    opens: list[int] = []
    for match in _BRACE.finditer(text):
        i = match.start()
        if text[i] == "{":
            opens.append(i)
        elif opens:
            start = opens.pop()
            head = start + 1 - len(_BOXED)
            if head >= 0 and text.startswith(_BOXED, head) and (best is None or head > best[2]):
                best = (i + 1, text[start + 1 : i], head)
    return None if best is None else (best[0], best[1])


def extract_answer(completion: str) -> str | None:
    """The final answer of a completion, stripped, or None when there is none.

    >>> extract_answer("so x = 3, hence \\\\boxed{\\\\frac{1}{2}}")
    '\\\\frac{1}{2}'
    >>> extract_answer("<answer> 42 </answer>")
    '42'
    >>> extract_answer("no answer here") is None
    True
    """
    boxed = _last_boxed(completion)
    tagged = last_tagged(completion, "answer", ignore_case=True) if "<" in completion else None
    if tagged is None or (boxed is not None and boxed[0] > tagged[0]):
        return None if boxed is None else boxed[1].strip()
    return tagged[1].strip()


def normalize_text(text: str) -> str:
    """Case-, whitespace- and Unicode-insensitive form used for exact-match answers."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = text.strip().lower()
    if "\\text{" in text:
        text = _TEXT_MACRO.sub(r"\1", text)
    text = text.strip("$ .")
    return " ".join(text.split())


_GROUPED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")


def _drop_thousands(text: str) -> str | None:
    """``text`` without thousands separators; None when its commas do not group thousands ("3,4").

    A comma that is not a thousands separator separates candidates (``"3, 4"``), which is no one value.
    """
    if "," not in text:
        return text
    return text.replace(",", "") if _GROUPED.match(text) else None


def parse_number(text: str) -> float | None:
    r"""A finite number written as an int, decimal, scientific, ``a/b`` or ``\\frac{a}{b}``; else None.

    Thousands separators are dropped; units and percent signs are not accepted: answers are
    compared as the env asked for them.

    >>> parse_number(" 1,250 "), parse_number("\\frac{3}{4}"), parse_number("-7/2"), parse_number("12 m/s")
    (1250.0, 0.75, -3.5, None)
    """
    if len(text) <= 64:  # the common cases, a plain number or a/b, need no normalising
        if _NUMBER.match(text):
            value = float(text)
            return value if math.isfinite(value) else None
        match = _FRACTION.match(text)
        if match:
            denominator = int(match.group(2))
            return int(match.group(1)) / denominator if denominator else None
    text = _drop_thousands(normalize_text(text))
    if text is None:
        return None
    frac = re.fullmatch(r"\\d?frac\{([+-]?\d+)\}\{(\d+)\}", text)
    if frac:
        text = f"{frac.group(1)}/{frac.group(2)}"
    match = _FRACTION.match(text)
    if match:
        denominator = int(match.group(2))
        return int(match.group(1)) / denominator if denominator else None
    if len(text) > 64 or not _NUMBER.match(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def numbers_match(answer: str, gold: str, *, rel_tol: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    """Whether ``answer`` is numerically equal to ``gold`` within the tolerances."""
    a, g = parse_number(answer), parse_number(gold)
    if a is None or g is None:
        return False
    return math.isclose(a, g, rel_tol=rel_tol, abs_tol=abs_tol)


def exact_number(text: str) -> Fraction | None:
    r"""The exact rational value of a number written as :func:`parse_number` accepts it; else None.

    Decimals are read exactly (``"0.333333"`` is 333333/1000000, not 1/3), so an answer rounded from a
    non-terminating value is not equal to it.

    >>> exact_number("0.25"), exact_number("\\frac{2}{8}"), exact_number("0.333333") == Fraction(1, 3)
    (Fraction(1, 4), Fraction(1, 4), False)
    """
    if parse_number(text) is None:
        return None
    text = _drop_thousands(normalize_text(text)) or ""
    frac = re.fullmatch(r"\\d?frac\{([+-]?\d+)\}\{(\d+)\}", text)
    if frac:
        text = f"{frac.group(1)}/{frac.group(2)}"
    try:
        return Fraction(text.replace(" ", ""))
    except (ValueError, ZeroDivisionError):
        return None
