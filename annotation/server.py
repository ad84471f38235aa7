"""A real, local Label Studio server started by the project, and the four-reviewer panel on it.

Why a real server and not a mock: the approval rule (StreamVibe App. B.3) is only as good as the
integrity checks behind it, and those checks exist because of what the real community edition
does *not* enforce (any member's token can write anything — see docs/label_studio.md). Tests and the
benchmark therefore drive the same server reviewers use.

Facts this module relies on (measured, docs/label_studio.md):
- the server lives in its own venv (``.venv-ls``; it pins Django 5.2, ``pytz<2023``, ...);
- ``--internal-host`` (not ``--host``) sets the bind address; a busy port silently moves the
  server to the next one, so we pick a free port first and check the log line;
- ``SECRET_KEY`` must be fixed, else tokens die on restart; telemetry / version checks / Sentry
  must be switched off explicitly, and un-prefixed ``HOST``/``PORT``/``USERNAME``/``PASSWORD``
  are read too — so the server gets a *clean* environment built here, never ours;
- reviewers are created by invite-link sign-up (``POST /api/users/`` makes users that cannot
  log in); each reviewer gets a legacy API token of their own.

Secrets (secret key, passwords, tokens) live only in the token file (default
``~/.config/benchforge/label_studio.json``, env ``BENCHFORGE_LS_TOKEN_FILE``), written with
owner-only permissions; design.md §Conventions forbids them in logs, outputs and exceptions.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from core.files import write_atomic

REPO_ROOT = Path(__file__).resolve().parents[1]
LABEL_STUDIO_VERSION = "1.23.2"  # the version docs/label_studio.md was measured on
DEFAULT_TOKEN_FILE = Path("~/.config/benchforge/label_studio.json")
TOKEN_FILE_ENV = "BENCHFORGE_LS_TOKEN_FILE"
PANEL_CONFIG_ENV = "BENCHFORGE_LS_PANEL_CONFIG"
DEFAULT_PANEL_CONFIG = REPO_ROOT / "configs" / "review_panel.yaml"
DEFAULT_ADMIN_EMAIL = "admin@benchforge.local"
PID_FILE_NAME = "benchforge-server.json"
LOG_FILE_NAME = "server.log"
_STARTED_RE = re.compile(r"Starting development server at http://([\d.]+):(\d+)/")


class LabelStudioError(RuntimeError):
    """Server or panel set-up failed. Messages never carry tokens, passwords or invite links."""


# --------------------------------------------------------------------------------------------
# Token file (the only place secrets are kept)
# --------------------------------------------------------------------------------------------


def token_file_path(token_file: str | os.PathLike[str] | None = None) -> Path:
    """Explicit argument, else ``$BENCHFORGE_LS_TOKEN_FILE``, else the default under ~/.config."""
    raw = token_file or os.environ.get(TOKEN_FILE_ENV) or DEFAULT_TOKEN_FILE
    return Path(raw).expanduser().resolve()


class SecretStore:
    """The owner-only JSON file holding the secret key and every panel member's credentials.

    Why one file keyed by e-mail rather than per server: passwords are generated once and reused,
    so a fresh data dir recreates the same accounts; tokens (which Label Studio generates per
    database) are verified on use and refreshed by logging in again.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = token_file_path(path)
        self.data: dict[str, Any] = {"version": 1, "secret_key": None, "users": {}}
        if self.path.exists():
            mode = self.path.stat().st_mode & 0o777
            if mode & 0o077:
                raise LabelStudioError(
                    f"token file {self.path} is readable by others (mode {mode:o}); "
                    f"run `chmod 600 {self.path}` after checking nobody copied it"
                )
            try:
                self.data.update(json.loads(self.path.read_text()))
            except json.JSONDecodeError as exc:
                raise LabelStudioError(f"token file {self.path} is not valid JSON") from exc

    def save(self) -> None:
        """Atomic write, file 0600 and directory 0700 from the first byte (no chmod race)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(self.path, json.dumps(self.data, indent=2, sort_keys=True), mode=0o600)

    def secret_key(self) -> str:
        """``$BENCHFORGE_LS_SECRET_KEY`` or the stored key; a new one is generated once.

        A key starting with ``$`` is read back as empty by Label Studio (docs/label_studio.md), which
        silently rotates it and kills every token — so such keys are never produced/accepted."""
        env = os.environ.get("BENCHFORGE_LS_SECRET_KEY")
        if env:
            if env.startswith("$"):
                raise LabelStudioError("BENCHFORGE_LS_SECRET_KEY must not start with '$'")
            return env
        key = self.data.get("secret_key")
        if not key:
            key = secrets.token_urlsafe(48)
            while key.startswith("$") or key.startswith("-"):
                key = secrets.token_urlsafe(48)
            self.data["secret_key"] = key
            self.save()
        return str(key)

    def user(self, email: str, *, admin: bool = False) -> dict[str, str]:
        """Stored credentials for ``email``, creating a password (and the admin's token) once."""
        users: dict[str, dict[str, str]] = self.data.setdefault("users", {})
        entry = users.get(email)
        if entry is None:
            entry = {"password": secrets.token_urlsafe(24)}
            if admin:
                entry["token"] = secrets.token_hex(20)  # legacy tokens are 40 hex chars
            users[email] = entry
            self.save()
        return entry

    def set_token(self, email: str, token: str) -> None:
        self.data.setdefault("users", {}).setdefault(email, {})["token"] = token
        self.save()


# --------------------------------------------------------------------------------------------
# The server's own virtual environment
# --------------------------------------------------------------------------------------------


def ensure_venv(venv: str | os.PathLike[str] = ".venv-ls", *, quiet: bool = True) -> Path:
    """Create ``venv`` with ``label-studio`` pinned, unless a stamp says it is already there.

    Why a separate venv: label-studio pins Django 5.2, ``pytz<2023``, ``numpy<2.3`` and
    ``openai<2``, which must not leak into the project's environment (docs/label_studio.md). CI runs
    on fresh machines, so the test fixture calls this (≈ 60–70 s the first time)."""
    path = Path(venv)
    if not path.is_absolute():
        path = REPO_ROOT / path
    stamp = path / ".benchforge-label-studio"
    exe = path / "bin" / "label-studio"
    if stamp.exists() and stamp.read_text().strip() == LABEL_STUDIO_VERSION and exe.exists():
        return path
    print(f"[label-studio] installing label-studio=={LABEL_STUDIO_VERSION} into {path} "
          "(~60-70 s, once)", file=sys.stderr, flush=True)
    py = os.environ.get("PYTHON") or shutil.which("python3.11") or sys.executable
    if not (path / "bin" / "python").exists():
        subprocess.run([py, "-m", "venv", str(path)], check=True)
    cmd = [str(path / "bin" / "pip"), "install", f"label-studio=={LABEL_STUDIO_VERSION}"]
    if quiet:
        cmd.insert(2, "-q")
    subprocess.run(cmd, check=True)
    stamp.write_text(LABEL_STUDIO_VERSION + "\n")
    return path


def free_port() -> int:
    """A currently free loopback port (LS would silently move to the next one if busy)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_busy(port: int) -> bool:
    """True if something listens on 127.0.0.1:port. SO_REUSEADDR (as Django's server sets it)
    so that TIME_WAIT leftovers of a server we just stopped do not count as busy."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid_is_our_server(pid: int, data_dir: Path) -> bool:
    """Guard against PID reuse: the command line must be a label-studio start on this data dir."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    args = [a.decode(errors="replace") for a in cmdline]
    return any("label-studio" in a for a in args) and str(data_dir) in args


class LabelStudioServer:
    """One Label Studio process on 127.0.0.1 with a SQLite DB in ``data_dir``.

    Use as a context manager in tests (stopped on exit), or ``start()`` + ``stop()`` from the
    CLI, where a PID file in ``data_dir`` lets a later ``stop`` find a detached server.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        port: int | None = None,
        venv: str | os.PathLike[str] = ".venv-ls",
        media_root: str | os.PathLike[str] | None = None,
        *,
        token_file: str | os.PathLike[str] | None = None,
        admin_email: str = DEFAULT_ADMIN_EMAIL,
        startup_timeout: float = 240.0,
        install: bool = True,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.port = port
        self.venv = venv
        self.media_root = Path(media_root).expanduser().resolve() if media_root else None
        self.token_file = token_file_path(token_file)
        self.admin_email = admin_email
        self.startup_timeout = startup_timeout
        self.install = install
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid: int | None = None
        self._log_fh: Any = None

    # -- paths -------------------------------------------------------------------------------
    @property
    def pid_file(self) -> Path:
        return self.data_dir / PID_FILE_NAME

    @property
    def log_file(self) -> Path:
        return self.data_dir / LOG_FILE_NAME

    @property
    def url(self) -> str:
        if self.port is None:
            raise LabelStudioError("server has no port yet (call start())")
        return f"http://127.0.0.1:{self.port}"

    # -- lifecycle ---------------------------------------------------------------------------
    def _environment(self, store: SecretStore) -> dict[str, str]:
        """A clean environment: nothing inherited except PATH, so stray ``HOST``/``PORT``/
        ``USERNAME``/``PASSWORD``/``DEBUG`` variables cannot reconfigure the server."""
        admin = store.user(self.admin_email, admin=True)
        home = self.data_dir / "home"
        home.mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "HOME": str(home),
            "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
            "PYTHONUNBUFFERED": "1",
            "LABEL_STUDIO_BASE_DATA_DIR": str(self.data_dir),
            "SECRET_KEY": store.secret_key(),
            "LABEL_STUDIO_USERNAME": self.admin_email,
            "LABEL_STUDIO_PASSWORD": admin["password"],
            "LABEL_STUDIO_USER_TOKEN": admin["token"],
            "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
            "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
            "LATEST_VERSION_CHECK": "false",
            "COLLECT_ANALYTICS": "false",
            "SENTRY_DSN": "",
            "FRONTEND_SENTRY_DSN": "",
            # Set explicitly either way: left unset, the community edition auto-detects a root.
            "LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true" if self.media_root else "false",
        }
        if self.media_root:
            env["LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT"] = str(self.media_root)
        return env

    def running_pid(self) -> int | None:
        """PID of a server recorded for this data dir that is still alive, else None."""
        if not self.pid_file.exists():
            return None
        try:
            info = json.loads(self.pid_file.read_text())
        except json.JSONDecodeError:
            return None
        pid = int(info.get("pid", 0))
        if pid and _pid_alive(pid) and _pid_is_our_server(pid, self.data_dir):
            self.port = int(info["port"])
            return pid
        return None

    def start(self) -> LabelStudioServer:
        """Start (or adopt an already running server on this data dir) and wait for /health."""
        # 0700: the SQLite DB holds the legacy tokens in clear (Label Studio's design).
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        existing = self.running_pid()
        if existing:
            self.pid = existing
            self.wait_ready()
            return self
        exe = (ensure_venv(self.venv) if self.install else Path(self.venv)) / "bin" / "label-studio"
        if self.port is None:
            self.port = free_port()
        elif _port_busy(self.port):
            raise LabelStudioError(f"port {self.port} on 127.0.0.1 is busy; pick another --port")
        if self.media_root and not self.media_root.is_dir():
            raise LabelStudioError(f"media root {self.media_root} is not a directory")
        store = SecretStore(self.token_file)
        env = self._environment(store)
        cmd = [str(exe), "start", "--no-browser", "--internal-host", "127.0.0.1",
               "--port", str(self.port), "--data-dir", str(self.data_dir)]
        fd = os.open(self.log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._log_fh = os.fdopen(fd, "ab")  # lives as long as the server process
        self._log_offset = self.log_file.stat().st_size
        self.proc = subprocess.Popen(
            cmd, env=env, cwd=self.data_dir, stdin=subprocess.DEVNULL, stdout=self._log_fh,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        self.pid = self.proc.pid
        self.pid_file.write_text(json.dumps({"pid": self.pid, "port": self.port}))
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _log_tail(self, n: int = 15) -> str:
        try:
            text = self.log_file.read_text(errors="replace")[getattr(self, "_log_offset", 0):]
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-n:])

    def wait_ready(self) -> None:
        """Poll ``/health`` until ``{"status": "UP"}``; fail fast if the process died or it bound
        another port than asked (LS silently moves to the next free port)."""
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise LabelStudioError(
                    f"label-studio exited with code {self.proc.returncode}; log {self.log_file}:\n"
                    + self._log_tail()
                )
            if self.proc is not None:
                m = _STARTED_RE.search(self._log_tail(200))
                if m and (m.group(1) != "127.0.0.1" or int(m.group(2)) != self.port):
                    raise LabelStudioError(
                        f"label-studio bound {m.group(1)}:{m.group(2)} instead of "
                        f"127.0.0.1:{self.port}"
                    )
            try:
                r = httpx.get(f"{self.url}/health", timeout=2.0)
                if r.status_code == 200 and r.json().get("status") == "UP":
                    return
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.5)
        raise LabelStudioError(
            f"label-studio not ready after {self.startup_timeout:.0f} s; log {self.log_file}"
        )

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM the server's process group (its own session, so only what we started), then
        SIGKILL if it does not exit; remove the PID file."""
        pid = self.pid or self.running_pid()
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc is not None:
                    if self.proc.poll() is not None:
                        break
                elif not _pid_alive(pid):
                    break
                time.sleep(0.1)
            else:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                if self.proc is not None:
                    self.proc.wait(5)
        if self._log_fh is not None:
            self._log_fh.close()
            self._log_fh = None
        with contextlib.suppress(FileNotFoundError):
            self.pid_file.unlink()
        self.proc = None
        self.pid = None

    def status(self) -> dict[str, Any]:
        """Whether a server for this data dir is running and healthy (no secrets)."""
        pid = self.running_pid()
        healthy = False
        if pid:
            try:
                healthy = httpx.get(f"{self.url}/health", timeout=2.0).json().get("status") == "UP"
            except (httpx.HTTPError, ValueError):
                healthy = False
        return {"running": bool(pid), "healthy": healthy, "pid": pid,
                "url": self.url if pid else None, "data_dir": str(self.data_dir)}

    def __enter__(self) -> LabelStudioServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --------------------------------------------------------------------------------------------
# Panel: admin + reviewers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PanelConfig:
    """Who is on the panel (``configs/review_panel.yaml``). Order matters: the i-th reviewer is
    ``r{i}`` in every decision log (schemas.review), so e-mails never reach a release."""

    admin_email: str = DEFAULT_ADMIN_EMAIL
    reviewer_emails: tuple[str, ...] = ()
    token_file: Path = field(default_factory=token_file_path)
    data_dir: Path = REPO_ROOT / ".label-studio"
    port: int = 8080
    media_root: Path | None = None
    venv: str = ".venv-ls"

    def __post_init__(self) -> None:
        emails = [self.admin_email, *self.reviewer_emails]
        if len(set(emails)) != len(emails):
            raise ValueError("panel config: admin and reviewer e-mails must be distinct")
        if not self.reviewer_emails:
            raise ValueError("panel config: no reviewers")


def load_panel_config(path: str | os.PathLike[str] | None = None, **overrides: Any) -> PanelConfig:
    """Read the panel YAML (default ``configs/review_panel.yaml`` or ``$BENCHFORGE_LS_PANEL_CONFIG``);
    the token file may be overridden by ``$BENCHFORGE_LS_TOKEN_FILE``."""
    import yaml

    p = Path(path or os.environ.get(PANEL_CONFIG_ENV) or DEFAULT_PANEL_CONFIG)
    raw = yaml.safe_load(p.read_text()) or {}
    server = raw.get("server") or {}
    media = server.get("media_root")

    def _path(v: str) -> Path:
        q = Path(v).expanduser()
        return q if q.is_absolute() else (REPO_ROOT / q)

    kwargs: dict[str, Any] = {
        "admin_email": raw.get("admin", DEFAULT_ADMIN_EMAIL),
        "reviewer_emails": tuple(raw.get("reviewers") or ()),
        "token_file": token_file_path(os.environ.get(TOKEN_FILE_ENV) or raw.get("token_file")),
        "data_dir": _path(server.get("data_dir", ".label-studio")),
        "port": int(server.get("port", 8080)),
        "media_root": _path(media) if media else None,
        "venv": server.get("venv", ".venv-ls"),
    }
    kwargs.update(overrides)
    return PanelConfig(**kwargs)


@dataclass(frozen=True)
class Member:
    """One account on the panel. ``email`` and ``token`` are kept out of ``repr`` so that a
    logged Panel never leaks either."""

    pseudonym: str
    user_id: int
    url: str
    email: str = field(repr=False)
    token: str = field(repr=False)

    def client(self, timeout: float = 300.0) -> Any:
        """An SDK client acting as this member. ``max_retries=0``: a retried POST after a timeout
        could create a duplicate task or decision."""
        from label_studio_sdk import LabelStudio

        return LabelStudio(base_url=self.url, api_key=self.token, timeout=timeout, max_retries=0)

    def http(self, timeout: float = 60.0) -> httpx.Client:
        """A plain HTTP client with this member's token (media URLs, raw endpoints)."""
        return httpx.Client(base_url=self.url, timeout=timeout,
                            headers={"Authorization": f"Token {self.token}"})


