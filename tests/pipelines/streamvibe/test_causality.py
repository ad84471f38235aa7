"""No future information in the model-facing StreamVibe stream (StreamVibe §3.1, App. B.2).

The policy sees only ⟨V≤t, I≤t, H<t⟩. The check (``pipelines/streamvibe/causality.py``): every
step and every pointwise row recomputed from the sample *truncated at its time* equals the
released one — on a hand-made revision, on generated samples of every kind, and in the release's
quality suite. The demo releases are checked in ``tests/test_demo_causality.py``.
"""

from __future__ import annotations

import copy
import random

from pipelines.streamvibe.candidates import transitions_for
from pipelines.streamvibe.causality import pointwise_violations, stream_violations, truncate
from pipelines.streamvibe.negatives import negative_probes
from pipelines.streamvibe.serialize import pointwise_records, sample_record
from pipelines.streamvibe.validate import validate_candidate
from schemas.streamvibe import ANNOTATION_FIELDS, POINTWISE, SAMPLE, STREAM_FIELDS, gold_name
from tests.pipelines.streamvibe.conftest import candidate, video_facts

KIND = {"RV": "revise", "CP": "compose", "IT": "interrupt"}


def _release(c: dict, duration: float = 30.0) -> dict:
    return sample_record(dict(c, version=1, content_hash="0" * 64), video_facts(duration), [])


def _revision() -> dict:
    """i1 from 0 s (points at 5 and 9 s), revised to i2 at 12 s (point at 15 s)."""
    intents = [{"id": "i1", "subtype": "RV", "request": "a", "available_at": 0.0, "closed_at": 12.0,
                "proactive": True},
               {"id": "i2", "subtype": "RV", "request": "b", "available_at": 12.0, "closed_at": -1.0,
                "proactive": True}]
    turns = [{"t": 0.0, "kind": "initial", "intent_id": "i1", "text": "a"},
             {"t": 12.0, "kind": "revise", "intent_id": "i2", "text": "b"}]
    ev = [{"intent_id": i, "start": s, "end": s + 1, "preferred": s, "response": r, "proactive": True}
          for i, s, r in (("i1", 5.0, "x1"), ("i1", 9.0, "x2"), ("i2", 15.0, "y"))]
    return validate_candidate(candidate("RV", intents=intents, user_turns=turns, evidence=ev,
                                        category="dynamic"))


def test_the_stream_is_what_the_record_cut_at_t_gives_and_the_old_rule_is_caught():
    rec = _release(_revision())
    assert stream_violations(rec) == []
    # cut at 7 s: the second point of i1 (9 s), the revision and i2 are not known yet
    cut = truncate(rec, 7.0)
    assert [p["id"] for p in cut["gold_evidence"]] == ["e1"]
    assert [i["id"] for i in cut["gold_intents"]] == ["i1"] and cut["gold_intents"][0]["closed_at"] == -1
    assert len(cut["frame_times"]) == 8 and cut["gold_task"] == ""
    # the rule the audit found: i1 dropped once its *last gold point* (9 s) has passed. At 10 s
    # the released set would be [] while the record cut at 10 s — which cannot know that i1 has
    # no further point — gives ['i1']: the check names the step and the field
    leaky = copy.deepcopy(rec)
    for s in leaky["steps"][10:12]:
        s["active_intents"] = []
    assert stream_violations(leaky) == [
        "t=10 active_intents: released [], from the record cut at t ['i1']",
        "t=11 active_intents: released [], from the record cut at t ['i1']"]
    # pointwise: the row at 10 s may not know the answer due at 10 s either
    rows = pointwise_records(rec)
    assert pointwise_violations(rec, rows) == []
    early = dict(rows[1], history=rows[2]["history"])  # the 9 s row given the 15 s row's history
    assert pointwise_violations(rec, [early])[0].startswith("t=9 history: released")


