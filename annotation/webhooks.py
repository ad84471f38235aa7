"""Every Label Studio event, captured as it happens: a webhook receiver on 127.0.0.1 that appends
each event to the decision log of the round it concerns, and what a pull reads back from it.

Why: Label Studio keeps no history of an annotation. A reject deleted and made again as an
approval before any pull, or an annotation PATCHed onto another task, left no trace a pull could
see. Label Studio sends webhooks (measured on 1.23.2, ``label_studio/webhooks/``):

- per project only: the community API refuses a webhook without a project (404), so
  ``server start`` registers one on every review project of the server and ``push`` on each
  project it creates, before it imports any task;
- synchronously, inside the request that changed the annotation (no Redis here, so
  ``start_job_async_or_sync`` runs the job in place): when ``annotations.create`` returns, the
  event is in the log. Label Studio waits ``WEBHOOK_TIMEOUT`` seconds (default 1, set to 30 by
  ``annotation.server.process``: a receiver waiting for the log's lock must not lose an event)
  and drops the event on a timeout or a refused connection — the reconciliation below sees that;
- the payload of ``ANNOTATION_CREATED`` / ``ANNOTATION_UPDATED`` is the whole annotation (ids
  of task, project, ``completed_by``, ``updated_by``, ``result``, timestamps); a deletion
  (``ANNOTATIONS_DELETED``, key ``annotations``) sends the annotation ids only;
  ``TASKS_DELETED`` sends task ids. There is no task-update event (task data edits are caught by
  ``pull``'s comparison with the push record);
- only the actions in :data:`ACTIONS`: not ``TASKS_CREATED``, whose payload is every imported
  task serialized whole — measured at 4,100 tasks per project, it made each import 1.8× as long
  (2.4 s against 1.35 s), and a task nobody pushed is found by ``pull`` anyway (``foreign_task``);
- SSRF protection refuses loopback URLs (403 at registration, nothing sent): the server's
  environment bans the usual reserved networks except 127.0.0.1 itself.

The receiver (``python -m annotation.webhooks``, started and stopped with the server by
:class:`annotation.server.LabelStudioServer`) keeps its routes — project id -> the decision logs
that pushed it — in its state folder. ``push`` attaches a log (``POST /attach``), which writes a
``receiver`` record (state ``attach``) into it; each event becomes an ``event`` record in every log
routed to its project (only the fields a check needs: no task data, no comment text, so no
e-mail address reaches the log); its own start and stop are ``receiver`` records in every routed
log, the stop saying whether Label Studio was still up. Events of a project no log pushed go to
``unrouted.jsonl`` in the state folder.

What a pull makes of it (:func:`capture_gaps`, :func:`annotation_events`, ``annotation.pull``):

- a hole in the capture after the round was attached — the receiver stopped while Label Studio
  ran, a session that ended without a stop record (killed), a session not alive at pull time, a
  round pushed without a receiver, a project whose webhook is gone or inactive — is an
  ``event_gap`` violation on every version pushed before the hole ended;
- an annotation with no received ``ANNOTATION_CREATED``, or whose state differs from its last
  received event, is ``missing_event``; events that show another task or another decision value
  than the one pulled are ``moved_decision`` / ``changed_decision``; an annotation an event shows
  on one of the round's tasks that is gone is ``deleted_decision`` — never pulled or not.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from annotation import decision_log
from core.files import canonical_json, write_atomic
from core.loopback import free_port, port_busy

EVENTS_PATH = "/benchforge/events"
HEADER = "X-Benchforge-Webhook"
TOKEN_ENV = "BENCHFORGE_WEBHOOK_TOKEN"
DISCOVERY = ".benchforge-webhooks.json"  # in the server's media root: push and pull find it there
STATE_FILE = "receiver.json"
ROUTES_FILE = "routes.json"
UNROUTED = "unrouted.jsonl"
ANNOTATION_WRITES = ("ANNOTATION_CREATED", "ANNOTATIONS_CREATED", "ANNOTATION_UPDATED")
DELETED = "ANNOTATIONS_DELETED"
ACTIONS = (*ANNOTATION_WRITES, DELETED, "TASKS_DELETED")  # what the project's webhook sends
_DECISIONS = ("approve", "revise", "reject")


def _now() -> str:
    return datetime.now(UTC).isoformat()


# --------------------------------------------------------------------------------------------
# what an event record keeps
# --------------------------------------------------------------------------------------------


def result_sha256(result: Any) -> str:
    """The hash an event record keeps of an annotation's result (the comment text may hold
    anything, e-mail addresses included: the log keeps its hash and the decision only)."""
    return hashlib.sha256(canonical_json(result if result is not None else []).encode()).hexdigest()


def _decision(result: Any) -> str | None:
    """The decision value of a result, rubric-free; any value outside the three is ``other``."""
    for item in result if isinstance(result, list) else []:
        if isinstance(item, dict) and item.get("from_name") == "decision":
            choices = (item.get("value") or {}).get("choices")
            if isinstance(choices, list) and len(choices) == 1:
                return choices[0] if choices[0] in _DECISIONS else "other"
            return "other"
    return None


def _id(v: Any) -> int | None:
    if isinstance(v, dict):
        v = v.get("id")
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def compact(payload: dict[str, Any]) -> dict[str, Any]:
    """The facts of one webhook payload a check needs: the action, the project, and per
    annotation its ids, author, editor, timestamps, decision and result hash (per task: its id)."""
    action = str(payload.get("action", ""))
    out: dict[str, Any] = {"action": action, "project": _id(payload.get("project"))}
    raw = payload.get("annotation", payload.get("annotations"))  # a deletion: "annotations"
    anns = raw if isinstance(raw, list) else [raw] if isinstance(raw, dict) else []
    if anns:
        out["annotations"] = []
        for a in anns:
            rec: dict[str, Any] = {"id": _id(a)}
            if action != DELETED:
                rec.update({"task": _id(a.get("task")), "project": _id(a.get("project")),
                            "completed_by": _id(a.get("completed_by")),
                            "updated_by": _id(a.get("updated_by")),
                            "created_at": a.get("created_at"), "updated_at": a.get("updated_at"),
                            "was_cancelled": bool(a.get("was_cancelled")),
                            "decision": _decision(a.get("result")),
                            "result_sha256": result_sha256(a.get("result"))})
                if out["project"] is None:
                    out["project"] = rec["project"]
            out["annotations"].append(rec)
    tasks = payload.get("tasks")
    if isinstance(tasks, list):
        out["tasks"] = [_id(t) for t in tasks]
    return out


# --------------------------------------------------------------------------------------------
# the receiver process
# --------------------------------------------------------------------------------------------


class Receiver:
    """The receiver's state: its session, its routes, and the writes into the logs.

    One lock for every write: the routes file and each log's chain see one writer at a time
    (the log's own lock also keeps push and pull apart)."""

    def __init__(self, state_dir: Path, token: str, ls_port: int | None, url: str) -> None:
        self.state_dir = state_dir
        self.token = token
        self.ls_port = ls_port
        self.url = url
        self.session = secrets.token_hex(8)
        self.n = 0
        self.lock = threading.Lock()
        self.routes: dict[str, dict[str, Any]] = {}
        rf = state_dir / ROUTES_FILE
        if rf.is_file():
            with contextlib.suppress(ValueError):
                self.routes = dict(json.loads(rf.read_text(encoding="utf-8")))

    def _save_routes(self) -> None:
        write_atomic(self.state_dir / ROUTES_FILE, json.dumps(self.routes, sort_keys=True, indent=1),
                     mode=0o600)

    def _logs_of(self, project: int | None) -> list[tuple[str, dict[str, Any]]]:
        return [(log, r) for log, r in sorted(self.routes.items())
                if project is not None and project in r["projects"] and Path(log).is_dir()]

    def _write(self, log: str, kind: str, **facts: Any) -> None:
        try:
            decision_log.append_record(log, kind, session=self.session, **facts)
        except Exception as exc:  # noqa: BLE001 - whatever failed, the event is never lost silently
            self._unrouted({"log": log, "kind": kind, "error": str(exc)[:300], **facts})

    def _unrouted(self, rec: dict[str, Any]) -> None:
        with open(self.state_dir / UNROUTED, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"at": _now(), "session": self.session, **rec}, sort_keys=True) + "\n")

    def started(self) -> None:
        with self.lock:
            for log in sorted(self.routes):
                if Path(log).is_dir():
                    self._write(log, "receiver", state="start", url=self.url, pid=os.getpid())

    def stopped(self) -> None:
        """The stop record says whether Label Studio was still up: if it was, every moment until
        the next start is a hole; if not, nothing could be decided meanwhile."""
        up = False
        if self.ls_port:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.ls_port), 1):
                up = True
        with self.lock:
            for log in sorted(self.routes):
                if Path(log).is_dir():
                    self._write(log, "receiver", state="stop", server_stopped=not up)

    def attach(self, log: str, projects: list[int], benchmark: str, review_round: str) -> None:
        with self.lock:
            route = self.routes.setdefault(log, {"projects": [], "rounds": []})
            route["projects"] = sorted(set(route["projects"]) | {int(p) for p in projects})
            if [benchmark, review_round] not in route["rounds"]:
                route["rounds"].append([benchmark, review_round])
            self._save_routes()
            self._write(log, "receiver", state="attach", url=self.url, pid=os.getpid(),
                        projects=sorted(int(p) for p in projects), benchmark=benchmark,
                        review_round=review_round)

    def event(self, payload: dict[str, Any]) -> None:
        facts = compact(payload)
        with self.lock:
            self.n += 1
            logs = self._logs_of(facts["project"])
            if not logs:
                self._unrouted({"received": self.n, **facts})
            for log, _ in logs:
                self._write(log, "event", received=self.n, **facts)


