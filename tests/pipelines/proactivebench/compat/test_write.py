"""The export folder: every field the official classes read, the report and README, and no
silent overwrite of an existing folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.proactivebench.compat import export, load_compat_records
from schemas.proactivebench import OFFICIAL_DATASET_NAMES

# fields every official class reads in __init__ (BaseEnvironment + per-dataset extras)
REQUIRED = {"id", "image_template", "first_image", "num_images", "reference_image", "prompt",
            "options", "categories", "answer"}
EXTRAS = {
    "OcclusionDataSet-MM20": {"strong_occlusions"},
    "MVP-N": {"valid_images"},
    "ImageNet-C": {"quality_answer"},
    "ChangeIt": {"step_size", "max_steps"},
    "coco2014": {"direction", "granularity", "horizontal_step", "vertical_step", "crop"},
}


def test_export_writes_every_field_the_classes_read(exported):
    out, result = exported
    assert result.exported == {name: (4 if name == "coco2014" else 1)
                               for name in OFFICIAL_DATASET_NAMES.values()}
    for name in OFFICIAL_DATASET_NAMES.values():
        for rec in load_compat_records(out, name):
            missing = (REQUIRED | EXTRAS.get(name, set())) - set(rec)
            assert not missing, (name, missing)
            assert rec["answer"] in rec["categories"]
    coco = load_compat_records(out, "coco2014")
    assert {r["direction"] for r in coco} == {"zoom", "right", "up_left"}  # "zoom_out" renamed
    zoom = next(r for r in coco if r["id"] == "coco/zoom_out-13")
    assert zoom["horizontal_step"] == pytest.approx(22 / 3)  # PIL rounds the float box as we did
    report = json.loads((out / "compat_report.json").read_text())
    assert report["official_package"] == "proactivebench==0.1.1"
    assert "FILTER" in (out / "README.md").read_text()


def test_export_refuses_to_overwrite_silently(release, tmp_path: Path):
    root, _ = release
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError):
        export(root, tmp_path / "out")
    assert (tmp_path / "out" / "keep.txt").exists()
