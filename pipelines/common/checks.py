"""The checks a build passes before anything is published: ``inputs = kept + filtered +
rejected (+ pending)`` per counts group, every configured source yielded a sample (else the path
it was read from is named), the rows written equal the kept counts, and a reviewed release holds
an approved sample. Each raises :class:`~exports.release.ReleaseError`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from exports.release import (
    ReleaseError,
    outcome_counts,
)
from pipelines.common.benchmark import Benchmark, BuildContext
from pipelines.common.transforms import FILTERED_INPUTS
from schemas.outcomes import FILTERED_INPUT, REJECTION


def read_stages(staging: Path) -> dict[str, dict[str, int]]:
    """Counts per group and stage from every ``_build/counts*.json`` (a pipeline part that
    counts its own groups apart, e.g. a training split, writes its own file; a group and stage
    counted in two files is summed)."""
    stages: dict[str, dict[str, int]] = {}
    for path in sorted((staging / "_build").glob("counts*.json")):
        for row in json.loads(path.read_text()):
            group = stages.setdefault(row["environment"], {})
            group[row["stage"]] = group.get(row["stage"], 0) + row["n"]
    return {g: dict(sorted(s.items())) for g, s in sorted(stages.items())}


def count_groups(stages: dict[str, dict[str, int]], declared: list[str], pending: bool
                 ) -> dict[str, dict[str, int]]:
    """inputs / kept / filtered / rejected (/ pending) per group: every declared group, and any
    other group that had inputs (e.g. items whose group could not even be read)."""
    out = {}
    for group in sorted(set(stages) | set(declared)):
        c = outcome_counts(stages.get(group, {}))
        if pending:
            c["pending"] = stages.get(group, {}).get("pending", 0)
        if group in declared or c["inputs"]:
            out[group] = c
    return out


def check_balance(counts: dict[str, dict[str, int]]) -> None:
    broken = {g: c for g, c in counts.items()
              if c["inputs"] != c["kept"] + c["filtered"] + c["rejected"] + c.get("pending", 0)}
    if broken:
        raise ReleaseError(f"inputs != kept + filtered + rejected (+ pending): {broken}")


def check_sources_yield(benchmark: Benchmark, ctx: BuildContext, counts: dict[str, dict[str, int]],
                        staging: Path) -> list[str]:
    """Sources that yielded no sample: a ReleaseError naming the path each was read from (a root
    one folder too high lists nothing, and a published empty release hides that), or — with
    ``--allow-empty-sources`` — warnings for the manifest and the card."""
    empty = []
    yielded = benchmark.sources.source_yield(ctx, counts, benchmark.info)
    for name, (path, samples, groups) in sorted(yielded.items()):
        if samples:
            continue
        c = {k: sum(counts.get(g, {}).get(k, 0) for g in groups) for k in ("inputs", "filtered", "rejected")}
        why = outcome_reasons(staging, groups)
        empty.append(f"{name}: 0 samples from {path} (inputs {c['inputs']}, filtered {c['filtered']}, "
                     f"rejected {c['rejected']}{'; e.g. ' + '; '.join(why) if why else ''})")
    if empty and not ctx.args.allow_empty_sources:
        raise ReleaseError("a configured source yields no sample — check the path, or pass "
                           "--allow-empty-sources: " + " | ".join(empty))
    return empty


def outcome_reasons(staging: Path, groups: list[str], limit: int = 3) -> list[str]:
    """The first distinct reasons (file: reason) of the groups' rejections and filtered inputs
    (a second split's are in subfolders, e.g. ``rejected/train/``)."""
    import pyarrow.parquet as pq

    out: list[str] = []
    for folder in ("rejected", FILTERED_INPUTS):
        for path in sorted((staging / folder).rglob("*.parquet")):
            for row in pq.read_table(path, columns=["environment", "source_file", "reason"]).to_pylist():
                text = f"{row['source_file']}: {row['reason']}"
                if row["environment"] in groups and text not in out:
                    out.append(text)
    return sorted(out)[:limit]


def check_rows(benchmark: Benchmark, counts: dict[str, dict[str, int]], files: list[dict[str, Any]]
               ) -> None:
    mismatch = {}
    for group, c in counts.items():
        prefix = benchmark.build.data_prefix(group)
        if prefix is None:
            continue
        rows = sum(f["rows"] for f in files if f["path"].startswith(prefix.rstrip("/") + "/"))
        if rows != c["kept"]:
            mismatch[group] = (rows, c["kept"])
    if mismatch:
        raise ReleaseError(f"rows written differ from kept counts (rows, kept): {mismatch}")


def check_approved(benchmark: Benchmark, counts: dict[str, dict[str, int]]) -> None:
    """A reviewed release needs at least one approved row in its evaluation split."""
    if not benchmark.reviewed:
        return
    build = benchmark.build
    released = sum(c["kept"] for g, c in counts.items()
                   if build.split_of(g) == build.split and build.data_prefix(g) is not None)
    if not released:
        raise ReleaseError(f"no {benchmark.info.unit} is approved by all reviewers on its current version: "
                           "nothing to release (see the review states in the decision log)")


def outcome_schemas(benchmark: Benchmark) -> dict[str, Any]:
    """Each outcome folder of a release and the record its rows hold."""
    return {"filtered": benchmark.build.filtered_schema, "rejected": REJECTION,
            FILTERED_INPUTS: FILTERED_INPUT}
