"""What a ProReady-QA pending state and release record about their sources: the videos' root,
manifest and checksums, and, per video dataset read in its released layout, where it was read,
its annotation files' checksum and how many candidates and items it gave. A module of its own:
the pending state (``review.py``) and the release (``release.py``) both record them, and neither
imports the other."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from exports.release import source_digest
from pipelines.common.benchmark import BuildContext
from pipelines.proready.build_facts import CANDIDATES, SOURCES
from pipelines.proready.prepared import Prepared
from pipelines.proready.sources import VIDEOS


def release_sources(ctx: BuildContext[Prepared]) -> dict[str, Any]:
    """The videos' root, the manifest's sha256 and every video's checksum."""
    reader = ctx.prepared.reader
    files = SOURCES.read(ctx.staging)
    return {VIDEOS: {"root": ctx.recorded_root(reader.root, "--source"),
                     "manifest_sha256": hashlib.sha256(reader.read_bytes(reader.manifest)).hexdigest(),
                     **source_digest([{"file": f["file"], "sha256": f["sha256"]} for f in files])}}


def dataset_facts(ctx: BuildContext[Prepared]) -> dict[str, Any]:
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
    if ctx.pending and CANDIDATES.folder(staging).is_dir():
        reviewed += CANDIDATES.read(staging)
    candidates = by_dataset(reviewed)
    for name, counts in released.items():
        candidates.setdefault(name, Counter()).update(counts)
    sources: ProReadySources = ctx.prepared.sources
    out = {}
    for name, root in ctx.prepared.datasets:
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
