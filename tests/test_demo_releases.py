"""The three demo releases, built from scratch, have the bytes recorded in
``tests/fixtures/demo_fingerprint.json`` (``scripts/demo_fingerprint.py``).

Why: refactorings of shared machinery (writer, driver, model clients) must not change what a
benchmark team gets. A deliberate change re-records the fixture
(``scripts/demo_fingerprint.py --write tests/fixtures/demo_fingerprint.json``) and says in its
commit which files changed and why; an accidental one fails here, naming the files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.support.demo import DemoReleases

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))


def test_demo_releases_have_the_recorded_bytes(demo_releases: DemoReleases) -> None:
    import demo_fingerprint

    expected = json.loads((ROOT / "tests" / "fixtures" / "demo_fingerprint.json").read_text())
    actual = demo_releases.fingerprints
    assert demo_fingerprint.differences(expected, actual) == []
    assert sum(len(files) for files in actual.values()) == sum(len(f) for f in expected.values())
    assert any(rel.endswith(".parquet") for rel in actual["streamvibe"])
