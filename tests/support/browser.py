"""A real headless Chromium (Debian's ``chromium`` driven by ``playwright``) for review-UI tests.

Why Debian's browser and not ``playwright install``: the machines have a closed network and
CI starts fresh, so the browser comes from apt like every other system tool (installed by
``scripts/setup_system.sh``, which ``make setup`` and so ``make test`` run), and playwright only
drives it through ``executable_path``.

Why these flags: without ``--disable-background-networking`` & co. Chromium keeps calling out
to Google services, which on a closed network floods it with failing requests
(docs/label_studio.md); every request that does not go to the loopback server is also aborted by a
route, so the test cannot depend on, or leak to, anything outside this machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.support.system import require

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1366, "height": 768}  # a common laptop screen


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's chromium (``make setup``: scripts/setup_system.sh browser); playwright comes with
    the dev extra of the venv."""
    require([CHROMIUM], "Debian chromium")
    return CHROMIUM


def _local_only(route: Any) -> None:
    host = urlparse(route.request.url).hostname
    if host in ("127.0.0.1", "localhost"):
        route.continue_()
    else:
        route.abort()


@pytest.fixture
def browser_context(chromium: Path, tmp_path: Path) -> Iterator[Any]:
    """A fresh browser with an empty profile under the test's folder; closed after the test."""
    from playwright.sync_api import sync_playwright

    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("http_", "https_", "HTTP"))}
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS,
            viewport=VIEWPORT, env=env, timeout=60_000)
        try:
            ctx.route("**/*", _local_only)
            ctx.set_default_timeout(30_000)
            yield ctx
        finally:
            ctx.close()


def login(page: Any, url: str, email: str, password: str) -> None:
    """Log in through Label Studio's own form (``#email``, ``#password``, ``.login-button``)."""
    page.goto(f"{url}/user/login/")
    page.fill("#email", email)
    page.fill("#password", password)
    with page.expect_navigation():
        page.click("button.login-button")
    if "/user/login" in page.url:
        raise AssertionError("login failed: still on the login page")
