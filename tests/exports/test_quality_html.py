"""The gate's HTML report shows its results in a real browser with no network.

Why a browser: great-expectations' Data Docs ``index.html`` is filled in by JavaScript loaded
from CDNs, so offline it rendered an empty page although the files were there. The report is now
one static page; this opens it in Debian's headless Chromium (``tests/support/browser.py``: every
request off the loopback is aborted) and checks that a person sees the verdict, the file
problems and every expectation — and that the page asked for nothing but itself.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipelines.cli import main as benchforge
from tests.exports.test_integrity import garble_frame, update_manifest
from tests.pipelines.proactivebench.fixtures import all_environment_episodes, write_release
from tests.support.browser import browser_context, chromium  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A failing release's check reports, served from 127.0.0.1 (what a person opens)."""
    release = write_release(tmp_path / "out" / "1.0.0", all_environment_episodes())
    garble_frame(release)
    update_manifest(release)
    assert benchforge(["check", str(release)]) == 1
    reports = tmp_path / "out" / "checks" / "1.0.0"
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(reports))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", reports
    finally:
        server.shutdown()
        server.server_close()


def test_report_results_are_visible_offline(served: tuple[str, Path], browser_context: Any  # noqa: F811
                                            ) -> None:
    url, _ = served
    page = browser_context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{url}/data_quality.html")
    heading = page.locator("h1")
    assert heading.is_visible() and heading.inner_text() == "Data quality: FAILED"
    problem = page.locator("#files tr.fail")
    assert problem.count() == 1 and problem.first.is_visible()
    assert "cannot decode image" in problem.first.inner_text()
    checks = page.locator("#expectations tr.ok")
    assert checks.count() == 25 and checks.last.is_visible()
    assert "goal reachable from start within max_steps" in page.locator("#expectations").inner_text()
    assert requests == [f"{url}/data_quality.html"]  # no script, style sheet or font fetched
