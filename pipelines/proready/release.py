"""Released ProReady-QA items: model input apart from gold, and its truncation invariance.

StreamReady §4: questions arrive in the stream *before* their evidence; a model answers "whenever
it is ready" (§5 implementation details), and ARS scores when it did against [t_s, t_e] (§4.3).
What a model may be given at time t is therefore the questions asked by t — nothing of their
answers or windows, and nothing of later turns. A released item (``schemas/proready.py``
``RELEASED_ITEM``) keeps that input in ``questions`` and the reviewed turns in ``gold_turns``.

Truncation invariance (:func:`core.causal.truncation_violations`): at every t, the questions
released for t equal those computed, by :func:`model_questions` (the function the build uses),
from the item truncated at t — turns asked after t removed, evidence after t blanked. Both sides
are step functions of t that change only at the item's own times, so checking those times and one
point between each consecutive pair (:func:`check_times`) checks every t, every 1 FPS step
included.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from core.causal import truncation_violations
from exports.release import source_digest
from pipelines.common.benchmark import BuildContext, Finalized, review_violations
from pipelines.proready.ars import items_tau
from pipelines.proready.generation import GenerationConfig
from pipelines.proready.sources import BENCHMARK, VIDEOS
from schemas.proready import ITEM, RELEASED_ITEM, TASK_TYPES

EPS = 1e-9
_TIMED = ("t_s", "t_e", "coarse_start_s", "coarse_end_s")
_UNKNOWN = -1.0  # a time not known yet at the cut


def model_questions(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model input of a chain: each turn's question with its ask time, in ask order."""
    order = sorted(turns, key=lambda t: (t["ask_time_s"], t["turn_index"]))
    return [{"turn_index": t["turn_index"], "ask_time_s": t["ask_time_s"], "question": t["question"]}
            for t in order]


def release_record(item: dict[str, Any]) -> dict[str, Any]:
    """A reviewed item (``ITEM``) as released (``RELEASED_ITEM``)."""
    rec = {k: item[k] for k in RELEASED_ITEM.names if k in item}
    rec["questions"] = model_questions(item["turns"])
    rec["gold_turns"] = item["turns"]
    RELEASED_ITEM.validate(rec)
    return rec


def reviewed_item(rec: dict[str, Any]) -> dict[str, Any]:
    """A released item back in the reviewed shape, for the QC reports that read turns."""
    item = {k: rec[k] for k in ITEM.names if k in rec}
    item["turns"] = rec["gold_turns"]
    return item


def _cut_turn(turn: dict[str, Any], t: float) -> dict[str, Any]:
    if turn["t_s"] > t + EPS:  # the answer is not on screen yet: nothing of it is known
        return dict(turn, answer="", cue="", evidence_method="", **dict.fromkeys(_TIMED, _UNKNOWN))
    return {**turn, **{k: _UNKNOWN for k in _TIMED if turn[k] > t + EPS}}


def truncate(rec: dict[str, Any], t: float) -> dict[str, Any]:
    """The item as known at t (module doc)."""
    turns = [_cut_turn(x, t) for x in rec["gold_turns"] if x["ask_time_s"] <= t + EPS]
    return dict(rec, gold_turns=turns, num_turns=len(turns),
                questions=[q for q in rec["questions"] if q["ask_time_s"] <= t + EPS],
                video_duration_s=min(rec["video_duration_s"], t))


def questions_view(rec: dict[str, Any], t: float) -> dict[str, Any]:
    """Model input at t, computed from the gold turns as the build computes ``questions``."""
    return {"questions": [q for q in model_questions(rec["gold_turns"]) if q["ask_time_s"] <= t + EPS]}


def released_view(rec: dict[str, Any], t: float) -> dict[str, Any]:
    return {"questions": [q for q in rec["questions"] if q["ask_time_s"] <= t + EPS]}


