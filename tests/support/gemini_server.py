"""A local stand-in for the Gemini ``generateContent`` endpoint, for testing the real client.

Why a server rather than a mock: the reviewer must be exercised through the real google-genai
client (request building, ``x-goog-api-key`` header, error mapping, ``response.parsed``), so the
only fake part is the far end of the socket. stdlib ``http.server`` on 127.0.0.1 with a free
port, in a daemon thread.

The installed google-genai 3.x POSTs ``/v1/models/{model}:generateContent`` (design.md
§Environment; checked in
``google/genai/_api_client.py``: ``GOOGLE_AI_API_DEFAULT_VERSION = 'v1'``); ``/v1beta/...`` is
accepted too, for ``GOOGLE_GENAI_API_VERSION=beta``.

Answers are programmable: a ``responder(body) -> dict`` builds the model's JSON answer from the
request, and ``push(...)`` queues one-shot faults/answers consumed before the responder:
``Status(429)``, ``Status(500)``, ``MalformedEnvelope()`` (HTTP 200, body not JSON),
``MalformedText()`` (valid envelope, model text not JSON), ``Delay(seconds)`` (sleep, then
answer normally — for client timeouts), ``Reply(obj)`` (a fixed answer).
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_PATH = re.compile(r"^/(v1|v1beta)/models/(?P<model>[^/:]+):generateContent$")


@dataclass(frozen=True)
class Status:
    code: int
    message: str = "injected fault"


@dataclass(frozen=True)
class MalformedEnvelope:
    body: bytes = b'{"candidates": [ this is not json'


@dataclass(frozen=True)
class MalformedText:
    text: str = '{"decision": "approve", "criteria": ['


@dataclass(frozen=True)
class Delay:
    seconds: float


@dataclass(frozen=True)
class Reply:
    answer: dict[str, Any]


Action = Status | MalformedEnvelope | MalformedText | Delay | Reply

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


@dataclass
class RecordedRequest:
    path: str
    model: str
    headers: dict[str, str]
    body: dict[str, Any]
    answered: str  # "ok" or the fault that was injected


@dataclass
class GeminiStub:
    """Fake Gemini server. Use as a context manager; ``base_url`` goes into ``HttpOptions``."""

    responder: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    _queue: deque[Action] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # -- control -------------------------------------------------------------------------
    def push(self, *actions: Action) -> None:
        with self._lock:
            self._queue.extend(actions)

    def _next(self) -> Action | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> GeminiStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                stub._handle(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> GeminiStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling ---------------------------------------------------------------
    def _send(self, h: BaseHTTPRequestHandler, code: int, body: bytes) -> None:
        try:
            h.send_response(code)
            h.send_header("Content-Type", "application/json; charset=UTF-8")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # client gave up (timeout test)
            pass

    @staticmethod
    def envelope(text: str, model: str) -> dict[str, Any]:
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": text}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
            "modelVersion": model,
        }

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        raw = h.rfile.read(int(h.headers.get("Content-Length", "0") or 0))
        m = _PATH.match(h.path.split("?", 1)[0])
        if m is None:
            self._send(
                h,
                404,
                json.dumps({"error": {"code": 404, "message": h.path, "status": "NOT_FOUND"}}).encode(),
            )
            return
        model = m.group("model")
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_unparsed": raw.decode(errors="replace")}
        action = self._next()
        label = type(action).__name__ if action is not None else "ok"
        if isinstance(action, Status):
            label = f"status_{action.code}"
        with self._lock:
            self.requests.append(
                RecordedRequest(h.path, model, {k.lower(): v for k, v in h.headers.items()}, body, label)
            )
        if isinstance(action, Delay):
            time.sleep(action.seconds)
            action = None
        if isinstance(action, Status):
            err = {
                "error": {
                    "code": action.code,
                    "message": action.message,
                    "status": _STATUS_NAMES.get(action.code, "UNKNOWN"),
                }
            }
            self._send(h, action.code, json.dumps(err).encode())
        elif isinstance(action, MalformedEnvelope):
            self._send(h, 200, action.body)
        elif isinstance(action, MalformedText):
            self._send(h, 200, json.dumps(self.envelope(action.text, model)).encode())
        else:
            if isinstance(action, Reply):
                answer = action.answer
            elif self.responder is not None:
                answer = self.responder(body)
            else:
                answer = {"decision": "approve", "criteria": [], "rationale": "default"}
            self._send(h, 200, json.dumps(self.envelope(json.dumps(answer), model)).encode())


def request_text(body: dict[str, Any]) -> str:
    """All text parts of a recorded ``generateContent`` body, joined (for responders)."""
    out: list[str] = []
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            if "text" in part:
                out.append(part["text"])
    return "\n".join(out)


def inline_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``inlineData`` parts of a recorded body (mime type + base64 data)."""
    out: list[dict[str, Any]] = []
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            inline = part.get("inlineData") or part.get("inline_data")
            if inline:
                out.append(inline)
    return out


def inline_bytes(part: dict[str, Any]) -> bytes:
    """Decode an ``inlineData`` part. The client sends URL-safe base64 (``-``/``_``)."""
    data = part["data"]
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def inline_mime(part: dict[str, Any]) -> str:
    return str(part.get("mimeType") or part.get("mime_type"))