@dataclass(frozen=True)
class Panel:
    """The admin and the reviewers (in panel order: r1..rN) with their own tokens."""

    url: str
    admin: Member
    reviewers: tuple[Member, ...]

    @property
    def size(self) -> int:
        return len(self.reviewers)

    def reviewer_ids(self) -> dict[int, str]:
        """Label Studio user id -> pseudonym (``r1``..), the map used when pulling decisions."""
        return {m.user_id: m.pseudonym for m in self.reviewers}

    def reviewer(self, pseudonym: str) -> Member:
        for m in self.reviewers:
            if m.pseudonym == pseudonym:
                return m
        raise KeyError(pseudonym)


def _whoami(url: str, token: str) -> dict[str, Any] | None:
    try:
        r = httpx.get(f"{url}/api/current-user/whoami",
                      headers={"Authorization": f"Token {token}"}, timeout=30.0)
    except httpx.HTTPError as exc:
        raise LabelStudioError(f"cannot reach {url}: {type(exc).__name__}") from None
    if r.status_code == 200:
        return dict(r.json())
    return None


def _csrf(session: httpx.Client, path: str) -> str:
    r = session.get(path)
    token = session.cookies.get("csrftoken")
    if r.status_code != 200 or not token:
        raise LabelStudioError(f"GET {path.split('?')[0]} gave {r.status_code} (no CSRF cookie)")
    return str(token)


