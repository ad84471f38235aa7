"""Data-quality suite and the quality-control report of a ProReady release (StreamReady App. C).

Two different questions, two tools:

* **Is the release well-formed?** A great-expectations suite run on the whole release as one
  dataframe (design.md §Environment: per-file batches miss a duplicate id spanning two files).
  Core expectations
  do not work on list columns, so the per-turn invariants are derived boolean columns checked with
  ``ExpectColumnValuesToBeInSet([True])``: every turn asked before its evidence (future-dependent),
  0 ≤ t_s ≤ t_e ≤ duration, follow-ups referencing an earlier turn, approved by the full panel,
  and **truncation invariance**: the model input (``questions``) at every t is what the item
  truncated at t gives (:mod:`pipelines.proready.release`) — no answer, window or later turn in it.
* **Are the windows reliable?** App. C "Quality Control": two annotators' windows on a sample of
  items agree with mean temporal IoU 0.85 (100 items), and model-based answer verifiability rises
  from 0.35 outside the windows to 0.82 inside. :func:`iou_report` computes the first from two
  annotators' windows; :func:`verifiability_report` asks a VLM (same client, cache and retries as
  the generation path) whether the answer can be verified from frames inside [t_s, t_e] versus
  frames between the question and t_s.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow.parquet as pq
from pydantic import BaseModel

from clients import ModelClient, Request
from core.seeding import rng_for
from exports.quality import Suite
from pipelines.proready.evidence import temporal_iou
from pipelines.proready.models import ask_json
from pipelines.proready.released import question_violations
from schemas.proready import TASK_TYPES

if TYPE_CHECKING:
    from pipelines.proready.generation import GenerationConfig

PAPER_IOU = 0.85
PAPER_VERIFIABILITY = (0.35, 0.82)


class Verifiable(BaseModel):
    """The verifier's answer (configs/proready/verify.txt)."""

    verifiable: bool


CHECKS = ("future_dependent", "window_inside_video", "follow_ups_reference_earlier",
          "num_turns_matches", "approved_by_panel", "truncation_invariant")


def derived_columns(items: list[dict[str, Any]], panel_size: int) -> pd.DataFrame:
    """Boolean per-item invariants over the turn lists (design.md §Environment GX advice)."""
    def row(r: dict[str, Any]) -> dict[str, Any]:
        turns = r["gold_turns"]
        return {
            "id": r["id"], "task_type": r["task_type"], "version": r["version"],
            "future_dependent": all(t["ask_time_s"] < t["t_s"] for t in turns),
            "window_inside_video": all(0 <= t["t_s"] <= t["t_e"] <= r["video_duration_s"] for t in turns),
            "follow_ups_reference_earlier": all(
                (t["refers_to"] == -1) if k == 0 else (0 <= t["refers_to"] < k) for k, t in enumerate(turns)),
            "num_turns_matches": len(turns) == r["num_turns"] >= 1,
            "approved_by_panel": len(set(r["approvals"])) >= panel_size,
            "truncation_invariant": not question_violations(r),
        }

    return pd.DataFrame([row(r) for r in items], columns=["id", "task_type", "version", *CHECKS])


