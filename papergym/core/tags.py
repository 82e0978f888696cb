"""Reading ``<tag>...</tag>`` sections out of model text, in linear time and without regexes."""

from __future__ import annotations


def last_tagged(text: str, tag: str, *, ignore_case: bool = False) -> tuple[int, str] | None:
    """The last ``<tag>...</tag>`` of ``text``: the end position of its closing tag and its content.

    The section is the last closing tag and the nearest opening tag before it; None when there is
    no such pair. Every env that reads a tagged answer or memory uses this one reading.

    >>> last_tagged("<answer>1</answer> then <answer> 2 </answer>", "answer")
    (44, ' 2 ')
    >>> last_tagged("<ANSWER>x</ANSWER>", "answer", ignore_case=True), last_tagged("<answer>open", "answer")
    ((18, 'x'), None)
    """
    haystack = text.lower() if ignore_case else text
    close = haystack.rfind(f"</{tag}>")
    if close < 0:
        return None
    start = haystack.rfind(f"<{tag}>", 0, close)
    if start < 0:
        return None
    return close + len(tag) + 3, text[start + len(tag) + 2 : close]
