"""The token file: the only place the review server's secrets are kept.

Secrets (the server's secret key, every panel member's password and token) live only in this
owner-only JSON file (default ``~/.config/benchforge/label_studio.json``, env
``BENCHFORGE_LS_TOKEN_FILE``); design.md §Conventions forbids them in logs, outputs and
exceptions — which is why :class:`LabelStudioError`, raised by every module of this package, is
defined here with that promise.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from core.files import write_atomic

DEFAULT_TOKEN_FILE = Path("~/.config/benchforge/label_studio.json")
TOKEN_FILE_ENV = "BENCHFORGE_LS_TOKEN_FILE"


class LabelStudioError(RuntimeError):
    """Server or panel set-up failed. Messages never carry tokens, passwords or invite links."""


def token_file_path(token_file: str | os.PathLike[str] | None = None) -> Path:
    """Explicit argument, else ``$BENCHFORGE_LS_TOKEN_FILE``, else the default under ~/.config."""
    raw = token_file or os.environ.get(TOKEN_FILE_ENV) or DEFAULT_TOKEN_FILE
    return Path(raw).expanduser().resolve()


class CredentialStore:
    """The owner-only JSON file holding the secret key and every panel member's credentials.

    Why one file keyed by e-mail: passwords are generated once and reused, so a fresh data dir
    recreates the same accounts. Why tokens are kept per server (its data dir): Label Studio
    generates them per database, so two servers sharing one token file would otherwise overwrite
    each other's tokens; they are still verified on use and refreshed by logging in again.
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

    def user(self, email: str, *, admin: bool = False) -> dict[str, Any]:
        """Stored credentials for ``email``, creating a password (and, for the admin, the token a
        new server's organization is created with) once."""
        users: dict[str, dict[str, Any]] = self.data.setdefault("users", {})
        entry = users.get(email)
        if entry is None:
            entry = {"password": secrets.token_urlsafe(24)}
            if admin:
                entry["token"] = secrets.token_hex(20)  # legacy tokens are 40 hex chars
            users[email] = entry
            self.save()
        return entry

    def token(self, email: str, server: str) -> str | None:
        """The member's API token on ``server`` (a server's data dir), if one was stored."""
        return self.data.get("users", {}).get(email, {}).get("tokens", {}).get(server)

    def set_token(self, email: str, token: str, server: str) -> None:
        self.data.setdefault("users", {}).setdefault(email, {}).setdefault("tokens", {})[server] = token
        self.save()
