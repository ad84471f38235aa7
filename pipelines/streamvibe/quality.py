"""The StreamVibe release's great-expectations suites (run by :mod:`exports.quality`, at every
build and by ``benchforge check``).

What must hold in every release (StreamVibe §3.1, App. B.2, Table 15; design.md §Conventions):

* **windows ordered and inside the video**: 0 ≤ s ≤ preferred ≤ e ≤ real duration, with a 1 FPS
  decision step inside both the window and the video;
* **causal invariant**: at step t the stream shows a frame sampled at or before t whose decoded
  presentation time is ≤ t (the t = 0 frame excepted: nothing earlier exists), every user turn
  arrives at exactly one step, in (t-1, t]; evidence never opens before its intent is available;
  pointwise gold history holds only turns ≤ t and gold responses before t;
* **truncation invariance** (§3.1: the policy sees only ⟨V≤t, I≤t, H<t⟩): every step of every
  sample, and the model input of every pointwise row, equals what the build's own functions
  compute from the sample truncated at that time (:mod:`pipelines.streamvibe.causality`) — a
  stream that used a later turn, intent, evidence point or frame fails here;
* **allocation**: no subtype above its target; per subtype ``inputs = kept + filtered +
  rejected`` and kept = rows released; **ids unique** over the whole release (read as one batch:
  a per-file batch would miss a duplicate spanning two files, design.md §Environment);
* negative probes strictly farther than the largest supported tolerance τ from every window (else
  one response could be a true positive and a probe hit at once), point counts per intent (I = 1,
  R ≥ 2), pointwise labels agreeing with the probe type and every pointwise row joining a
  released sample.

great_expectations' core expectations do not work on list columns (design.md §Environment), so each structural
rule is a derived boolean column checked with ``ExpectColumnValuesToBeInSet([True])``.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from exports.quality import Suite
from pipelines.streamvibe.causality import pointwise_violations, stream_violations
from schemas.streamvibe import SAMPLE, SUBTYPES

EPS = 1e-6


def _windows_ok(r: dict[str, Any]) -> bool:
    return all(0 <= p["start"] <= p["preferred"] <= p["end"] for p in r["gold_evidence"])


def _inside_ok(r: dict[str, Any]) -> bool:
    d = r["duration_s"]
    for p in r["gold_evidence"]:
        k = math.ceil(p["start"] - EPS)
        if p["end"] > d + EPS or not (k <= p["end"] + EPS and k < d - EPS):
            return False
    return True


def _causal_ok(r: dict[str, Any]) -> bool:
    times, pts = list(r["frame_times"]), list(r["frame_pts"])
    seen: list[dict[str, Any]] = []
    for st in r["steps"]:
        t, f = st["t"], st["frame"]
        if times[f] > t + EPS or (pts[f] > t + EPS and not (t == 0 and f == 0)):
            return False
        for u in st["new_turns"]:
            if u["t"] > t + EPS or (t > 0 and u["t"] <= t - 1 + EPS):
                return False
            seen.append(u)
    if seen != list(r["gold_user_turns"]):
        return False
    avail = {i["id"]: i["available_at"] for i in r["gold_intents"]}
    return all(p["start"] >= avail[p["intent_id"]] - EPS for p in r["gold_evidence"])


def _negatives_beyond(r: dict[str, Any], tau: float) -> bool:
    return all(not (p["start"] - tau - EPS <= n["t"] <= p["end"] + tau + EPS)
               for n in r["gold_negative_probes"] for p in r["gold_evidence"])


def _points_ok(r: dict[str, Any]) -> bool:
    per = Counter(p["intent_id"] for p in r["gold_evidence"])
    for i in r["gold_intents"]:
        n = per.get(i["id"], 0)
        if n < 1 or (i["subtype"] == "I" and n != 1) or (i["subtype"] == "R" and n < 2):
            return False
    return True


def _history_ok(r: dict[str, Any]) -> bool:
    return all(h["t"] <= r["t"] + EPS and (h["role"] == "user" or h["t"] < r["t"] - EPS)
               for h in r["history"])


def _row_causal(row: dict[str, Any], samples: dict[str, dict[str, Any]]) -> bool:
    sample = samples.get(row["sample_id"])
    return sample is not None and not pointwise_violations(sample, [row])


def derived_frames(samples: list[dict[str, Any]], pointwise: list[dict[str, Any]],
                   targets: dict[str, int], counts: dict[str, dict[str, int]],
                   tau: float) -> dict[str, pd.DataFrame]:
    """The batches the suite checks (list columns walked in Python into boolean columns)."""
    per = Counter(r["subtype"] for r in samples)
    by_id = {r["id"]: r for r in samples}
    s = pd.DataFrame({
        "id": [r["id"] for r in samples],
        "subtype": [r["subtype"] for r in samples],
        "windows_ordered": [_windows_ok(r) for r in samples],
        "windows_inside_video": [_inside_ok(r) for r in samples],
        "causal": [_causal_ok(r) for r in samples],
        "truncation_invariant": [not stream_violations(r) for r in samples],
        "negatives_beyond_tau": [_negatives_beyond(r, tau) for r in samples],
        "points_per_intent": [_points_ok(r) for r in samples],
        "within_allocation": [per[r["subtype"]] <= targets.get(r["subtype"], 0) for r in samples],
    }, columns=["id", "subtype", *BOOL_COLUMNS["samples"]])
    p = pd.DataFrame({
        "id": [r["id"] for r in pointwise],
        "sample_id": [r["sample_id"] for r in pointwise],
        "label_matches_probe": [r["gold_should_respond"] == (r["gold_probe_type"] == "positive")
                                for r in pointwise],
        "history_causal": [_history_ok(r) for r in pointwise],
        "truncation_invariant": [_row_causal(r, by_id) for r in pointwise],
    }, columns=["id", "sample_id", *BOOL_COLUMNS["pointwise"]])
    m = pd.DataFrame([{"id": g, "inputs_accounted": c["inputs"] == c["kept"] + c["filtered"] + c["rejected"],
                       "kept_equals_rows": c["kept"] == per.get(g, 0)}
                      for g, c in sorted(counts.items())], columns=["id", *BOOL_COLUMNS["counts"]])
    return {"samples": s, "pointwise": p, "counts": m}


BOOL_COLUMNS = {
    "samples": ("windows_ordered", "windows_inside_video", "causal", "truncation_invariant",
                "negatives_beyond_tau", "points_per_intent", "within_allocation"),
    "pointwise": ("label_matches_probe", "history_causal", "truncation_invariant"),
    "counts": ("inputs_accounted", "kept_equals_rows"),
}


def _expectations(name: str, sample_ids: list[str]) -> list[Any]:
    import great_expectations.expectations as gxe

    out = [gxe.ExpectColumnValuesToBeUnique(column="id", meta={"check": f"{name}: unique ids"})]
    if name == "samples":
        out.append(gxe.ExpectColumnValuesToBeInSet(column="subtype", value_set=list(SUBTYPES),
                                                   meta={"check": "known subtype (Table 15)"}))
    if name == "pointwise":
        out.append(gxe.ExpectColumnValuesToBeInSet(column="sample_id", value_set=sample_ids,
                                                   meta={"check": "pointwise row joins a sample"}))
    out += [gxe.ExpectColumnValuesToBeInSet(column=c, value_set=[True], meta={"check": c.replace("_", " ")})
            for c in BOOL_COLUMNS[name]]
    return out


def read_release(release: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(trajectory samples without their frame bytes, pointwise rows) of a release, as plain
    Python records (the checks compare nested values with ``==``)."""
    columns = [n for n in SAMPLE.names if n != "frames"]

    def read(sub: str, cols: list[str] | None) -> list[dict[str, Any]]:
        return [r for f in sorted((release / sub).glob("*/*.parquet"))
                for r in pq.read_table(f, columns=cols).to_pylist()]

    return read("data", columns), read("pointwise", None)


def suites(release: Path, targets: dict[str, int], counts: dict[str, dict[str, int]],
           tau: float) -> list[Suite]:
    """The samples, pointwise and counts batches of a (staged) release; ``tau`` is the largest
    tolerance the release supports (manifest ``fpr_near``)."""
    samples, pointwise = read_release(release)
    frames = derived_frames(samples, pointwise, targets, counts, tau)
    ids = sorted(frames["samples"]["id"])
    return [Suite(f"streamvibe_{name}", frame, _expectations(name, ids), "id")
            for name, frame in frames.items()]