def suites(release: Path, panel_size: int) -> list[Suite]:
    """The items batch (derived per-turn checks) of a (staged) release."""
    import great_expectations.expectations as gxe

    items = [r for f in sorted((release / "data").rglob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    expectations = [
        gxe.ExpectColumnValuesToBeUnique(column="id", meta={"check": "unique ids"}),
        gxe.ExpectColumnValuesToNotBeNull(column="id", meta={"check": "ids present"}),
        gxe.ExpectColumnValuesToBeInSet(column="task_type", value_set=list(TASK_TYPES),
                                        meta={"check": "known task type"}),
        gxe.ExpectColumnValuesToBeBetween(column="version", min_value=1,
                                          meta={"check": "version ≥ 1"}),
    ] + [gxe.ExpectColumnValuesToBeInSet(column=c, value_set=[True], meta={"check": c.replace("_", " ")})
         for c in CHECKS]
    return [Suite("proready_items", derived_columns(items, panel_size), expectations, "id")]


# ----------------------------------------------------------------------------------- QC report


def iou_sample(items: list[dict[str, Any]], size: int, seed: int) -> list[str]:
    """Seeded sample of item ids for the two-annotator audit (independent of build order)."""
    ids = sorted(i["id"] for i in items)
    return sorted(rng_for(seed, "proready", "qc_iou_sample").sample(ids, min(size, len(ids))))


def iou_report(items: list[dict[str, Any]], windows: list[dict[str, Any]], sample: list[str]
               ) -> dict[str, Any]:
    """Mean temporal IoU between two annotators' windows on the sampled items' turns.

    ``windows``: rows ``{sample_id, turn_index, annotator, t_s, t_e}`` from exactly two
    annotators. Turns one of them did not mark are counted as missing, not as IoU 0."""
    annotators = sorted({str(w["annotator"]) for w in windows})
    if len(annotators) != 2:
        raise ValueError(f"the IoU audit needs windows from exactly two annotators, got {annotators}")
    by = {(str(w["sample_id"]), int(w["turn_index"]), str(w["annotator"])):
          (float(w["t_s"]), float(w["t_e"])) for w in windows}
    task = {i["id"]: {t["turn_index"]: t["task_type"] for t in i["turns"]} for i in items}
    ious: list[float] = []
    per_task: dict[str, list[float]] = defaultdict(list)
    missing = 0
    for sid in sample:
        for k, tt in sorted(task.get(sid, {}).items()):
            a, b = by.get((sid, k, annotators[0])), by.get((sid, k, annotators[1]))
            if a is None or b is None:
                missing += 1
                continue
            v = temporal_iou(a, b)
            ious.append(v)
            per_task[tt].append(v)
    return {
        "annotators": annotators, "sampled_items": len(sample), "turns_compared": len(ious),
        "turns_missing": missing,
        "mean_iou": round(statistics.fmean(ious), 4) if ious else None,
        "per_task": {k: round(statistics.fmean(v), 4) for k, v in sorted(per_task.items())},
        "paper_mean_iou": PAPER_IOU,
    }


def _spread(times: list[int], n: int) -> list[int]:
    if len(times) <= n:
        return times
    return [times[int(math.floor((i + 0.5) * len(times) / n))] for i in range(n)]


def verifiability_report(
    items: list[dict[str, Any]], frames: dict[str, dict[int, bytes]], client: ModelClient,
    prompt: str, frames_per_side: int = 8,
) -> dict[str, Any]:
    """Fraction of turns whose answer the model verifies from frames inside [t_s, t_e] vs from
    frames between the question and t_s ("outside": what a premature answer would have seen)."""
    reqs: list[Request] = []
    sides: list[tuple[str, str]] = []
    for item in sorted(items, key=lambda i: i["id"]):
        vf = frames[item["video_id"]]
        for t in item["turns"]:
            inside = [s for s in sorted(vf) if t["t_s"] - 1e-9 <= s <= t["t_e"] + 1e-9]
            outside = [s for s in sorted(vf) if t["ask_time_s"] <= s < t["t_s"] - 1e-9]
            for side, times in (("inside", inside), ("outside", outside)):
                times = _spread(times, frames_per_side)
                if not times:
                    continue
                reqs.append(Request.of(
                    f"{item['id']}/turns[{t['turn_index']}]/{side}",
                    prompt.format(start=times[0], end=times[-1], question=t["question"],
                                  answer=t["answer"]),
                    [vf[s] for s in times], Verifiable))
                sides.append((side, t["task_type"]))
    answers = ask_json(client, reqs) if reqs else []
    tally: dict[str, list[int]] = {"inside": [], "outside": []}
    errors = []
    for (side, _), a in zip(sides, answers, strict=True):
        if isinstance(a, str):
            errors.append(a)
            continue
        tally[side].append(int(a.verifiable))
    frac = {k: (round(sum(v) / len(v), 4) if v else None) for k, v in tally.items()}
    return {"inside": frac["inside"], "outside": frac["outside"],
            "n_inside": len(tally["inside"]), "n_outside": len(tally["outside"]),
            "errors": errors[:20], "n_errors": len(errors), "model": client.spec.name,
            "paper": {"outside": PAPER_VERIFIABILITY[0], "inside": PAPER_VERIFIABILITY[1]}}


def write_qc(out_dir: Path, qc: dict[str, Any]) -> list[str]:
    """reports/qc.json + qc.md (+ a bar plot when both numbers exist)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "qc.json").write_text(json.dumps(qc, indent=2, sort_keys=True) + "\n")
    lines = ["# ProReady-QA quality control (StreamReady App. C)", ""]
    iou = qc.get("iou")
    if iou:
        lines += [f"- two-annotator temporal IoU: **{iou['mean_iou']}** on {iou['turns_compared']} "
                  f"turns of {iou['sampled_items']} sampled items (paper: {PAPER_IOU} on 100)",
                  f"- per task: {iou['per_task']}"]
    else:
        lines.append("- two-annotator temporal IoU: **not measured** (no second-annotator windows)")
    ver = qc.get("verifiability")
    if ver:
        lines.append(f"- answer verifiability outside → inside the windows: **{ver['outside']} → "
                     f"{ver['inside']}** ({ver['model']}; paper: 0.35 → 0.82)")
    else:
        lines.append("- answer verifiability: **not measured** (no VLM configured)")
    (out_dir / "qc.md").write_text("\n".join(lines) + "\n")
    files = ["qc.json", "qc.md"]
    if ver and ver["inside"] is not None and ver["outside"] is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(4, 3))
        ax.bar(["outside", "inside"], [ver["outside"], ver["inside"]], color=["#c66", "#6a6"])
        ax.set_ylim(0, 1)
        ax.set_ylabel("answer verifiable (fraction)")
        ax.set_title("Verifiability vs evidence window")
        fig.tight_layout()
        fig.savefig(out_dir / "qc_verifiability.png", dpi=100, metadata={"Software": None})
        plt.close(fig)
        files.append("qc_verifiability.png")
    return files


def window_report(items: list[dict[str, Any]], out_dir: Path) -> dict[str, Any]:
    """Per task: turns, median window length and median lead (t_s − ask time), with a plot —
    the two numbers that decide how hard ARS timing is (StreamReady §4.3: τ scales both penalties)."""
    rows: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"length": [], "lead": []})
    for item in items:
        for t in item["turns"]:
            rows[t["task_type"]]["length"].append(t["t_e"] - t["t_s"])
            rows[t["task_type"]]["lead"].append(t["t_s"] - t["ask_time_s"])
    summary = {task: {"turns": len(v["length"]),
                      "median_window_s": round(statistics.median(v["length"]), 3),
                      "median_lead_s": round(statistics.median(v["lead"]), 3)}
               for task, v in sorted(rows.items())}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "windows.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    if rows:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        tasks = sorted(rows)
        fig, axes = plt.subplots(1, 2, figsize=(8, 3))
        for ax, key, title in ((axes[0], "length", "window length t_e − t_s (s)"),
                               (axes[1], "lead", "lead t_s − ask time (s)")):
            ax.boxplot([rows[t][key] for t in tasks])
            ax.set_xticks(range(1, len(tasks) + 1), [t.upper() for t in tasks])
            ax.set_title(title)
        fig.tight_layout()
        fig.savefig(out_dir / "windows.png", dpi=100, metadata={"Software": None})
        plt.close(fig)
    return summary


def verifiability(kept: list[dict[str, Any]], gcfg: GenerationConfig, source_root: Path) -> dict[str, Any]:
    """Can a VLM answer each released question from the frames of its evidence window alone?"""
    from pipelines.proready.generation import video_frames
    from pipelines.proready.quality import verifiability_report
    from pipelines.proready.sources import VideoSource

    client = gcfg.models.client("vlm", label="vlm-verify")
    frames = {}
    for item in kept:
        if item["video_id"] not in frames:
            v = VideoSource(item["video_id"], item["video_file"], str(source_root / item["video_file"]),
                            item["video_sha256"], item["video_duration_s"], item["video_fps"],
                            item["source"], "", {}, (), (), ())
            frames[item["video_id"]] = video_frames(v, gcfg.frame_max_side)
    return verifiability_report(kept, frames, client, gcfg.prompts["verify"])
