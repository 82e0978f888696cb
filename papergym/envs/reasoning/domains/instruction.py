"""Instruction following: a short text about a topic under IFEval-style verifiable format constraints.

Every constraint is checked syntactically by a small function in :data:`CHECKS` (type -> check), so
the reward needs no judge. Only mutually compatible constraints are drawn together (never lowercase
with uppercase, never two word-count or two layout rules, ...), and the generator builds a text that
satisfies all of them, which is the gold answer the oracle writes.

The topic is checked too (an inferred rule: IFEval scores format only, with a judge-free topic proxy
added here because format alone let canned text such as ``yes`` and the gold with its topic swapped
pass): the answer must hold at least :data:`TOPIC_MIN_SENTENCES` sentences that name the task's topic
(its words without a leading article, consecutively, any case) and that have at least
:data:`TOPIC_MIN_WORDS` words each. See :func:`check_topic`.

Definitions the checks use: *words* are what is left between whitespace and punctuation, with
apostrophes and hyphens joining rather than splitting; a *sentence* ends with ``.``, ``!`` or ``?``
followed by a space, a quote or the end; a *paragraph* is a block separated by a blank line; a
*bullet* is a line starting ``- ``; a *numbered line* starts ``1.`` (or ``1)``) and a space. Keyword,
forbidden-word, first-word and ending checks ignore case, so they compose with the all-lowercase and
all-uppercase rules.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from papergym.envs.reasoning.domains._common import check_difficulty, pick, pick_distinct, rand_int
from papergym.envs.reasoning.problem import Problem

# Word splitting: punctuation separates words, apostrophes and hyphens join them ("don't" and
# "well-known" are one word each). ASCII text takes a bytes.translate fast path (several times
# quicker than a regex scan); other text the equivalent str.translate table.
_JOINERS = "'-’"
_SEPARATORS = "".join(c for c in string.punctuation if c not in _JOINERS)
_ASCII_TABLE = bytes.maketrans(_SEPARATORS.encode(), b" " * len(_SEPARATORS))
_TABLE = str.maketrans(
    {**dict.fromkeys(_SEPARATORS + "“”‘«»‹›„‚–—…、。，！？；：（）", " "), **dict.fromkeys(_JOINERS)}
)
_SENTENCE_END = re.compile(r"[.!?]+(?=[\s\"'”’)\]]|$)")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s", re.MULTILINE)
_TITLE = re.compile(r"<<[^<>\n]*[^\W_][^<>\n]*>>")


def words(text: str) -> list[str]:
    """The casefolded words of ``text``, as every word-based check counts them.

    >>> words("Don't stop -- it's well-known: 3.5 <<Title>>!")
    ['dont', 'stop', 'its', 'wellknown', '3', '5', 'title']
    """
    folded = text.casefold()
    if folded.isascii():
        return folded.encode().translate(_ASCII_TABLE, b"'-").decode().split()
    return folded.translate(_TABLE).split()


@lru_cache(maxsize=8)
def _folded_words(text: str) -> tuple[str, ...]:
    """:func:`words` as a tuple, cached because one answer meets several word-based checks."""
    return tuple(words(text))


# --- checks: one small function per constraint type ----------------------------------------------


def check_word_count_exact(text: str, c: Mapping[str, Any]) -> bool:
    """Exactly ``c["n"]`` words."""
    return len(_folded_words(text)) == c["n"]


def check_word_count_min(text: str, c: Mapping[str, Any]) -> bool:
    """At least ``c["n"]`` words."""
    return len(_folded_words(text)) >= c["n"]


def check_word_count_max(text: str, c: Mapping[str, Any]) -> bool:
    """At most ``c["n"]`` words."""
    return len(_folded_words(text)) <= c["n"]


def check_lowercase(text: str, c: Mapping[str, Any]) -> bool:
    """No uppercase letter, and at least one cased letter (an empty text is not "all lowercase")."""
    return text == text.lower() and text != text.upper()


def check_uppercase(text: str, c: Mapping[str, Any]) -> bool:
    """No lowercase letter, and at least one cased letter."""
    return text == text.upper() and text != text.lower()


def check_keyword_frequency(text: str, c: Mapping[str, Any]) -> bool:
    """The word ``c["keyword"]`` (any case) appears at least ``c["n"]`` times."""
    return _folded_words(text).count(c["keyword"].casefold()) >= c["n"]


def check_forbidden_word(text: str, c: Mapping[str, Any]) -> bool:
    """The word ``c["word"]`` (any case) does not appear."""
    return c["word"].casefold() not in _folded_words(text)


def check_starts_with(text: str, c: Mapping[str, Any]) -> bool:
    """The first word is ``c["word"]`` (any case; leading quotes or bullets are not words)."""
    found = _folded_words(text)
    return bool(found) and [found[0]] == words(c["word"])


def check_ends_with(text: str, c: Mapping[str, Any]) -> bool:
    """The text ends with the phrase ``c["phrase"]`` (any case), trailing whitespace aside."""
    return text.rstrip().casefold().endswith(c["phrase"].casefold())


def check_no_commas(text: str, c: Mapping[str, Any]) -> bool:
    """No comma anywhere."""
    return "," not in text and "，" not in text


def check_sentence_count(text: str, c: Mapping[str, Any]) -> bool:
    """Exactly ``c["n"]`` sentences (pieces between sentence ends that hold a word)."""
    pieces = _SENTENCE_END.split(text)
    return sum(1 for piece in pieces if words(piece)) == c["n"]


def check_bullet_count(text: str, c: Mapping[str, Any]) -> bool:
    """Exactly ``c["n"]`` lines starting with ``- ``."""
    return sum(1 for line in text.splitlines() if line.lstrip().startswith("- ")) == c["n"]


def check_quoted(text: str, c: Mapping[str, Any]) -> bool:
    """The whole text is wrapped in double quotation marks."""
    stripped = text.strip()
    return len(stripped) >= 2 and stripped[0] in '"“' and stripped[-1] in '"”'


def check_numbered_lines(text: str, c: Mapping[str, Any]) -> bool:
    """Exactly ``c["n"]`` lines starting with a number, a ``.`` or ``)`` and a space."""
    return len(_NUMBERED.findall(text)) == c["n"]


def check_paragraph_count(text: str, c: Mapping[str, Any]) -> bool:
    """Exactly ``c["n"]`` non-empty paragraphs separated by blank lines."""
    return sum(1 for part in _PARAGRAPH_BREAK.split(text.strip()) if part.strip()) == c["n"]


def check_title(text: str, c: Mapping[str, Any]) -> bool:
    """A title with at least one word inside double angular brackets, like ``<<my title>>``."""
    return _TITLE.search(text) is not None


TOPIC_MIN_SENTENCES = 1
"""Inferred: sentences that must name the topic (every gold sentence but the closing phrase does)."""
TOPIC_MIN_WORDS = 5
"""Inferred: words such a sentence needs (the shortest gold sentence has 5 besides the topic), so a
bare topic name or a topic plus filler word is no text about it."""
_ARTICLES = frozenset({"the", "a", "an"})


def topic_words(topic: str) -> tuple[str, ...]:
    """The words of ``topic`` a text must name, a leading article dropped.

    >>> topic_words("the night sky"), topic_words("learning a language")
    (('night', 'sky'), ('learning', 'a', 'language'))
    """
    found = words(topic)
    return tuple(found[1:] if len(found) > 1 and found[0] in _ARTICLES else found)


def check_topic(
    text: str,
    topic: str,
    *,
    min_sentences: int = TOPIC_MIN_SENTENCES,
    min_words: int = TOPIC_MIN_WORDS,
) -> bool:
    """Whether ``text`` has ``min_sentences`` sentences (or lines) of ``min_words`` words naming ``topic``.

    A sentence is a piece between sentence ends or line breaks; it names the topic when the topic's
    words (:func:`topic_words`) occur in it consecutively.
    """
    wanted = topic_words(topic)
    size = len(wanted)
    hits = 0
    for line in text.splitlines():
        for piece in _SENTENCE_END.split(line):
            found = words(piece)
            if len(found) < max(min_words, size):
                continue
            if any(tuple(found[i : i + size]) == wanted for i in range(len(found) - size + 1)):
                hits += 1
    return hits >= min_sentences


CHECKS: Mapping[str, Callable[[str, Mapping[str, Any]], bool]] = {
    "word_count_exact": check_word_count_exact,
    "word_count_min": check_word_count_min,
    "word_count_max": check_word_count_max,
    "lowercase": check_lowercase,
    "uppercase": check_uppercase,
    "keyword_frequency": check_keyword_frequency,
    "forbidden_word": check_forbidden_word,
    "starts_with": check_starts_with,
    "ends_with": check_ends_with,
    "no_commas": check_no_commas,
    "sentence_count": check_sentence_count,
    "bullet_count": check_bullet_count,
    "quoted": check_quoted,
    "numbered_lines": check_numbered_lines,
    "paragraph_count": check_paragraph_count,
    "title": check_title,
}
"""Every constraint type and its check ``check(text, constraint) -> bool``."""

TYPES: tuple[str, ...] = tuple(CHECKS)

# --- which constraints may be drawn together -----------------------------------------------------

_LAYOUTS = ("sentence_count", "bullet_count", "numbered_lines", "paragraph_count")
_WORD_COUNTS = ("word_count_exact", "word_count_min", "word_count_max")
_EXCLUSIVE: tuple[tuple[str, ...], ...] = (
    ("lowercase", "uppercase"),
    _WORD_COUNTS,
    _LAYOUTS,
)
"""At most one constraint of each group: two would contradict or make the text contrived."""
_CONFLICTS: tuple[tuple[str, str], ...] = (
    ("quoted", "bullet_count"),  # the opening quote would sit before the first "- "
    ("quoted", "numbered_lines"),
    ("quoted", "ends_with"),  # the closing quote would follow the phrase
    ("title", "starts_with"),  # the title comes first
    ("starts_with", "numbered_lines"),  # the first word would be "1"
)
COMPATIBLE: Mapping[str, frozenset[str]] = {
    kind: frozenset(
        other
        for other in TYPES
        if other != kind
        and not any(kind in group and other in group for group in _EXCLUSIVE)
        and (kind, other) not in _CONFLICTS
        and (other, kind) not in _CONFLICTS
    )
    for kind in TYPES
}
"""For each type, the types that may be drawn with it."""

# --- the vocabulary the generator builds texts from ----------------------------------------------

TOPICS: tuple[str, ...] = (
    "the ocean", "coffee", "city parks", "mountain hiking", "public libraries", "rainy days", "bicycles",
    "honeybees", "the night sky", "learning a language", "board games", "street food", "old maps",
    "winter mornings", "community gardens", "trains", "volcanoes", "jazz music", "desert plants",
    "lighthouses", "paper books", "home cooking", "kites", "the moon", "coral reefs", "chess", "bread baking",
    "tea", "snow", "owls", "autumn leaves", "rivers", "museums", "clocks", "bridges", "camping",
    "photography", "wolves", "the alphabet", "sailing", "forests", "penguins", "robots", "farmers markets",
    "gardening", "stars", "deserts", "islands", "windmills", "pottery", "violins", "dolphins",
    "thunderstorms", "rainbows", "origami", "cheese", "running", "poetry", "puzzles", "handwritten letters",
)  # fmt: skip
_TASKS = (
    "Write a short text about {t}.",
    "Write a few sentences about {t}.",
    "Describe {t} briefly.",
    "Write a brief note about {t}.",
    "Share your thoughts on {t}.",
)
_SENTENCES = (
    "{t} can surprise anyone who looks closely",
    "many people enjoy {t} more than they expect",
    "there is always something new to learn about {t}",
    "the history of {t} is long and curious",
    "some of the best memories begin with {t}",
    "a calm afternoon is perfect for thinking about {t}",
    "people all over the world care about {t}",
    "{t} can teach patience in small ways",
    "it is easy to overlook how much {t} can matter",
    "every season brings a fresh view of {t}",
    "friends often share stories about {t}",
    "learning about {t} can change the way we see the world",
)
KEYWORDS: tuple[str, ...] = (
    "light", "river", "future", "simple", "bright", "quiet", "green", "journey", "balance", "window",
    "morning", "garden", "music", "color", "memory", "wonder", "silver", "harbor", "path", "spark",
)  # fmt: skip
FORBIDDEN: tuple[str, ...] = (
    "very", "really", "thing", "stuff", "basically", "actually", "literally", "amazing", "awesome", "nice",
    "okay", "totally", "huge", "cool", "perhaps", "maybe",
)  # fmt: skip
"""Words a constraint may forbid: none occurs anywhere in the generator's own vocabulary."""
STARTS: tuple[str, ...] = (
    "today", "honestly", "yes", "imagine", "remember", "surely", "often", "first", "listen", "indeed",
)  # fmt: skip
ENDINGS: tuple[str, ...] = (
    "thank you for reading.", "until next time.", "and that says it all.", "what do you think?",
    "that is all for now.", "let that sink in.", "more soon!", "is there anything else?",
)  # fmt: skip
"""Closing sentences an ``ends_with`` constraint may ask for (each one sentence, no commas)."""
_TITLES = ("notes on", "all about", "a look at", "thoughts on", "the joy of", "in praise of")
_PADDING = ("in", "many", "small", "ways", "that", "add", "up", "over", "time")
"""Words appended to a sentence to reach a word count, cycled as needed."""
_PADDING_TEXTS = tuple(" ".join(_PADDING[i % len(_PADDING)] for i in range(n)) for n in range(13))
"""``_PADDING_TEXTS[n]``: the first ``n`` padding words (word-count targets exceed the text by <= 12)."""
_SENTENCE_PARTS = tuple(
    (before, after, len(words(before + after)))
    for before, _, after in (t.partition("{t}") for t in _SENTENCES)
)
"""Each sentence template as (text before the topic, text after it, its own word count)."""