def check_times(rec: dict[str, Any]) -> list[float]:
    """Every time the item names, 0, its end, and the midpoint of each gap (module doc)."""
    marks = {0.0, float(rec["video_duration_s"])}
    for turn in rec["gold_turns"]:
        marks.update(float(turn[k]) for k in ("ask_time_s", *_TIMED) if turn[k] >= 0)
    ordered = sorted(marks)
    return sorted(set(ordered) | {(a + b) / 2 for a, b in zip(ordered, ordered[1:], strict=False)})


def question_violations(rec: dict[str, Any]) -> list[str]:
    """``[]`` when the released questions at every t are what the item cut at t gives."""
    return truncation_violations(rec, check_times(rec), truncate=truncate, view=questions_view,
                                 released=released_view)


def release_warnings(cfg: dict[str, Any], qc: dict[str, Any], decisions_path: Path) -> list[str]:
    """What a release's card must say it did not do (StreamReady App. C's LLM generation,
    frame-wise VLM windows, the two-annotator IoU audit, real reviewers)."""
    out = []
    if cfg["generation"].get("method", "template") == "template":
        out.append("Questions come from the offline template generator over native annotations, "
                   "not from the LLM pipeline of StreamReady App. C.")
    if cfg["evidence"].get("method", "native_cue") == "native_cue":
        out.append("Evidence windows are the native annotation spans (no frame-wise VLM check).")
    if "iou" not in qc:
        out.append("Two-annotator temporal IoU was not measured for this release (App. C QC).")
    if "demo" in decisions_path.name:
        out.append("DEMO: the review decisions come from a scripted demo panel, not from people.")
    return out


# -- the release's facts (what ProReady hands the shared driver) --------------------------------


def release_sources(ctx: BuildContext) -> dict[str, Any]:
    """The videos' root, the manifest's sha256 and every video's checksum."""
    reader = ctx.state["reader"]
    files = json.loads((ctx.staging / "_build" / "sources.json").read_text())
    return {VIDEOS: {"root": ctx.recorded_root(reader.root, "--source"),
                     "manifest_sha256": hashlib.sha256(reader.read_bytes(reader.manifest)).hexdigest(),
                     **source_digest([{"file": f["file"], "sha256": f["sha256"]} for f in files])}}


def dataset_facts(ctx: BuildContext) -> dict[str, Any]:
    """Per video dataset read in its released layout (``datasets:``): where it was read
    (relative to the raw-dir, never a host path), the checksum of its annotation files, and its
    candidates and released items per task type — so a release says how much each source
    contributed. A dataset's items are those whose video id starts with ``<dataset>/`` (a
    custom manifest's ids cannot hold a ``/``). Candidates are the items that reached review:
    pending, approved or filtered (rejected items are counted under ``rejected``)."""
    from pipelines.proready.native import ProReadySources

    def by_dataset(rows: list[dict[str, Any]]) -> dict[str, Counter]:
        out: dict[str, Counter] = {}
        for r in rows:
            head, sep, _ = str(r["video_id"]).partition("/")
            if sep:
                out.setdefault(head, Counter())[r["task_type"]] += 1
        return out

    def rows(folder: Path) -> list[dict[str, Any]]:
        return [r for f in sorted(folder.rglob("*.parquet"))
                for r in pq.read_table(f, columns=["video_id", "task_type"]).to_pylist()]

    staging = ctx.staging
    released = by_dataset(rows(staging / "data")) if (staging / "data").is_dir() else {}
    reviewed: list[dict[str, Any]] = rows(staging / "filtered") if (staging / "filtered").is_dir() else []
    pending = staging / "_build" / "candidates.json"
    if ctx.decisions is None and pending.is_file():
        reviewed += json.loads(pending.read_text())
    candidates = by_dataset(reviewed)
    for name, counts in released.items():
        candidates.setdefault(name, Counter()).update(counts)
    sources: ProReadySources = ctx.state["sources"]
    out = {}
    for name, root in ctx.state["datasets"]:
        reader = sources.readers[name]
        files = [{"file": rel, "sha256": hashlib.sha256(reader.dataset.read_bytes(rel)).hexdigest()}
                 for rel in reader.annotation_files()]
        out[name] = {"title": reader.dataset.title, "root": ctx.recorded_root(root, f"--source {name}"),
                     "annotation_files": source_digest(files),
                     "candidates": dict(sorted(candidates.get(name, Counter()).items())),
                     "released": dict(sorted(released.get(name, Counter()).items()))}
        ego4d = getattr(reader.dataset, "ego4d", None)  # VStream-QA's spans are Ego4D's narrations
        if ego4d is not None:
            out[name]["ego4d"] = {
                "root": ctx.recorded_root(ego4d.root, "--source ego4d"),
                "annotation_files": source_digest([
                    {"file": rel, "sha256": hashlib.sha256(ego4d.read_bytes(rel)).hexdigest()}
                    for rel in ego4d.annotation_files()])}
    return out


