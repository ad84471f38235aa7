"""Croissant metadata of the three demo releases, validated and read back by mlcroissant itself
(exports/croissant.py; ``benchforge export croissant``).

Why mlcroissant in its own venv: the test must prove that the real loader accepts the file and
yields the release's records, not that our JSON looks plausible; mlcroissant's stack must not
touch the project's ``.venv`` (tests/support/kits.py).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from exports.croissant import UNKNOWN_FORMAT, encoding_format, write_croissant
from exports.release import code_date, iso_date, release_date, release_entry, release_status
from exports.release_files import iter_rows, read_release
from pipelines.cli import main as cli
from tests.support.demo import DemoReleases
from tests.support.kits import kit_python

LOADER = Path(__file__).resolve().parents[1] / "support" / "kit_scripts" / "croissant_load.py"


def _load(python: Path, path: Path) -> dict:
    proc = subprocess.run([str(python), str(LOADER), str(path)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _pixels(data: bytes) -> str:
    return hashlib.sha256(Image.open(io.BytesIO(data)).convert("RGB").tobytes()).hexdigest()


# what each kind of file of a release is, written out here rather than read from the code
FORMATS = {".parquet": "application/x-parquet", ".json": "application/json", ".md": "text/markdown",
           ".html": "text/html", ".png": "image/png"}


def _ids(node: object) -> list[str]:
    """Every ``@id`` a JSON-LD document defines (a node with more than a reference to one)."""
    if isinstance(node, list):
        return [i for item in node for i in _ids(item)]
    if not isinstance(node, dict):
        return []
    own = [node["@id"]] if "@id" in node and len(node) > 1 else []
    return own + [i for key, value in node.items() if key != "@context" for i in _ids(value)]


def test_media_types_by_extension_and_never_parquet_by_default() -> None:
    assert [encoding_format(p) for p in ("data/coco/test-00000-of-00001.parquet", "manifest.json",
                                         "README.md", "reports/data_quality.html", "reports/counts.png",
                                         "x/candidates.jsonl", "a.CSV", "clip.mp4", "frame.JPG")] == \
        ["application/x-parquet", "application/json", "text/markdown", "text/html", "image/png",
         "application/jsonlines", "text/csv", "video/mp4", "image/jpeg"]
    for unknown in ("weights.bin", "LICENSE", "data/x.parquet.part"):
        assert encoding_format(unknown) == UNKNOWN_FORMAT == "application/octet-stream"


def test_every_file_is_one_object_of_its_own_type_with_the_release_date(demo_releases: DemoReleases
                                                                         ) -> None:
    """Each file of the manifest is described once, under its own ``@id``, as what it is: the
    card was listed twice under one ``@id`` (as Markdown and as Parquet, merged by mlcroissant)
    and the reports were called Parquet. ``datePublished`` is the release entry's date."""
    for bench, path in demo_releases.paths.items():
        meta = json.loads((path / "croissant.json").read_text())
        manifest = json.loads((path / "manifest.json").read_text())
        objects = [d for d in meta["distribution"] if d["@type"] == "cr:FileObject"]
        listed = [f["path"] for f in manifest["files"]]
        assert [d["contentUrl"] for d in objects] == ["manifest.json", *listed] and "README.md" in listed
        assert {Path(d["contentUrl"]).suffix for d in objects} == set(FORMATS), bench
        for d in objects:
            assert d["@id"] == d["contentUrl"] and d["encodingFormat"] == FORMATS[Path(d["@id"]).suffix]
        sets = [d for d in meta["distribution"] if d["@type"] == "cr:FileSet"]
        assert sets and {d["encodingFormat"] for d in sets} == {"application/x-parquet"}
        ids = _ids(meta)
        assert len(ids) == len(set(ids)) > len(objects), bench
        # the demo configs set no release_date: the commit date of the code, in the release entry
        assert meta["datePublished"] == manifest["release"]["date"] == code_date(), bench