def _form_post(session: httpx.Client, path: str, email: str, password: str) -> bool:
    """Submit the login or sign-up form; 302 means success (docs/label_studio.md)."""
    csrf = _csrf(session, path)
    r = session.post(
        path,
        data={"email": email, "password": password, "csrfmiddlewaretoken": csrf},
        headers={"Referer": str(session.base_url) + path.split("?")[0]},
    )
    return r.status_code == 302


def _legacy_token_via_session(url: str, email: str, password: str, invite: str | None) -> str:
    """Log in (or sign up with the invite token) and read the user's legacy API token."""
    with httpx.Client(base_url=url, timeout=60.0, follow_redirects=False) as s:
        ok = _form_post(s, "/user/login/", email, password)
        if not ok and invite:
            s.cookies.clear()
            ok = _form_post(s, f"/user/signup/?token={invite}", email, password)
        if not ok:
            raise LabelStudioError(
                f"could neither log in nor sign up panel member #{_short(email)}; if the account "
                "exists with another password, reset it in Label Studio and update the token file"
            )
        r = s.get("/api/current-user/token")
        if r.status_code != 200 or "token" not in r.json():
            raise LabelStudioError(f"GET /api/current-user/token gave {r.status_code}")
        return str(r.json()["token"])


def _short(email: str) -> str:
    """A non-identifying handle for error messages (no e-mail in outputs)."""
    import hashlib

    return hashlib.sha256(email.encode()).hexdigest()[:8]


