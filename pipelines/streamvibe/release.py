"""The evaluation split's part of a StreamVibe release: the allocation of approved samples to
the per-subtype targets (StreamVibe Table 15), the review states, the source checksums, the
card's tables and warnings — what :class:`pipelines.streamvibe.build.StreamVibe` hands the shared
driver (the training split's part: ``train_release.py``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from core.files import sha256_hex
from exports.release import source_digest
from pipelines.common.benchmark import BuildContext, Finalized, review_violations
from pipelines.common.video_sources import DATASETS
from pipelines.streamvibe.build_facts import TRAIN_VIDEOS, VIDEOS
from pipelines.streamvibe.negatives import probe_card_lines, probe_facts
from pipelines.streamvibe.prepared import Prepared
from pipelines.streamvibe.sources import enumerate_pairs, source_files
from pipelines.streamvibe.train_release import train_finalize
from pipelines.streamvibe.training import is_train
from schemas.streamvibe import POINTWISE, SAMPLE, SUBTYPES, TRAIN_SPLIT, config_name

REPO = Path(__file__).resolve().parents[2]


def release_sources(ctx: BuildContext[Prepared], split: str = "test"
                    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(checksums of the split's manifest, task records and videos; its video facts)."""
    root = ctx.prepared.root
    manifest = ctx.prepared.train.manifest if split == TRAIN_SPLIT else ctx.prepared.manifest
    pairs = [x for x in enumerate_pairs(root, manifest) if isinstance(x, dict)]
    videos = (TRAIN_VIDEOS if split == TRAIN_SPLIT else VIDEOS).read(ctx.staging)
    key = "source_id" if split == TRAIN_SPLIT else "file"
    sources = {"task_records": source_digest(source_files(root, manifest, pairs)),
               "videos": source_digest([{"file": v[key], "sha256": v["sha256"]} for v in videos])}
    return sources, sorted(videos, key=lambda v: v[key])


def dataset_facts(ctx: BuildContext[Prepared], staging: Path) -> dict[str, Any]:
    """Per video dataset read in its released layout: where it was read (relative to the
    raw-dir, never a host path), the checksum of its annotation files, and its candidates and
    released samples per subtype — so a release says how much each source contributed."""
    released: dict[str, Counter] = {}
    for f in sorted((staging / "data").rglob("*.parquet")):
        for row in pq.read_table(f, columns=["source_collection", "subtype"]).to_pylist():
            released.setdefault(row["source_collection"], Counter())[row["subtype"]] += 1
    candidates = ctx.prepared.candidate_counts
    out = {}
    for name, root, allowed in ctx.prepared.datasets:
        reader = DATASETS[name](root)
        files = [{"file": rel, "sha256": sha256_hex(reader.read_bytes(rel))}
                 for rel in reader.annotation_files()]
        out[name] = {"title": reader.title, "root": ctx.recorded_root(root, f"--source {name}"),
                     "annotation_files": source_digest(files), "subtypes": list(allowed),
                     "candidates": dict(sorted(candidates.get(name, Counter()).items())),
                     "released": dict(sorted(released.get(name, Counter()).items()))}
    return out


def finalize(ctx: BuildContext[Prepared], counts: dict[str, dict[str, int]],
             files: list[dict[str, Any]]) -> Finalized:
    """The evaluation split's part of a release (the allocation to the per-subtype targets, the
    review states, the probe facts, the pointwise records' table), then the training split's."""
    rows = {st: counts[st]["kept"] for st in SUBTYPES}
    targets = ctx.config["targets"]
    reports = ctx.staging / "reports"
    allocation = {st: {"target": targets[st], "released": rows[st],
                       "shortfall": max(0, targets[st] - rows[st])} for st in SUBTYPES}
    (reports / "allocation.json").write_text(json.dumps(allocation, indent=1, sort_keys=True) + "\n")
    warnings = []
    short = {st: a["shortfall"] for st, a in allocation.items() if a["shortfall"]}
    if short:
        warnings.append("Allocation shortfall against the per-subtype targets (Table 15 unless "
                        f"configured): {short}. Missing samples were NOT padded.")
    if ctx.config.get("generator", "rule") == "rule":
        warnings.append("Candidates came from the rule-based generator (native annotations), not "
                        "from Gemini (§3.3); all released samples were still approved by four "
                        "reviewers.")
    sources, videos = release_sources(ctx)
    pointwise_rows = sum(f["rows"] for f in files if f["path"].startswith("pointwise/"))
    review_states = Counter(s["state"] for sid, s in ctx.prepared.statuses.items() if not is_train(sid))
    alloc_lines = ["", "## Allocation (Table 15 targets)", "",
                   "| subtype | target | released | shortfall |", "|---|---:|---:|---:|"]
    alloc_lines += [f"| {st} | {a['target']} | {a['released']} | {a['shortfall']} |"
                    for st, a in allocation.items()]
    pw_lines = ["", f"## Pointwise records (`{POINTWISE.name}`, schema {POINTWISE.version})", "",
                "| field | description |", "|---|---|"]
    pw_lines += [f"| `{f.name}` | {f.doc} |" for f in POINTWISE.fields]
    datasets = dataset_facts(ctx, ctx.staging) if ctx.prepared.datasets else {}
    source_lines = ["", "## Source datasets read in their released layouts", "",
                    "| dataset | read from | candidates | released |", "|---|---|---:|---:|"]
    source_lines += [f"| {d['title']} | `{d['root']}` | {sum(d['candidates'].values())} | "
                     f"{sum(d['released'].values())} |" for d in datasets.values()]
    fin = Finalized(
        manifest={
            "schema": {"sample": {"record": SAMPLE.name, "version": SAMPLE.version},
                       "pointwise": {"record": POINTWISE.name, "version": POINTWISE.version}},
            "generator": ctx.config.get("generator", "rule"),
            "intent_specs": ctx.prepared.specs_version,
            "sources": sources,
            "videos": videos,
            "allocation": allocation,
            "review": {"panel_size": ctx.panel_size,
                       "states": dict(sorted(review_states.items())),
                       **review_violations(ctx.violations)},
            "pointwise_rows": pointwise_rows,
            "fpr_near": probe_facts(ctx.config),
            **({"datasets": datasets} if datasets else {}),
        },
        warnings=warnings,
        # a subtype with no released sample gets no config: datasets cannot read a zero-row
        # file; its shortfall is in the allocation table instead
        configs={config_name(st): f"data/{config_name(st)}" for st in SUBTYPES if rows[st]},
        extra_configs=[{"config_name": "pointwise", "data_files": [
            {"split": ctx.splits[0], "path": f"pointwise/*/{ctx.splits[0]}-*.parquet"}]}],
        card_sections=alloc_lines + (source_lines if datasets else []) + probe_card_lines(ctx.config)
        + pw_lines,
        summary_lines=[f"pointwise rows: {pointwise_rows}"],
    )
    if TRAIN_SPLIT in ctx.splits:
        train_sources, train_videos = release_sources(ctx, TRAIN_SPLIT)
        train_finalize(ctx, counts, fin, train_sources, train_videos, REPO)
    return fin
