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

A release with a training split adds the suites of that split (SFT streams, RL seeds, allocation,
and held out: :func:`training_suites`, described above it).

great_expectations' core expectations do not work on list columns (design.md §Environment), so each structural
rule is a derived boolean column checked with ``ExpectColumnValuesToBeInSet([True])``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from exports.quality import Suite, training_flag_suites
from exports.release_files import iter_rows, read_batches
from pipelines.streamvibe.causality import (
    label_violations,
    pointwise_violations,
    rollout_source,
    rollout_violations,
    stream_violations,
)
from pipelines.streamvibe.heldout import frames_stream_sha256
from pipelines.streamvibe.training import due_step
from schemas.streamvibe import DECISIONS, RL_SEED, SAMPLE, SFT_STREAM, SUBTYPES, TRAIN_PREFIX

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


def derived_frames(parts: Iterable[tuple[list[dict[str, Any]], list[dict[str, Any]]]],
                   targets: dict[str, int], counts: dict[str, dict[str, int]],
                   tau: float) -> dict[str, pd.DataFrame]:
    """The batches the suite checks (list columns walked in Python into boolean columns), from
    ``parts``: (samples, their pointwise rows) one config at a time (:func:`config_parts`), so
    only the booleans of the parts before are kept; a pointwise row joins a sample of its part."""
    s: dict[str, list[Any]] = {c: [] for c in ("id", "subtype", *BOOL_COLUMNS["samples"])}
    p: dict[str, list[Any]] = {c: [] for c in ("id", "sample_id", *BOOL_COLUMNS["pointwise"])}
    for samples, pointwise in parts:
        by_id = {r["id"]: r for r in samples}
        for r in samples:
            for col, value in (("id", r["id"]), ("subtype", r["subtype"]),
                               ("windows_ordered", _windows_ok(r)),
                               ("windows_inside_video", _inside_ok(r)), ("causal", _causal_ok(r)),
                               ("truncation_invariant", not stream_violations(r)),
                               ("negatives_beyond_tau", _negatives_beyond(r, tau)),
                               ("points_per_intent", _points_ok(r))):
                s[col].append(value)
        for r in pointwise:
            for col, value in (("id", r["id"]), ("sample_id", r["sample_id"]),
                               ("label_matches_probe",
                                r["gold_should_respond"] == (r["gold_probe_type"] == "positive")),
                               ("history_causal", _history_ok(r)),
                               ("truncation_invariant", _row_causal(r, by_id))):
                p[col].append(value)
    per = Counter(s["subtype"])
    s["within_allocation"] = [per[st] <= targets.get(st, 0) for st in s["subtype"]]
    m = pd.DataFrame([{"id": g, "inputs_accounted": c["inputs"] == c["kept"] + c["filtered"] + c["rejected"],
                       "kept_equals_rows": c["kept"] == per.get(g, 0)}
                      for g, c in sorted(counts.items())], columns=["id", *BOOL_COLUMNS["counts"]])
    return {"samples": pd.DataFrame(s, columns=["id", "subtype", *BOOL_COLUMNS["samples"]]),
            "pointwise": pd.DataFrame(p, columns=["id", "sample_id", *BOOL_COLUMNS["pointwise"]]),
            "counts": m}


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


def _rows(folder: Path, pattern: str, columns: list[str] | None = None) -> list[dict[str, Any]]:
    """The rows of the Parquet files ``pattern`` matches under ``folder``, file by file in name
    order, as plain Python records (the checks compare nested values with ``==``)."""
    return list(iter_rows(sorted(folder.glob(pattern)), columns))


def _without_frames(names: list[str]) -> list[str]:
    return [n for n in names if n != "frames"]


