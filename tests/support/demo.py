"""The three demo releases, built once per test session (``scripts/demo_fingerprint.py``).

Why shared: the build takes half a minute, and both the byte fingerprint
(``tests/test_demo_releases.py``) and the causality checks on the released records
(``tests/test_demo_causality.py``) need the same releases.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class DemoReleases:
    fingerprints: dict[str, dict[str, str]]  # benchmark → relative path → sha256
    paths: dict[str, Path]  # benchmark → release directory
    raw: Path  # the demo corpora they were built from


@pytest.fixture(scope="session")
def demo_releases(videos: Path, tmp_path_factory: pytest.TempPathFactory) -> DemoReleases:
    sys.path.insert(0, str(ROOT / "scripts"))
    import demo_fingerprint

    tmp = tmp_path_factory.mktemp("demo-releases").resolve()
    prints = demo_fingerprint.build_all(tmp)
    paths = {bench: next(p for p in sorted((tmp / "out" / bench).iterdir()) if p.name[:1].isdigit())
             for bench in prints}
    return DemoReleases(prints, paths, tmp / "raw")
