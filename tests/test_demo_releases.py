"""The three demo releases, built from scratch, have the bytes recorded in
``tests/fixtures/demo_fingerprint.json`` (``scripts/demo_fingerprint.py``).

Why: refactorings of shared machinery (writer, driver, model clients) must not change what a
benchmark team gets. A deliberate change re-records the fixture
(``scripts/demo_fingerprint.py --write tests/fixtures/demo_fingerprint.json``) and says in its
commit which files changed and why; an accidental one fails here, naming the files.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

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


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_demo_releases_do_not_depend_on_where_they_were_built(
        demo_releases: DemoReleases, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of the demo corpora in another folder, built from another working directory with
    relative ``--raw-dir`` / ``--out``, gives every file of all three releases (and the release
    notes beside them) with the same bytes, none of which names either folder. Why: a release's
    bytes are a function of its inputs' content, the config and the code; an absolute input root
    in the manifest and the release path in the gate's reports made two such builds differ."""
    import demo_fingerprint

    elsewhere = tmp_path / "moved" / "place"
    shutil.copytree(demo_releases.raw, elsewhere / "corpus")
    (elsewhere / "work").mkdir()
    monkeypatch.chdir(elsewhere)
    second = demo_fingerprint.build_releases(Path("corpus"), Path("releases"), Path("work"))
    folders = [str(demo_releases.raw.parent).encode(), str(tmp_path).encode()]
    for bench, first in demo_releases.paths.items():
        a, b = _files(first), _files(second[bench])
        assert sorted(a) == sorted(b), bench
        assert [rel for rel in a if a[rel] != b[rel]] == [], bench
        assert (first.parent / "RELEASE_NOTES.md").read_bytes() == \
            (second[bench].parent / "RELEASE_NOTES.md").read_bytes()
        named = [rel for rel, data in b.items() for folder in folders if folder in data]
        assert named == [], (bench, named)
