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

from exports.croissant import write_croissant
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
    for jsonld in (beside, inside):
        loaded = _load(python, jsonld)
        assert loaded["errors"] == []
        assert set(loaded["record_sets"]) == set(sets)
        for set_id, got in loaded["record_sets"].items():
            config, split, globs = sets[set_id]
            rows = list(iter_rows(release.files(config, split)))
            assert got["ids"] == [r["id"] for r in rows], set_id
            assert got["count"] == sum(f["rows"] for f in release.manifest["files"]
                                       if any(Path(f["path"]).match(g) for g in globs))
            frames = rows[0].get("frames") or rows[0].get("images") or []
            assert [h for _, h in got["first_images"]] == [_pixels(f["bytes"]) for f in frames], set_id