def vocabulary() -> frozenset[str]:
    """Every word (lowercased) the generator may put in a text, for checking the forbidden pool."""
    pools = (TOPICS, _SENTENCES, KEYWORDS, STARTS, ENDINGS, _TITLES, _PADDING, ("with",))
    return frozenset(w for pool in pools for text in pool for w in words(text.replace("{t}", "")))


# --- describing constraints ----------------------------------------------------------------------


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


_DESCRIPTIONS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "word_count_exact": lambda c: f"Your response must contain exactly {c['n']} words.",
    "word_count_min": lambda c: f"Your response must contain at least {c['n']} words.",
    "word_count_max": lambda c: f"Your response must contain at most {c['n']} words.",
    "lowercase": lambda c: (
        "Your entire response must be in lowercase letters; no capital letters are allowed."
    ),
    "uppercase": lambda c: "Your entire response must be in capital letters.",
    "keyword_frequency": lambda c: f'Use the word "{c["keyword"]}" at least {_times(c["n"])}.',
    "forbidden_word": lambda c: f'Do not use the word "{c["word"]}".',
    "starts_with": lambda c: f'Start your response with the word "{c["word"]}".',
    "ends_with": lambda c: f'End your response with the exact phrase "{c["phrase"]}" and nothing after it.',
    "no_commas": lambda c: "Do not use any commas.",
    "sentence_count": lambda c: f"Write exactly {c['n']} sentence{'s' if c['n'] > 1 else ''}.",
    "bullet_count": lambda c: (
        f'Write exactly {c["n"]} bullet points, each on its own line starting with "- ".'
    ),
    "quoted": lambda c: "Wrap your entire response in double quotation marks.",
    "numbered_lines": lambda c: (
        f'Write exactly {c["n"]} numbered lines, each starting with its number and a period ("1. ").'
    ),
    "paragraph_count": lambda c: f"Write exactly {c['n']} paragraphs separated by blank lines.",
    "title": lambda c: "Include a title wrapped in double angular brackets, such as <<my title>>.",
}


