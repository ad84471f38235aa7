"""Validation, rule-based candidates, negative probes and serialization (StreamVibe §3.1, App. B.2).

Each rule of the task formulation is exercised on hand-made candidates: what is fixed (only the
unambiguous) and what is rejected, with the field the rejection names.
"""

from __future__ import annotations

import copy

import pytest

from core.errors import BadInput
from pipelines.streamvibe.candidates import RuleGenerator, transitions_for
from pipelines.streamvibe.negatives import negative_probes
from pipelines.streamvibe.serialize import allocate, pointwise_records, sample_record
from pipelines.streamvibe.sources import load_intent_specs
from pipelines.streamvibe.validate import validate_candidate
from tests.pipelines.streamvibe.conftest import ROOT, candidate, video_facts

SPECS = load_intent_specs(str(ROOT / "configs" / "streamvibe" / "intents.yaml"))[1]


def ev(s, e, p, resp="x", intent="i1", proactive=True):
    return {"intent_id": intent, "start": s, "end": e, "preferred": p, "response": resp,
            "proactive": proactive}


def rejects(c, field_part: str, reason_part: str) -> BadInput:
    with pytest.raises(BadInput) as exc:
        validate_candidate(c)
    assert field_part in exc.value.field, exc.value
    assert reason_part in exc.value.reason, exc.value
    assert exc.value.source_file == "tasks/v.json"
    return exc.value


# ---------------------------------------------------------------------------- validation


def test_valid_candidate_passes_unchanged_and_points_get_ids():
    out = validate_candidate(candidate())
    assert [p["id"] for p in out["evidence"]] == ["e1", "e2"]
    assert out["fixes"] == []
    assert out["transitions"] == [{"t": 0.0, "kind": "initial", "opened": ["i1"], "closed": [],
                                   "active_after": ["i1"]}]


def test_window_past_the_end_is_rejected_with_the_real_duration():
    err = rejects(candidate(evidence=[ev(5, 8, 5), ev(31, 34, 31)]), "evidence[1].end", "past the end")
    assert "real decodable duration 30.0 s" in err.reason and "header claims 300 frames" in err.reason


def test_window_end_one_step_past_the_end_is_clipped_and_recorded():
    out = validate_candidate(candidate(evidence=[ev(5, 8, 5), ev(28, 30.8, 28)]))
    assert out["evidence"][1]["end"] == 30.0
    assert out["fixes"] == ["evidence[1].end clipped from 30.8 to the real end 30.0"]
    rejects(candidate(evidence=[ev(5, 8, 5), ev(28, 31.5, 28)]), "evidence[1].end", "past the end")


def test_window_order_and_preferred_inside():
    rejects(candidate(evidence=[ev(5, 8, 9), ev(15, 18, 15)]), "evidence[0]", "not ordered")
    rejects(candidate(evidence=[ev(8, 5, 6), ev(15, 18, 15)]), "evidence[0]", "not ordered")


def test_evidence_not_before_its_intent_is_available():
    intents = [{"id": "i1", "subtype": "R", "request": "r", "available_at": 10.0, "closed_at": -1.0,
                "proactive": True}]
    turns = [{"t": 10.0, "kind": "initial", "intent_id": "i1", "text": "r"}]
    c = candidate(intents=intents, user_turns=turns, evidence=[ev(5, 8, 6), ev(15, 18, 15)])
    rejects(c, "evidence[0].preferred", "before its intent i1 is available (10.0 s)")
    # a window that opens before τ but whose preferred time is after it: clipped, not rejected
    c = candidate(intents=intents, user_turns=turns, evidence=[ev(9, 13, 11), ev(15, 18, 15)])
    out = validate_candidate(c)
    assert out["evidence"][0]["start"] == 10.0
    assert out["fixes"] == ["evidence[0].start clipped from 9.0 to intent availability 10.0"]


def test_point_counts_i_exactly_one_r_two_or_more():
    rejects(candidate("R", evidence=[ev(5, 8, 5)]), "evidence", "two or more")
    rejects(candidate("I", evidence=[ev(5, 8, 5), ev(15, 18, 15)]), "evidence", "exactly one")
    assert len(validate_candidate(candidate("I", evidence=[ev(5, 8, 5)]))["evidence"]) == 1


