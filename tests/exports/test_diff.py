"""``benchforge diff`` on builds of the demo that differ in known ways (exports/diff.py).

Why real builds: the diff must see what a rebuild really changes (option order drawn from the
seed, configs appearing), not what a hand-made fixture assumes. QuickDraw alone keeps each build
to a few seconds; the new-field case edits a copy of a build, because no config of ours adds a
field.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from exports.diff import diff_releases, version_bump
from exports.release_files import read_release
from pipelines.cli import main as cli
from pipelines.proactivebench.build import run as build
from tests.support.demo import DemoReleases

ROOT = Path(__file__).resolve().parents[2]


def _build(raw: Path, out: Path, *, version: str, seed: int, only: str, into: Path | None = None
           ) -> Path:
    """Build into ``into`` (default: a folder of its own under ``out``)."""
    config = yaml.safe_load((ROOT / "configs" / "proactivebench.yaml").read_text())
    config.update(version=version, global_seed=seed)
    path = out / f"config-{version}-{seed}.yaml"
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config))
    return build(["--config", str(path), "--raw-dir", str(raw), "--out",
                  str(into or out / version / str(seed)), "--only", only])


@pytest.fixture(scope="module")
def builds(demo_releases: DemoReleases, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    raw = demo_releases.paths["proactivebench"].parents[2] / "raw"
    out = tmp_path_factory.mktemp("diff-builds")
    return {"raw": raw, "out": out,
        "base": _build(raw, out, version="2.0.0", seed=0, only="quickdraw"),
        "same_data": _build(raw, out, version="2.0.1", seed=0, only="quickdraw"),
        "reseeded": _build(raw, out, version="2.0.1", seed=1, only="quickdraw"),
        "new_config": _build(raw, out, version="2.1.0", seed=0, only="quickdraw,mvpn"),
    }


def test_same_records_with_a_patch_bump_match(builds: dict[str, Path]) -> None:
    d = diff_releases(builds["base"], builds["same_data"])
    (qd,) = d.configs
    assert (qd.label, qd.old_rows, qd.unchanged, qd.added, qd.removed, qd.changed) == \
        ("quickdraw/test", 8, 8, [], [], {})
    assert (d.required, d.actual, d.verdict) == ("patch", "patch", "matches")


def test_a_new_seed_changes_every_record_and_a_patch_bump_is_too_small(
        builds: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    d = diff_releases(builds["base"], builds["reseeded"])
    (qd,) = d.configs
    assert len(qd.changed) == 8 and not qd.added and not qd.removed
    # the seed draws option order, category order and the question (docs/proactivebench.md)
    assert all("options" in fields or "categories" in fields or "question" in fields
               for fields in qd.changed.values())
    assert (d.required, d.actual, d.verdict) == ("major", "patch", "too small")
    assert cli(["diff", str(builds["base"]), str(builds["reseeded"])]) == 1
    out = capsys.readouterr().out
    assert "| quickdraw/test | both | 8 | 8 | 0 | 0 | 0 | 8 |" in out and "too small" in out


def test_an_added_config_is_a_minor_bump(builds: dict[str, Path], tmp_path: Path) -> None:
    d = diff_releases(builds["base"], builds["new_config"])
    by = {c.name: c for c in d.configs}
    assert by["mvpn"].status == "added" and len(by["mvpn"].added) == by["mvpn"].new_rows == 5
    assert by["quickdraw"].required() == "none"
    assert (d.required, d.actual, d.verdict) == ("minor", "minor", "matches")
    assert cli(["diff", str(builds["base"]), str(builds["new_config"]), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "diff-2.0.0-2.1.0.md").read_text().startswith("# proactivebench 2.0.0 → 2.1.0")


def test_a_new_field_is_minor_and_a_removed_record_is_major(builds: dict[str, Path], tmp_path: Path
                                                            ) -> None:
    new = tmp_path / "2.1.0"
    shutil.copytree(builds["base"], new)
    (shard,) = (new / "data" / "quickdraw").glob("*.parquet")
    table = pq.read_table(shard)
    table = table.append_column("difficulty", pa.array([0.5] * table.num_rows))
    pq.write_table(table, shard)
    d = diff_releases(builds["base"], new)
    assert d.configs[0].fields_added == ["difficulty"] and not d.configs[0].changed
    assert d.required == "minor"  # the card lists the same configs; only a field was added
    pq.write_table(table.slice(1), shard)
    d = diff_releases(builds["base"], new)
    assert len(d.configs[0].removed) == 1 and d.required == "major" and d.verdict == "too small"


def test_the_training_split_is_compared_too(demo_releases: DemoReleases, tmp_path: Path) -> None:
    """A training row dropped is a major change, although every evaluation config is the same
    (the diff once read the evaluation split's configs only and called this a patch)."""
    base = demo_releases.paths["proactivebench"]
    assert read_release(base).splits == ["test", "train"]
    new = tmp_path / "copy"
    shutil.copytree(base, new)
    shard = new / "grpo" / "quickdraw" / "train-00000-of-00001.parquet"
    table = pq.read_table(shard)
    pq.write_table(table.slice(1), shard)
    d = diff_releases(base, new)
    by = {c.label: c for c in d.configs}
    assert by["grpo/train"].removed == [table["id"][0].as_py()]
    assert by["grpo/train"].required() == "major" and d.required == "major"
    assert all(c.required() == "none" for label, c in by.items() if label.endswith("/test"))
    assert {label.split("/")[0] for label in by if label.endswith("/test")} == \
        set(read_release(base).configs())


def test_a_new_version_built_beside_the_last_links_its_diff(builds: dict[str, Path]) -> None:
    """A build finding an earlier version in its output folder writes the diff into the new
    release's reports, lists it in the manifest and links it from the card and the notes."""
    out = builds["out"] / "beside"
    shutil.copytree(builds["base"], out / "proactivebench" / "2.0.0")
    new = _build(builds["raw"], builds["out"], version="2.0.1", seed=0, only="quickdraw", into=out)
    card = (new / "README.md").read_text()
    assert "## Changes since 2.0.0" in card
    assert "[reports/diff-2.0.0-2.0.1.md](reports/diff-2.0.0-2.0.1.md)" in card
    report = (new / "reports" / "diff-2.0.0-2.0.1.md").read_text()
    assert "| quickdraw/test | both | 8 | 8 | 8 | 0 | 0 | 0 |" in report
    assert "**patch**; shown by the versions: **patch** — matches" in report
    listed = {f["path"] for f in json.loads((new / "manifest.json").read_text())["files"]}
    assert {"reports/diff-2.0.0-2.0.1.md", "reports/diff-2.0.0-2.0.1.json"} <= listed
    notes = (out / "proactivebench" / "RELEASE_NOTES.md").read_text()
    assert "[2.0.1/reports/diff-2.0.0-2.0.1.md](2.0.1/reports/diff-2.0.0-2.0.1.md)" in notes
    assert cli(["check", str(new)]) == 0
    assert "Changes since" not in (builds["base"] / "README.md").read_text()


def test_version_bump_reads_semver() -> None:
    assert [version_bump("2.0.0", v) for v in ("2.0.0", "2.0.1", "2.1.0", "3.0.0")] == \
        ["none", "patch", "minor", "major"]
    with pytest.raises(ValueError, match="lower"):
        version_bump("2.1.0", "2.0.9")
