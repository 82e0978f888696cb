"""`CachedChatModel`: a sqlite replay cache in front of any `ChatModel`.

A request is keyed by the sha256 of the canonical JSON of (model id, messages, max_tokens,
temperature, seed), so the second run of a seeded episode gets the stored replies back and makes
no model calls. Several processes (vector envs, Ray workers) may share one cache file: it runs in
WAL mode with a busy timeout, writes are ``INSERT OR IGNORE`` (the first reply stored for a key
wins, and every writer returns that stored reply), and each process and thread opens its own
connection lazily, so the wrapper pickles.

Requests with ``seed=None`` and ``temperature > 0`` ask for fresh randomness: they are passed
through and never cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from papergym.backends.protocols import ChatModel, Message
from papergym.backends.usage import Usage

_SCHEMA = """CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model_id TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL
)"""
_INIT_ATTEMPTS = 20  # switching to WAL can report "locked" while another process creates the file


def request_json(
    model_id: str, messages: Sequence[Message], *, max_tokens: int, temperature: float, seed: int | None
) -> str:
    """The canonical JSON of a request (sorted keys, no whitespace, numbers normalised)."""
    payload = {
        "model_id": model_id,
        "messages": [dict(m) for m in messages],
        "max_tokens": int(max_tokens),
        "temperature": float(temperature),  # 0 and 0.0 are the same request
        "seed": None if seed is None else int(seed),
    }
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_key(
    model_id: str, messages: Sequence[Message], *, max_tokens: int, temperature: float, seed: int | None
) -> str:
    """The cache key of a request: the sha256 hex digest of `request_json`."""
    text = request_json(model_id, messages, max_tokens=max_tokens, temperature=temperature, seed=seed)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedChatModel:
    """Wraps a `ChatModel` with a replay cache stored in a sqlite file.

    Args:
        model: the model to call on a miss.
        path: the sqlite file (created with its parent directories if missing).
        model_id: the model's identity in the keys; defaults to ``model.model_id``. Give the same
            id to two backends that serve the same weights to share their entries.
        busy_timeout_s: how long a write waits for another process's write to finish.

    Attributes:
        model_id: as above.
        usage: ``cache_hits`` counts replies served from the file; ``model_calls``, tokens,
            ``retries`` and ``failures`` are the wrapped model's, for the requests that missed.

    Raises:
        ValueError: no ``model_id`` given and the model has none.
    """

    def __init__(
        self,
        model: ChatModel,
        path: str | Path,
        *,
        model_id: str | None = None,
        busy_timeout_s: float = 60.0,
    ) -> None:
        model_id = model_id if model_id is not None else getattr(model, "model_id", None)
        if not model_id:
            raise ValueError(
                f"{type(model).__name__} has no model_id: pass CachedChatModel(..., model_id=...)"
            )
        self.model = model
        self.path = Path(path).expanduser()
        self.model_id = str(model_id)
        self.busy_timeout_s = float(busy_timeout_s)
        self.usage = Usage()
        self._local = threading.local()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._connection()  # create the file and table now, so a bad path fails here

    def __repr__(self) -> str:
        return f"CachedChatModel({self.model!r}, {str(self.path)!r})"

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_local"]  # connections are per process and thread
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    def __len__(self) -> int:
        """How many replies the file holds (for every model id)."""
        return int(self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def chat(
        self,
        messages: Sequence[Message],
        *,
        seed: int | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> str:
        """The stored reply to this exact request, or the wrapped model's (then stored).

        Raises:
            BackendError: from the wrapped model on a miss (nothing is stored then).
        """
        cacheable = seed is not None or temperature <= 0
        if not cacheable:
            return self._call(messages, seed, max_tokens, temperature)
        request = request_json(
            self.model_id, messages, max_tokens=max_tokens, temperature=temperature, seed=seed
        )
        key = hashlib.sha256(request.encode("utf-8")).hexdigest()
        stored = self._lookup(key)
        if stored is not None:
            self.usage.add(cache_hits=1)
            return stored
        text = self._call(messages, seed, max_tokens, temperature)
        connection = self._connection()
        connection.execute(
            "INSERT OR IGNORE INTO responses (key, model_id, request, response) VALUES (?, ?, ?, ?)",
            (key, self.model_id, request, text),
        )
        # another process may have stored its reply first: replay what the file holds
        stored = self._lookup(key)
        return text if stored is None else stored

    def close(self) -> None:
        """Close this thread's connection (another call reopens it)."""
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    # ------------------------------------------------------------------ internals
    def _call(
        self, messages: Sequence[Message], seed: int | None, max_tokens: int, temperature: float
    ) -> str:
        inner = getattr(self.model, "usage", None)
        before = inner.as_dict() if isinstance(inner, Usage) else None
        try:
            text = self.model.chat(messages, seed=seed, max_tokens=max_tokens, temperature=temperature)
        finally:
            if before is not None and isinstance(inner, Usage):
                # the wrapped model's counters may be shared with other threads: this delta is
                # exact when the wrapper is its only user, as in one env or one policy
                delta = inner.since(before)
                delta.pop("cache_hits", None)
                self.usage.add(**delta)
        if before is None:
            self.usage.add(model_calls=1)
        return text

    def _lookup(self, key: str) -> str | None:
        row = self._connection().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _connection(self) -> sqlite3.Connection:
        local = self._local
        if getattr(local, "connection", None) is not None and local.pid == os.getpid():
            return local.connection
        # isolation_level=None: autocommit, so each statement is its own short transaction
        connection = sqlite3.connect(str(self.path), timeout=self.busy_timeout_s, isolation_level=None)
        for attempt in range(_INIT_ATTEMPTS):
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
                connection.execute(_SCHEMA)
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == _INIT_ATTEMPTS - 1:
                    connection.close()
                    raise
                time.sleep(0.05 * (attempt + 1))
        local.connection, local.pid = connection, os.getpid()
        return connection