def describe(c: Mapping[str, Any]) -> str:
    """The instruction sentence for one constraint."""
    return _DESCRIPTIONS[c["type"]](c)


# --- building a text that satisfies the drawn constraints ----------------------------------------


def _draw_types(rng: random.Random, count: int) -> list[str]:
    """``count`` distinct, pairwise compatible types, each drawn among those the earlier ones allow."""
    chosen = [pick(rng, TYPES)]
    candidates: tuple[str, ...] | list[str] = TYPES
    while len(chosen) < count:
        allowed = COMPATIBLE[chosen[-1]]
        candidates = [other for other in candidates if other in allowed]
        chosen.append(pick(rng, candidates))  # never empty: any three leave at least 5 (a test checks)
    return chosen


def _cased(text: str, case: str | None) -> str:
    return text.upper() if case == "upper" else text.lower() if case == "lower" else text


def _build(rng: random.Random, kinds: list[str], topic: str) -> tuple[str, list[dict[str, Any]]]:
    """A text satisfying constraints of ``kinds``, and the constraints with their drawn parameters.

    Sentences are kept as lowercase strings without their end mark, with a running word count, so the
    word-count rules can be met exactly without re-tokenising; the text is cased and wrapped last.
    """
    kinds_set = set(kinds)
    case = "lower" if "lowercase" in kinds_set else "upper" if "uppercase" in kinds_set else None
    params: dict[str, dict[str, Any]] = {}
    layout = counted = None
    for kind in kinds:
        params[kind] = {"type": kind}
        if kind in _LAYOUTS:
            layout = kind
        elif kind in _WORD_COUNTS:
            counted = kind
    tail = pick(rng, ENDINGS) if "ends_with" in kinds_set else None
    starts = "starts_with" in kinds_set

    # How many topic sentences, and how they group into lines or paragraphs.
    if layout is None:
        count = rand_int(rng, 2, 4)
    else:
        # A closing phrase takes a sentence of its own, so one more is needed to name the topic.
        fewest = 2 if layout != "sentence_count" or tail is not None else 1
        count = rand_int(rng, fewest, 5)
        params[layout]["n"] = count
        if layout == "sentence_count" and tail is not None:
            count -= 1  # the closing phrase is a sentence of its own
    parts = pick_distinct(rng, _SENTENCE_PARTS, count)
    texts = [f"{before}{topic}{after}" for before, after, _ in parts]
    ends = ["."] * count
    length = sum(words for _, _, words in parts) + count * (topic.count(" ") + 1)
    if tail is not None:
        params["ends_with"]["phrase"] = _cased(tail, case)
        texts.append(tail[:-1])
        ends.append(tail[-1])
        length += tail.count(" ") + 1

    def add(extra: str, index: int = 0) -> None:
        """Append words to a topic sentence, never inside the closing phrase (but before it if alone)."""
        if count:
            texts[index % count] = f"{texts[index % count]} {extra}"
        elif starts:
            head, _, rest = texts[0].partition(" ")
            texts[0] = f"{head} {extra} {rest}"
        else:
            texts[0] = f"{extra} {texts[0]}"

    if starts:
        start = pick(rng, STARTS)
        params["starts_with"]["word"] = _cased(start.capitalize(), case)
        texts[0] = f"{start} {texts[0]}"
        length += 1
    if "keyword_frequency" in kinds_set:
        keyword, times = pick(rng, KEYWORDS), rand_int(rng, 1, 3)
        params["keyword_frequency"].update(keyword=_cased(keyword, case), n=times)
        for index in range(times):
            add(f"with {keyword}", index)
        length += 2 * times
    if "forbidden_word" in kinds_set:
        params["forbidden_word"]["word"] = _cased(pick(rng, FORBIDDEN), case)
    title = None
    if "title" in kinds_set:
        title = f"{pick(rng, _TITLES)} {topic}".title()
        length += title.count(" ") + 1
    if layout == "numbered_lines":
        length += count  # each "1." is a word

    # Word-count rules are drawn last, around the length of what is built so far.
    if counted == "word_count_max":
        params[counted]["n"] = length + rand_int(rng, 0, 20)
    elif counted is not None:
        low = 0 if counted == "word_count_exact" else -10
        target = length + rand_int(rng, low, 12)
        params[counted]["n"] = max(1, target)
        if target > length:
            add(_PADDING_TEXTS[target - length])

    # Render: one sentence per line or paragraph in a list layout; the closing phrase joins the last one.
    rendered = [f"{text[:1].upper()}{text[1:]}{end}" for text, end in zip(texts, ends, strict=True)]
    if layout is None or layout == "sentence_count":
        body = " ".join(rendered)
    else:
        if tail is not None:
            rendered[-2:] = [f"{rendered[-2]} {rendered[-1]}"]
        if layout == "bullet_count":
            body = "\n".join([f"- {line}" for line in rendered])
        elif layout == "numbered_lines":
            body = "\n".join([f"{i}. {line}" for i, line in enumerate(rendered, 1)])
        else:
            body = "\n\n".join(rendered)
    if title is not None:
        body = f"<<{title}>>\n{body}"
    if "quoted" in kinds_set:
        body = f'"{body}"'
    return _cased(body, case), [params[kind] for kind in kinds]


