"""End-to-end offline build on real registry videos: pending review → release, bad input, determinism."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from annotation.projects import Candidate
from pipelines.proready.build import run
from pipelines.proready.rubric import PROREADY
from tests.pipelines.proready.conftest import write_corpus


def _videos(demo: dict[str, Any]) -> list[dict[str, Any]]:
    by_id = {v["video_id"]: v for v in demo["videos"]}
    tree = json.loads(json.dumps(by_id["tree"]))
    # a manual clue whose question is asked after its evidence appears: not future-dependent
    tree["annotations"]["clues"] = [{"task": "crr", "question": "What covers the tree?",
                                     "answer": "a hand", "start": 25.0, "end": 28.0, "ask_time": 26.0}]
    late = {"video_id": "tree_late", "path": "video/tree.avi", "source": "opencv-doc",
            "annotations": {"actions": [{"start": 20.0, "end": 40.0, "label": "the hand waves"}]}}
    return [
        tree,
        by_id["bikes"],
        {"video_id": "broken", "path": "video/broken.avi", "annotations": {}},
        late,
        {"video_id": "missing", "path": "video/none.mp4", "annotations": {}},
        {"video_id": "twice", "path": "video/tree.avi", "annotations": {}},  # one id, two entries
        {"video_id": "twice", "path": "video/bikes.mp4", "annotations": {}},
    ]


@pytest.fixture()
def only_manifest(manifest_only_config: Path) -> list[str]:
    """``--config`` of the demo config without its video datasets (this corpus has none)."""
    return ["--config", str(manifest_only_config)]


@pytest.fixture()
def corpus(tmp_path: Path, media: Path, demo_manifest: dict[str, Any]) -> Path:
    src = write_corpus(tmp_path / "raw", media, _videos(demo_manifest))
    (src / "video" / "broken.avi").write_bytes(b"RIFF\x00\x00\x00\x00AVI this is not a video" * 20)
    return tmp_path / "raw"


def _rows(path: Path) -> list[dict[str, Any]]:
    return pq.read_table(path).to_pylist()


def _approve_all(candidates: list[dict[str, Any]], except_id: str) -> list[dict[str, Any]]:
    out = []
    for c in candidates:
        for r in ("r1", "r2", "r3", "r4"):
            if c["id"] == except_id and r == "r4":
                continue  # only 3 of 4 approvals: stays pending, never released
            out.append({
                "benchmark": "proready", "review_round": "r-test", "sample_id": c["id"],
                "version": c["version"], "content_hash": c["content_hash"], "task_type": c["task_type"],
                "reviewer": r, "rater_kind": "human", "decision": "approve",
                "criteria": list(PROREADY.criterion_keys), "comment": "", "lead_time": 1.0,
                "created_at": "2026-11-29T00:00:00", "source_task_id": 1, "source_annotation_id": 1,
            })
    return out


def test_pending_review_then_release(only_manifest: list[str], corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    review = run([*only_manifest, "--raw-dir", str(corpus), "--out", str(out)])
    assert review == out.resolve() / "proready" / "review" / "2.1.0"
    assert not (out / "proready" / "2.1.0").exists()  # nothing released before review
    state = json.loads((review / "status.json").read_text())
    assert state["state"] == "pending_review"
    assert state["counts"]["videos"] == {"inputs": 7, "kept": 2, "filtered": 0, "rejected": 5,
                                         "pending": 0}
    assert state["counts"]["items"] == {"inputs": 11, "kept": 0, "filtered": 0, "rejected": 1,
                                        "pending": 10}
    assert state["per_task"] == {"crr": 6, "ctd": 1, "gsd": 1, "rec": 1, "ssr": 1}

    rejected = {r["item_id"]: r for r in _rows(review / "rejected")}
    assert rejected["broken"]["field"] == "frames" and rejected["broken"]["source_file"] == "video/broken.avi"
    assert rejected["tree_late"]["field"] == "videos[3].annotations.actions[0].end"
    assert "past the end of the video (29.6s" in rejected["tree_late"]["reason"]
    assert rejected["missing"]["field"] == "path"
    twice = sorted(r["field"] for r in _rows(review / "rejected") if r["item_id"] == "twice")
    assert twice == ["videos[5].video_id", "videos[6].video_id"]  # every entry sharing the id
    assert rejected["twice"]["reason"] == ("video id 'twice' is given by videos[5], videos[6]: every "
                                           "entry sharing it is rejected")
    clue = rejected["tree.crr-clue-0"]
    assert (clue["stage"], clue["field"]) == ("evidence", "turns[0].t_s")
    assert "not future-dependent" in clue["reason"] and clue["source_file"] == "manifest.yaml"

    cands = {c["id"]: c for c in map(json.loads, (review / "candidates.jsonl").read_text().splitlines())}
    chain = cands["tree.ssr-chain-1"]["turns"]
    assert [(t["ask_time_s"], t["t_s"], t["t_e"], t["dependency"], t["refers_to"]) for t in chain] == [
        (23.0, 25.0, 26.0, "none", -1), (25.0, 26.0, 27.5, "local", 0), (26.0, 27.5, 29.6, "global", 0)]
    assert cands["bikes.rec-the-shot-cuts-to-a-new-view"]["turns"][0]["answer"] == "4"
    assert cands["bikes.rec-the-shot-cuts-to-a-new-view"]["turns"][0]["t_s"] == 8.0  # count completion
    # the push file is exactly what annotation.projects hashes: approvals will refer to our hash
    lines = [json.loads(x) for x in (review / "review_candidates.jsonl").read_text().splitlines()]
    assert len(lines) == 10
    for line in lines:
        c = Candidate(line["sample_id"], line["version"], line["task_type"], line["content"], line["media"])
        assert c.content_hash == cands[c.sample_id]["content_hash"]

    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text("".join(json.dumps(d) + "\n" for d in _approve_all(list(cands.values()),
                                                                              "bikes.crr-scene-1")))
    qc = tmp_path / "qc_windows.jsonl"
    qc.write_text("".join(json.dumps(w) + "\n" for w in [
        {"sample_id": "tree.ctd-0", "turn_index": 0, "annotator": "a1", "t_s": 25.5, "t_e": 28.5},
        {"sample_id": "tree.ctd-0", "turn_index": 0, "annotator": "a2", "t_s": 25.5, "t_e": 27.5},
        {"sample_id": "tree.gsd-0", "turn_index": 0, "annotator": "a1", "t_s": 26.0, "t_e": 27.5},
        {"sample_id": "tree.gsd-0", "turn_index": 0, "annotator": "a2", "t_s": 26.0, "t_e": 27.5},
    ]))
    final = run([*only_manifest, "--raw-dir", str(corpus), "--out", str(out), "--decisions", str(decisions),
                 "--qc-windows", str(qc)])
    manifest = json.loads((final / "manifest.json").read_text())
    assert manifest["counts"]["items"] == {"inputs": 11, "kept": 9, "filtered": 1, "rejected": 1}
    assert manifest["review"]["states"] == {"approved": 9, "pending": 1}
    assert manifest["quality"]["success"] is True
    # ARS τ: median of the 11 released windows' durations (StreamReady §4.3)
    assert (manifest["turns"], manifest["multi_turn_items"], manifest["ars_tau_s"]) == (11, 1, 1.5)
    iou = json.loads((final / "reports" / "qc.json").read_text())["iou"]
    assert (iou["mean_iou"], iou["turns_compared"], iou["sampled_items"]) == (round((2 / 3 + 1) / 2, 4), 2, 9)
    assert manifest["windows"]["ssr"] == {"turns": 3, "median_window_s": 1.5, "median_lead_s": 1.5}
    assert (final / "reports" / "windows.png").stat().st_size > 0
    filtered = _rows(final / "filtered")
    assert [(f["id"], f["filter_name"]) for f in filtered] == [("bikes.crr-scene-1", "review_pending")]
    card = (final / "README.md").read_text()
    assert "config_name: ssr" in card and "config_name: all" in card

    os.environ["HF_DATASETS_OFFLINE"] = "1"
    import datasets

    # a private cache: datasets keys its cache on the directory name ("2.1.0"), not the content
    hf = str(tmp_path / "hf-cache")
    ssr = datasets.load_dataset(str(final), "ssr", split="test", cache_dir=hf)
    assert ssr[0]["id"] == "tree.ssr-chain-1" and ssr[0]["approvals"] == ["r1", "r2", "r3", "r4"]
    assert [t["dependency"] for t in ssr[0]["gold_turns"]] == ["none", "local", "global"]
    # model input apart from gold: the three questions with their ask times, nothing else
    assert [(q["turn_index"], q["ask_time_s"]) for q in ssr[0]["questions"]] == [(0, 23.0), (1, 25.0),
                                                                                  (2, 26.0)]
    assert manifest["schema"] == {"record": "proready_item", "version": "2.0.0"}
    assert len(datasets.load_dataset(str(final), "all", split="test", cache_dir=hf)) == 9


def test_candidates_are_byte_identical_across_runners(only_manifest: list[str], corpus: Path,
                                                      tmp_path: Path) -> None:
    a = run([*only_manifest, "--raw-dir", str(corpus), "--out", str(tmp_path / "a")])
    b = run([*only_manifest, "--raw-dir", str(corpus), "--out", str(tmp_path / "b"),
             "--direct_running_mode=multi_threading", "--direct_num_workers=3"])
    fa, fb = sorted((a / "rejected").glob("*.parquet")), sorted((b / "rejected").glob("*.parquet"))
    assert [f.name for f in fa] == [f.name for f in fb]
    assert [f.read_bytes() for f in fa] == [f.read_bytes() for f in fb]
    for name in ("candidates.jsonl", "review_candidates.jsonl"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_missing_inputs_are_clear_errors(only_manifest: list[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="ProReady-QA source directory not found"):
        run([*only_manifest, "--raw-dir", str(tmp_path / "nope"), "--out", str(tmp_path / "out")])
    with pytest.raises(SystemExit, match="--decisions: .* does not exist"):
        run([*only_manifest, "--raw-dir", str(tmp_path), "--out", str(tmp_path / "out"),
             "--decisions", str(tmp_path / "x")])
    with pytest.raises(SystemExit, match="pass --decisions too"):
        run([*only_manifest, "--raw-dir", str(tmp_path), "--out", str(tmp_path / "out"),
             "--corrections", str(tmp_path)])


def test_unreadable_manifest_is_one_clear_error(only_manifest: list[str], tmp_path: Path,
                                                media: Path) -> None:
    """The only source of the benchmark: nothing to skip to, the build stops in one line."""
    src = write_corpus(tmp_path / "raw", media, [])
    (src / "manifest.yaml").write_bytes(b"videos:\n  - video_id: caf\xe9\n")
    with pytest.raises(SystemExit) as err:
        run([*only_manifest, "--raw-dir", str(tmp_path / "raw"), "--out", str(tmp_path / "out")])
    assert str(err.value).startswith("error: source proready cannot be read: manifest.yaml (under ")
    assert "manifest: not valid UTF-8: byte 0xe9 on line 2" in str(err.value)


def test_a_manifest_yielding_no_video_stops_the_build_naming_it(only_manifest: list[str], tmp_path: Path,
                                                                 media: Path) -> None:
    from exports.release import ReleaseError

    src = write_corpus(tmp_path / "raw", media, [{"video_id": "gone", "path": "video/none.mp4"}])
    with pytest.raises(ReleaseError) as err:
        run([*only_manifest, "--raw-dir", str(tmp_path / "raw"), "--out", str(tmp_path / "out")])
    assert f"videos: 0 samples from {src}/manifest.yaml (inputs 1, filtered 0, rejected 1; e.g. " \
           "video/none.mp4: video file not found under the source root" in str(err.value)
