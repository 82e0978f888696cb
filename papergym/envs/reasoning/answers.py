"""Extracting the final answer from a completion, and comparing answers.

The answer is the content of the last ``\\boxed{...}`` (braces may nest) or the last
``<answer>...</answer>``, whichever ends later in the text. Nothing here evaluates model text.
"""

from __future__ import annotations

import math
import re
import unicodedata

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_BOXED = "\\boxed{"
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_FRACTION = re.compile(r"^([+-]?\d+)\s*/\s*(\d+)$")


def _last_boxed(text: str) -> tuple[int, str] | None:
    """The end position and content of the last complete ``\\boxed{...}``, braces balanced."""
    start = text.rfind(_BOXED)
    while start != -1:
        depth, i = 1, start + len(_BOXED)
        while i < len(text) and depth:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
            i += 1
        if depth == 0:
            return i, text[start + len(_BOXED) : i - 1]
        start = text.rfind(_BOXED, 0, start)
    return None


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
    tagged = None
    for match in _ANSWER_TAG.finditer(completion):
        tagged = (match.end(), match.group(1))
    candidates = [c for c in (boxed, tagged) if c is not None]
    if not candidates:
        return None
    return max(candidates, key=lambda c: c[0])[1].strip()


def normalize_text(text: str) -> str:
    """Case-, whitespace- and Unicode-insensitive form used for exact-match answers."""
    text = unicodedata.normalize("NFKC", text).strip().lower()
    text = re.sub(r"\\text\{([^{}]*)\}", r"\1", text)
    text = text.strip("$ .")
    return " ".join(text.split())


def parse_number(text: str) -> float | None:
    """A finite number written as an int, decimal, scientific, ``a/b`` or ``\\frac{a}{b}``; else None.

    Thousands separators and a trailing unit-free percent sign are not accepted: answers are
    compared as the env asked for them.
    """
    text = normalize_text(text).replace(",", "")
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