def test_duplicates_dropped_overlaps_rejected_order_fixed():
    out = validate_candidate(candidate(evidence=[ev(15, 18, 15), ev(5, 8, 5), ev(5, 8, 5)]))
    assert [p["preferred"] for p in out["evidence"]] == [5.0, 15.0]
    assert "duplicate evidence point at 5.0 s dropped" in out["fixes"]
    assert "evidence points sorted by time" in out["fixes"]
    rejects(candidate(evidence=[ev(5, 8, 5), ev(7, 10, 9)]), "evidence", "overlapping windows")


def test_empty_gold_response_and_no_decision_step():
    rejects(candidate(evidence=[ev(5, 8, 5, resp="  "), ev(15, 18, 15)]), "evidence[0].response", "empty")
    rejects(candidate(evidence=[ev(5.2, 5.8, 5.5), ev(15, 18, 15)]), "evidence[0]", "no 1 FPS decision step")


def _revision(closed_at=12.0, turn_kind="revise", transitions=None):
    intents = [{"id": "i1", "subtype": "RV", "request": "a", "available_at": 0.0, "closed_at": closed_at,
                "proactive": True},
               {"id": "i2", "subtype": "RV", "request": "b", "available_at": 12.0, "closed_at": -1.0,
                "proactive": True}]
    turns = [{"t": 0.0, "kind": "initial", "intent_id": "i1", "text": "a"},
             {"t": 12.0, "kind": turn_kind, "intent_id": "i2", "text": "b"}]
    c = candidate("RV", intents=intents, user_turns=turns,
                  evidence=[ev(5, 8, 5), ev(15, 18, 15, intent="i2")])
    if transitions is not None:
        c["transitions"] = transitions
    return c


def test_dynamic_revision_closes_the_superseded_intent():
    out = validate_candidate(_revision())
    assert out["transitions"][1] == {"t": 12.0, "kind": "revise", "opened": ["i2"], "closed": ["i1"],
                                     "active_after": ["i2"]}
    # superseded intent left open: the revision closes nothing
    rejects(_revision(closed_at=-1.0), "transitions", "closes no intent")
    # transitions that disagree with the turns (i1 still active after the revision)
    bad = [{"t": 0.0, "kind": "initial", "opened": ["i1"], "closed": [], "active_after": ["i1"]},
           {"t": 12.0, "kind": "revise", "opened": ["i2"], "closed": [], "active_after": ["i1", "i2"]}]
    rejects(_revision(transitions=bad), "transitions", "inconsistent")
    # RV needs a revise turn, not a compose one
    rejects(_revision(closed_at=-1.0, turn_kind="compose"), "user_turns", "needs at least one 'revise'")


def test_evidence_after_supersession_rejected_and_tail_clipped():
    c = _revision()
    c["evidence"] = [ev(5, 8, 5), ev(13, 15, 13), ev(15, 18, 15, intent="i2")]
    rejects(c, "evidence[1].preferred", "after intent i1 was superseded")
    c = _revision()
    c["evidence"] = [ev(10, 14, 11), ev(15, 18, 15, intent="i2")]
    out = validate_candidate(c)
    assert out["evidence"][0]["end"] == 12.0
    assert "evidence[0].end clipped from 14.0 to supersession 12.0" in out["fixes"]


def test_non_dynamic_sample_has_only_the_initial_turn():
    c = candidate()
    c["user_turns"] = c["user_turns"] + [{"t": 5.0, "kind": "compose", "intent_id": "i1", "text": "y"}]
    rejects(c, "user_turns", "exactly one turn")


# ---------------------------------------------------------------------------- rule generator


def _pair(subtype, request, native, idx=0):
    return {"id": f"{subtype.lower()}/c/v/{idx}", "subtype": subtype, "collection": "c", "video_id": "v",
            "video": "videos/v.avi", "environment": "physical", "task_record": "tasks/v.json",
            "task": "assemble the shelf", "native": native, "request": request, "request_index": idx}


def test_step_boundaries_become_guidance_points():
    native = {"steps": [{"start": 0, "end": 6, "label": "lay out the parts"},
                        {"start": 6, "end": 14, "label": "attach the side panels"},
                        {"start": 14, "end": 25, "label": "insert the shelves"}]}
    raw = RuleGenerator(SPECS, 0).generate(_pair("G", {"subtype": "G"}, native), video_facts())
    pts = [(p["start"], p["end"], p["preferred"], p["response"]) for p in raw["evidence"]]
    assert pts == [(5.0, 8.0, 6.0, "Next: attach the side panels."),
                   (13.0, 16.0, 14.0, "Next: insert the shelves.")]
    assert raw["intents"][0]["request"] in ("I'm working on this: assemble the shelf. Help me along.",
                                            "Guide me through assemble the shelf.")


