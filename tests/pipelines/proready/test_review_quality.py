"""Review adaptation (corrections → versions, approval rule) and the QC / data-quality reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from annotation.approval import ReleaseBlocked, check_release
from exports.parquet_shards import encode_table
from exports.quality import run_suites
from pipelines.proready.content import content_hash
from pipelines.proready.quality import iou_report, iou_sample, suites, verifiability_report
from pipelines.proready.released import release_record
from pipelines.proready.review import apply_corrections, decide, number_corrections
from pipelines.proready.rubric import PROREADY
from schemas.proready import RELEASED_ITEM
from tests.support.protocol_server import ProtocolServer


def _item(iid: str, ask: float = 10.0, t_s: float = 12.0, t_e: float = 14.0) -> dict[str, Any]:
    turn = {"turn_index": 0, "task_type": "crr", "question": f"q {iid}", "answer": "a", "ask_time_s": ask,
            "t_s": t_s, "t_e": t_e, "refers_to": -1, "dependency": "none", "cue": "scenes[1]: x",
            "coarse_start_s": t_s, "coarse_end_s": t_e, "evidence_method": "native_cue",
            "generator": "template"}
    item = {"id": iid, "version": 1, "video_id": "v", "video_file": "video/v.avi", "video_sha256": "0" * 64,
            "video_duration_s": 30.0, "video_fps": 25.0, "source": "demo", "task_type": "crr",
            "num_turns": 1, "turns": [turn],
            "generator": "template", "content_hash": "", "approvals": [], "review_round": ""}
    item["content_hash"] = content_hash(item)
    return item


def _d(item: dict[str, Any], reviewer: str, decision: str = "approve", version: int | None = None,
       h: str | None = None) -> dict[str, Any]:
    return {"benchmark": "proready", "review_round": "r", "sample_id": item["id"],
            "version": version or item["version"], "content_hash": h or item["content_hash"],
            "task_type": "crr", "reviewer": reviewer, "rater_kind": "human", "decision": decision,
            "criteria": list(PROREADY.criterion_keys), "comment": "", "lead_time": 0.0,
            "created_at": "2026-11-29T00:00:00", "source_task_id": 1, "source_annotation_id": 1}


PANEL = ("r1", "r2", "r3", "r4")


def _apply(items: dict[str, dict[str, Any]], corrections: list[dict[str, Any]], source: str):
    """The pipeline's per-item application (ReviewGate) over a set of items."""
    numbered = number_corrections(corrections)
    latest, rejected = {}, []
    for sid in sorted(set(items) | {str(c["sample_id"]) for _, c in numbered}):
        item, rej = apply_corrections(items.get(sid), [nc for nc in numbered
                                                      if str(nc[1]["sample_id"]) == sid], source)
        rejected += rej
        if item is not None:
            latest[sid] = item
    return latest, rejected


def _decide(latest: dict[str, dict[str, Any]], decisions: list[dict[str, Any]]):
    kept, filtered, st = [], [], {}
    for sid in sorted(latest):
        ok, item, st[sid] = decide(latest[sid], [d for d in decisions if d["sample_id"] == sid])
        (kept if ok else filtered).append(item)
    return kept, filtered, st


def test_correction_is_a_new_version_and_old_approvals_do_not_count() -> None:
    a, b = _item("v.a"), _item("v.b")
    turns = [dict(a["turns"][0], t_e=13.0, evidence_method="human")]
    latest, rejected = _apply({"v.a": a, "v.b": b},
                              [{"sample_id": "v.a", "version": 2, "turns": turns}], "c.jsonl")
    assert rejected == []
    assert latest["v.a"]["version"] == 2 and latest["v.a"]["content_hash"] != a["content_hash"]
    # all four approved v1 of a, three approved its correction v2; b fully approved
    decisions = ([_d(a, r) for r in PANEL] + [_d(latest["v.a"], r) for r in PANEL[:3]]
                 + [_d(b, r) for r in PANEL])
    kept, filtered, st = _decide(latest, decisions)
    assert [i["id"] for i in kept] == ["v.b"] and kept[0]["approvals"] == list(PANEL)
    assert kept[0]["review_round"] == "r"
    assert [(f["id"], f["filter_name"]) for f in filtered] == [("v.a", "review_pending")]
    assert json.loads(filtered[0]["filter_evidence"])["version"] == 2
    with pytest.raises(ReleaseBlocked):
        check_release([("v.a", 1, a["content_hash"])], st)


def test_objections_and_hash_mismatch_are_filtered() -> None:
    a, b, c = _item("v.a"), _item("v.b"), _item("v.c")
    decisions = ([_d(a, r) for r in PANEL[:3]] + [_d(a, "r4", "reject")]
                 + [_d(b, r) for r in PANEL[:3]] + [_d(b, "r4", "revise")]
                 + [_d(c, r, h="f" * 64) for r in PANEL])  # approved other content under c's id
    kept, filtered, _ = _decide({i["id"]: i for i in (a, b, c)}, decisions)
    assert kept == []
    assert {f["id"]: f["filter_name"] for f in filtered} == {
        "v.a": "review_excluded", "v.b": "review_needs_correction", "v.c": "review_hash_mismatch"}