class InstructionDomain:
    """A short text under 1, 2 or 3-4 verifiable format constraints (by level); all must hold.

    Attributes:
        name: ``"instruction"``.
        levels: 3.
        answer_format: ``"tag"``: the answer goes inside ``<answer>...</answer>``.

    ``Problem.data`` holds ``topic`` and ``constraints``: a list of ``{"type": ..., params}`` dicts, each
    checked by ``CHECKS[type]``.

    >>> import random
    >>> problem = DOMAIN.generate(random.Random(0), 2)
    >>> DOMAIN.is_correct(problem, problem.answer), DOMAIN.is_correct(problem, "")
    (True, False)
    """

    name = "instruction"
    levels = 3
    answer_format = "tag"

    def generate(self, rng: random.Random, difficulty: int) -> Problem:
        """A topic and constraints at ``difficulty`` (1..3), drawn only from ``rng``.

        Raises:
            ValueError: ``difficulty`` is not in 1..3.
        """
        check_difficulty(difficulty, self.levels, self.name)
        count = difficulty if difficulty < 3 else rand_int(rng, 3, 4)
        kinds = _draw_types(rng, count)
        topic = pick(rng, TOPICS)
        answer, constraints = _build(rng, kinds, topic)
        rules = " ".join(describe(c) for c in constraints)
        prompt = f"{pick(rng, _TASKS).format(t=topic)} {rules}"
        return Problem(self.name, prompt, answer, difficulty, {"topic": topic, "constraints": constraints})

    def is_correct(self, problem: Problem, answer: str) -> bool:
        """Whether ``answer`` is about the task's topic (:func:`check_topic`) and passes every constraint."""
        if not isinstance(answer, str) or not _folded_words(answer):
            return False
        if not check_topic(answer, problem.data["topic"]):
            return False
        for constraint in problem.data["constraints"]:
            check = CHECKS.get(constraint["type"])
            if check is None or not check(answer, constraint):
                return False
        return True


DOMAIN = InstructionDomain()
"""The instruction-following domain instance the multi-domain env draws from."""
