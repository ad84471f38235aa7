"""A local server speaking the OpenAI chat-completions and the Gemini generateContent protocols.

Why a real HTTP server rather than mocking the SDKs: how the client layer behaves under faults
(429, 5xx, timeouts, broken bodies) depends on how the *real* ``openai`` and ``google-genai``
clients surface them, which a mock would only restate. Only the far end of the socket is fake.

- ``POST /v1/chat/completions`` — OpenAI-compatible (the client's ``base_url`` is
  :attr:`ProtocolServer.openai_base_url`); images as base64 ``data:`` URLs.
- ``POST /<version>/models/<model>:generateContent`` — Gemini (``base_url`` is
  :attr:`ProtocolServer.base_url`; google-genai 3.x uses ``v1``); images as ``inlineData``.

Answers come from ``answer(call) -> str | dict`` (a dict is sent as its JSON text); faults are
queued with :meth:`ProtocolServer.push`, for one model or for any, and each request consumes one:
:class:`Status` (an HTTP error in the protocol's error shape), :class:`Hang` (answer only after
a delay — a client timeout), :class:`RawBody` (HTTP 200 with a given body, by default not JSON),
:class:`EmptyBody`
(``{}``: no choices / candidates) and :class:`Reply` (a fixed answer text, e.g. a wrong letter or
JSON that does not follow the schema). Every request is recorded (:class:`Call`), and so is the
largest number handled at one time (``max_in_flight``). ``latency_s`` is a fixed latency: the
answer leaves ``latency_s`` after the request line arrived (the server's own parsing counts
towards it), status line, headers and body in one write (two writes woke the client twice).

stdlib ``ThreadingHTTPServer`` on 127.0.0.1, free port, background thread; HTTP/1.1 keep-alive,
``TCP_NODELAY`` (without it Nagle plus delayed ACK add ~40 ms per response) and a listen backlog
of 128 (the default 5 drops the SYNs of a burst of new connections, which the client retries
only after a second). :func:`serve_in_subprocess` runs it in a child process, so its threads do
not compete with the client for the GIL (``benchmarks/probe_orchestration.py``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_GEMINI_PATH = re.compile(r"^/(?P<ver>[^/]+)/models/(?P<model>[^/:]+):generateContent$")
_STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


@dataclass(frozen=True)
class Status:
    """An HTTP error; ``retry_after`` adds a ``Retry-After`` header (seconds)."""

    code: int
    message: str = "injected fault"
    retry_after: float | None = None

    @property
    def label(self) -> str:
        return str(self.code)


@dataclass(frozen=True)
class Hang:
    """Answer normally, but only after ``seconds`` (longer than the client's timeout)."""

    seconds: float
    label: str = "hang"


@dataclass(frozen=True)
class RawBody:
    """HTTP 200 with exactly this body (by default, one that is not JSON)."""

    body: bytes = b'{"choices": [{"message": {"content": "A"'
    label: str = "raw_body"


@dataclass(frozen=True)
class EmptyBody:
    """HTTP 200 with ``{}``: valid JSON without choices / candidates."""

    label: str = "empty_body"


@dataclass(frozen=True)
class Reply:
    """A fixed answer instead of the answer function's (text, or a dict sent as JSON)."""

    answer: str | dict[str, Any]
    label: str = "reply"


Fault = Status | Hang | RawBody | EmptyBody | Reply


@dataclass
class Call:
    """One request as the server saw it; ``fault`` is the injected fault's label, or ``""``."""

    protocol: str  # openai | gemini
    path: str
    model: str
    headers: dict[str, str]  # lower-case names
    body: dict[str, Any]
    texts: list[str]  # the user turn's text parts, in order
    images: list[bytes]
    mime_types: list[str]
    fault: str = ""
    answer: str = ""

    @property
    def prompt(self) -> str:
        return "\n".join(self.texts)

    @property
    def image(self) -> bytes:
        return self.images[0] if self.images else b""

    @property
    def image_sha256(self) -> str:
        return hashlib.sha256(self.image).hexdigest()

    @property
    def mime_type(self) -> str:
        return self.mime_types[0] if self.mime_types else ""

    @property
    def api_key(self) -> str:
        if self.protocol == "openai":
            return self.headers.get("authorization", "").removeprefix("Bearer ").strip()
        return self.headers.get("x-goog-api-key", "")


AnswerFn = Callable[[Call], "str | dict[str, Any]"]


@dataclass
class ProtocolServer:
    """Programmable OpenAI + Gemini endpoint. Use as a context manager."""

    answer: AnswerFn = field(default=lambda call: "A")
    latency_s: float = 0.0
    requests: list[Call] = field(default_factory=list)
    max_in_flight: int = 0  # the most requests the server was handling at one time
    _in_flight: int = 0
    _faults: dict[str | None, deque[Fault]] = field(default_factory=lambda: defaultdict(deque))
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _httpd: ThreadingHTTPServer | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> ProtocolServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def parse_request(self) -> bool:
                # the request line has just been read: the latency counts from here
                self.arrived = time.monotonic()
                return super().parse_request()

            def do_POST(self) -> None:  # noqa: N802 (stdlib naming)
                with server._lock:
                    server._in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server._in_flight)
                try:
                    server._handle(self)
                finally:
                    with server._lock:
                        server._in_flight -= 1

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 128

        self._httpd = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ProtocolServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    # -- programming -----------------------------------------------------------------------
    def push(self, *faults: Fault, model: str | None = None) -> None:
        """Queue faults for ``model`` (or for any model); each request consumes one, its model's
        first."""
        with self._lock:
            self._faults[model].extend(faults)

    def count(self, model: str | None = None, protocol: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.requests if (model is None or r.model == model)
                       and (protocol is None or r.protocol == protocol))

    def reset_log(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- handling --------------------------------------------------------------------------
    def _next_fault(self, model: str) -> Fault | None:
        with self._lock:
            for queue in (self._faults[model], self._faults[None]):
                if queue:
                    return queue.popleft()
        return None

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            _send(h, 400, b'{"error": {"message": "request body is not JSON"}}')
            return
        path = h.path.split("?")[0]
        m = _GEMINI_PATH.match(path)
        headers = {k.lower(): v for k, v in h.headers.items()}
        if path == "/v1/chat/completions":
            call = Call("openai", path, str(body.get("model", "")), headers, body, *_openai_inputs(body))
        elif m:
            call = Call("gemini", path, m.group("model"), headers, body, *_gemini_inputs(body))
        else:
            _send(h, 404, json.dumps({"error": {"code": 404, "message": f"no route {path}",
                                                "status": "NOT_FOUND"}}).encode())
            return
        fault = self._next_fault(call.model)
        call.fault = fault.label if fault is not None else ""
        if isinstance(fault, Reply) or fault is None:
            answer = fault.answer if isinstance(fault, Reply) else self.answer(call)
            call.answer = answer if isinstance(answer, str) else json.dumps(answer)
        with self._lock:
            self.requests.append(call)
        if self.latency_s:  # the answer leaves latency_s after the request arrived, parsing included
            spent = time.monotonic() - getattr(h, "arrived", time.monotonic())
            time.sleep(max(0.0, self.latency_s - spent))
        if isinstance(fault, Hang):
            time.sleep(fault.seconds)
            call.answer = _text(self.answer(call))
        if isinstance(fault, Status):
            _send(h, fault.code, _error(call.protocol, fault),
                  {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {})
        elif isinstance(fault, RawBody):
            _send(h, 200, fault.body)
        elif isinstance(fault, EmptyBody):
            _send(h, 200, b"{}")
        else:
            _send(h, 200, json.dumps(_reply(call)).encode())


def _text(answer: str | dict[str, Any]) -> str:
    return answer if isinstance(answer, str) else json.dumps(answer)


def _send(h: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None
          ) -> None:
    reason = h.responses.get(status, ("",))[0]
    lines = [f"{h.protocol_version} {status} {reason}", f"Server: {h.version_string()}",
             f"Date: {h.date_time_string()}", "Content-Type: application/json; charset=UTF-8",
             f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    try:  # one write: status line, headers and body leave in one segment, as from a real server
        h.wfile.write("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + body)
        h.wfile.flush()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up (a Hang longer than its timeout)


def _error(protocol: str, fault: Status) -> bytes:
    status = _STATUS_NAMES.get(fault.code, "UNKNOWN")
    if protocol == "openai":
        return json.dumps({"error": {"message": fault.message, "type": status.lower(),
                                     "code": str(fault.code)}}).encode()
    return json.dumps({"error": {"code": fault.code, "message": fault.message, "status": status}}).encode()


def _reply(call: Call) -> dict[str, Any]:
    pt, ct = len(call.prompt.split()) + 85 * len(call.images), max(1, len(call.answer.split()))
    if call.protocol == "openai":
        return {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": call.model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": call.answer}}],
            "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
        }
    return {
        "candidates": [{"content": {"role": "model", "parts": [{"text": call.answer}]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": pt, "candidatesTokenCount": ct, "totalTokenCount": pt + ct},
        "modelVersion": call.model,
    }


def _openai_inputs(body: dict[str, Any]) -> tuple[list[str], list[bytes], list[str]]:
    texts: list[str] = []
    images: list[bytes] = []
    mimes: list[str] = []
    for msg in body.get("messages", []):
        if msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content or []:
            if part.get("type") == "text":
                texts.append(part.get("text", ""))
            elif part.get("type") == "image_url":
                head, _, data = part["image_url"]["url"].partition(",")
                mimes.append(head.removeprefix("data:").split(";")[0])
                images.append(_b64(data))
    return texts, images, mimes


def _gemini_inputs(body: dict[str, Any]) -> tuple[list[str], list[bytes], list[str]]:
    texts: list[str] = []
    images: list[bytes] = []
    mimes: list[str] = []
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            if "text" in part:
                texts.append(part["text"])
            inline = part.get("inlineData") or part.get("inline_data")
            if inline:
                mimes.append(inline.get("mimeType") or inline.get("mime_type", ""))
                images.append(_b64(inline["data"]))
    return texts, images, mimes


def _b64(data: str) -> bytes:
    """Standard or URL-safe base64, padded or not (google-genai sends URL-safe)."""
    data = data.replace("-", "+").replace("_", "/")
    return base64.b64decode(data + "=" * (-len(data) % 4))


# -- in a child process ------------------------------------------------------------------------
def _serve(latency: float, conn: Any) -> None:
    with ProtocolServer(latency_s=latency) as server:
        conn.send(server.port)
        while True:
            cmd = conn.recv()
            if cmd == "count":
                conn.send(server.count())
            elif cmd == "reset":
                server.reset_log()
                conn.send(True)
            else:
                return


@dataclass
class RemoteServer:
    """A :class:`ProtocolServer` answering ``"A"`` in a child process (see :func:`serve_in_subprocess`)."""

    base_url: str
    openai_base_url: str
    pid: int
    _conn: Any

    def count(self) -> int:
        self._conn.send("count")
        return int(self._conn.recv())

    def reset_log(self) -> None:
        self._conn.send("reset")
        self._conn.recv()


@contextmanager
def serve_in_subprocess(latency_s: float = 0.0) -> Iterator[RemoteServer]:
    """The server in its own (forked) process, so that its threads do not share the client's GIL:
    a measurement is then about the client, not the test server."""
    import multiprocessing as mp

    conn, child = mp.Pipe()
    proc = mp.get_context("fork").Process(target=_serve, args=(latency_s, child), daemon=True)
    proc.start()
    port = conn.recv()
    base = f"http://127.0.0.1:{port}"
    try:
        yield RemoteServer(base, f"{base}/v1", int(proc.pid or 0), conn)
    finally:
        conn.send("stop")
        proc.join(5)
