"""The training split end to end (ProactiveBench §5): the demo corpus built with ``--split train``.

What a release with a training split must show: both splits in one release (card
configs, manifest counts per split, the same kept / filtered / rejected accounting); training
items that leak on purpose (the demo corpus plants four) left out with reasons; a gate that
fails a release whose training split holds an evaluation item; the rows load with ``datasets``
and the reward scores them; the evaluation files keep the bytes of an evaluation-only build; a
rebuild is byte-identical.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from exports.croissant import write_croissant
from exports.release import ReleaseInventory
from pipelines.common.assembly import gate
from pipelines.proactivebench.build import PROACTIVEBENCH, run
from pipelines.proactivebench.rewards import proactive_reward

REPO = Path(__file__).resolve().parents[3]
# what describes the whole release (and so differs from an evaluation-only build's)
WHOLE_RELEASE = {"README.md", "manifest.json", "croissant.json", "reports/counts.png",
                 "reports/data_quality.md", "reports/data_quality.json", "reports/data_quality.html"}


def digests(release: Path) -> dict[str, str]:
    return {p.relative_to(release).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(release.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus") / "demo"
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "make_demo_corpus.py"), "--out",
                           str(out), "--no-check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("out")


@pytest.fixture(scope="module")
def release(corpus: Path, out: Path) -> Path:
    return run(["--raw-dir", str(corpus), "--out", str(out), "--split", "train"])


@pytest.fixture(scope="module")
def manifest(release: Path) -> dict:
    return json.loads((release / "manifest.json").read_text())


def test_both_splits_are_one_release_counted_apart(release: Path, manifest: dict) -> None:
    assert manifest["split"] == ["test", "train"]
    train = {g: c for g, c in manifest["counts"].items() if g.startswith("train/")}
    # COCO train2014: 5 single-object images, 2 leak; quickdraw_train: 11 lines, 1 unrecognized,
    # 2 leak; kept = sequences with rows
    assert train == {"train/coco": {"inputs": 5, "kept": 3, "filtered": 2, "rejected": 0},
                     "train/quickdraw": {"inputs": 11, "kept": 8, "filtered": 3, "rejected": 0}}
    assert manifest["splits"]["train"] == {"groups": ["train/coco", "train/quickdraw"], "inputs": 16,
                                           "kept": 11, "filtered": 5, "rejected": 0}
    assert manifest["splits"]["test"]["kept"] == 36
    facts = manifest["train"]
    assert (facts["rows"], facts["sequences"], facts["ratio"]) == \
        (33, 11, {"configured": "2:1", "released": "22:11"})
    assert facts["per_environment"]["coco"] == {
        "sequences": 3, "ambiguous": 6, "unambiguous": 3,
        "sequences_short": {"ambiguous": 0, "unambiguous": 0}}
    assert manifest["config"]["train"]["sources"]["coco"] == {"path": "coco", "split": "train2014"}
    assert facts["reward"] == {"r_c": 1.0, "r_p": 0.75, "r_w": 0.0}
    card = (release / "README.md").read_text()
    assert "- config_name: grpo\n  data_files:\n  - split: train\n    path: grpo/*/train-*.parquet" in card
    assert "**Held out, proven.**" in card and "reward_funcs=proactive_reward(r_p=0.75)" in card
    sets = {s["@id"] for s in json.loads((release / "croissant.json").read_text())["recordSet"]}
    assert {"coco", "quickdraw", "grpo-train"} <= sets  # `all` is a union: not a record set
    assert manifest["quality"]["success"] is True


def test_leaks_planted_in_the_training_sources_are_held_out(release: Path, manifest: dict) -> None:
    left = pq.read_table(release / "filtered_inputs" / "train").to_pylist()
    held = sorted((r["environment"], r["item_id"], r["source_file"], r["reason"].split(":")[0])
                  for r in left if r["rule"] == "held out")
    assert held == [
        ("train/coco", "train2014/302", "annotations/instances_train2014.json", "images[id=302].id"),
        ("train/coco", "train2014/410", "train2014/COCO_train2014_000000000410.jpg", "pixels"),
        ("train/quickdraw", "cat/5076235127701504", "cat.ndjson:4", "key_id"),
        ("train/quickdraw", "house/5910974510923777", "house.ndjson:3", "drawing"),
    ]
    reasons = {r["item_id"]: r["reason"] for r in left}
    assert "matches the evaluation split's coco/val2014/300" in reasons["train2014/410"]
    assert "matches the evaluation split's quickdraw/house/5629499534213120" in \
        reasons["house/5910974510923777"]
    assert manifest["train"]["held_out"]["matches_by"] == {"content_sha256": 2, "source_id": 2}
    rows = pq.read_table(release / "grpo", columns=["source_id"]).column("source_id").to_pylist()
    assert not {"train2014/302", "train2014/410", "cat/5076235127701504"} & set(rows)
    # the evaluation split itself is untouched by them: its items are all still there
    report = json.loads((release / "reports" / "train" / "held_out.json").read_text())
    assert {e["source_id"] for e in report["evaluation"] if e["environment"] == "coco"} == \
        {"val2014/200", "val2014/300", "val2014/301", "val2014/302", "val2014/303"}


def test_the_train_split_loads_and_the_reward_scores_its_rows(release: Path, tmp_path: Path) -> None:
    import datasets

    train = datasets.load_dataset(str(release), "grpo", split="train", cache_dir=str(tmp_path / "hf"))
    assert len(train) == 33 and sum(train["ambiguous"]) == 22
    row = train[0]
    assert row["images"][0].size[0] > 0  # a PIL image, decoded without a cast
    assert row["prompt"][0]["role"] == "user"
    reward = proactive_reward(0.75)
    columns = {k: train[k] for k in ("ground_truth", "proactive_actions", "options")}
    prompts = train["prompt"]
    assert reward(prompts=prompts, completions=train["ground_truth"], **columns) == [1.0] * 33
    wrong = [next(o for o in opts[-4:] if o != gt) for opts, gt in
             zip(train["options"], train["ground_truth"], strict=True)]
    assert reward(prompts=prompts, completions=wrong, **columns) == [0.0] * 33
    suggested = [(acts[0] if acts else "I am not sure.") for acts in train["proactive_actions"]]
    paid = reward(prompts=prompts, completions=suggested, **columns)
    assert paid == [0.75 if amb else 0.0 for amb in train["ambiguous"]]


def test_evaluation_files_keep_their_bytes(release: Path, corpus: Path, tmp_path: Path) -> None:
    alone = run(["--raw-dir", str(corpus), "--out", str(tmp_path / "test-only")])
    test_only, both = digests(alone), digests(release)
    assert {k: v for k, v in test_only.items() if k not in WHOLE_RELEASE} == \
        {k: v for k, v in both.items() if k in test_only and k not in WHOLE_RELEASE}
    assert sorted(set(both) - set(test_only)) == [
        "filtered_inputs/train/filtered_inputs-00000-of-00001.parquet",
        "grpo/coco/train-00000-of-00001.parquet", "grpo/quickdraw/train-00000-of-00001.parquet",
        "rejected/train/rejected-00000-of-00001.parquet", "reports/train/held_out.json"]


def test_a_rebuild_is_byte_identical(release: Path, corpus: Path, out: Path) -> None:
    before = digests(release)
    again = run(["--raw-dir", str(corpus), "--out", str(out), "--split", "train"])
    assert again == release and digests(again) == before


def _republish(copy: Path) -> dict:
    """The copy's manifest listing its files as they now are (a leak planted consistently, so
    only the expectations can catch it)."""
    manifest = json.loads((copy / "manifest.json").read_text())
    (copy / "croissant.json").unlink(missing_ok=True)  # written after the manifest, as the build does
    manifest["files"] = ReleaseInventory(copy).files
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    write_croissant(copy, copy)  # derived from the manifest, as the build writes it
    return manifest


def _failed(copy: Path, manifest: dict, reports: Path) -> set[tuple[str, str]]:
    report = gate(PROACTIVEBENCH, copy, manifest, label=copy, reports=reports)
    assert not report.problems
    return {(c.suite, c.column) for c in report.failed}


def test_the_gate_fails_a_training_split_that_holds_an_evaluation_item(release: Path,
                                                                         tmp_path: Path) -> None:
    copy = tmp_path / "leaky"
    shutil.copytree(release, copy)
    report = json.loads((copy / "reports" / "train" / "held_out.json").read_text())
    drawing = next(e for e in report["evaluation"] if e["source_id"] == "cat/4611686018427387904")
    frame = pq.read_table(copy / "data" / "quickdraw", columns=["source_id", "frames"]).to_pylist()
    shard = copy / "grpo" / "quickdraw" / "train-00000-of-00001.parquet"
    table = pq.read_table(shard)
    rows = table.to_pylist()
    sequence = f"quickdraw/{drawing['source_id']}"
    leak = dict(rows[0], id=f"{sequence}#0", sequence_id=sequence, source_id=drawing["source_id"],
                source_sha256=drawing["content_sha256"],
                images=[next(f for f in frame if f["source_id"] == drawing["source_id"])["frames"][0]])
    pq.write_table(pa.Table.from_pylist(rows + [leak], schema=table.schema), shard)
    manifest = _republish(copy)
    failed = _failed(copy, manifest, tmp_path / "reports")
    assert {("proactivebench_held_out", c) for c in
            ("source_id_held_out", "content_held_out", "images_held_out")} <= failed
    # a held-out report that leaves an evaluation item out would hide a leak: it fails too
    report["evaluation"] = [e for e in report["evaluation"] if e is not drawing]
    (copy / "reports" / "train" / "held_out.json").write_text(json.dumps(report))
    assert ("proactivebench_held_out", "evaluation_item_listed") in \
        _failed(copy, _republish(copy), tmp_path / "reports2")


def test_a_training_source_needs_its_evaluation_source(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"training sources \['coco', 'quickdraw'\] are held out"):
        run(["--raw-dir", str(corpus), "--out", str(tmp_path), "--split", "train", "--only", "rod"])
    with pytest.raises(SystemExit, match="training source directory for quickdraw not found"):
        run(["--raw-dir", str(corpus), "--out", str(tmp_path), "--split", "train",
             "--train-source", f"quickdraw={tmp_path / 'nowhere'}"])
