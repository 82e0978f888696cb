"""A fake OpenAI-compatible chat server on 127.0.0.1, with scripted faults.

Each request to ``POST /v1/chat/completions`` takes the next behaviour from a script (then
``default`` once the script runs out):

- ``"ok"``: a valid completion whose text is derived from the request (seed, temperature,
  max_tokens and the last message), with ``usage``;
- ``"500"``, ``"429"``, ``"400"``: that HTTP status with an OpenAI-style error body;
- ``"hang"``: sends nothing until the server stops (longer than any client timeout in the tests);
- ``"close"``: drops the connection without a response;
- ``"malformed"``: status 200 with a body that is not JSON;
- ``"no_choices"``: status 200, valid JSON without ``choices``.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BEHAVIOURS = frozenset({"ok", "500", "429", "400", "hang", "close", "malformed", "no_choices"})


def reply_text(request: dict[str, Any]) -> str:
    """The deterministic text an ``ok`` reply carries for ``request``."""
    last = request["messages"][-1]["content"] if request.get("messages") else ""
    return (
        f"echo seed={request.get('seed')} temperature={request.get('temperature')} "
        f"max_tokens={request.get('max_tokens')} n={len(request.get('messages', []))}: {last[:40]}"
    )


class FakeOpenAIServer:
    """The server, running in a daemon thread until `stop` (also a context manager).

    Attributes:
        url: the base URL, ``http://127.0.0.1:<port>/v1``.
        requests: the JSON body of every request received (``None`` for an unreadable one).
        behaviours: what was done for each request, in order.
    """

    def __init__(self, script: Iterable[str] = (), *, default: str = "ok", hang_s: float = 10.0) -> None:
        unknown = ({default} | set(script)) - BEHAVIOURS
        if unknown:
            raise ValueError(f"unknown behaviours {sorted(unknown)}")
        self._script: deque[str] = deque(script)
        self._default = default
        self._hang_s = hang_s
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[dict[str, Any] | None] = []
        self.behaviours: list[str] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True
        self._thread.start()

    @property
    def count(self) -> int:
        """How many chat requests arrived."""
        with self._lock:
            return len(self.behaviours)

    def push(self, *behaviours: str) -> None:
        """Append behaviours to the script."""
        with self._lock:
            self._script.extend(behaviours)

    def stop(self) -> None:
        self._stopping.set()  # ends any hanging handler at once
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, body: dict[str, Any] | None) -> str:
        with self._lock:
            behaviour = self._script.popleft() if self._script else self._default
            self.requests.append(body)
            self.behaviours.append(behaviour)
            return behaviour

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                del format, args

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = None
                behaviour = server._next(body)
                if behaviour == "hang":
                    server._stopping.wait(server._hang_s)
                    self.close_connection = True
                elif behaviour == "close":
                    self.close_connection = True  # nothing written: the client sees a dropped connection
                elif behaviour == "malformed":
                    self._send_raw(200, b'{"id": "x", "choices": [{"message": ')
                elif behaviour == "no_choices":
                    self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "m"})
                elif behaviour in ("500", "429", "400"):
                    self._send(int(behaviour), {"error": {"message": f"scripted {behaviour}", "type": "x"}})
                else:
                    self._send(200, _completion(body or {}))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self._send_raw(status, json.dumps(payload).encode())

            def _send_raw(self, status: int, data: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up first (its timeout): nothing to do
                    self.close_connection = True

        return Handler


def _completion(request: dict[str, Any]) -> dict[str, Any]:
    text = reply_text(request)
    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in request.get("messages", []))
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", ""),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(text.split()),
            "total_tokens": prompt_tokens + len(text.split()),
        },
    }