def _handler(rx: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt: str, *args: Any) -> None:  # no request lines in the log
            return

        def _answer(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path == "/health":
                self._answer(200, {"status": "UP", "session": rx.session, "events": rx.n})
            else:
                self._answer(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            given = self.headers.get(HEADER, "")
            if not hmac.compare_digest(given.encode(), rx.token.encode()):
                self._answer(403, {"error": "bad or missing " + HEADER})
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if not isinstance(body, dict):
                    raise ValueError("not an object")
            except ValueError as exc:
                self._answer(400, {"error": f"not JSON: {exc}"})
                return
            if self.path == EVENTS_PATH:
                rx.event(body)
                self._answer(200, {"ok": True, "n": rx.n})
            elif self.path == "/attach":
                rx.attach(str(body["log"]), list(body["projects"]), str(body["benchmark"]),
                          str(body["review_round"]))
                self._answer(200, {"ok": True, "session": rx.session})
            else:
                self._answer(404, {"error": "not found"})

    return Handler


def serve(state_dir: Path, port: int, ls_port: int | None) -> None:
    """Run the receiver until SIGTERM/SIGINT: start records first, stop records last."""
    token = os.environ.get(TOKEN_ENV, "")
    if len(token) < 16:
        raise SystemExit(f"{TOKEN_ENV} is not set")
    url = f"http://127.0.0.1:{port}"
    rx = Receiver(state_dir, token, ls_port, url)
    httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(rx))
    httpd.daemon_threads = True
    rx.started()
    write_atomic(state_dir / "session", rx.session)

    def stop(*_: Any) -> None:
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"webhook receiver {rx.session} on {url}", flush=True)
    try:
        httpd.serve_forever(poll_interval=0.2)
    finally:
        httpd.server_close()
        rx.stopped()