def test_repeated_events_become_recurring_points_without_overlap():
    native = {"events": [{"t": 3, "label": "knock"}, {"t": 5, "label": "knock"}, {"t": 20, "label": "knock"},
                         {"t": 9, "label": "other"}]}
    req = {"subtype": "R", "event": "knock", "slots": {"event": "someone knocks"}}
    raw = RuleGenerator(SPECS, 0).generate(_pair("R", req, native), video_facts())
    assert [(p["start"], p["end"], p["preferred"]) for p in raw["evidence"]] == [
        (3.0, 4.5, 3.0), (5.0, 8.0, 5.0), (20.0, 23.0, 20.0)]
    assert [p["response"] for p in raw["evidence"]][0] == "Again (1): knock."
    assert validate_candidate(_assembled(raw, "R"))["evidence"][2]["id"] == "e3"


def test_gui_action_log_becomes_tool_points_and_missing_native_is_named():
    native = {"actions": [{"t": 4, "action": "click", "target": "File > Export"},
                          {"t": 9, "action": "type", "target": "report.pdf"}]}
    raw = RuleGenerator(SPECS, 0).generate(
        _pair("T", {"subtype": "T", "slots": {"app": "the editor"}}, native), video_facts())
    assert [p["response"] for p in raw["evidence"]] == ["Now click File > Export.", "Now type report.pdf."]
    out = RuleGenerator(SPECS, 0).generate_many([(_pair("T", {"subtype": "T", "slots": {"app": "x"}}, {}),
                                                  video_facts())])
    assert isinstance(out[0], BadInput) and out[0].field == "native.actions"
    out = RuleGenerator(SPECS, 0).generate_many([(_pair("T", {"subtype": "T"}, native), video_facts())])
    assert isinstance(out[0], BadInput) and out[0].field == "requests[0].slots.app"


def _assembled(raw, subtype):
    from pipelines.streamvibe.candidates import assemble

    return assemble(_pair(subtype, {}, {}), video_facts(), raw, RuleGenerator(SPECS, 0))


def test_request_template_is_seeded_per_sample():
    req = {"subtype": "I", "event": "knock", "slots": {"event": "someone knocks"}}
    native = {"events": [{"t": 3, "label": "knock"}]}
    texts = {RuleGenerator(SPECS, seed).generate(_pair("I", req, native), video_facts())
             ["intents"][0]["request"] for seed in range(12)}
    assert len(texts) > 1  # the template pool is used …
    a = RuleGenerator(SPECS, 7).generate(_pair("I", req, native), video_facts())
    assert a == RuleGenerator(SPECS, 7).generate(_pair("I", req, native), video_facts())  # … reproducibly


# ---------------------------------------------------------------------------- negatives, serialization


def test_negative_probes_lie_strictly_beyond_the_largest_tolerance_and_are_seeded():
    c = validate_candidate(candidate())
    # windows [5, 8] and [15, 18]; tolerance 2 s, reach 4 s. A probe 2 s from a window would be
    # inside its ±2 s tolerance (a response there is a TP *and* a probe hit), so 3, 10, 13 and 20
    # are not probes; left: 1, 2 before e1, 11, 12 between e1 and e2, 21, 22 after e2
    probes = negative_probes(c, seed=0, per_sample=10, tau_s=2, max_distance=4)
    assert [(p["t"], p["distance"]) for p in probes] == [
        (1.0, 4.0), (2.0, 3.0), (11.0, 3.0), (12.0, 3.0), (21.0, 3.0), (22.0, 4.0)]
    kinds = {p["t"]: p["probe_type"] for p in probes}
    assert kinds[1.0] == "near_before" and kinds[22.0] == "near_after" and kinds[11.0] == "between"
    assert [p["t"] for p in negative_probes(c, seed=0, per_sample=10, tau_s=0, max_distance=2)] == [
        3.0, 4.0, 9.0, 10.0, 13.0, 14.0, 19.0, 20.0]  # τ = 0: anything outside the windows
    few = negative_probes(c, seed=0, per_sample=3, tau_s=2, max_distance=4)
    assert few == negative_probes(c, seed=0, per_sample=3, tau_s=2, max_distance=4)
    assert len(few) == 3 and set(p["t"] for p in few) <= set(kinds)
    assert few != negative_probes(c, seed=1, per_sample=3, tau_s=2, max_distance=4)