def test_the_release_date_comes_from_the_config_or_the_commit_never_the_clock(tmp_path: Path) -> None:
    """A release's bytes are a function of its inputs, the config and the code: the date is the
    config's ``release_date:`` (quoted or as YAML reads an unquoted date), else the commit date
    of the code; a rebuild of the same records keeps the published entry and so its date."""
    import datetime

    import yaml

    from pipelines.common.command_line import load_config

    commit = subprocess.run(["git", "-C", str(Path(__file__).parent), "log", "-1", "--format=%cs"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert release_date({}) == code_date() == commit
    assert datetime.date.fromisoformat(commit)
    assert release_date({"release_date": "2025-06-01"}) == "2025-06-01"
    assert release_date({"release_date": datetime.date(2025, 6, 1)}) == "2025-06-01"
    for bad in ("2025-02-30", "1 June 2025", "2025-06-01T10:00", datetime.datetime(2025, 6, 1), 2025):
        with pytest.raises(ValueError, match="is not a date"):
            iso_date(bad)

    config = tmp_path / "config.yaml"
    config.write_text("version: 1.0.0\nrelease_date: 2025-06-01\n")  # YAML reads a date
    assert isinstance(yaml.safe_load(config.read_text())["release_date"], datetime.date)
    loaded = load_config(config)
    assert loaded["release_date"] == "2025-06-01" and json.dumps(loaded)  # the manifest holds it
    config.write_text("version: 1.0.0\nrelease_date: June 2025\n")
    with pytest.raises(SystemExit, match="release_date: 'June 2025' is not a date"):
        load_config(config)

    manifest = {"config": {"version": "1.0.0", "release_date": "2025-06-01"}, "files": [], "counts": {}}
    entry = release_entry(tmp_path / "out", "1.0.0", manifest, None, None)
    assert entry["date"] == "2025-06-01"
    final = tmp_path / "out" / "1.0.0"
    final.mkdir(parents=True)
    files = [{"path": "data/a/test-00000-of-00001.parquet", "sha256": "ab", "bytes": 1, "rows": 1}]
    (final / "manifest.json").write_text(json.dumps({"files": files, "release": entry}))
    assert release_status(final, files, overwrite=False, config=config) == ("same", entry)


@pytest.mark.kits
@pytest.mark.parametrize("bench", ["proactivebench", "streamvibe", "proready"])
def test_mlcroissant_validates_and_loads_every_config(bench: str, demo_releases: DemoReleases,
                                                      tmp_path: Path) -> None:
    python = kit_python("mlcroissant")
    release = read_release(demo_releases.paths[bench])
    # next to the release (the command's default) and inside a copy of it (what a build would add)
    assert cli(["export", "croissant", str(release.path), str(tmp_path / "unrelated")]) == 2
    assert cli(["export", "croissant", str(release.path)]) == 0
    beside = release.path.parent / f"{bench}-{release.version}.croissant.json"
    inside_copy = tmp_path / "release"
    shutil.copytree(release.path, inside_copy)
    inside = write_croissant(inside_copy, inside_copy)
    assert inside.name == "croissant.json"

    meta = json.loads(beside.read_text())
    assert meta["version"] == release.version and release.manifest_sha256 in meta["identifier"]
    assert meta["license"] == release.card["license"]
    title = {"proactivebench": "ProactiveBench", "streamvibe": "StreamVibe",
             "proready": "StreamReady"}[bench]
    assert title in meta["citeAs"]
    sha = {f["path"]: f["sha256"] for f in release.manifest["files"]}
    objects = {d["contentUrl"]: d for d in meta["distribution"] if d["@type"] == "cr:FileObject"}
    for path, digest in sha.items():
        assert objects[f"{release.version}/{path}"]["sha256"] == digest

    # one record set per config and split: a training split's as `<config>-train`
    sets = {(c if split == release.split else f"{c}-{split}"): (c, split, globs)
            for split in release.splits for c, globs in release.configs(split=split).items()}
    assert (bench == "proactivebench") == ("grpo-train" in sets)  # its demo has a training split
    assert meta["datePublished"] == release.manifest["release"]["date"]
    for jsonld in (beside, inside):
        loaded = _load(python, jsonld)
        assert loaded["errors"] == []
        # no warning at all: the one mlcroissant 1.1.1 gave (no datePublished) is answered
        assert loaded["warnings"] == []
        assert loaded["date_published"] == f"{meta['datePublished']}T00:00:00"
        # one node per file (two under one @id would be merged into one with both formats),
        # each with the one format its extension names
        written = json.loads(jsonld.read_text())["distribution"]
        assert [uuid for uuid, _ in loaded["distribution"]] == [d["@id"] for d in written]
        for uuid, formats in loaded["distribution"]:
            expected = "application/x-parquet" if uuid.startswith("files-") else \
                FORMATS[Path(uuid).suffix]
            assert formats == [expected], uuid
        assert set(loaded["record_sets"]) == set(sets)
        for set_id, got in loaded["record_sets"].items():
            config, split, globs = sets[set_id]
            rows = list(iter_rows(release.files(config, split)))
            assert got["ids"] == [r["id"] for r in rows], set_id
            assert got["count"] == sum(f["rows"] for f in release.manifest["files"]
                                       if any(Path(f["path"]).match(g) for g in globs))
            frames = rows[0].get("frames") or rows[0].get("images") or []
            assert [h for _, h in got["first_images"]] == [_pixels(f["bytes"]) for f in frames], set_id
