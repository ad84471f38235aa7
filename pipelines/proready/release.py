"""A ProReady-QA release from its reviewed items: the facts it hands the shared driver (QC
reports, sources, what its card must say it did not do). The released shape of an item and its
truncation invariance are in :mod:`pipelines.proready.released`.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pipelines.common.benchmark import BuildContext, Finalized, review_violations
from pipelines.proready.ars import items_tau
from pipelines.proready.build_facts import REVIEW_STATES
from pipelines.proready.facts import dataset_facts, release_sources
from pipelines.proready.generation import GenerationConfig
from pipelines.proready.prepared import Prepared
from pipelines.proready.released import reviewed_item
from pipelines.proready.sources import BENCHMARK
from schemas.proready import TASK_TYPES


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


def finalize(ctx: BuildContext[Prepared]) -> Finalized:
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
    gcfg: GenerationConfig = ctx.prepared.generation
    if gcfg.vlm:
        qc["verifiability"] = verifiability(kept, gcfg, Path(ctx.prepared.root))
    write_qc(reports, qc)
    windows = window_report(kept, reports)
    states = REVIEW_STATES.read(ctx.staging)
    review_states = dict(sorted(Counter(s["state"] for s in states).items()))
    (reports / "review.json").write_text(json.dumps({
        **review_violations(ctx.violations),
        "states": review_states,
        "statuses": {s["id"]: {k: s[k] for k in ("state", "version", "approvals", "objections")}
                     for s in sorted(states, key=lambda s: s["id"])},
        "corrections_applied": sum(1 for s in states if s["corrected"]),
    }, indent=2, sort_keys=True) + "\n")
    per_task = {t: sum(1 for i in kept if i["task_type"] == t) for t in TASK_TYPES}
    datasets = dataset_facts(ctx) if ctx.prepared.datasets else {}
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
                       "decisions": ctx.decision_rows or 0,
                       "corrections": ctx.prepared.n_corrections,
                       **review_violations(ctx.violations)},
            "qc": qc,
            **({"datasets": datasets} if datasets else {}),
        },
        warnings=release_warnings(ctx.config, qc, ctx.args.decisions),
        configs={t: f"data/{t}" for t in TASK_TYPES if per_task[t]},
        summary_lines=[f"per task: {per_task}  review states: {review_states}"],
        card_sections=card if datasets else [],
    )