def test_tolerances_must_stay_below_the_probe_reach():
    from pipelines.streamvibe.negatives import supported_tolerances

    assert supported_tolerances({}) == [0.0, 1.0, 2.0]  # App. A.1: ±2, ±1, ±0 s
    with pytest.raises(ValueError, match="below negatives.max_distance"):
        supported_tolerances({"tolerances_s": [2, 8], "negatives": {"max_distance": 8}})
    with pytest.raises(ValueError, match="numbers >= 0"):
        supported_tolerances({"tolerances_s": [-1]})


def test_causal_steps_and_pointwise_gold_history():
    c = validate_candidate(_revision())  # i1 at 0 s (point at 5 s), revised to i2 at 12 s (point at 15 s)
    c["negative_probes"] = negative_probes(c, seed=0, per_sample=10, tau_s=2, max_distance=4)
    rec = sample_record(dict(c, version=1, content_hash="0" * 64), video_facts(), [])
    steps = rec["steps"]
    turns = rec["gold_user_turns"]
    assert steps[0]["new_turns"] == [turns[0]] and steps[12]["new_turns"] == [turns[1]]
    assert steps[12]["new_turns"][0]["text"] == "b"  # the turn itself, not an index into the future
    assert sum(len(s["new_turns"]) for s in steps) == 2
    # the active set follows the user's turns only: i1 stays valid after its last gold point
    # (5 s) until the revision at 12 s, i2 after its point at 15 s (StreamVibe §3.1)
    assert [steps[t]["active_intents"] for t in (0, 5, 6, 11, 12, 16, 29)] == [
        ["i1"], ["i1"], ["i1"], ["i1"], ["i2"], ["i2"], ["i2"]]
    rows = pointwise_records(rec)
    pos = [r for r in rows if r["gold_should_respond"]]
    assert [(r["t"], r["gold_evidence_id"], r["frames_visible"]) for r in pos] == [
        (5.0, "e1", 6), (15.0, "e2", 16)]
    second = pos[1]["history"]
    assert [(h["t"], h["role"]) for h in second] == [(0.0, "user"), (5.0, "assistant"), (12.0, "user")]
    negatives = [r for r in rows if r not in pos]
    # near_after probes keep their intent active: silence there must come from the video
    assert [(r["t"], r["gold_probe_type"], r["active_intents"]) for r in negatives] == [
        (1.0, "near_before", ["i1"]), (2.0, "near_before", ["i1"]), (11.0, "between", ["i1"]),
        (12.0, "between", ["i2"]), (21.0, "near_after", ["i2"]), (22.0, "near_after", ["i2"])]
    assert all(r["gold_response"] == "" for r in negatives)


def test_allocation_round_robins_collections_and_reports_overflow():
    cands = [{"id": f"r/a/v{k}/0", "source_collection": "a"} for k in range(5)]
    cands += [{"id": f"r/b/v{k}/0", "source_collection": "b"} for k in range(2)]
    chosen, over = allocate(cands, 4, seed=0)
    assert len(chosen) == 4 and len(over) == 3
    assert sum(i.startswith("r/b/") for i in chosen) == 2  # the small collection is not crowded out
    assert allocate(list(reversed(cands)), 4, seed=0) == (chosen, over)  # input order is irrelevant


def test_transitions_for_composition_keeps_prior_intents():
    intents = [{"id": "i1", "closed_at": -1.0}, {"id": "i2", "closed_at": -1.0}]
    turns = [{"t": 0.0, "kind": "initial", "intent_id": "i1"},
             {"t": 9.0, "kind": "compose", "intent_id": "i2"}]
    assert transitions_for(copy.deepcopy(intents), turns)[1]["active_after"] == ["i1", "i2"]


# ---------------------------------------------------------------------------- sources, normalize