def test_invalid_correction_is_rejected_naming_file_and_field() -> None:
    a = _item("v.a")
    bad = [dict(a["turns"][0], ask_time_s=12.5)]  # evidence would precede the question
    latest, rejected = _apply({"v.a": a}, [{"sample_id": "v.a", "version": 2, "turns": bad},
                                           {"sample_id": "v.x", "version": 2, "turns": bad}],
                              "fix.jsonl")
    assert latest == {}
    assert sorted((r.item_id, r.source_file, r.field) for r in rejected) == [
        ("v.a", "fix.jsonl", "turns[0].t_s"), ("v.x", "fix.jsonl", "corrections[1].sample_id")]
    skip = _apply({"v.a": a}, [{"sample_id": "v.a", "version": 3, "turns": a["turns"]}], "f")
    assert skip[1][0].field == "corrections[0].version"


def test_iou_report_two_annotators() -> None:
    items = [_item(f"v.{k}") for k in "abc"]
    windows = [
        {"sample_id": "v.a", "turn_index": 0, "annotator": "x", "t_s": 12.0, "t_e": 14.0},
        {"sample_id": "v.a", "turn_index": 0, "annotator": "y", "t_s": 12.0, "t_e": 14.0},
        {"sample_id": "v.b", "turn_index": 0, "annotator": "x", "t_s": 10.0, "t_e": 14.0},
        {"sample_id": "v.b", "turn_index": 0, "annotator": "y", "t_s": 12.0, "t_e": 14.0},
        {"sample_id": "v.c", "turn_index": 0, "annotator": "x", "t_s": 12.0, "t_e": 14.0},
    ]
    sample = iou_sample(items, 100, seed=0)
    assert sample == ["v.a", "v.b", "v.c"] and iou_sample(items, 2, 0) == iou_sample(items, 2, 0)
    rep = iou_report(items, windows, sample)
    assert rep["mean_iou"] == 0.75 and rep["turns_compared"] == 2 and rep["turns_missing"] == 1
    with pytest.raises(ValueError, match="exactly two annotators"):
        iou_report(items, windows[:1], sample)


def test_data_quality_suite_catches_non_future_dependent_and_leaky_rows(tmp_path: Path) -> None:
    good = release_record(dict(_item("v.a"), approvals=list(PANEL)))
    bad = release_record(dict(_item("v.b", ask=13.0), approvals=list(PANEL)))  # asked after t_s
    (tmp_path / "data" / "crr").mkdir(parents=True)
    shard = tmp_path / "data" / "crr" / "test-00000-of-00001.parquet"
    shard.write_bytes(encode_table([good], RELEASED_ITEM)[0])
    assert run_suites(suites(tmp_path, 4), tmp_path / "reports", label=tmp_path).success is True
    # a model input that carries gold: the question shown with its answer
    leaky = release_record(dict(_item("v.c"), approvals=list(PANEL)))
    leaky["questions"] = [dict(leaky["questions"][0], question="q v.c (answer: a)")]
    shard.write_bytes(encode_table([good, bad, leaky], RELEASED_ITEM)[0])
    res = run_suites(suites(tmp_path, 4), tmp_path / "reports", label=tmp_path)
    failed = {c.column: c.examples for c in res.failed}
    assert failed == {"future_dependent": ["v.b"], "truncation_invariant": ["v.c"]}
    assert pq.read_table(tmp_path / "data").num_rows == 3


def test_verifiability_inside_vs_outside_through_the_real_client() -> None:
    from clients import ModelClient, ModelSpec
    from pipelines.proready.generation import load_prompts

    frames = {"v": {s: b"\xff\xd8\xff" + bytes([s]) * 16 for s in range(30)}}
    items = [_item("v.a"), _item("v.b", ask=4.0, t_s=20.0, t_e=25.0)]
    with ProtocolServer() as server:
        # the model verifies an answer only from frames at or after 12 s
        server.answer = lambda c: json.dumps(
            {"verifiable": int(c.prompt.split("from ")[1].split("s")[0]) >= 12})
        client = ModelClient(ModelSpec("openai", "judge", base_url=server.openai_base_url))
        rep = verifiability_report(items, frames, client, load_prompts()["verify"])
    assert (rep["inside"], rep["outside"], rep["n_inside"], rep["n_outside"]) == (1.0, 0.0, 2, 2)


def test_versions_the_build_does_not_make_are_listed() -> None:
    """A correction pushed (or decided) at v2 while the build makes v1: listed, so the build
    refuses instead of filtering the item as ``review_hash_mismatch``."""
    from pipelines.proready.review import refuse_uncorrected, uncorrected

    fix = {"v.b": [(0, {"sample_id": "v.b", "version": 2})]}
    decided = [{"sample_id": "v.c", "version": 3, "rater_kind": "human"},
               {"sample_id": "v.d", "version": 2, "rater_kind": "model"},  # not a panel decision
               {"sample_id": "v.b", "version": 2, "rater_kind": "human"}]
    assert uncorrected({"v.a": 2, "v.b": 2, "v.e": 1}, decided, fix) == [("v.a", 2, 1), ("v.c", 3, 1)]
    assert uncorrected({"v.b": 2}, decided[1:], fix) == []
    with pytest.raises(SystemExit) as e:
        refuse_uncorrected([("v.a", 2, 1), ("v.c", 3, 1)], Path("log"), Path("c.jsonl"))
    assert str(e.value) == (
        "--decisions: log holds corrected versions this build does not make (--corrections c.jsonl "
        "does not make them): v.a v2 (this build: v1), v.c v3 (this build: v1); build with the "
        "corrections file that was pushed")
    refuse_uncorrected([], Path("log"), None)  # nothing missing: no refusal
