"""The review panel on a running server: the admin and the reviewers, each with a working token.

Facts this module relies on (measured, docs/label_studio.md): reviewers are created by
invite-link sign-up (``POST /api/users/`` makes users that cannot log in); each reviewer gets a
legacy API token of their own, kept in that reviewer's own credential file
(``credential_store.py``: ``reviewers/<pseudonym>.json`` beside the lead's file), never in outputs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from annotation.server.credential_store import (
    TOKEN_FILE_ENV,
    CredentialStore,
    LabelStudioError,
    token_file_path,
)
from annotation.server.process import DEFAULT_ADMIN_EMAIL
from annotation.server.venv import REPO_ROOT

PANEL_CONFIG_ENV = "BENCHFORGE_LS_PANEL_CONFIG"
DEFAULT_PANEL_CONFIG = REPO_ROOT / "configs" / "review_panel.yaml"


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

    For each member: the token stored for this server (its data dir) that still authenticates as
    that e-mail is reused; else we log in with the stored password (the account exists, e.g. the
    token file was copied), else reviewers sign up through the admin's invite link — the only
    path that yields a usable, in-org account (docs/label_studio.md). The admin's token goes to
    the lead's file, each reviewer's to that reviewer's own file (``reviewers/r<i>.json``), both
    under this server's key, so servers sharing the files keep theirs.
    """
    cfg = panel_config if isinstance(panel_config, PanelConfig) else load_panel_config(panel_config)
    url = url.rstrip("/")
    server = str(cfg.data_dir)
    store = CredentialStore(cfg.token_file)
    admin_entry = store.admin(cfg.admin_email)
    token = store.token(cfg.admin_email, server) or admin_entry["token"]
    who = _whoami(url, token)
    if who is None or who.get("email") != cfg.admin_email:
        # e.g. server started from another token file: the admin can still log in by password
        token = _legacy_token_via_session(url, cfg.admin_email, admin_entry["password"], None)
        who = _whoami(url, token)
        if who is None:
            raise LabelStudioError("admin token does not authenticate")
    if store.token(cfg.admin_email, server) != token:
        store.set_token(cfg.admin_email, token, server)
    admin = Member("admin", int(who["id"]), url, cfg.admin_email, token)

    invite: str | None = None
    reviewers: list[Member] = []
    for i, email in enumerate(cfg.reviewer_emails, start=1):
        cred = store.reviewer(f"r{i}", email)  # the reviewer's own file, never the lead's
        token = cred.token(server)
        me = _whoami(url, token) if token else None
        if me is None or me.get("email") != email:
            if invite is None:
                inv = admin.client().organizations.invites.get_invite_link()
                invite = inv.token
            token = _legacy_token_via_session(url, email, cred.password(), invite)
            cred.set_token(token, server)
            me = _whoami(url, token)
            if me is None:
                raise LabelStudioError(f"new token of reviewer r{i} does not authenticate")
        reviewers.append(Member(f"r{i}", int(me["id"]), url, email, str(token)))
    if invite is not None:
        # The dev server logs request URLs, invite token included: rotate it so the logged link
        # is dead and nobody else can join the organization with it.
        admin.client().organizations.reset_token()
    return Panel(url=url, admin=admin, reviewers=tuple(reviewers))