def test_manifest_problems_are_rejected_per_line(tmp_path):
    import json

    from core.errors import Rejection
    from pipelines.streamvibe.sources import enumerate_pairs

    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "a.json").write_text(json.dumps({"task": "t", "requests": [
        {"subtype": "R", "event": "x"}, {"subtype": "Q"}]}))
    rows = [{"collection": "c", "video_id": "a", "video": "videos/a.avi", "task_record": "tasks/a.json"},
            "{not json",
            {"collection": "c", "video_id": "a", "video": "videos/a.avi", "task_record": "tasks/a.json"},
            {"collection": "c", "video_id": "b", "video": "videos/b.avi"},
            {"collection": "c", "video_id": "e", "video": "v.avi", "task_record": "tasks/a.json",
             "environment": "space"},
            {"collection": "c", "video_id": "d", "video": "videos/d.avi", "task_record": "tasks/a.json"}]
    (tmp_path / "manifest.jsonl").write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    out = list(enumerate_pairs(str(tmp_path)))
    pairs = [x for x in out if isinstance(x, dict)]
    rej = [(x.environment, x.source_file, x.field, x.reason) for x in out if isinstance(x, Rejection)]
    assert [p["id"] for p in pairs] == ["r/c/d/0"]
    shared = "video id c/a is on lines [1, 3]: every line sharing it is rejected"
    assert rej == [
        ("unassigned", "manifest.jsonl", "line 1: video_id", shared),
        ("unassigned", "manifest.jsonl", "line 2",
         "invalid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
        ("unassigned", "manifest.jsonl", "line 3: video_id", shared),
        ("unassigned", "manifest.jsonl", "line 4: task_record", "missing field"),
        ("unassigned", "manifest.jsonl", "line 5: environment",
         "'space' is not one of ('physical', 'digital')"),
        ("unassigned", "tasks/a.json", "requests[1].subtype", "unknown subtype 'Q'"),
    ]


def test_empty_and_garbage_videos_are_bad_input(media):
    from pipelines.streamvibe.normalize import normalize_video

    with pytest.raises(BadInput, match="empty file"):
        normalize_video(b"", "videos/empty.avi")
    with pytest.raises(BadInput, match="decodes 0 frames") as exc:
        normalize_video(b"RIFF" + bytes(4000), "videos/junk.avi")
    assert (exc.value.source_file, exc.value.field) == ("videos/junk.avi", "video")
    tree = normalize_video((media / "tree.avi").read_bytes(), "videos/tree.avi")
    facts = (tree.header_frames, tree.decodable_frames, tree.duration_s, len(tree.frames))
    assert facts == (444, 68, 29.6, 30)
    assert all(p <= t for t, p in zip(tree.frame_times, tree.frame_pts, strict=True))  # causal frames
    assert tree.note == "header says 444 frames, only 68 decode"


def test_schemas_derive_every_view():
    from schemas.streamvibe import POINTWISE, SAMPLE

    assert SAMPLE.hf_features_dict()["frames"] == {"feature": {"_type": "Image"}, "_type": "List"}
    js = SAMPLE.json_schema()
    assert js["properties"]["gold_evidence"]["items"]["required"] == [
        "id", "intent_id", "start", "end", "preferred", "response", "proactive"]
    assert POINTWISE.arrow_schema().field("history").type.value_type.num_fields == 4


def test_quality_suite_catches_a_duplicate_across_files_and_a_causality_break(tmp_path):
    from exports.parquet_shards import encode_table
    from exports.quality import run_suites
    from pipelines.streamvibe.quality import suites
    from schemas.streamvibe import POINTWISE, SAMPLE

    c = validate_candidate(candidate())
    c.update(version=1, content_hash="0" * 64)
    rec = sample_record(c, video_facts(), [])
    broken = copy.deepcopy(rec)
    broken["frame_pts"][5] = 5.4  # a frame presented after its decision time
    broken["gold_negative_probes"] = [{"t": 10.0, "probe_type": "near_after", "nearest_evidence": "e1",
                                  "distance": 2.0}]  # inside e1 [5, 8] ± τ = 2: TP and hit at once
    for sub, rows, schema in (("data/r", [rec], SAMPLE), ("data/rr", [broken], SAMPLE),
                              ("pointwise/r", pointwise_records(rec), POINTWISE)):
        (tmp_path / sub).mkdir(parents=True)
        (tmp_path / sub / "test-00000-of-00001.parquet").write_bytes(encode_table(rows, schema)[0])
    counts = {"R": {"inputs": 3, "kept": 2, "filtered": 0, "rejected": 0}}  # one input unaccounted
    report = run_suites(suites(tmp_path, {"R": 5}, counts, 2.0), tmp_path / "reports", label=tmp_path)
    failed = {(x.suite, x.column): x.examples for x in report.failed}
    assert not report.success
    assert failed == {("streamvibe_samples", "id"): ["r/c/v/0", "r/c/v/0"],
                      ("streamvibe_samples", "causal"): ["r/c/v/0"],
                      ("streamvibe_samples", "negatives_beyond_tau"): ["r/c/v/0"],
                      ("streamvibe_counts", "inputs_accounted"): ["R"]}
    assert "**FAIL**" in (tmp_path / "reports" / "data_quality.md").read_text()
