"""Passages, the per-process cache of generated worlds, and loaders for real corpora and questions.

A generated world (knowledge base + corpus) is built once per ``(seed, n_passages)`` per process and
shared by every env instance; so is its retrieval index (`papergym.envs.search.retrieval`). Real data
loads from local files in the formats Search-R1 and FlashRAG use: a corpus jsonl with ``id`` and
``contents`` (the title on the first line, in quotes) and question files (jsonl or parquet) with
``question`` and ``golden_answers``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from papergym.core.errors import DependencyNotInstalled
from papergym.envs.search.knowledge_base import KnowledgeBase
from papergym.envs.search.questions import QAItem


class Corpus:
    """An ordered set of passages with ids, titles and texts.

    Args:
        ids: passage ids (unique).
        titles: passage titles.
        texts: passage bodies (without the title).

    >>> c = Corpus(["a"], ["Tek"], ["Tek is a city."])
    >>> c.contents(0)
    '"Tek"\\nTek is a city.'
    """

    def __init__(self, ids: Sequence[str], titles: Sequence[str], texts: Sequence[str]) -> None:
        if not len(ids) == len(titles) == len(texts):
            raise ValueError("ids, titles and texts must have the same length")
        if not ids:
            raise ValueError("a corpus needs at least one passage")
        self.ids = list(ids)
        self.titles = list(titles)
        self.texts = list(texts)
        self.position = {pid: i for i, pid in enumerate(self.ids)}
        if len(self.position) != len(self.ids):
            raise ValueError("passage ids must be unique")

    def __len__(self) -> int:
        return len(self.ids)

    def contents(self, i: int) -> str:
        """Passage ``i`` in FlashRAG's ``contents`` form: the quoted title, a newline, the text."""
        return f'"{self.titles[i]}"\n{self.texts[i]}'

    def all_contents(self) -> list[str]:
        """Every passage's `contents`."""
        return [self.contents(i) for i in range(len(self))]

    @classmethod
    def from_knowledge_base(cls, kb: KnowledgeBase) -> Corpus:
        """The corpus of a generated world (passage ``p<i>`` is entity ``i``)."""
        ids, titles, texts = zip(*kb.passages(), strict=False)
        return cls(ids, titles, texts)


_WORLDS: dict[tuple[int, int], tuple[KnowledgeBase, Corpus]] = {}
_LOCK = threading.Lock()


def get_world(seed: int, n_passages: int) -> tuple[KnowledgeBase, Corpus]:
    """The generated world of ``(seed, n_passages)``, built once per process and shared."""
    key = (int(seed), int(n_passages))
    with _LOCK:
        world = _WORLDS.get(key)
        if world is None:
            kb = KnowledgeBase(seed=key[0], n_passages=key[1])
            world = _WORLDS[key] = (kb, Corpus.from_knowledge_base(kb))
    return world


def file_key(path: str | Path) -> tuple[str, int, int]:
    """A cache key for a file's current version: resolved path, size and modification time."""
    resolved = Path(path).resolve()
    stat = resolved.stat()
    return str(resolved), stat.st_size, stat.st_mtime_ns


_FILES: dict[tuple[str, int, int], Corpus] = {}


def get_file_corpus(path: str | Path) -> Corpus:
    """`load_corpus_jsonl` of ``path``, loaded once per file version per process and shared."""
    key = file_key(path)
    with _LOCK:
        corpus = _FILES.get(key)
        if corpus is None:
            corpus = _FILES[key] = load_corpus_jsonl(path)
    return corpus


# ---------------------------------------------------------------------- loaders
def _read_jsonl(path: Path) -> Iterable[dict]:
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
                if not isinstance(record, dict):
                    raise ValueError(f"{path}:{n}: each line must be a JSON object")
                yield record


def load_corpus_jsonl(path: str | Path) -> Corpus:
    """Load a corpus jsonl: one ``{"id": ..., "contents": ...}`` per line (Search-R1 / FlashRAG).

    A ``contents`` whose first line is a quoted string is split into title and text (FlashRAG's
    wiki-18 form ``"Title"\\ntext``); otherwise the title is empty. An optional ``title`` field wins.

    Raises:
        ValueError: a line is not a JSON object, or lacks ``id`` / ``contents``.
    """
    path = Path(path)
    ids, titles, texts = [], [], []
    for n, record in enumerate(_read_jsonl(path), 1):
        if "id" not in record or "contents" not in record:
            raise ValueError(f"{path}: record {n} needs 'id' and 'contents', got keys {sorted(record)}")
        contents = str(record["contents"])
        head, sep, rest = contents.partition("\n")
        if sep and len(head) >= 2 and head.startswith('"') and head.endswith('"'):
            title, text = head[1:-1], rest
        else:
            title, text = "", contents
        ids.append(str(record["id"]))
        titles.append(str(record.get("title", title)))
        texts.append(text)
    return Corpus(ids, titles, texts)


def _question_records(path: Path) -> list[dict]:
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise DependencyNotInstalled(f"reading {path.name} needs pyarrow: pip install pyarrow") from exc
        return pq.read_table(path).to_pylist()
    return list(_read_jsonl(path))


def load_questions(path: str | Path) -> list[QAItem]:
    """Load questions from a jsonl or parquet file with ``question`` and ``golden_answers`` columns.

    ``golden_answers`` may be a list or a single string; an ``id`` column, if present, becomes the
    item's ``qid`` (else ``q<row>``). Loaded items have no hop plan (``qtype="external"``).

    Raises:
        ValueError: a record lacks ``question`` or has no gold answer.
    """
    path = Path(path)
    items = []
    for n, record in enumerate(_question_records(path)):
        answers = record.get("golden_answers")
        if isinstance(answers, str):
            answers = [answers]
        if "question" not in record or not answers:
            raise ValueError(f"{path}: record {n} needs 'question' and non-empty 'golden_answers'")
        qid = str(record.get("id", f"q{n}"))
        items.append(QAItem(qid, "external", str(record["question"]), tuple(map(str, answers)), ()))
    return items