def finalize(ctx: BuildContext) -> Finalized:
    """A release's facts from its approved items: QC reports (windows, the two-annotator IoU
    with ``--qc-windows``, VLM verifiability), review states, ARS τ, per-task counts, warnings."""
    from pipelines.proready.quality import (
        iou_report,
        iou_sample,
        verifiability,
        window_report,
        write_qc,
    )
    from pipelines.proready.review import RUBRIC, read_rows

    kept = sorted((reviewed_item(r) for r in pq.read_table(ctx.staging / "data").to_pylist()),
                  key=lambda i: i["id"])
    reports = ctx.staging / "reports"
    qc: dict[str, Any] = {}
    if ctx.args.qc_windows is not None:
        size = int(ctx.config.get("quality", {}).get("iou_sample_size", 100))
        sample = iou_sample(kept, size, ctx.seed)
        qc["iou"] = iou_report(kept, read_rows(ctx.args.qc_windows), sample)
    gcfg: GenerationConfig = ctx.state["generation"]
    if gcfg.vlm:
        qc["verifiability"] = verifiability(kept, gcfg, Path(ctx.state["root"]))
    write_qc(reports, qc)
    windows = window_report(kept, reports)
    states = json.loads((ctx.staging / "_build" / "review.json").read_text())
    review_states = dict(sorted(Counter(s["state"] for s in states).items()))
    (reports / "review.json").write_text(json.dumps({
        **review_violations(ctx.violations),
        "states": review_states,
        "statuses": {s["id"]: {k: s[k] for k in ("state", "version", "approvals", "objections")}
                     for s in sorted(states, key=lambda s: s["id"])},
        "corrections_applied": sum(1 for s in states if s["corrected"]),
    }, indent=2, sort_keys=True) + "\n")
    per_task = {t: sum(1 for i in kept if i["task_type"] == t) for t in TASK_TYPES}
    datasets = dataset_facts(ctx) if ctx.state.get("datasets") else {}
    card = ["", "## Source datasets read in their released layouts", "",
            "| dataset | read from | candidates | released |", "|---|---|---:|---:|"]
    card += [f"| {d['title']} | `{d['root']}` | {sum(d['candidates'].values())} | "
             f"{sum(d['released'].values())} |" for d in datasets.values()]
    return Finalized(
        manifest={
            "sources": release_sources(ctx),
            "per_task": per_task,
            "turns": sum(len(i["turns"]) for i in kept),
            "multi_turn_items": sum(1 for i in kept if len(i["turns"]) > 1),
            "ars_tau_s": items_tau(kept),
            "windows": windows,
            "review": {"rubric": RUBRIC, "round": ctx.review_round(BENCHMARK),
                       "panel_size": ctx.panel_size, "states": review_states,
                       "decisions": len(ctx.decisions or []),
                       "corrections": ctx.state["n_corrections"],
                       **review_violations(ctx.violations)},
            "qc": qc,
            **({"datasets": datasets} if datasets else {}),
        },
        warnings=release_warnings(ctx.config, qc, ctx.args.decisions),
        configs={t: f"data/{t}" for t in TASK_TYPES if per_task[t]},
        summary_lines=[f"per task: {per_task}  review states: {review_states}"],
        card_sections=card if datasets else [],
    )
