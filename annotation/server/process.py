"""One Label Studio process on 127.0.0.1: start (or adopt), wait for health, stop, status.

Facts this module relies on (measured, docs/label_studio.md):
- ``--internal-host`` (not ``--host``) sets the bind address; a busy port silently moves the
  server to the next one, so we pick a free port first and check the log line;
- ``SECRET_KEY`` must be fixed, else tokens die on restart; telemetry / version checks / Sentry
  must be switched off explicitly, and un-prefixed ``HOST``/``PORT``/``USERNAME``/``PASSWORD``
  are read too — so the server gets a *clean* environment built here, never ours;
- local files are served from one document root fixed at start. Why the root defaults to
  ``<data dir>/media`` and is recorded in the PID file: ``push`` copies every round's media into
  it (``annotation.projects``), so one server serves every benchmark and round, and a later
  ``start`` asking for another root is refused instead of silently keeping the old one;
- the webhook receiver (``annotation.webhooks``) starts before Label Studio and stops after it,
  so its stop record can say Label Studio was down; ``start`` registers its webhook on every
  review project. Label Studio refuses loopback webhook URLs (SSRF protection): the environment
  bans every reserved network Label Studio bans by default except 127.0.0.1 itself, and raises
  ``WEBHOOK_TIMEOUT`` from 1 s (a receiver waiting for the log's lock must not lose an event).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from annotation.server.credential_store import CredentialStore, LabelStudioError, token_file_path
from annotation.server.venv import ensure_venv
from core.loopback import free_port, port_busy

DEFAULT_ADMIN_EMAIL = "admin@benchforge.local"
PID_FILE_NAME = "benchforge-server.json"
LOG_FILE_NAME = "server.log"
MEDIA_DIR_NAME = "media"  # default document root for review media, inside the data dir
WEBHOOK_STATE_DIR = "webhooks"  # the receiver's routes, state and log, inside the data dir
WEBHOOK_TIMEOUT_S = 30
# Label Studio 1.23.2's default SSRF ban list (core/utils/io.py validate_ip) with 127.0.0.0/8
# narrowed to everything but 127.0.0.1: webhooks may reach the receiver, nothing else local.
_BANNED = ("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12",
           "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
           "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "233.252.0.0/24", "240.0.0.0/4",
           "255.255.255.255/32", "::/128", "::1/128", "::ffff:0:0/96", "::ffff:0:0:0/96",
           "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001:0000::/32", "2001:20::/28",
           "2001:db8::/32", "2002::/16", "fc00::/7", "fe80::/10", "ff00::/8")


def banned_subnets() -> list[str]:
    """The SSRF ban list the server runs with: the defaults, loopback except 127.0.0.1."""
    import ipaddress

    loop = ipaddress.ip_network("127.0.0.0/8").address_exclude(ipaddress.ip_network("127.0.0.1/32"))
    return [*_BANNED, *sorted(str(n) for n in loop)]


_STARTED_RE = re.compile(r"Starting development server at http://([\d.]+):(\d+)/")


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
    ``media_root`` None means ``<data_dir>/media`` for a new server, or whatever root a running
    one was started with.
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
        self.requested_media_root = Path(media_root).expanduser().resolve() if media_root else None
        self.media_root = self.requested_media_root or self.data_dir / MEDIA_DIR_NAME
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
    def _environment(self, store: CredentialStore) -> dict[str, str]:
        """A clean environment: nothing inherited except PATH, so stray ``HOST``/``PORT``/
        ``USERNAME``/``PASSWORD``/``DEBUG`` variables cannot reconfigure the server."""
        admin = store.admin(self.admin_email)
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
            # Set explicitly: left unset, the community edition auto-detects a root.
            "LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true",
            "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": str(self.media_root),
            # webhooks to the receiver on 127.0.0.1 (module docstring)
            "SSRF_PROTECTION_ENABLED": "true",
            "USE_DEFAULT_BANNED_SUBNETS": "false",
            "USER_ADDITIONAL_BANNED_SUBNETS": ",".join(banned_subnets()),
            "WEBHOOK_TIMEOUT": str(WEBHOOK_TIMEOUT_S),
        }
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
            if info.get("media_root"):
                self.media_root = Path(info["media_root"])
            return pid
        return None

    def start(self) -> LabelStudioServer:
        """Start (or adopt an already running server on this data dir) and wait for /health."""
        # 0700: the SQLite DB holds the legacy tokens in clear (Label Studio's design).
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        existing = self.running_pid()
        if existing:
            if self.requested_media_root not in (None, self.media_root):
                raise LabelStudioError(
                    f"the server of {self.data_dir} is running with media root {self.media_root}, "
                    f"not {self.requested_media_root}: stop it first, or leave --media-root out "
                    "(push copies every round's media into the running server's root)")
            self.pid = existing
            self.wait_ready()
            self.ensure_receiver()
            return self
        exe = (ensure_venv(self.venv) if self.install else Path(self.venv)) / "bin" / "label-studio"
        if self.port is None:
            self.port = free_port()
        elif port_busy(self.port):
            raise LabelStudioError(f"port {self.port} on 127.0.0.1 is busy; pick another --port")
        if self.requested_media_root is None:
            self.media_root.mkdir(exist_ok=True, mode=0o700)
        elif not self.media_root.is_dir():
            raise LabelStudioError(f"media root {self.media_root} is not a directory")
        store = CredentialStore(self.token_file)
        env = self._environment(store)
        self._start_receiver()  # before Label Studio: no event of this run is missed
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
        self.pid_file.write_text(json.dumps({"pid": self.pid, "port": self.port,
                                             "media_root": str(self.media_root)}))
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        self._register_or_warn()
        return self

    def _register_or_warn(self) -> None:
        """A server whose webhooks could not be registered still serves (every pull then reports
        the projects' missing webhooks as an ``event_gap``); say so on stderr."""
        try:
            self.register_webhooks()
        except LabelStudioError as exc:
            print(f"warning: {exc}; pulls will report an event_gap", file=sys.stderr, flush=True)

    # -- the webhook receiver ----------------------------------------------------------------
    @property
    def webhook_state_dir(self) -> Path:
        return self.data_dir / WEBHOOK_STATE_DIR

    def _start_receiver(self) -> Any:
        from annotation import webhooks

        try:
            return webhooks.start(self.webhook_state_dir, self.media_root, self.port)
        except RuntimeError as exc:
            raise LabelStudioError(str(exc)) from None

    def receiver(self) -> Any:
        """The running webhook receiver of this server (``annotation.webhooks.ReceiverInfo``) or
        None."""
        from annotation import webhooks

        return webhooks.running_info(self.media_root)

    def ensure_receiver(self) -> Any:
        """An adopted server whose receiver is gone gets a new one (the hole is in the logs as
        one: the old session left no stop record) and its webhooks pointed at it."""
        info = self.receiver()
        if info is None:
            self._start_receiver()
            self._register_or_warn()
            info = self.receiver()
        return info

    def register_webhooks(self) -> list[int]:
        """The receiver's webhook on every review project of the server (``annotation.webhooks``);
        push adds it to the projects it creates."""
        from label_studio_sdk import LabelStudio

        from annotation import webhooks
        from annotation.projects import MARKER

        info = webhooks.read_info(self.media_root)
        if info is None:
            raise LabelStudioError("the webhook receiver is not running")
        admin = CredentialStore(self.token_file).admin(self.admin_email)
        client = LabelStudio(base_url=self.url, api_key=admin["token"], timeout=60, max_retries=0)
        try:
            return webhooks.register_all(client, info, MARKER)
        except Exception as exc:  # noqa: BLE001 - the SDK's errors carry no secret; name them
            raise LabelStudioError(f"registering the webhooks failed: {type(exc).__name__}: "
                                   f"{str(getattr(exc, 'body', '') or exc)[:300]}") from None

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
        self._stop_receiver()
        with contextlib.suppress(FileNotFoundError):
            self.pid_file.unlink()
        self.proc = None
        self.pid = None

    def _stop_receiver(self) -> None:
        """After Label Studio: the receiver's stop record then says the server was down."""
        from annotation import webhooks

        info = webhooks.read_info(self.media_root)
        if info is not None:
            if _pid_alive(info.pid):
                webhooks.stop(info.pid)
            with contextlib.suppress(FileNotFoundError):
                (self.media_root / webhooks.DISCOVERY).unlink()

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
                "url": self.url if pid else None, "data_dir": str(self.data_dir),
                "media_root": str(self.media_root) if pid else None,
                "webhook_receiver": (rx.url if (rx := self.receiver()) else None) if pid else None}

    def __enter__(self) -> LabelStudioServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