# --------------------------------------------------------------------------------------------
# starting, finding and stopping it (annotation.server.process)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReceiverInfo:
    """Where the running receiver listens; ``token`` is the header value Label Studio sends."""

    url: str
    session: str
    pid: int
    token: str
    state_dir: str

    @property
    def events_url(self) -> str:
        return self.url + EVENTS_PATH


def health(url: str, timeout: float = 2.0) -> str | None:
    """The session of the receiver answering at ``url``, or None."""
    try:
        r = httpx.get(url + "/health", timeout=timeout)
        return str(r.json()["session"]) if r.status_code == 200 else None
    except (httpx.HTTPError, ValueError, KeyError):
        return None


def read_info(media_root: str | os.PathLike[str]) -> ReceiverInfo | None:
    """The receiver recorded for the server of this media root (its discovery file), or None."""
    f = Path(media_root) / DISCOVERY
    try:
        raw = json.loads(f.read_text(encoding="utf-8"))
        return ReceiverInfo(str(raw["url"]), str(raw["session"]), int(raw["pid"]), str(raw["token"]),
                            str(raw["state_dir"]))
    except (OSError, ValueError, KeyError):
        return None


def running_info(media_root: str | os.PathLike[str]) -> ReceiverInfo | None:
    """The recorded receiver if it answers with the recorded session, else None."""
    info = read_info(media_root)
    return info if info is not None and health(info.url) == info.session else None


