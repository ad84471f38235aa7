"""The append-only decision log of a review: one Parquet file per pull (schema ``REVIEW_DECISION``),
its violation report, and one record file per push.

Why one file per pull: Parquet cannot be appended to in place, and files that are only ever
added (atomically: temp file + rename) make the log append-only by construction. Each pull is a
complete snapshot of one review round's projects: the latest file of each (benchmark, review
round) is the round's current state, and its violation report holds the *standing* violations.
The full history (``current=False``) keeps every distinct decision state ever pulled — what the
approval rule reads (an objection stays final even if it was later edited or deleted in Label
Studio, ``annotation.approval``), what ``pull`` compares the projects with to detect deleted
decisions, and where the agreement audit finds the original, first-round judgments even if a
reviewer later changed theirs (StreamVibe App. B.3).

Why push records (``pushes/``): Label Studio lets any member rewrite a task's data, so what
reviewers were shown must be anchored outside it. ``push`` writes, per candidate version, the
exact task data it created, the sha256 of each review medium and the ids of the tasks; ``pull``
compares the projects against these records (``annotation.routing``), and ``status`` reads the
latest pushed version of each candidate from them.

Reviewer ids are pseudonymous (``r1``..``rN``, ``gemini:<model>``); writing refuses anything that
looks like an e-mail address.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from core.files import write_atomic
from schemas.review import DECISIONS, REVIEW_DECISION

_META_KEY = b"benchforge_pull"
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


def slug(s: str) -> str:
    """A name safe in file names (log files, the media store's round folders)."""
    return _SLUG.sub("-", s).strip("-")[:60] or "x"


def _check(rec: Mapping[str, Any]) -> None:
    REVIEW_DECISION.validate(dict(rec))
    if rec["decision"] not in DECISIONS:
        raise ValueError(f"decision {rec['decision']!r} not in {DECISIONS}")
    if rec["rater_kind"] not in ("human", "model"):
        raise ValueError(f"rater_kind {rec['rater_kind']!r} not human/model")
    for k in ("reviewer", "comment"):
        if "@" in str(rec[k]) and re.search(r"\S+@\S+\.\S+", str(rec[k])):
            raise ValueError(f"field {k!r} looks like it holds an e-mail address")


def to_table(decisions: Iterable[Mapping[str, Any]], meta: dict[str, Any] | None = None
             ) -> pa.Table:
    """Validated, deterministically ordered Arrow table in the REVIEW_DECISION schema."""
    rows = [dict(d) for d in decisions]
    for r in rows:
        _check(r)
    rows.sort(key=lambda r: (r["benchmark"], r["review_round"], r["sample_id"], r["version"],
                             r["reviewer"], r["source_annotation_id"]))
    schema = REVIEW_DECISION.arrow_schema()
    if meta is not None:
        schema = schema.with_metadata({**(schema.metadata or {}),
                                       _META_KEY: json.dumps(meta, sort_keys=True).encode()})
    return pa.Table.from_pylist(rows, schema=schema)


def append(log_dir: str | Path, decisions: Iterable[Mapping[str, Any]], *, benchmark: str,
           review_round: str, violations: Iterable[Mapping[str, Any]] = ()) -> Path:
    """Add one pull's snapshot (and its violation report, JSON lines) to the log."""
    log = Path(log_dir)
    (log / "decisions").mkdir(parents=True, exist_ok=True)
    (log / "violations").mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    stem = (f"{now:%Y%m%dT%H%M%S%fZ}-{slug(benchmark)}-{slug(review_round)}-"
            f"{secrets.token_hex(3)}")
    table = to_table(decisions, {"benchmark": benchmark, "review_round": review_round,
                                 "pulled_at": now.isoformat()})
    path = log / "decisions" / f"{stem}.parquet"
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    write_atomic(path, buf.getvalue().to_pybytes())
    write_atomic(log / "violations" / f"{stem}.jsonl",
                 "".join(json.dumps(dict(v), sort_keys=True) + "\n" for v in violations))
    return path


def append_push(log_dir: str | Path, records: Iterable[Mapping[str, Any]], *, benchmark: str,
                review_round: str) -> Path:
    """Add one push's records (JSON lines, one per candidate version) to the log."""
    log = Path(log_dir)
    (log / "pushes").mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    path = log / "pushes" / (f"{now:%Y%m%dT%H%M%S%fZ}-{slug(benchmark)}-{slug(review_round)}-"
                             f"{secrets.token_hex(3)}.jsonl")
    write_atomic(path, "".join(json.dumps(dict(r, pushed_at=now.isoformat()), sort_keys=True) + "\n"
                               for r in records))
    return path


def read_pushes(log_dir: str | Path, benchmark: str | None = None,
                review_round: str | None = None) -> list[dict[str, Any]]:
    """Every push record of the log, oldest first (optionally of one benchmark / round)."""
    d = Path(log_dir) / "pushes"
    out = []
    for f in sorted(d.glob("*.jsonl")) if d.is_dir() else []:
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                if (benchmark is None or rec["benchmark"] == benchmark) and (
                        review_round is None or rec["review_round"] == review_round):
                    out.append(rec)
    return out


def latest_pushed(log_dir: str | Path, benchmark: str | None = None) -> dict[str, int]:
    """sample id -> the newest version pushed (a pushed correction is pending until decided)."""
    out: dict[str, int] = {}
    for rec in read_pushes(log_dir, benchmark):
        out[rec["sample_id"]] = max(out.get(rec["sample_id"], 0), int(rec["version"]))
    return out


def _files(log_dir: str | Path) -> list[Path]:
    d = Path(log_dir) / "decisions"
    return sorted(d.glob("*.parquet")) if d.is_dir() else []


def _pull_meta(path: Path) -> tuple[str, str]:
    md = pq.read_schema(path).metadata or {}
    m = json.loads(md.get(_META_KEY, b"{}"))
    return str(m.get("benchmark", "")), str(m.get("review_round", ""))


def read(log_dir: str | Path, *, current: bool = True) -> list[dict[str, Any]]:
    """Decisions in the log, deduplicated on read.

    ``current=True``: the latest pull of every (benchmark, review round) — what the approval
    rule uses. ``current=False``: every distinct decision state ever pulled, oldest first (a
    decision that never changed appears once)."""
    files = _files(log_dir)
    if current:
        latest: dict[tuple[str, str], Path] = {}
        for f in files:  # names sort chronologically
            latest[_pull_meta(f)] = f
        files = sorted(latest.values())
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for f in files:
        for r in pq.read_table(f).to_pylist():
            key = json.dumps(r, sort_keys=True, default=str)
            if key not in seen:
                seen.add(key)
                rows.append(r)
    return rows


def read_violations(log_dir: str | Path, *, current: bool = True) -> list[dict[str, Any]]:
    """Violation reports, for the latest pull per round (or all of them)."""
    files = _files(log_dir)
    if current:
        latest: dict[tuple[str, str], Path] = {}
        for f in files:
            latest[_pull_meta(f)] = f
        files = sorted(latest.values())
    out: list[dict[str, Any]] = []
    for f in files:
        v = f.parent.parent / "violations" / (f.stem + ".jsonl")
        if v.exists():
            out.extend(json.loads(line) for line in v.read_text().splitlines() if line)
    return out


class DecisionLogError(ValueError):
    """A decision log that cannot be read; the message names the file and the row or line."""


def is_log(path: str | Path) -> bool:
    """A decision-log folder as ``pull`` writes it (rather than a file of decision rows)."""
    return (Path(path) / "decisions").is_dir()


def read_decisions(path: str | Path, benchmark: str) -> list[dict[str, Any]]:
    """The one reader of review decisions for a build (``--decisions``): a decision-log folder as
    ``pull`` writes it (every decision state ever pulled: the approval rule keeps each objection,
    ``annotation.approval``), a Parquet file or a folder of Parquet files, or a JSONL file of
    ``REVIEW_DECISION`` rows. Every row is checked like a pulled one (fields, decision values,
    rater kind, no e-mail addresses); rows of other benchmarks are left out."""
    p = Path(path)
    if not p.exists():
        raise DecisionLogError(f"{p} does not exist")
    if is_log(p):
        rows, where = read(p, current=False), []
    elif p.suffix == ".parquet" or p.is_dir():
        files = [p] if p.is_file() else sorted(p.rglob("*.parquet"))
        rows, where = [], []
        for f in files:
            part = pq.read_table(f).to_pylist()
            rows += part
            where += [f"{f.name}: row {n}" for n in range(1, len(part) + 1)]
    else:
        rows, where = [], []
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DecisionLogError(f"{p.name}: line {n}: invalid JSON ({exc.msg})") from None
            where.append(f"{p.name}: line {n}")
    for n, row in enumerate(rows):
        try:
            _check(row)
        except ValueError as exc:
            raise DecisionLogError(f"{where[n] if where else p.name}: {exc}") from None
    return [r for r in rows if r["benchmark"] == benchmark]


def read_standing_violations(path: str | Path, benchmark: str) -> list[dict[str, Any]] | None:
    """The violations the latest pull of each round reported, for a build's filtered reasons and
    manifest counts; None when ``path`` is a file of decision rows (it records no violations)."""
    if not is_log(path):
        return None
    return [v for v in read_violations(path) if v.get("benchmark") == benchmark]
