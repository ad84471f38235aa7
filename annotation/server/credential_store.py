"""The credential files: the only places the review server's secrets are kept.

Two kinds of owner-only JSON files (mode 0600, each in a 0700 folder):

- the lead's file (default ``~/.config/benchforge/label_studio.json``, env
  ``BENCHFORGE_LS_TOKEN_FILE``): the server's secret key and the admin's password and tokens —
  nothing of any reviewer;
- one file per reviewer, ``reviewers/<pseudonym>.json`` beside it (``r1.json`` …): that
  reviewer's e-mail, password and tokens only.

Why one file per reviewer: in the community edition any member's token can write anything
(docs/label_studio.md), so a file holding every reviewer's token lets whoever reads it decide
as anyone. With one file each, a reviewer's file can be handed to that reviewer alone, and
losing it exposes one account. A lead file of the earlier layout (every member in ``users``) is
split on the next ``ensure_panel``.

design.md §Conventions forbids secrets in logs, outputs and exceptions — which is why
:class:`LabelStudioError`, raised by every module of this package, is defined here with that
promise.
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
REVIEWER_DIR_NAME = "reviewers"  # beside the lead's file: reviewers/r1.json, …


class LabelStudioError(RuntimeError):
    """Server or panel set-up failed. Messages never carry tokens, passwords or invite links."""


def token_file_path(token_file: str | os.PathLike[str] | None = None) -> Path:
    """Explicit argument, else ``$BENCHFORGE_LS_TOKEN_FILE``, else the default under ~/.config."""
    raw = token_file or os.environ.get(TOKEN_FILE_ENV) or DEFAULT_TOKEN_FILE
    return Path(raw).expanduser().resolve()


def reviewer_file_path(token_file: str | os.PathLike[str] | None, pseudonym: str) -> Path:
    """The reviewer's own credential file: ``<lead file's folder>/reviewers/<pseudonym>.json``."""
    return token_file_path(token_file).parent / REVIEWER_DIR_NAME / f"{pseudonym}.json"


def _read_owner_only(path: Path) -> dict[str, Any] | None:
    """The JSON of a credential file, refused when others may read it (a copied or leaked
    secret must be noticed, not used); None when the file does not exist."""
    if not path.exists():
        return None
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise LabelStudioError(
            f"token file {path} is readable by others (mode {mode:o}); "
            f"run `chmod 600 {path}` after checking nobody copied it"
        )
    try:
        return dict(json.loads(path.read_text()))
    except json.JSONDecodeError as exc:
        raise LabelStudioError(f"token file {path} is not valid JSON") from exc


def _save_owner_only(path: Path, data: dict[str, Any], *, own_folder: bool = False) -> None:
    """Atomic write, file 0600 from the first byte (no chmod race), a new folder 0700.
    ``own_folder``: the folder is ours alone (``reviewers/``), so an existing one is made 0700
    too — its file names say who is on the panel."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if own_folder:
        os.chmod(path.parent, 0o700)
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True), mode=0o600)


class ReviewerCredentials:
    """One reviewer's own file: e-mail, password (generated once, reused so a fresh data dir
    recreates the same account) and the API token per server (data dir).

    The e-mail is stored and checked: the file is named by pseudonym, so a panel config whose
    reviewer order changed would otherwise hand r1's account to another person."""

    def __init__(self, path: str | os.PathLike[str], email: str) -> None:
        self.path = Path(path)
        self.data: dict[str, Any] = {"version": 1, "email": email, "password": None, "tokens": {}}
        stored = _read_owner_only(self.path)
        if stored is not None:
            if stored.get("email") != email:
                raise LabelStudioError(
                    f"{self.path} belongs to another reviewer than the panel config's "
                    f"{self.path.stem}: did the order of reviewers change?")
            self.data.update(stored)

    def save(self) -> None:
        self.path.parent.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _save_owner_only(self.path, self.data, own_folder=True)

    def password(self) -> str:
        if not self.data.get("password"):
            self.data["password"] = secrets.token_urlsafe(24)
            self.save()
        return str(self.data["password"])

    def token(self, server: str) -> str | None:
        """The reviewer's API token on ``server`` (a server's data dir), if one was stored."""
        return (self.data.get("tokens") or {}).get(server)

    def set_token(self, token: str, server: str) -> None:
        self.data.setdefault("tokens", {})[server] = token
        self.save()


class CredentialStore:
    """The lead's owner-only JSON file: the secret key and the admin's credentials; reviewers'
    credentials are in their own files (:meth:`reviewer`).

    Why passwords are kept: they are generated once and reused, so a fresh data dir recreates
    the same accounts. Why tokens are kept per server (its data dir): Label Studio generates them
    per database, so two servers sharing one token file would otherwise overwrite each other's
    tokens; they are still verified on use and refreshed by logging in again.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = token_file_path(path)
        self.data: dict[str, Any] = {"version": 1, "secret_key": None, "users": {}}
        stored = _read_owner_only(self.path)
        if stored is not None:
            self.data.update(stored)

    def save(self) -> None:
        """Atomic write, file 0600 and directory 0700 from the first byte (no chmod race)."""
        _save_owner_only(self.path, self.data)

    def reviewer_path(self, pseudonym: str) -> Path:
        return reviewer_file_path(self.path, pseudonym)

    def reviewer(self, pseudonym: str, email: str) -> ReviewerCredentials:
        """The reviewer's own file. A lead file of the earlier layout still holding this
        reviewer's entry is split here: the entry moves to the reviewer's file (written first,
        so a crash in between loses nothing) and leaves the lead's file."""
        cred = ReviewerCredentials(self.reviewer_path(pseudonym), email)
        old = (self.data.get("users") or {}).get(email)
        if old is not None:
            if not cred.data.get("password"):
                cred.data["password"] = old.get("password")
            for server, tok in (old.get("tokens") or {}).items():
                cred.data.setdefault("tokens", {}).setdefault(server, tok)
            cred.save()
            del self.data["users"][email]
            self.save()
        return cred

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

    def admin(self, email: str) -> dict[str, Any]:
        """The admin's stored credentials, creating its password and the token a new server's
        organization is created with once. Reviewers are never kept here (:meth:`reviewer`)."""
        users: dict[str, dict[str, Any]] = self.data.setdefault("users", {})
        entry = users.get(email)
        if entry is None:
            entry = {"password": secrets.token_urlsafe(24),
                     "token": secrets.token_hex(20)}  # legacy tokens are 40 hex chars
            users[email] = entry
            self.save()
        return entry

    def token(self, email: str, server: str) -> str | None:
        """The admin's API token on ``server`` (a server's data dir), if one was stored."""
        return self.data.get("users", {}).get(email, {}).get("tokens", {}).get(server)

    def set_token(self, email: str, token: str, server: str) -> None:
        self.data.setdefault("users", {}).setdefault(email, {}).setdefault("tokens", {})[server] = token
        self.save()
