"""End to end: the Beam pipeline on the demo corpus (real registry media in native layouts).

Checks what a release must show: counts add up per environment, bad input of each
kind lands in ``rejected/`` naming file and field, rebuilds and 1-vs-2-worker builds are
byte-identical, and ``datasets`` decodes the frames without a cast.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import apache_beam as beam
import pandas as pd
import pytest
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to
from PIL import Image

from pipelines.proactivebench.build import run
from pipelines.proactivebench.pipeline import SelectOpenEnded, SelfCheck, mark_open_ended

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus") / "demo"
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_demo_corpus.py"), "--out", str(out), "--no-check"],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        pytest.fail(f"demo corpus failed: {proc.stderr[-2000:]}")
    return out


def parquet_digests(release: Path) -> dict[str, str]:
    return {
        p.relative_to(release).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(release.rglob("*.parquet"))
    }


@pytest.fixture(scope="module")
def release(corpus, tmp_path_factory) -> Path:
    return run(["--raw-dir", str(corpus), "--out", str(tmp_path_factory.mktemp("out"))])


def test_demo_release_counts_add_up_and_everything_is_kept(release):
    manifest = json.loads((release / "manifest.json").read_text())
    expected = {"changeit": 4, "coco": 5, "imagenet_c": 5, "mvpn": 5, "quickdraw": 8, "rod": 5, "vsod": 4}
    assert {e: c["kept"] for e, c in manifest["counts"].items()} == expected
    for c in manifest["counts"].values():
        assert c["inputs"] == c["kept"] + c["filtered"] + c["rejected"]
    # what the selection rules leave out is counted and listed, not skipped: labelme's three
    # multi-object photos (App. 0.A.7) and three unrecognized drawings (App. 0.A.5)
    assert {e: c["filtered"] for e, c in manifest["counts"].items() if c["filtered"]} == \
        {"coco": 3, "quickdraw": 3}
    left = pd.read_parquet(release / "filtered_inputs")
    # per-class sources (QuickDraw) write one summary row per class file, weighted by count
    assert sorted((e, r) for e, r, n in zip(left.environment, left.rule, left["count"], strict=True)
                  for _ in range(n)) == \
        [("coco", "multi-object image")] * 3 + [("quickdraw", "recognized: false")] * 3
    # the manifest inventories every file of the release (but itself and croissant.json, which
    # is written after it because it records the manifest's own hash) with its hash
    listed = {f["path"] for f in manifest["files"]}
    assert listed == {p.relative_to(release).as_posix() for p in release.rglob("*")
                      if p.is_file()} - {"manifest.json", "croissant.json"}
    assert {"README.md", "reports/data_quality.html", "reports/counts.png"} <= listed
    for f in manifest["files"]:
        data = (release / f["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f["sha256"]
    assert sum(f["rows"] for f in manifest["files"] if f["path"].startswith("data/")) == 36
    assert manifest["quality"]["success"] and manifest["quality"]["media_decoded"] > 36

    # tree.avi (VSOD) holds fewer frames than its header counts, over a complete timeline: kept,
    # and the manifest says so
    assert manifest["sources"]["vsod"]["notes"] == [
        {"file": "tree.avi", "note": "header says 444 frames, only 68 decode"}]
    assert manifest["leak_filter"]["applied"] is False
    card = (release / "README.md").read_text()
    assert "leak filter" in card and "NOT applied" in card
    assert "config_name: coco" in card and "config_name: all" in card
    assert (release / "reports" / "counts.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_gate_decodes_no_frame_the_build_decoded_where_it_made_it(corpus, release):
    """Every frame's exact bytes were decoded in full once where they were made: a source image
    kept as it is by its reader, a crop, video frame, stroke rendering or corruption by the Load
    step (pipelines/common/transforms.py). The build's gate checks their sha256 and format and
    decodes none of them again (exports/integrity.py); only reports/counts.png is decoded. Both
    kinds are on the demo, so both paths of the proof are exercised."""
    import pyarrow.parquet as pq

    sources = {hashlib.sha256(p.read_bytes()).hexdigest() for p in corpus.rglob("*")
               if p.suffix.lower() in {".jpg", ".jpeg", ".png"}}
    frames = [f["bytes"] for p in release.rglob("*.parquet")
              if "frames" in pq.read_schema(p).names
              for row in pq.read_table(p, columns=["frames"]).column("frames").to_pylist()
              for f in row or []]
    kept_as_is = sum(hashlib.sha256(b).hexdigest() in sources for b in frames)
    assert 0 < kept_as_is < len(frames)  # source images kept as they are, and the build's own
    quality = json.loads((release / "manifest.json").read_text())["quality"]
    assert quality["media_proven"] == len(frames)
    assert quality["media_decoded"] == len(frames) + 1  # and reports/counts.png
    summary = (release / "reports" / "data_quality.md").read_text()
    assert f"{len(frames) + 1} images / media decode ({len(frames)} of them identical to bytes" \
        in summary


def test_rebuild_two_workers_and_a_portable_runner_are_byte_identical(corpus, release, tmp_path):
    """Same bytes from a rebuild, from two worker processes, and through Beam's portability
    layer (the job API and gRPC worker protocol Flink and Spark runners use; with an embedded
    job server, so it runs offline — docs/scaling.md)."""
    again = run(["--raw-dir", str(corpus), "--out", str(tmp_path / "a")])
    two = run(["--raw-dir", str(corpus), "--out", str(tmp_path / "b"),
               "--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    portable = run(["--raw-dir", str(corpus), "--out", str(tmp_path / "c"), "--runner=PortableRunner",
                    "--job_endpoint=embed", "--environment_type=LOOPBACK"])
    reference = parquet_digests(release)
    assert len(reference) == 10  # 7 environments + filtered/ + filtered_inputs/ + rejected/
    assert parquet_digests(again) == reference
    assert parquet_digests(two) == reference
    assert parquet_digests(portable) == reference
    # every worker's proof that it decoded a frame reaches the gate (core.blobs.decoded_digests)
    quality = [json.loads((r / "manifest.json").read_text())["quality"]
               for r in (release, again, two, portable)]
    assert quality[0]["media_proven"] > 0 and all(q == quality[0] for q in quality)


def test_datasets_decodes_frames_without_a_cast(release, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    import datasets
    from PIL import Image

    ds = datasets.load_dataset(str(release), "quickdraw", split="test")
    assert len(ds) == 8
    row = ds[0]
    assert all(isinstance(f, Image.Image) for f in row["frames"])
    assert row["answer"] in row["categories"] and len(row["categories"]) == 4
    first = row["states"][row["start_state"]]
    letters = [f"{chr(65 + i)}. " for i in range(len(first["option_ids"]) + 4)]
    assert all(letter in row["first_turn_prompt"] for letter in letters)
    assert len(datasets.load_dataset(str(release), "all", split="test")) == 36


def break_corpus(src: Path, dst: Path) -> dict[str, tuple[str, str]]:
    """Copy the corpus and plant one bad input per kind; returns env -> (file, field) expected."""
    shutil.copytree(src, dst)
    # corrupt JPEG in a ROD sequence
    rod = [json.loads(x) for x in (dst / "rod" / "manifest.jsonl").read_text().splitlines()]
    bad_frame = rod[0]["frames"][3]
    (dst / "rod" / bad_frame).write_bytes(b"\xff\xd8\xff\xe0 this is not a jpeg")
    # malformed ndjson line in QuickDraw
    qd = sorted((dst / "quickdraw").glob("*.ndjson"))[0]
    qd.write_text(qd.read_text() + '{"word": "cat", "drawing": [[[1, 2]\n')
    # COCO bbox outside the image
    ann_file = dst / "coco" / "annotations" / "instances_val2014.json"  # the evaluation split
    coco = json.loads(ann_file.read_text())
    per_image = {}
    for a in coco["annotations"]:
        per_image.setdefault(a["image_id"], []).append(a)
    ann = next(a for a in coco["annotations"] if len(per_image[a["image_id"]]) == 1)  # a candidate
    img = next(i for i in coco["images"] if i["id"] == ann["image_id"])
    ann["bbox"] = [img["width"] - 5, 0, 50, 50]
    ann_file.write_text(json.dumps(coco))
    # missing frame in an MVP-N sequence
    mvpn = [json.loads(x) for x in (dst / "mvpn" / "manifest.jsonl").read_text().splitlines()]
    (dst / "mvpn" / mvpn[1]["frames"][2]).unlink()
    # duplicate id in ChangeIt
    lines = (dst / "changeit" / "manifest.jsonl").read_text().splitlines()
    (dst / "changeit" / "manifest.jsonl").write_text("\n".join([*lines, lines[0]]) + "\n")
    # truncated video in VSOD
    (dst / "vsod" / "tree.avi").write_bytes((dst / "vsod" / "tree.avi").read_bytes()[:4096])
    # COCO: an annotation of no image, and a second entry for a single-object image's id
    other = next(a for a in coco["annotations"]
                 if len(per_image[a["image_id"]]) == 1 and a["id"] != ann["id"])
    coco["annotations"].append(dict(other, id=9999, image_id=424242))
    coco["images"].append(next(dict(i) for i in coco["images"] if i["id"] == other["image_id"]))
    ann_file.write_text(json.dumps(coco))
    # QuickDraw: a line that is not UTF-8
    qd.write_bytes(qd.read_bytes() + b'{"word": "' + qd.stem.encode() + b'", "countrycode": "U\xffS"}\n')
    # ImageNet-C: a folder that is no corruption, and a PNG saved under a .JPEG name
    (dst / "imagenet_c" / "pixelate_v2" / "1").mkdir(parents=True)
    (dst / "imagenet_c" / "pixelate_v2" / "1" / "x.JPEG").write_bytes(b"x")
    jpeg = sorted((dst / "imagenet_c").glob("*/4/*/*.JPEG"))[0]
    buf = io.BytesIO()
    Image.open(jpeg).save(buf, format="PNG")
    jpeg.write_bytes(buf.getvalue())
    return {
        "rod": [(bad_frame, "frames[3]")],
        "quickdraw": [(qd.name, "json"), (qd.name, "utf-8")],
        "coco": [(ann_file.name, f"annotations[{ann['id']}].bbox"),
                 (ann_file.name, "annotations[9999].image_id"),
                 (ann_file.name, f"images[{coco['images'].index(img_of(coco, other))}].id"),
                 (ann_file.name, f"images[{len(coco['images']) - 1}].id")],
        "mvpn": [(mvpn[1]["frames"][2], "frames[2]")],
        "changeit": [("manifest.jsonl", "id")],
        "vsod": [("tree.avi", "video")],
        "imagenet_c": [("pixelate_v2/", "path"), (jpeg.relative_to(dst / "imagenet_c").as_posix(),
                                                   "severity 4")],
    }


def img_of(coco: dict, ann: dict) -> dict:
    return next(i for i in coco["images"] if i["id"] == ann["image_id"])


def test_bad_input_is_rejected_with_file_and_field(corpus, tmp_path, capsys):
    expected = break_corpus(corpus, tmp_path / "broken")
    release = run(["--raw-dir", str(tmp_path / "broken"), "--out", str(tmp_path / "out")])
    # every source's progress line ends at 100%: items rejected while loading count too
    err = capsys.readouterr().err
    for env in expected:
        assert re.search(rf"read {env}: (\d+)/\1 \(100%\)", err), (env, err)
    assert re.search(r"read imagenet_c: (\d+)/\1 \(100%\).* rejected=\d", err), err
    manifest = json.loads((release / "manifest.json").read_text())
    rejected = pd.read_parquet(release / "rejected")
    for env, planted in expected.items():
        rows = rejected[rejected.environment == env]
        for file, field in planted:
            found = zip(rows.source_file, rows.field, strict=True)
            assert any(file in f and field == fld for f, fld in found), (
                env, file, field, rows[["source_file", "field", "reason"]].to_dict("records"))
        c = manifest["counts"][env]
        assert c["rejected"] == len(rows)
        assert c["inputs"] == c["kept"] + c["filtered"] + c["rejected"]
    # both entries of the duplicated COCO image id are rejected, ChangeIt's both lines too
    assert manifest["counts"]["coco"]["kept"] == 3 and manifest["counts"]["changeit"]["kept"] == 3
    # items that were fine are still kept
    assert manifest["counts"]["imagenet_c"]["kept"] == 4
    # paths in a release are relative to the source root; reasons read as sentences
    for folder in ("rejected", "filtered_inputs"):
        table = pd.read_parquet(release / folder)
        for text in [*table.source_file, *table.reason]:
            assert str(tmp_path) not in text and not text.startswith("/"), text
            assert " at at " not in text, text


def test_self_check_dofn_keeps_good_and_rejects_broken_episodes():
    good = {
        "id": "quickdraw/1", "environment": "quickdraw", "source_id": "1", "answer": "cat",
        "frame_sources": ["cat.ndjson#1"], "option_kinds": ["abstain", "proactive"],
        "states": [{"frame": 0, "option_ids": [0, 1], "next_states": [-1, 1]},
                   {"frame": 1, "option_ids": [0, 1], "next_states": [-1, -1]}],
        "start_state": 0, "goal_states": [1], "void_states": [], "max_steps": 2,
    }
    broken = dict(good, id="quickdraw/2", source_id="2", goal_states=[])
    with test_pipeline.TestPipeline(runner="FnApiRunner") as p:
        out = p | beam.Create([good, broken]) | beam.ParDo(SelfCheck()).with_outputs("rejected", main="kept")
        assert_that(out.kept | "Ids" >> beam.Map(lambda e: e["id"]), equal_to(["quickdraw/1"]), label="Kept")
        assert_that(
            out.rejected | "Why" >> beam.Map(lambda r: (r.item_id, r.field, r.reason.split(":")[0])),
            equal_to([("2", "states", "oracle")]), label="Rejected",
        )


def test_open_ended_subset_is_seeded_and_sized_per_environment():
    episodes = [{"id": f"rod/{i}", "environment": "rod"} for i in range(7)]
    episodes += [{"id": f"coco/{i}", "environment": "coco"} for i in range(2)]
    with test_pipeline.TestPipeline(runner="FnApiRunner") as p:
        listed = p | beam.Create(episodes)
        marked = listed | beam.Map(mark_open_ended, selected=beam.pvalue.AsDict(
            listed | SelectOpenEnded(per_environment=3, seed=0)))
        counts = (
            marked
            | beam.Map(lambda e: (e["environment"], int(e["oeg_selected"])))
            | beam.CombinePerKey(sum)
        )
        assert_that(counts, equal_to([("rod", 3), ("coco", 2)]))


def test_a_failed_build_leaves_the_previous_release_intact(corpus, release, tmp_path):
    """design.md §Conventions: publishing is atomic. A run that dies half-way (here: a config error that only
    surfaces inside the Beam workers) leaves no staging directory and the old release as it was."""
    import yaml

    out = tmp_path / "out"
    shutil.copytree(release.parent.parent, out)  # an existing release at out/proactivebench/2.0.0
    before = parquet_digests(out / "proactivebench" / "2.0.0")
    config = yaml.safe_load((REPO / "configs" / "proactivebench.yaml").read_text())
    config["environments"]["coco"]["directions"] = ["sideways"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(config))
    with pytest.raises(Exception, match="sideways"):
        run(["--raw-dir", str(corpus), "--out", str(out), "--config", str(bad)])
    assert parquet_digests(out / "proactivebench" / "2.0.0") == before
    assert sorted(p.name for p in (out / "proactivebench").iterdir()) == ["2.0.0", "RELEASE_NOTES.md"]