def start(state_dir: Path, media_root: Path, ls_port: int | None, timeout: float = 30.0
          ) -> ReceiverInfo:
    """Start the receiver (its own process group, so it outlives the command that started it and
    a stop reaches only it) on the port it had last time when that is free — the webhooks Label
    Studio holds keep pointing at it — and record it in the media root's discovery file (0600)."""
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    old = read_info(media_root)
    sf = state_dir / STATE_FILE
    last = {}
    with contextlib.suppress(OSError, ValueError):
        last = json.loads(sf.read_text(encoding="utf-8"))
    port = int(last.get("port", 0))
    if not port or port_busy(port):
        port = free_port()
    token = str(last.get("token") or (old.token if old else "") or secrets.token_urlsafe(32))
    write_atomic(sf, json.dumps({"port": port, "token": token}), mode=0o600)
    (state_dir / "session").unlink(missing_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", TOKEN_ENV: token,
           "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "PYTHONUNBUFFERED": "1"}
    fd = os.open(state_dir / "receiver.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "annotation.webhooks", "--state-dir", str(state_dir),
             "--port", str(port), *(["--ls-port", str(ls_port)] if ls_port else [])],
            env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, cwd=state_dir)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = (state_dir / "receiver.log").read_text(errors="replace").splitlines()[-5:]
            raise RuntimeError(f"the webhook receiver exited ({proc.returncode}): {' | '.join(tail)}")
        session = health(url, 1.0)
        if session:
            info = ReceiverInfo(url, session, proc.pid, token, str(state_dir))
            write_atomic(media_root / DISCOVERY, json.dumps(info.__dict__, sort_keys=True), mode=0o600)
            return info
        time.sleep(0.1)
    stop(proc.pid)
    raise RuntimeError(f"the webhook receiver did not answer on {url} within {timeout:.0f} s")