def _random_candidate(rng: random.Random, k: int) -> dict:
    subtype = rng.choice(["I", "R", "M", "RV", "CP", "IT"])
    duration = float(rng.randint(24, 60))
    t0 = float(rng.randint(0, 3))
    intents = [{"id": "i1", "subtype": subtype, "request": "watch x", "available_at": t0,
                "closed_at": -1.0, "proactive": True}]
    turns = [{"t": t0, "kind": "initial", "intent_id": "i1", "text": "watch x"}]
    spans = {"i1": (t0, duration)}
    if subtype in KIND:
        u = float(rng.randint(int(t0) + 9, int(duration) - 9))
        intents.append({"id": "i2", "subtype": subtype, "request": "now y", "available_at": u,
                        "closed_at": -1.0, "proactive": subtype != "IT"})
        turns.append({"t": u, "kind": KIND[subtype], "intent_id": "i2", "text": "now y"})
        spans = {"i1": (t0, u if subtype == "RV" else duration), "i2": (u, duration)}
        intents[0]["closed_at"] = u if subtype == "RV" else -1.0
    evidence = []
    for iid, (lo, hi) in spans.items():
        slots = range(int(lo) + 1, int(hi) - 4, 4)  # windows ≤ 3 s long, 4 s apart: no overlap
        n = 1 if subtype == "I" or (iid == "i2" and subtype == "IT") else min(rng.randint(2, 3), len(slots))
        starts = sorted(rng.sample(slots, n))
        for s in starts:
            evidence.append({"intent_id": iid, "start": float(s), "end": float(s + rng.randint(0, 3)),
                             "preferred": float(s), "response": f"{iid}@{s}", "proactive":
                             not (iid == "i2" and subtype == "IT")})
    c = candidate(subtype, intents=intents, user_turns=turns, evidence=evidence,
                  transitions=transitions_for(intents, turns), duration_s=duration,
                  id=f"{subtype.lower()}/c/v{k}/0", initial_instruction="watch x")
    return validate_candidate(c)


def test_generated_samples_of_every_kind_are_truncation_invariant():
    rng = random.Random(13)
    kinds = set()
    for k in range(150):
        c = _random_candidate(rng, k)
        c["negative_probes"] = negative_probes(c, seed=k, per_sample=4, tau_s=rng.choice([0, 1, 2]),
                                               max_distance=6)
        rec = _release(c, c["duration_s"])
        rows = pointwise_records(rec)
        assert stream_violations(rec) == [], c["id"]
        assert pointwise_violations(rec, rows) == [], c["id"]
        kinds.add(c["subtype"])
    assert kinds == {"I", "R", "M", "RV", "CP", "IT"}


def test_gold_fields_are_named_apart_from_the_stream():
    names = set(SAMPLE.names)
    annotation = {f.name for f in ANNOTATION_FIELDS}
    assert not names & annotation  # released only as gold_<name>
    assert {gold_name(n) for n in annotation} <= names
    assert {f.name for f in STREAM_FIELDS} == {"frames", "frame_times", "frame_pts", "steps"}
    labels = [n for n in POINTWISE.names if n.startswith("gold_")]
    assert labels == ["gold_should_respond", "gold_probe_type", "gold_evidence_id", "gold_response"]


def test_the_quality_suite_fails_a_leaky_release(tmp_path):
    from exports.parquet_shards import encode_table
    from exports.quality import run_suites
    from pipelines.streamvibe.quality import suites

    rec = _release(_revision())
    rows = pointwise_records(rec)
    leaky = copy.deepcopy(rec)
    leaky["steps"][10]["active_intents"] = []
    rows[1] = dict(rows[1], active_intents=[])  # the 9 s row: i1 is valid then
    for sub, recs, schema in (("data/rv", [leaky], SAMPLE), ("pointwise/rv", rows, POINTWISE)):
        (tmp_path / sub).mkdir(parents=True)
        (tmp_path / sub / "test-00000-of-00001.parquet").write_bytes(encode_table(recs, schema)[0])
    counts = {"RV": {"inputs": 1, "kept": 1, "filtered": 0, "rejected": 0}}
    report = run_suites(suites(tmp_path, {"RV": 5}, counts, 2.0), tmp_path / "reports", label=tmp_path)
    failed = {(x.suite, x.column): x.examples for x in report.failed}
    assert failed == {("streamvibe_samples", "truncation_invariant"): ["rv/c/v/0"],
                      ("streamvibe_pointwise", "truncation_invariant"): ["rv/c/v/0@9#0"]}
