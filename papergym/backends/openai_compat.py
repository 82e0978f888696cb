"""`OpenAIChatModel`: any OpenAI-compatible chat endpoint (vLLM, SGLang, hosted APIs) as a `ChatModel`.

The ``openai`` client's own retries are turned off and replaced by a bounded loop here, so that
what is retried, how often and how long it waits are fixed and visible: timeouts, dropped
connections, 5xx, 408/409/429 and malformed replies are retried with capped exponential backoff
(no jitter: a run's timing behaviour is reproducible); any other 4xx fails at once. After the last
attempt a `BackendError` carries the last cause.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from papergym.backends.protocols import Message
from papergym.backends.usage import Usage
from papergym.core.errors import BackendError, require

logger = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 409, 429})
"""4xx statuses that are retried (every 5xx is too)."""


class _MalformedReply(Exception):
    """A 200 reply that is not a usable chat completion."""


class OpenAIChatModel:
    """A chat model served over the OpenAI chat-completions API.

    Args:
        base_url: the API root, e.g. ``"http://127.0.0.1:8000/v1"`` for ``vllm serve``.
        model: the served model's name.
        api_key: defaults to the ``OPENAI_API_KEY`` environment variable, else ``"EMPTY"``
            (vLLM and SGLang accept any key unless started with one).
        timeout: seconds per attempt (connect, read and write each).
        max_retries: attempts after the first; a request makes at most ``max_retries + 1``.
        backoff_s: the wait before the first retry; it doubles each retry.
        max_backoff_s: the cap on one wait (also on a server's ``Retry-After``).
        extra_body: extra JSON fields for every request (e.g. vLLM's ``top_k``,
            ``chat_template_kwargs``).

    Attributes:
        model_id: ``"openai:<model>@<base_url>"``, the identity used by the replay cache.
        usage: the backend's counters (`papergym.backends.usage.Usage`); token counts come from the
            server's ``usage`` field.

    Raises:
        ValueError: an argument out of range.
        DependencyNotInstalled: the ``openai`` package is missing (the ``remote`` extra).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        max_backoff_s: float = 8.0,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        require("openai", "remote")
        if not base_url:
            raise ValueError("base_url is empty; pass e.g. 'http://127.0.0.1:8000/v1'")
        if not model:
            raise ValueError(
                "model is empty; pass the served model's name (vLLM: the path or --served-model-name)"
            )
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if backoff_s < 0 or max_backoff_s < 0:
            raise ValueError(f"backoff_s and max_backoff_s must be >= 0, got {backoff_s}, {max_backoff_s}")
        self.base_url = base_url
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "EMPTY")
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self.extra_body = dict(extra_body or {})
        self.model_id = f"openai:{model}@{base_url}"
        self.usage = Usage()
        self._client: Any = None
        self._client_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIChatModel({self.base_url!r}, {self.model!r})"

    def __getstate__(self) -> dict[str, Any]:
        # the HTTP client holds sockets and locks: a copy in another process opens its own
        state = self.__dict__.copy()
        state["_client"] = None
        del state["_client_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._client_lock = threading.Lock()

    @property
    def client(self) -> Any:
        """The ``openai.OpenAI`` client (created on first use, with its own retries off)."""
        with self._client_lock:
            if self._client is None:
                openai = require("openai", "remote")
                self._client = openai.OpenAI(
                    base_url=self.base_url, api_key=self.api_key, timeout=self.timeout, max_retries=0
                )
            return self._client

    def chat(
        self,
        messages: Sequence[Message],
        *,
        seed: int | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> str:
        """The reply's text (an empty string when the server sent no content, e.g. only tool calls).

        Args:
            messages: the conversation, ``{"role", "content"}`` dicts.
            seed: passed through as the request's ``seed`` (omitted when ``None``).
            max_tokens: passed through as ``max_tokens``.
            temperature: passed through as ``temperature``.

        Raises:
            BackendError: ``retryable=False`` at once for a 4xx other than 408/409/429;
                ``retryable=True`` after ``max_retries + 1`` failed attempts otherwise.
        """
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
        }
        if seed is not None:
            request["seed"] = int(seed)
        if self.extra_body:
            request["extra_body"] = self.extra_body
        openai = require("openai", "remote")
        last = ""
        for attempt in range(self.max_retries + 1):
            retry_after: float | None = None
            try:
                response = self.client.chat.completions.create(**request)
                text = _reply_text(response)
            except openai.APIStatusError as exc:
                status = exc.status_code
                last = f"HTTP {status}: {_short(exc)}"
                if status < 500 and status not in RETRYABLE_STATUS:
                    self.usage.add(failures=1)
                    raise BackendError(f"{self.model_id}: {last}", retryable=False) from exc
                retry_after = _retry_after(exc)
            except openai.APIConnectionError as exc:  # timeouts included (APITimeoutError)
                last = f"{type(exc).__name__}: {_short(exc)}"
            except (openai.APIResponseValidationError, ValueError, _MalformedReply) as exc:
                # ValueError: the body was not JSON (json.JSONDecodeError)
                last = f"malformed reply ({type(exc).__name__}: {_short(exc)})"
            else:
                tokens = getattr(response, "usage", None)
                self.usage.add(
                    model_calls=1,
                    prompt_tokens=int(getattr(tokens, "prompt_tokens", 0) or 0),
                    completion_tokens=int(getattr(tokens, "completion_tokens", 0) or 0),
                )
                return text
            if attempt == self.max_retries:
                break
            delay = min(self.max_backoff_s, self.backoff_s * 2**attempt)
            if retry_after is not None:
                delay = max(delay, min(self.max_backoff_s, retry_after))
            logger.info(
                "%s: attempt %d failed (%s); retrying in %.3g s", self.model_id, attempt + 1, last, delay
            )
            self.usage.add(retries=1)
            time.sleep(delay)
        self.usage.add(failures=1)
        logger.warning("%s: giving up after %d attempts; last: %s", self.model_id, self.max_retries + 1, last)
        raise BackendError(
            f"{self.model_id}: {self.max_retries + 1} attempts failed; last: {last}", retryable=True
        )


def _reply_text(response: Any) -> str:
    choices = getattr(response, "choices", None)
    if not choices:
        raise _MalformedReply("the reply has no choices")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise _MalformedReply("the first choice has no message")
    content = getattr(message, "content", None)
    if content is None:
        return ""
    if not isinstance(content, str):
        raise _MalformedReply(f"the message content is a {type(content).__name__}, not a str")
    return content


def _retry_after(exc: Any) -> float | None:
    """The server's ``Retry-After`` in seconds, if it sent a number."""
    response = getattr(exc, "response", None)
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:  # an HTTP date: ignore it and use the backoff
        return None


def _short(exc: BaseException, limit: int = 300) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "..."