def stop(pid: int, timeout: float = 10.0) -> None:
    """SIGTERM the receiver's process group (it writes its stop records, then exits)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


# --------------------------------------------------------------------------------------------
# webhooks in Label Studio, and attaching a log (push)
# --------------------------------------------------------------------------------------------


def ensure_webhook(client: Any, project_id: int, info: ReceiverInfo, new_project: bool = False) -> int:
    """The project's one webhook to the receiver, the :data:`ACTIONS` with payload: created, or
    updated when it points elsewhere, sends other actions or was switched off. Returns its id.
    ``new_project``: the caller just made the project, so it has no webhook to look for."""
    want = {"url": info.events_url, "send_payload": True, "send_for_all_actions": False,
            "actions": list(ACTIONS), "is_active": True, "headers": {HEADER: info.token}}
    mine = [] if new_project else [
        w for w in client.webhooks.list(project=str(project_id))
        if EVENTS_PATH in str(w.url) and str(w.url).startswith("http://127.0.0.1:")]
    for extra in mine[1:]:
        client.webhooks.delete(id=extra.id)
    if mine:
        w = mine[0]
        if (w.url, w.send_payload, _sends(w), w.is_active, dict(w.headers or {})) != (
                want["url"], True, set(ACTIONS), True, want["headers"]):
            client.webhooks.update(id=w.id, **want)
        return int(w.id)
    return int(client.webhooks.create(project=project_id, **want).id)


def _sends(hook: Any) -> set[str]:
    """The actions a webhook sends ("*": every one Label Studio has)."""
    if hook.send_for_all_actions:
        return {"*"}
    return {str(getattr(a, "value", a)) for a in hook.actions or []}


def webhook_problems(client: Any, project_ids: list[int], info: ReceiverInfo | None) -> list[str]:
    """Why a project's events may not reach the receiver: no webhook to it, or one switched off,
    sending no payload or not the annotation actions."""
    if info is None:
        return []
    out = []
    for pid in project_ids:
        hooks = [w for w in client.webhooks.list(project=str(pid)) if str(w.url) == info.events_url]
        if not hooks:
            out.append(f"project {pid} has no webhook to the receiver ({info.events_url})")
        elif not any(w.is_active and w.send_payload
                     and ("*" in _sends(w) or set(ACTIONS) <= _sends(w)) for w in hooks):
            out.append(f"project {pid}'s webhook to the receiver is switched off or sends too little")
    return out


def attach(info: ReceiverInfo, log_dir: str | os.PathLike[str], projects: list[int],
           benchmark: str, review_round: str) -> str:
    """Route the projects' events to ``log_dir`` (the receiver writes an ``attach`` record
    there); returns the receiver's session."""
    log = Path(log_dir).expanduser().resolve()
    log.mkdir(parents=True, exist_ok=True)
    r = httpx.post(info.url + "/attach", headers={HEADER: info.token}, timeout=30.0,
                   json={"log": str(log), "projects": [int(p) for p in projects],
                         "benchmark": benchmark, "review_round": review_round})
    r.raise_for_status()
    return str(r.json()["session"])


def register_all(client: Any, info: ReceiverInfo, marker: str) -> list[int]:
    """``server start``: the receiver's webhook on every project whose description starts with
    ``marker`` (the review projects push made); their ids."""
    ids = []
    for p in client.projects.list(page_size=1000):
        if (p.description or "").startswith(marker):
            ensure_webhook(client, int(p.id), info)
            ids.append(int(p.id))
    return ids


# --------------------------------------------------------------------------------------------
# what a pull reads back
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gap:
    """A stretch of time in which events of the round's projects may not have been captured."""

    start: str | None  # None: since the round was pushed
    end: str | None  # None: still open at the pull
    why: str

    def describe(self) -> str:
        return (f"events were not captured from {self.start or 'the push'} to "
                f"{self.end or 'this pull'} ({self.why})")


def capture_gaps(records: Iterable[dict[str, Any]], projects: set[int],
                 alive: Any = health) -> list[Gap]:
    """The holes in the capture of the projects' events since the first ``attach`` of any of
    them, from the log's ``receiver`` and ``event`` records; ``alive(url)`` gives the session
    answering there now (the last session must still be running, else it died unrecorded)."""
    attached = False
    live: str | None = None
    hole: str | None = None  # a stop while Label Studio was up: the hole's start
    last_at: dict[str, str] = {}
    url_of: dict[str, str] = {}
    gaps: list[Gap] = []
    for r in records:
        if r.get("kind") not in ("receiver", "event"):
            continue
        s = str(r.get("session", ""))
        state = r.get("state")
        if r["kind"] == "receiver" and state in ("start", "attach"):
            url_of[s] = str(r.get("url", ""))
            if state == "attach" and projects & {int(p) for p in r.get("projects", [])}:
                attached = True
            if live is not None and live != s and attached:
                gaps.append(Gap(last_at.get(live), r["at"], f"receiver session {live} ended "
                                "without a stop record: killed, or its machine went down"))
            elif live is None and hole is not None and attached:
                gaps.append(Gap(hole, r["at"], "the receiver was stopped while Label Studio ran"))
            live, hole = s, None
        elif r["kind"] == "receiver" and state == "stop" and live in (s, None):
            live = None
            hole = None if r.get("server_stopped") else r["at"]
        last_at[s] = r["at"]
    if not attached:
        return [Gap(None, None, "no webhook receiver was attached to this round's projects when it "
                                "was pushed")]
    if live is not None and alive(url_of.get(live, "")) != live:
        gaps.append(Gap(last_at.get(live), None, f"receiver session {live} is not running and "
                        "left no stop record"))
    elif live is None and hole is not None:
        gaps.append(Gap(hole, None, "the receiver is stopped while Label Studio runs"))
    elif live is None:
        gaps.append(Gap(None, None, "no receiver is running (the server was stopped and not "
                                    "started again with `review server start`)"))
    return gaps


