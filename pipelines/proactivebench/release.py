"""The evaluation split's part of a ProactiveBench release: source checksums, how wrong options
were chosen, what the 25% leak filter did (ProactiveBench App. 0.A.8), and the card's warnings —
what :class:`pipelines.proactivebench.build.ProactiveBench` hands the shared driver (the training
split's part: ``train_release.py``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from exports.release import source_digest
from filtering.report import release_leak_summary
from pipelines.common.benchmark import BuildContext, Finalized
from pipelines.proactivebench.build_facts import NEGATIVES, NOTES, SOURCES
from pipelines.proactivebench.pipeline import make_miner
from pipelines.proactivebench.prepared import Prepared
from pipelines.proactivebench.train_release import train_finalize


def recorded_probes(path: str) -> str:
    """How a release names its probe pool file: relative to the working directory the build ran
    in when it lies inside it (``configs/probes.yaml``, as typed), else by its file name — never
    an absolute path, which would make two builds of the same inputs in two folders differ (the
    driver hands the workers absolute paths: :func:`pipelines.common.command_line.absolute_paths`)."""
    if "://" in path:
        return path
    absolute, cwd = os.path.abspath(path), os.getcwd()
    if os.path.commonpath([absolute, cwd]) == cwd:
        return Path(os.path.relpath(absolute, cwd)).as_posix()
    return Path(absolute).name


def finalize(ctx: BuildContext[Prepared], counts: dict[str, dict[str, int]]) -> Finalized:
    """The evaluation split's part of a release (source checksums and notes, the negatives' strategies
    and CLIP miner, the leak filter's summary, warnings), then the training split's."""
    sources: dict[str, list[dict[str, str]]] = {}
    for row in SOURCES.read(ctx.staging):
        sources.setdefault(row["environment"], []).append({"file": row["file"], "sha256": row["sha256"]})
    notes: dict[str, list[dict[str, str]]] = {}
    for row in NOTES.read(ctx.staging):
        notes.setdefault(row["environment"], []).append({"file": row["file"], "note": row["note"]})
    strategies = NEGATIVES.read(ctx.staging)
    clip, probes = ctx.prepared.clip, ctx.prepared.probes
    leak = release_leak_summary(ctx.staging, probes, ctx.config)
    if leak.get("probes_config"):  # the driver made the path absolute for the workers
        leak["probes_config"] = recorded_probes(leak["probes_config"])
    miner = make_miner(clip).describe() if clip else None
    readers = ctx.prepared.readers
    fin = Finalized(
        manifest={
            "sources": {e: {"root": ctx.recorded_root(readers[e].root, f"--source {e}"),
                            **source_digest(sources.get(e, [])),
                            **({"notes": notes[e]} if e in notes else {})}
                        for e in sorted(readers)},
            "negatives": {"strategies": strategies, "clip": miner},
            "leak_filter": leak,
        },
        warnings=warnings(leak, strategies, miner),
        # datasets cannot read a zero-row Parquet file: an environment without kept episodes
        # has no config (the counts table still lists it with kept = 0)
        configs={e: f"data/{e}" for e in sorted(readers) if counts[e]["kept"]},
    )
    if ctx.prepared.train_readers:
        train_finalize(ctx, counts, fin)
    return fin

def warnings(leak: dict[str, Any], strategies: list[dict[str, Any]], miner: dict[str, Any] | None
             ) -> list[str]:
    out = []
    if not leak["applied"]:
        out.append(
            "The 25% leak filter (ProactiveBench App. 0.A.8) was NOT applied to this release: no probe "
            "pool was configured, so samples a model answers on the first turn are still included.")
    if any(s["environment"] == "coco" and s["strategy"] != "clip_text" for s in strategies):
        out.append(
            "COCO wrong options are random categories, not CLIP hard negatives "
            "(no CLIP model was configured; see negatives.strategies in manifest.json).")
    if miner and miner["random_weights"]:
        out.append(
            f"CLIP hard negatives were mined with RANDOM open_clip weights ({miner['model']}): they "
            "are not semantically similar categories (test / smoke configuration only).")
    return out