def ensure_panel(url: str, panel_config: PanelConfig | str | os.PathLike[str] | None = None
                 ) -> Panel:
    """Idempotently make sure the admin and every reviewer exist, each with a working token.

    For each reviewer: a stored token that still authenticates as that e-mail is reused; else
    we log in with the stored password (the account exists, e.g. the token file was copied), else
    we sign up through the admin's invite link — the only path that yields a usable, in-org
    account (docs/label_studio.md). New tokens are written to the owner-only token file.
    """
    cfg = panel_config if isinstance(panel_config, PanelConfig) else load_panel_config(panel_config)
    url = url.rstrip("/")
    store = SecretStore(cfg.token_file)
    admin_entry = store.user(cfg.admin_email, admin=True)
    who = _whoami(url, admin_entry["token"])
    if who is None or who.get("email") != cfg.admin_email:
        # e.g. server started from another token file: the admin can still log in by password
        token = _legacy_token_via_session(url, cfg.admin_email, admin_entry["password"], None)
        store.set_token(cfg.admin_email, token)
        who = _whoami(url, token)
        if who is None:
            raise LabelStudioError("admin token does not authenticate")
    admin = Member("admin", int(who["id"]), url, cfg.admin_email, store.user(cfg.admin_email)["token"])

    invite: str | None = None
    reviewers: list[Member] = []
    for i, email in enumerate(cfg.reviewer_emails, start=1):
        entry = store.user(email)
        me = _whoami(url, entry["token"]) if entry.get("token") else None
        if me is None or me.get("email") != email:
            if invite is None:
                inv = admin.client().organizations.invites.get_invite_link()
                invite = inv.token
            token = _legacy_token_via_session(url, email, entry["password"], invite)
            store.set_token(email, token)
            me = _whoami(url, token)
            if me is None:
                raise LabelStudioError(f"new token of reviewer r{i} does not authenticate")
        reviewers.append(Member(f"r{i}", int(me["id"]), url, email, store.user(email)["token"]))
    if invite is not None:
        # The dev server logs request URLs, invite token included: rotate it so the logged link
        # is dead and nobody else can join the organization with it.
        admin.client().organizations.reset_token()
    return Panel(url=url, admin=admin, reviewers=tuple(reviewers))