def read_release(release: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(trajectory samples without their frame bytes, pointwise rows) of a release."""
    return (_rows(release / "data", "*/*.parquet", _without_frames(SAMPLE.names)),
            _rows(release / "pointwise", "*/*.parquet"))


def config_parts(release: Path) -> Iterator[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """:func:`read_release` one config at a time (``data/<config>`` with ``pointwise/<config>``):
    the gate holds a config's samples as Python records, not the release's (docs/scaling.md)."""
    configs = sorted({d.name for sub in ("data", "pointwise") if (release / sub).is_dir()
                      for d in (release / sub).iterdir() if d.is_dir()})
    for config in configs:
        yield (_rows(release / "data" / config, "*.parquet", _without_frames(SAMPLE.names)),
               _rows(release / "pointwise" / config, "*.parquet"))


def suites(release: Path, targets: dict[str, int], counts: dict[str, dict[str, int]],
           tau: float) -> list[Suite]:
    """The samples, pointwise and counts batches of a (staged) release; ``tau`` is the largest
    tolerance the release supports (manifest ``fpr_near``)."""
    frames = derived_frames(config_parts(release), targets, counts, tau)
    ids = sorted(frames["samples"]["id"])
    return [Suite(f"streamvibe_{name}", frame, _expectations(name, ids), "id")
            for name, frame in frames.items()]


# -- the training split -----------------------------------------------------------------------
#
# What must hold in every release with a training split (StreamVibe §3.3, §4.2, App. B.4; docs
# /streamvibe.md §Training split), on top of the evaluation suites above:
#
# * SFT streams: the same stream rules (causal, truncation invariance of every step), and labels
#   that are truncation-invariant too (the label of step t from the record cut *through* t),
#   consistent (``response`` exactly when responses are due) and complete (every evidence point
#   labelled at exactly one step); the stored content key is the hash of the released frames;
# * RL seeds: the window holds its help point, the reward evidence is exactly what is due in the
#   window, the window's frames are its steps, every step and the Gold History truncation-
#   invariant, and no sample feeds both SFT and RL (App. B.4: a "separate" seed pool);
# * allocation: no category or group above its Table 18 target; per training subtype ``inputs =
#   kept + filtered + rejected`` and kept = the samples released in SFT and RL;
# * held out: no training source video matches a released evaluation video by source id or by
#   decoded stream — the evaluation side recomputed here from the released frames.

TRAIN_BOOL_COLUMNS = {
    "sft": ("windows_ordered", "windows_inside_video", "points_per_intent", "causal",
            "truncation_invariant", "labels_truncation_invariant", "labels_consistent",
            "every_point_labelled_once", "stream_hash_matches_frames", "within_allocation"),
    "rl_seed": ("window_holds_help_point", "reward_evidence_is_due_in_window", "frames_are_the_window",
                "truncation_invariant", "not_in_sft", "within_allocation"),
    "held_out": ("source_id_held_out", "stream_held_out"),
    "train_counts": ("inputs_accounted", "kept_equals_released"),
}


def _frames_hashes(files: list[Path]) -> dict[str, str]:
    """id → stream sha256 recomputed from the released frames, one row group at a time (the gate
    never holds more than a batch of frame bytes)."""
    out = {}
    for f in files:
        for batch in read_batches(f, ["id", "frame_times", "frames"]):
            for r in batch.to_pylist():
                out[r["id"]] = frames_stream_sha256(r["frame_times"], [x["bytes"] for x in r["frames"]])
    return out


def _labels_ok(r: dict[str, Any]) -> bool:
    return all(s["gold_decision"] in DECISIONS
               and (s["gold_decision"] == "response") == bool(s["gold_responses"]) for s in r["steps"])


def _labelled_once(r: dict[str, Any]) -> bool:
    labelled = sorted(x["evidence_id"] for s in r["steps"] for x in s["gold_responses"])
    return labelled == sorted(p["id"] for p in r["gold_evidence"])


def _window_ok(row: dict[str, Any]) -> tuple[bool, bool, bool]:
    rec = rollout_source(row)
    times = rec["frame_times"]
    start, end = row["window_start"], row["window_end"]
    # due steps on the whole stream (1 FPS from 0 s while t < duration): on the stream cut at the
    # window's end, every point due later would fall on the window's last step
    whole = [float(k) for k in range(max(len(times), math.ceil(row["duration_s"] - EPS)))]
    anchor = next((p for p in row["gold_evidence"] if p["id"] == row["gold_help_point"]), None)
    holds = anchor is not None and start - EPS <= due_step(anchor, whole) <= end + EPS
    due = [p for p in row["gold_evidence"] if start - EPS <= due_step(p, whole) <= end + EPS]
    frames = list(row["frame_times"]) == [s["t"] for s in row["steps"]] == [
        t for t in times if start - EPS <= t <= end + EPS]
    return holds, list(row["gold_reward_evidence"]) == due, frames


def read_training(release: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(SFT streams, RL seed rows) of a release, without frame bytes."""
    return (_rows(release / "sft", "*/*.parquet", _without_frames(SFT_STREAM.names)),
            _rows(release / "rl_seed", "*/*.parquet", _without_frames(RL_SEED.names)))


SFT_CHECKS = {
    "windows_ordered": _windows_ok,
    "windows_inside_video": _inside_ok,
    "points_per_intent": _points_ok,
    "causal": _causal_ok,
    "truncation_invariant": lambda r: not stream_violations(r),
    "labels_truncation_invariant": lambda r: not label_violations(r),
    "labels_consistent": _labels_ok,
    "every_point_labelled_once": _labelled_once,
}


def _source(r: dict[str, Any]) -> tuple[str, str]:
    return f"{r['source_collection']}/{r['source_video_id']}", r["stream_sha256"]


def training_frames(release: Path, train: dict[str, Any], counts: dict[str, dict[str, int]]
                    ) -> dict[str, pd.DataFrame]:
    """The training split's batches; ``train`` is the manifest's ``train`` section.

    The SFT streams and RL rows are read a file at a time and a few rows at once, and of each
    only its id, category, source and flags are kept: the full split's rows as Python records
    were what grew with it after the pipeline (docs/scaling.md)."""
    sft_targets = {k: v["target"] for k, v in train["sft"]["allocation"].items()}
    rl_targets = {k: v["target"] for k, v in train["rl_seed"]["allocation"].items()}
    sources: set[tuple[str, str]] = set()
    released: Counter[str] = Counter()
    sft: dict[str, list[Any]] = {c: [] for c in ("id", "category", *SFT_CHECKS,
                                                  "stream_hash_matches_frames")}
    for f in sorted((release / "sft").glob("*/*.parquet")):
        hashes = _frames_hashes([f])
        for r in iter_rows([f], _without_frames(SFT_STREAM.names)):
            sft["id"].append(r["id"])
            sft["category"].append(r["category"])
            for col, check in SFT_CHECKS.items():
                sft[col].append(check(r))
            sft["stream_hash_matches_frames"].append(hashes.get(r["id"]) == r["stream_sha256"])
            sources.add(_source(r))
            released[r["subtype"]] += 1
    sft_ids = set(sft["id"])
    rl: dict[str, list[Any]] = {c: [] for c in ("id", "category", *TRAIN_BOOL_COLUMNS["rl_seed"])
                                if c != "within_allocation"}
    rl_samples: set[tuple[str, str]] = set()
    for r in iter_rows(sorted((release / "rl_seed").glob("*/*.parquet")),
                       _without_frames(RL_SEED.names)):
        holds, due, frames_ok = _window_ok(r)
        for col, value in (("id", r["id"]), ("category", r["category"]),
                           ("window_holds_help_point", holds),
                           ("reward_evidence_is_due_in_window", due),
                           ("frames_are_the_window", frames_ok),
                           ("truncation_invariant", not rollout_violations(r)),
                           ("not_in_sft", r["sample_id"] not in sft_ids)):
            rl[col].append(value)
        sources.add(_source(r))
        rl_samples.add((r["sample_id"], r["subtype"]))
    for table, targets in ((sft, sft_targets), (rl, rl_targets)):
        per = Counter(table["category"])
        table["within_allocation"] = [per[c] <= targets.get(c, 0) for c in table.pop("category")]
    frames = {"sft": pd.DataFrame(sft, columns=["id", *TRAIN_BOOL_COLUMNS["sft"]]),
              "rl_seed": pd.DataFrame(rl, columns=["id", *TRAIN_BOOL_COLUMNS["rl_seed"]])}
    # the evaluation split's source videos, two columns of its samples: read whole with their
    # steps and pointwise rows, the evaluation release was the largest thing this gate held
    test = _rows(release / "data", "*/*.parquet", ["source_collection", "source_video_id"])
    test_ids = {f"{r['source_collection']}/{r['source_video_id']}" for r in test}
    test_hashes = set(_frames_hashes(sorted((release / "data").glob("*/*.parquet"))).values())
    held = sorted(sources)
    frames["held_out"] = pd.DataFrame({
        "id": [f"{sid} {h[:12]}" for sid, h in held],
        "source_id_held_out": [sid not in test_ids for sid, _ in held],
        "stream_held_out": [h not in test_hashes for _, h in held],
    }, columns=["id", *TRAIN_BOOL_COLUMNS["held_out"]])
    released.update(st for _, st in rl_samples)
    frames["train_counts"] = pd.DataFrame(
        [{"id": g, "inputs_accounted": c["inputs"] == c["kept"] + c["filtered"] + c["rejected"],
          "kept_equals_released": c["kept"] == released.get(g.removeprefix(TRAIN_PREFIX), 0)}
         for g, c in sorted(counts.items()) if g.startswith(TRAIN_PREFIX)],
        columns=["id", *TRAIN_BOOL_COLUMNS["train_counts"]])
    return frames


def training_suites(release: Path, train: dict[str, Any], counts: dict[str, dict[str, int]]) -> list[Suite]:
    """The suites of a release's training split (module section above)."""
    return training_flag_suites("streamvibe", training_frames(release, train, counts), TRAIN_BOOL_COLUMNS)
