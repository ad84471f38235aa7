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


def test_every_config_of_every_demo_card_loads(demo_releases: DemoReleases, tmp_path: Path) -> None:
    """A card lists exactly the configs that have rows, and each loads with ``datasets`` (a
    config whose files hold zero rows raised ``DatasetGenerationError``)."""
    import datasets
    import yaml

    for bench, release in demo_releases.paths.items():
        card = (release / "README.md").read_text()
        configs = yaml.safe_load(card.split("---")[1])["configs"]
        manifest = json.loads((release / "manifest.json").read_text())
        assert configs, bench
        for config in configs:
            split = config["data_files"][0]["split"]
            ds = datasets.load_dataset(str(release), config["config_name"], split=split,
                                       cache_dir=str(tmp_path / "hf"))
            assert len(ds) > 0, (bench, config["config_name"])
        example = card.split("load_dataset(")[1].split(",")[1].strip().strip("'")
        assert example in {c["config_name"] for c in configs}, (bench, example)
        assert manifest["quality"]["success"] is True


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
