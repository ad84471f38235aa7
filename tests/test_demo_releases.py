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
