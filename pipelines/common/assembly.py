"""Assembling a release from its staged files: the manifest (every file with its sha256, the
counts per group and split, the release facts), the gate on the staged release, and what is
printed when it is published.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from exports.quality import QualityReport, check_release
from exports.release import (
    SEMVER_HELP,
    code_version,
    config_hash,
    release_entry,
    release_status,
)
from pipelines.common.benchmark import Benchmark, BuildContext, Finalized


def write_manifest(staging: Path, manifest: dict[str, Any]) -> None:
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def skipped_warnings(ctx: BuildContext) -> list[str]:
    return [f"Source {name} was NOT built: it cannot be read ({s['file']}: {s['field']}: {s['reason']}); "
            "built with --skip-unreadable-sources (manifest: skipped_sources)."
            for name, s in sorted(ctx.skipped.items())]


def release_facts(ctx: BuildContext, final: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """The version rule (TFDS): a published version is replaced only by the same records —
    or, with ``--overwrite``, by others, which its entry then says; ReleaseError otherwise."""
    kind, facts = release_status(final, manifest["files"], overwrite=ctx.args.overwrite,
                                 config=ctx.config_path)
    if kind == "same" and facts is not None:
        return facts  # the published entry stands: a rebuild of the same records is no new release
    return release_entry(ctx.out_root, ctx.version, manifest, ctx.config.get("release_notes"),
                         facts if kind == "overwrite" else None)


def assemble_manifest(benchmark: Benchmark, ctx: BuildContext, stages: dict[str, dict[str, int]],
                      counts: dict[str, dict[str, int]], files: list[dict[str, Any]], fin: Finalized,
                      warnings: list[str]) -> dict[str, Any]:
    return {
        "benchmark": benchmark.name,
        "version": ctx.version,
        "versioning": SEMVER_HELP,
        "schema": {"record": benchmark.build.schema.name, "version": benchmark.build.schema.version},
        "code_version": code_version(),
        "citation": benchmark.info.citation,  # what croissant.json cites (exports/croissant.py)
        "config_sha256": config_hash(ctx.config),
        "config": ctx.config,
        "global_seed": ctx.seed,
        **split_facts(benchmark, ctx, counts),
        "stages": stages,
        "counts": counts,
        "warnings": warnings,
        "files": files,
        **({"skipped_sources": ctx.skipped} if ctx.skipped else {}),
        **fin.manifest,
    }


def split_facts(benchmark: Benchmark, ctx: BuildContext, counts: dict[str, dict[str, int]]
                ) -> dict[str, Any]:
    """``split`` of a one-split release; a release with several splits lists them and counts
    each apart (its groups, and inputs / kept / filtered / rejected summed over them)."""
    if len(ctx.splits) == 1:
        return {"split": benchmark.build.split}
    per: dict[str, Any] = {}
    for split in ctx.splits:
        groups = {g: c for g, c in counts.items() if benchmark.build.split_of(g) == split}
        per[split] = {"groups": sorted(groups),
                      **{k: sum(c[k] for c in groups.values())
                         for k in ("inputs", "kept", "filtered", "rejected")}}
    return {"split": list(ctx.splits), "splits": per}


def release_label(manifest: dict[str, Any]) -> str:
    """What the gate's reports call a release: its benchmark and version, never its folder."""
    return f"{manifest.get('benchmark', '?')} {manifest.get('version', '?')}"


def gate(benchmark: Benchmark, release: Path, manifest: dict[str, Any], label: str, reports: Path,
         threads: int = 1, proven: Collection[str] = frozenset()) -> QualityReport:
    """The gate of a (staged or published) release: every file against the manifest's sha256,
    size and row count, every embedded image and media file decoded (but for bytes in
    ``proven``, which the build decoded in full where it made them: :mod:`exports.integrity`), and
    the benchmark's great-expectations suites; the report goes to ``reports`` (md, json,
    offline html)."""
    return check_release(release, manifest.get("files") or [],
                         lambda: release_suites(benchmark, release, manifest), reports, label=label,
                         threads=threads, proven=proven)


def release_suites(benchmark: Benchmark, release: Path, manifest: dict[str, Any]) -> list[Any]:
    """The suites of a release (its :class:`~pipelines.common.benchmark.Quality`): the
    evaluation split's, on its groups' counts, and the training split's when it holds one.

    Why a release with a training split and no ``training_suites`` stops here: its training rows
    would otherwise be published with no expectation checked."""
    quality, counts = benchmark.quality, manifest["counts"]
    build = benchmark.build
    test = {g: c for g, c in counts.items() if build.split_of(g) == build.split}
    out = quality.suites(release, test, manifest)
    if "train" not in manifest:
        return out
    if quality.training_suites is None:
        raise NotImplementedError(f"{benchmark.name} publishes a training split without its suites "
                                  "(Quality.training_suites)")
    return out + quality.training_suites(release, manifest["train"], counts)


def gate_summary(report: QualityReport, limit: int = 5) -> str:
    found = [f"{p.path}: {p.check}: {p.detail}" for p in report.problems[:limit]]
    found += [f"{c.check} [{c.column}]: {c.examples[:3]}" for c in report.failed[:limit]]
    return "; ".join(found)


def print_counts(benchmark: Benchmark, counts: dict[str, dict[str, int]], pending: bool) -> None:
    w = max([12, *map(len, counts)])  # a second split's groups are longer (train/unassigned)
    head = f"{benchmark.info.group_label:<{w}} {'inputs':>7} {'kept':>6} {'filtered':>9} {'rejected':>9}"
    print(head + (f" {'pending':>8}" if pending else ""))
    for group, c in counts.items():
        line = f"{group:<{w}} {c['inputs']:>7} {c['kept']:>6} {c['filtered']:>9} {c['rejected']:>9}"
        print(line + (f" {c.get('pending', 0):>8}" if pending else ""))


def print_summary(benchmark: Benchmark, final: Path, manifest: dict[str, Any], fin: Finalized) -> None:
    print(f"\nRelease written to {final}")
    print_counts(benchmark, {g: c for g, c in manifest["counts"].items()}, pending=False)
    for line in fin.summary_lines:
        print(line)
    for w in manifest["warnings"]:
        print(f"WARNING: {w}")