@dataclass
class AnnotationEvents:
    """What the receiver saw of one annotation: its states (created/updated, in order) and the
    time of its deletion."""

    states: list[dict[str, Any]]
    deleted_at: str | None = None
    created: bool = False

    def add(self, action: str, at: str, state: dict[str, Any] | None) -> None:
        """One update of :func:`event_updates`, in the log's order."""
        if action == DELETED:
            self.deleted_at = self.deleted_at or at
        elif state is not None:
            self.states.append(state)
            self.created = self.created or action != "ANNOTATION_UPDATED"


def event_updates(r: dict[str, Any]) -> Iterator[tuple[int, str, str, dict[str, Any] | None]]:
    """(annotation id, action, time, state) of each annotation an ``event`` record names: the
    state as the event carried it for a write, None for a deletion (what
    :meth:`AnnotationEvents.add` takes); nothing for any other record."""
    if r.get("kind") != "event":
        return
    action = r.get("action")
    for a in r.get("annotations", []):
        if a.get("id") is None:
            continue
        if action == DELETED:
            yield int(a["id"]), action, r["at"], None
        elif action in ANNOTATION_WRITES:
            yield int(a["id"]), action, r["at"], {**a, "action": action, "at": r["at"], "seq": r["seq"]}


def annotation_events(records: Iterable[dict[str, Any]]) -> dict[int, AnnotationEvents]:
    """annotation id -> its events, from the log's ``event`` records (only its attached projects
    send them; annotation ids are unique on a server, so a decision moved across projects or
    rounds keeps its whole history)."""
    out: dict[int, AnnotationEvents] = {}
    for r in records:
        for aid, action, at, state in event_updates(r):
            out.setdefault(aid, AnnotationEvents([])).add(action, at, state)
    return out


def read_capture(records: Iterable[dict[str, Any]], projects: set[int], alive: Any = health,
                 on_record: Callable[[dict[str, Any]], None] | None = None
                 ) -> tuple[dict[int, AnnotationEvents], list[Gap]]:
    """:func:`annotation_events` and :func:`capture_gaps` in one pass over the records. Why: a
    pull streams the log's chain (``decision_log.iter_chain``), whose records are mostly these
    events, rather than holding it whole while both read it. With ``on_record`` each record goes
    there instead and the events returned are empty (a pull keeps them on disk:
    ``annotation.pull_index``)."""
    events: dict[int, AnnotationEvents] = {}

    def keep(r: dict[str, Any]) -> None:
        for aid, action, at, state in event_updates(r):
            events.setdefault(aid, AnnotationEvents([])).add(action, at, state)

    def passing() -> Iterator[dict[str, Any]]:
        for r in records:
            (on_record or keep)(r)
            yield r

    gaps = capture_gaps(passing(), projects, alive)
    return events, gaps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m annotation.webhooks",
                                 description="The review server's webhook receiver (started with it).")
    ap.add_argument("--state-dir", required=True, help="its routes, log and discovery state")
    ap.add_argument("--port", type=int, required=True, help="port on 127.0.0.1")
    ap.add_argument("--ls-port", type=int, default=None, help="Label Studio's port (for the stop record)")
    args = ap.parse_args(argv)
    serve(Path(args.state_dir), args.port, args.ls_port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
