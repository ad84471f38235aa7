"""A local test server speaking the OpenAI chat-completions and Gemini generateContent protocols.

Why a real HTTP server rather than mocking the SDKs: the leak filter's behaviour under faults
(429, 5xx, timeouts, malformed bodies) depends on how the *real* ``openai`` and ``google-genai``
clients surface them, which a mock would only restate. The server binds 127.0.0.1 on a free port
in a background thread (stdlib ``ThreadingHTTPServer``), answers with a programmable function,
injects queued faults per model, can add a fixed latency per request (for the orchestration
benchmark), and records every request it received.

Endpoints:
- ``POST /v1/chat/completions`` — OpenAI-compatible; image as a base64 ``data:`` URL.
- ``POST /<version>/models/<model>:generateContent`` — Gemini; image as ``inlineData``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = ("429", "500", "503", "timeout", "malformed", "empty", "wrong_letter")
_GEMINI_PATH = re.compile(r"^/(?P<ver>[^/]+)/models/(?P<model>[^/:]+):generateContent$")


@dataclass
class Recorded:
    """One request as the server saw it."""

    protocol: str  # openai | gemini
    model: str
    prompt: str
    image_sha256: str
    mime_type: str
    api_key: str
    fault: str  # '' when answered normally
    answer: str


AnswerFn = Callable[[str, str, bytes], str]


class ProtocolServer:
    """Programmable OpenAI + Gemini endpoint for tests and benchmarks."""

    def __init__(self, latency_s: float = 0.0, hang_s: float = 3.0) -> None:
        self.latency_s = latency_s
        self.hang_s = hang_s  # how long a "timeout" fault stalls before answering
        self.answer_fn: AnswerFn = lambda model, prompt, image: "A"
        self._faults: dict[str, deque[str]] = defaultdict(deque)
        self._lock = threading.Lock()
        self.requests: list[Recorded] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> ProtocolServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in two writes; without TCP_NODELAY, Nagle + the client's
            # delayed ACK add ~40 ms to every response, which would swamp the latency benchmark
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:  # noqa: N802 (stdlib naming)
                server._handle(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
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
    def set_answers(self, fn: AnswerFn) -> None:
        """``fn(model, prompt, image_bytes) -> answer text``."""
        self.answer_fn = fn

    def push_faults(self, model: str, *faults: str) -> None:
        """Queue faults for ``model``; each request pops one until the queue is empty."""
        for f in faults:
            if f not in FAULTS:
                raise ValueError(f"unknown fault {f!r}; known: {FAULTS}")
        with self._lock:
            self._faults[model].extend(faults)

    def count(self, model: str | None = None, protocol: str | None = None) -> int:
        with self._lock:
            return sum(
                1
                for r in self.requests
                if (model is None or r.model == model) and (protocol is None or r.protocol == protocol)
            )

    def reset_log(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- handling --------------------------------------------------------------------------
    def _send(self, h: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]) -> None:
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(body)))
            for k, v in headers.items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(body)
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout fault): nothing to do

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(h, 400, b'{"error": {"message": "bad json"}}', {})
            return
        path = h.path.split("?")[0]
        m = _GEMINI_PATH.match(path)
        if path == "/v1/chat/completions":
            protocol, model = "openai", str(body.get("model", ""))
            prompt, image, mime = _openai_inputs(body)
            auth = h.headers.get("Authorization", "")
            api_key = auth.removeprefix("Bearer ").strip()
        elif m:
            protocol, model = "gemini", m.group("model")
            prompt, image, mime = _gemini_inputs(body)
            api_key = h.headers.get("x-goog-api-key", "")
        else:
            self._send(h, 404, b'{"error": {"message": "not found"}}', {})
            return

        with self._lock:
            fault = self._faults[model].popleft() if self._faults[model] else ""
        answer = "" if fault else self.answer_fn(model, prompt, image)
        if fault == "wrong_letter":
            answer = "Z"
        with self._lock:
            self.requests.append(
                Recorded(
                    protocol, model, prompt, hashlib.sha256(image).hexdigest(), mime, api_key, fault, answer
                )
            )
        if self.latency_s:
            time.sleep(self.latency_s)
        if fault in ("429", "500", "503"):
            code = int(fault)
            status = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}[code]
            err = {"error": {"code": code, "message": f"injected {fault}", "status": status}}
            if protocol == "openai":
                err = {"error": {"message": f"injected {fault}", "type": status.lower(), "code": str(code)}}
            extra = {"Retry-After": "0"} if code == 429 else {}
            self._send(h, code, json.dumps(err).encode(), extra)
            return
        if fault == "timeout":
            time.sleep(self.hang_s)
        if fault == "malformed":
            self._send(h, 200, b'{"choices": [{"message": {"content": "A"', {})
            return
        if fault == "empty":
            self._send(h, 200, b"{}", {})
            return
        pt, ct = len(prompt.split()) + 85, max(1, len(answer.split()))
        if protocol == "openai":
            resp = {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
            }
        else:
            resp = {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": answer}]},
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": {
                    "promptTokenCount": pt,
                    "candidatesTokenCount": ct,
                    "totalTokenCount": pt + ct,
                },
                "modelVersion": model,
            }
        self._send(h, 200, json.dumps(resp).encode(), {})


def _openai_inputs(body: dict[str, Any]) -> tuple[str, bytes, str]:
    texts: list[str] = []
    image, mime = b"", ""
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
                url = part["image_url"]["url"]
                head, _, data = url.partition(",")
                mime = head.removeprefix("data:").split(";")[0]
                image = _b64(data)
    return "\n".join(texts), image, mime


def _gemini_inputs(body: dict[str, Any]) -> tuple[str, bytes, str]:
    texts: list[str] = []
    image, mime = b"", ""
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            if "text" in part:
                texts.append(part["text"])
            inline = part.get("inlineData") or part.get("inline_data")
            if inline:
                mime = inline.get("mimeType") or inline.get("mime_type", "")
                image = _b64(inline["data"])
    return "\n".join(texts), image, mime


def _b64(data: str) -> bytes:
    """Decode standard or URL-safe base64, padded or not (google-genai sends URL-safe)."""
    data = data.replace("-", "+").replace("_", "/")
    return base64.b64decode(data + "=" * (-len(data) % 4))
