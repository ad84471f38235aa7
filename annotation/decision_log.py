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
compares the projects against these records (``annotation.pull``), and ``status`` reads the
latest pushed version of each candidate from them.

Why a chain (``chain.jsonl``): files that are only ever added do not stop anyone with write
access from editing one afterwards — flipping a reject to approve in a pull's Parquet, emptying
the latest violation report, adding a made-up pull. Every write of the log (a push, a pull, an
import) appends one chain record holding the sha256 of each file it wrote and the hash of the
record before it; the record's own hash (``head``) is the log's new head. Every reader verifies
the whole chain first (:func:`verify`) and refuses a broken log with one error naming the first
bad record, and a release records the head it was built from, so a log cut back to an earlier
head (the one edit a self-contained chain cannot show) no longer matches the release
(:func:`compare_head`).

Why events in the chain (``event`` and ``receiver`` records, ``annotation.webhooks``): Label
Studio keeps no history, so what happened between two pulls — a reject deleted and made again as
an approval, an annotation moved to another task — was invisible. The webhook receiver appends
each event Label Studio sends as one chain record the moment it arrives, and its own start,
attach and stop as ``receiver`` records, so a pull can reconcile every annotation with its events
and a hole in the capture is a gap in the log, never passed over. These records carry their facts
in the chain line itself (no file), and are appended without re-verifying the whole log
(:func:`append_record`): Label Studio waits for the receiver's answer.

Reviewer ids are pseudonymous (``r1``..``rN``, ``gemini:<model>``); writing refuses anything that
looks like an e-mail address.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import secrets
from collections.abc import Generator, Iterable, Iterator, Mapping
from contextlib import contextmanager, nullcontext, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from core.files import atomic_file, canonical_json, file_sha256, write_atomic
from schemas.review import DECISIONS, REVIEW_DECISION

_META_KEY = b"benchforge_pull"
CHAIN = "chain.jsonl"
GENESIS = "0" * 64  # the head of an empty log
# every folder a write of the log puts files in: each of their files must be in the chain
_CHAINED = ("pushes", "decisions", "violations", "imports")
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


class DecisionLogError(ValueError):
    """A decision log that cannot be read; the message names the file and the row or line."""


class BrokenChain(DecisionLogError):
    """A decision log whose files no longer match its chain (edited, deleted, added, reordered);
    the message names the first bad chain record or the unrecorded file."""


def _record_hash(rec: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json({k: v for k, v in rec.items() if k != "head"})
                          .encode("utf-8")).hexdigest()


def _describe(n: int, rec: Mapping[str, Any]) -> str:
    what = str(rec.get("kind", "?"))
    if rec.get("action") or rec.get("state"):  # an event (its action) or a receiver record (its state)
        what += f" {rec.get('action') or rec.get('state')}"
    where = "/".join(str(rec[k]) for k in ("benchmark", "review_round") if rec.get(k))
    return f"chain record {n} ({what}{' of ' + where if where else ''}, written {rec.get('at', '?')})"


def chain(log_dir: str | Path) -> list[dict[str, Any]]:
    """The chain records of a verified log, oldest first (verifies it: :func:`verify`)."""
    return list(iter_chain(log_dir))


def iter_chain(log_dir: str | Path) -> Iterator[dict[str, Any]]:
    """The chain records of the log, oldest first, each verified before it is yielded, and the
    log's files checked against the chain once the last is read (:func:`verify`). Why a stream:
    the webhook's events are one record each, so a round of 16,400 decisions is a chain of more
    than 16,400 records, and a reader that needs only some of each (pull) need not hold them
    all. :class:`BrokenChain` comes at the first bad record: consume the whole stream before
    acting on what it gave."""
    yield from _walk(Path(log_dir))


def verify(log_dir: str | Path) -> str:
    """The head hash of the log after checking that every record links to the one before, that
    every file a record names exists with the recorded sha256, and that no file of the log is
    missing from the chain. Raises :class:`BrokenChain` naming the first bad record (or the
    unrecorded file). A log folder with no files at all has the head ``GENESIS``."""
    return _verify(Path(log_dir))[0]


def _verify(log: Path) -> tuple[str, int]:
    """The head and the record count of a verified log (its records are not kept)."""
    walk = _walk(log)
    while True:
        try:
            next(walk)
        except StopIteration as done:
            return done.value


def _walk(log: Path) -> Generator[dict[str, Any], None, tuple[str, int]]:
    """Yield each record once it is verified; finally check the files nobody recorded and
    return the head and the record count. Reads the chain a line at a time."""
    head, n, named = GENESIS, 0, set()
    cpath = log / CHAIN
    with open(cpath, encoding="utf-8") if cpath.is_file() else nullcontext(()) as lines:
        for n, line in enumerate(lines, start=1):
            try:
                rec = json.loads(line)
                if not isinstance(rec, dict):
                    raise ValueError("not an object")
            except ValueError as exc:
                raise BrokenChain(f"{log}: {CHAIN} line {n} is not a chain record ({exc})") from None
            label = _describe(n, rec)
            if rec.get("seq") != n or rec.get("prev") != head:
                raise BrokenChain(f"{log}: {label} does not follow record {n - 1} (records removed, "
                                  "inserted or reordered)")
            if rec.get("head") != _record_hash(rec):
                raise BrokenChain(f"{log}: {label} was edited after it was written (its hash does "
                                  "not match)")
            for rel, sha in sorted(dict(rec.get("files") or {}).items()):
                f = log / rel
                if not f.is_file():
                    raise BrokenChain(f"{log}: {label}: its file {rel} is missing (deleted or "
                                      "renamed)")
                if file_sha256(f) != sha:
                    raise BrokenChain(f"{log}: {label}: its file {rel} was changed after it was "
                                      f"written (sha256 {sha[:12]} recorded, {file_sha256(f)[:12]} "
                                      "now)")
                named.add(rel)
            head = rec["head"]
            yield rec
    for folder in _CHAINED:
        d = log / folder
        for f in sorted(d.iterdir()) if d.is_dir() else []:
            rel = f"{folder}/{f.name}"
            if rel not in named and not f.name.startswith("."):
                if not n:
                    raise BrokenChain(f"{log}: {rel} is not in the chain: the log has no {CHAIN} "
                                      "(written before logs were chained, or the chain was "
                                      "deleted); `review verify --adopt` chains it as it is now")
                raise BrokenChain(f"{log}: {rel} is not in the chain (added after the fact; "
                                  f"{n} chain records, head {head[:12]})")
    return head, n


@contextmanager
def _locked(log: Path) -> Iterator[None]:
    """One writer at a time: a record's ``prev`` must be the head it was written after."""
    log.mkdir(parents=True, exist_ok=True)
    with open(log / ".chain.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _chain_append(log: Path, head: str, n: int, kind: str, files: Iterable[Path],
                  **facts: Any) -> dict[str, Any]:
    """Append the chain record of one write: called under :func:`_locked`, with the ``head`` and
    record count that :func:`_verify` found before ``files`` were written."""
    rec: dict[str, Any] = {"seq": n + 1, "kind": kind, "prev": head,
                           "at": datetime.now(UTC).isoformat(), **facts,
                           "files": {f"{f.parent.name}/{f.name}": file_sha256(f) for f in files}}
    rec["head"] = _record_hash(rec)
    with open(log / CHAIN, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    return rec


def _tail(log: Path) -> tuple[str, int]:
    """The head and record count after the last chain record, read from the end of the file
    (the receiver must answer Label Studio at once, whatever the size of the log). A last line
    that is not a record raises :class:`BrokenChain`."""
    cpath = log / CHAIN
    size = cpath.stat().st_size if cpath.is_file() else 0
    if size == 0:
        return GENESIS, 0
    with open(cpath, "rb") as fh:
        block, data = 4096, b""
        while True:
            start = max(0, size - block)
            fh.seek(start)
            data = fh.read(size - start)
            lines = data.rstrip(b"\n").split(b"\n")
            if len(lines) > 1 or start == 0:
                break
            block *= 4
    try:
        rec = json.loads(lines[-1])
        return str(rec["head"]), int(rec["seq"])
    except (ValueError, KeyError, TypeError):
        raise BrokenChain(f"{log}: the last line of {CHAIN} is not a chain record") from None


def append_record(log_dir: str | Path, kind: str, **facts: Any) -> dict[str, Any]:
    """Append one record without files (a webhook ``event``, a ``receiver`` start/attach/stop)
    after the log's last record, under the writers' lock, without verifying the whole log first:
    every reader verifies it, and this one is on Label Studio's request path. Returns it."""
    log = Path(log_dir)
    with _locked(log):
        head, n = _tail(log)
        return _chain_append(log, head, n, kind, [], **facts)


class HeadMismatch(DecisionLogError):
    """The log no longer holds the head a release was built from: rewritten or cut back."""


def compare_head(log_dir: str | Path, head: str, records: int | None = None) -> dict[str, Any]:
    """Check that the log (verified first) still holds a release's recorded head as a prefix:
    its record ``records`` (or, for a manifest that recorded no count, any record) has hash
    ``head``. Returns ``{"seq": n, "added": records written since}``; raises
    :class:`HeadMismatch` naming the record where the two part: the first missing one when the
    log was cut back, else the release's last record, rewritten (a chain only proves its own
    records: no earlier hash of the release is known to narrow it down)."""
    log = Path(log_dir)
    recs = chain(log)
    if head == GENESIS and not records:
        return {"seq": 0, "added": len(recs)}
    if records:
        if len(recs) < records:
            raise HeadMismatch(
                f"{log}: the release was built from {records} chain records (head {head[:12]}) but "
                f"the log has {len(recs)}: it was cut back; they diverge at chain record "
                f"{len(recs) + 1} (missing)")
        rec = recs[records - 1]
        if rec["head"] != head:
            raise HeadMismatch(
                f"{log}: {_describe(records, rec)} has head {rec['head'][:12]}, the release "
                f"recorded {head[:12]}: the log was rewritten; they diverge at or before chain "
                f"record {records}")
        return {"seq": records, "added": len(recs) - records}
    for rec in recs:
        if rec["head"] == head:
            return {"seq": rec["seq"], "added": len(recs) - rec["seq"]}
    raise HeadMismatch(f"{log}: no chain record of the log has the release's head {head[:12]} "
                       f"({len(recs)} records, head {recs[-1]['head'][:12] if recs else GENESIS[:12]}"
                       "): the log was rewritten or cut back (the release recorded no record count "
                       "to say where)")


def release_head(release_dir: str | Path) -> tuple[str, int | None]:
    """The decision-log head (and record count, when recorded) in a release's manifest."""
    m = Path(release_dir) / "manifest.json"
    if not m.is_file():
        raise DecisionLogError(f"{release_dir}: no manifest.json (not a release folder)")
    src = (json.loads(m.read_text(encoding="utf-8")).get("review") or {}).get("decisions_source")
    if not src or not src.get("log_head"):
        raise DecisionLogError(f"{m}: records no decision-log head (built without --decisions, or "
                               "from a file of rows)")
    n = src.get("log_records")
    return str(src["log_head"]), int(n) if n is not None else None


def to_table(decisions: Iterable[Mapping[str, Any]], meta: dict[str, Any] | None = None
             ) -> pa.Table:
    """Validated, deterministically ordered Arrow table in the REVIEW_DECISION schema."""
    rows = [dict(d) for d in decisions]
    for r in rows:
        _check(r)
    rows.sort(key=_order)
    schema = REVIEW_DECISION.arrow_schema()
    if meta is not None:
        schema = schema.with_metadata({**(schema.metadata or {}),
                                       _META_KEY: json.dumps(meta, sort_keys=True).encode()})
    return pa.Table.from_pylist(rows, schema=schema)


def _stem(now: datetime, benchmark: str, review_round: str) -> str:
    return f"{now:%Y%m%dT%H%M%S%fZ}-{slug(benchmark)}-{slug(review_round)}-{secrets.token_hex(3)}"


def _order(r: Mapping[str, Any]) -> tuple[Any, ...]:
    """The order of a snapshot's rows (:func:`to_table`)."""
    return (r["benchmark"], r["review_round"], r["sample_id"], r["version"], r["reviewer"],
            r["source_annotation_id"])


def _write_snapshot(log: Path, stem: str, decisions: Iterable[Mapping[str, Any]],
                    violations: Iterable[Mapping[str, Any]], meta: dict[str, Any], *,
                    in_order: bool = False) -> list[Path]:
    """One decisions Parquet and its violation report (JSON lines); the two paths. ``in_order``:
    the decisions come already in the snapshot's order (:func:`_order`), and are written a batch
    at a time (a pull's round is never held whole); a row out of order is refused."""
    (log / "decisions").mkdir(parents=True, exist_ok=True)
    (log / "violations").mkdir(parents=True, exist_ok=True)
    path = log / "decisions" / f"{stem}.parquet"
    if in_order:
        _write_ordered(path, decisions, meta)
    else:
        buf = pa.BufferOutputStream()
        pq.write_table(to_table(decisions, meta), buf)
        write_atomic(path, buf.getvalue().to_pybytes())
    vpath = log / "violations" / f"{stem}.jsonl"
    with atomic_file(vpath) as fh:
        for v in violations:
            fh.write((json.dumps(dict(v), sort_keys=True) + "\n").encode())
    return [path, vpath]


ROWS_PER_BATCH = 2048  # rows a streamed snapshot holds at once (one row group each; ≈ 5 MB)


def _write_ordered(path: Path, decisions: Iterable[Mapping[str, Any]], meta: dict[str, Any]) -> None:
    schema = REVIEW_DECISION.arrow_schema()
    schema = schema.with_metadata({**(schema.metadata or {}),
                                   _META_KEY: json.dumps(meta, sort_keys=True).encode()})
    last: tuple[Any, ...] | None = None
    with atomic_file(path) as fh, pq.ParquetWriter(fh, schema) as writer:
        batch: list[dict[str, Any]] = []
        for d in decisions:
            row = dict(d)
            _check(row)
            key = _order(row)
            if last is not None and key < last:
                raise ValueError(f"snapshot rows out of order: {key} after {last}")
            last = key
            batch.append(row)
            if len(batch) == ROWS_PER_BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                batch = []
        if batch or last is None:  # an empty pull is an empty table, as to_table writes it
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))


def append(log_dir: str | Path, decisions: Iterable[Mapping[str, Any]], *, benchmark: str,
           review_round: str, violations: Iterable[Mapping[str, Any]] = (),
           in_order: bool = False) -> Path:
    """Add one pull's snapshot (and its violation report, JSON lines) to the log, chained; a log
    whose chain is broken is refused before anything is written (:class:`BrokenChain`).
    ``in_order``: the decisions are streamed in the snapshot's order and never held whole."""
    log = Path(log_dir)
    rows = decisions if in_order else [dict(d) for d in decisions]
    viol = violations if in_order else [dict(v) for v in violations]
    with _locked(log):
        head, n = _verify(log)
        now = datetime.now(UTC)
        files = _write_snapshot(log, _stem(now, benchmark, review_round), rows, viol,
                                {"benchmark": benchmark, "review_round": review_round,
                                 "pulled_at": now.isoformat()}, in_order=in_order)
        _chain_append(log, head, n, "pull", files, benchmark=benchmark,
                      review_round=review_round)
    return files[0]


def append_push(log_dir: str | Path, records: Iterable[Mapping[str, Any]], *, benchmark: str,
                review_round: str) -> Path:
    """Add one push's records (JSON lines, one per candidate version) to the log, chained.

    ``records`` are written as they come, one at a time (under the writers' lock, once the log
    is verified), never held whole: a round's records carry every task's data. If the iteration
    raises, neither the file nor a chain record is left."""
    log = Path(log_dir)
    with _locked(log):
        head, n = _verify(log)
        (log / "pushes").mkdir(parents=True, exist_ok=True)
        now = datetime.now(UTC)
        path = log / "pushes" / f"{_stem(now, benchmark, review_round)}.jsonl"
        try:
            with atomic_file(path) as fh:
                for r in records:
                    fh.write((json.dumps(dict(r, pushed_at=now.isoformat()), sort_keys=True)
                              + "\n").encode("utf-8"))
        except BaseException:
            with suppress(OSError):  # only when empty: a failed first push leaves no folder
                path.parent.rmdir()
            raise
        _chain_append(log, head, n, "push", [path], benchmark=benchmark,
                      review_round=review_round)
    return path


def import_rows(log_dir: str | Path, source: str | Path) -> dict[str, Any]:
    """Import a file of ``REVIEW_DECISION`` rows (JSONL or Parquet) into the log — the one way
    decisions not pulled from Label Studio enter it, so the chain and the release card say where
    they came from. The file is copied into ``imports/`` and its rows written as one snapshot per
    (benchmark, review round), all under one chain record holding the file's name and sha256.
    Imported snapshots never stand in for a pull's violation report (:func:`read_violations`).
    Returns the chain record."""
    src = Path(source)
    if is_log(src):
        raise DecisionLogError(f"{src} is a decision log, not a file of decision rows")
    rows = _read_rows(src)
    log = Path(log_dir)
    sha = file_sha256(src)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((str(r["benchmark"]), str(r["review_round"])), []).append(r)
    with _locked(log):
        head, n = _verify(log)
        now = datetime.now(UTC)
        (log / "imports").mkdir(parents=True, exist_ok=True)
        copy = log / "imports" / f"{now:%Y%m%dT%H%M%S%fZ}-{sha[:12]}-{slug(src.name)}"
        write_atomic(copy, src.read_bytes())
        files = [copy]
        for (bench, rnd), part in sorted(groups.items()):
            files += _write_snapshot(log, _stem(now, bench, rnd), part, [], {
                "benchmark": bench, "review_round": rnd, "pulled_at": now.isoformat(),
                "imported_from": src.name, "source_sha256": sha})
        return _chain_append(log, head, n, "import", files,
                             source={"file": src.name, "sha256": sha, "rows": len(rows)})


def read_pushes(log_dir: str | Path, benchmark: str | None = None,
                review_round: str | None = None) -> list[dict[str, Any]]:
    """Every push record of the log, oldest first (optionally of one benchmark / round)."""
    return list(iter_pushes(log_dir, benchmark, review_round))


def iter_pushes(log_dir: str | Path, benchmark: str | None = None,
                review_round: str | None = None) -> Iterator[dict[str, Any]]:
    """:func:`read_pushes` one record at a time (the chain verified before the first)."""
    verify(log_dir)
    d = Path(log_dir) / "pushes"
    for f in sorted(d.glob("*.jsonl")) if d.is_dir() else []:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    rec = json.loads(line)
                    if (benchmark is None or rec["benchmark"] == benchmark) and (
                            review_round is None or rec["review_round"] == review_round):
                        yield rec


def latest_pushed(log_dir: str | Path, benchmark: str | None = None) -> dict[str, int]:
    """sample id -> the newest version pushed (a pushed correction is pending until decided)."""
    out: dict[str, int] = {}
    for rec in read_pushes(log_dir, benchmark):
        out[rec["sample_id"]] = max(out.get(rec["sample_id"], 0), int(rec["version"]))
    return out


def _files(log_dir: str | Path) -> list[Path]:
    d = Path(log_dir) / "decisions"
    return sorted(d.glob("*.parquet")) if d.is_dir() else []


def _meta(path: Path) -> dict[str, Any]:
    md = pq.read_schema(path).metadata or {}
    return dict(json.loads(md.get(_META_KEY, b"{}")))


def _latest_pulls(files: list[Path]) -> list[Path]:
    """The latest pull of every (benchmark, review round) plus every imported snapshot: an
    import is added decisions, never the round's current state (it has no violation report)."""
    latest: dict[tuple[str, str], Path] = {}
    imported = []
    for f in files:  # names sort chronologically
        m = _meta(f)
        if m.get("imported_from") is not None:
            imported.append(f)
        else:
            latest[(str(m.get("benchmark", "")), str(m.get("review_round", "")))] = f
    return sorted([*latest.values(), *imported])


def read(log_dir: str | Path, *, current: bool = True, imported: bool = True
         ) -> list[dict[str, Any]]:
    """Decisions in the log, deduplicated on read.

    ``current=True``: the latest pull of every (benchmark, review round) — what the approval
    rule uses. ``current=False``: every distinct decision state ever pulled, oldest first (a
    decision that never changed appears once). The chain is verified first. ``imported=False``
    leaves imported rows out: ``pull`` compares Label Studio only with what it pulled (an imported
    row's annotation id names no annotation of this server)."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for r in iter_rows(log_dir, current=current, imported=imported):
        key = row_key(r)
        if key not in seen:
            seen.add(key)
            rows.append(r)
    return rows


def row_key(row: Mapping[str, Any]) -> str:
    """What makes two decision rows the same state (:func:`read` keeps one of each)."""
    return json.dumps(row, sort_keys=True, default=str)


def iter_rows(log_dir: str | Path, *, current: bool = True, imported: bool = True
              ) -> Iterator[dict[str, Any]]:
    """The rows :func:`read` reads, a batch at a time and *not* deduplicated (a reader that keeps
    them elsewhere deduplicates there, by :func:`row_key`); the chain is verified first."""
    verify(log_dir)
    files = _files(log_dir)
    if current:
        files = _latest_pulls(files)
    if not imported:
        files = [f for f in files if _meta(f).get("imported_from") is None]
    for f in files:
        for batch in pq.ParquetFile(f).iter_batches(batch_size=ROWS_PER_BATCH):
            yield from batch.to_pylist()


def read_violations(log_dir: str | Path, *, current: bool = True) -> list[dict[str, Any]]:
    """Violation reports, for the latest pull per round (or all of them); chain verified."""
    verify(log_dir)
    files = _files(log_dir)
    if current:
        files = _latest_pulls(files)
    out: list[dict[str, Any]] = []
    for f in files:
        v = f.parent.parent / "violations" / (f.stem + ".jsonl")
        if v.exists():
            out.extend(json.loads(line) for line in v.read_text().splitlines() if line)
    return out


def is_log(path: str | Path) -> bool:
    """A decision-log folder as ``pull`` writes it (rather than a file of decision rows)."""
    p = Path(path)
    return p.is_dir() and ((p / CHAIN).is_file() or any((p / d).is_dir() for d in _CHAINED))


def adopt(log_dir: str | Path) -> dict[str, Any]:
    """Chain a log written before logs were chained, as it is now: one ``adopt`` record naming
    every file. Nothing proves those files were not edited before; the record (and a release's
    card, :func:`provenance_lines`) says so. Refused when the log already has a chain."""
    log = Path(log_dir)
    with _locked(log):
        if (log / CHAIN).is_file():
            raise DecisionLogError(f"{log} already has a chain; nothing to adopt")
        files = [f for d in _CHAINED if (log / d).is_dir() for f in sorted((log / d).iterdir())
                 if not f.name.startswith(".")]
        if not files:
            raise DecisionLogError(f"{log} holds no log files to adopt")
        return _chain_append(log, GENESIS, 0, "adopt", files)


def _read_rows(p: Path) -> list[dict[str, Any]]:
    """The checked rows of one file of ``REVIEW_DECISION`` rows (Parquet, else JSON lines); an
    error names the file and the row or line."""
    if not p.is_file():
        raise DecisionLogError(f"{p} does not exist" if not p.exists() else
                               f"{p} is a folder but not a decision log (no {CHAIN}, no decisions/)")
    rows: list[dict[str, Any]] = []
    where: list[str] = []
    if p.suffix == ".parquet":
        rows = pq.read_table(p).to_pylist()
        where = [f"{p.name}: row {n}" for n in range(1, len(rows) + 1)]
    else:
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
            raise DecisionLogError(f"{where[n]}: {exc}") from None
    return rows


def read_decisions(path: str | Path, benchmark: str) -> list[dict[str, Any]]:
    """The one reader of review decisions for a build (``--decisions``): a decision-log folder as
    ``pull`` writes it, its chain verified (every decision state ever pulled: the approval rule
    keeps each objection, ``annotation.approval``), or — recorded as an import by the build, see
    :func:`provenance` — one JSONL or Parquet file of ``REVIEW_DECISION`` rows. Every row is
    checked like a pulled one (fields, decision values, rater kind, no e-mail addresses); rows of
    other benchmarks are left out."""
    p = Path(path)
    if not p.exists():
        raise DecisionLogError(f"{p} does not exist")
    rows = read(p, current=False) if is_log(p) else _read_rows(p)
    for n, row in enumerate(rows, start=1):
        try:
            _check(row)
        except ValueError as exc:
            raise DecisionLogError(f"{p.name}: row {n}: {exc}") from None
    return [r for r in rows if r["benchmark"] == benchmark]


def provenance(path: str | Path) -> dict[str, Any]:
    """Where a build's decisions came from, for the release manifest's ``review`` entry and its
    card: a log's verified head hash and the files imported into it, or — a file of rows given
    to ``--decisions`` directly — that file's name and sha256 (an import without a log)."""
    p = Path(path)
    if not p.exists():
        raise DecisionLogError(f"{p} does not exist")
    if is_log(p):
        recs = chain(p)
        out = {"log_head": recs[-1]["head"] if recs else GENESIS, "log_records": len(recs),
               "imports": [r["source"] for r in recs if r["kind"] == "import"]}
        if recs and recs[0]["kind"] == "adopt":
            out["adopted_unchained"] = recs[0]["at"]
        return out
    return {"imports": [{"file": p.name, "sha256": file_sha256(p)}], "log_head": None}


def provenance_lines(prov: Mapping[str, Any]) -> list[str]:
    """The card's lines for :func:`provenance`."""
    out = []
    if prov.get("log_head"):
        out.append(f"Review decisions from a verified decision log, head sha256 {prov['log_head']}.")
    else:
        out.append("Review decisions from a file of rows, not from a decision log: no pull "
                   "checked them against Label Studio.")
    if prov.get("adopted_unchained"):
        out.append(f"The log was written before logs were chained; its files as of "
                   f"{prov['adopted_unchained']} were adopted into the chain unverified.")
    out += [f"Decisions imported from {i['file']} sha256 {i['sha256']}." for i in prov["imports"]]
    return out


def read_standing_violations(path: str | Path, benchmark: str) -> list[dict[str, Any]] | None:
    """The violations the latest pull of each round reported, for a build's filtered reasons and
    manifest counts; None when ``path`` is a file of decision rows (it records no violations)."""
    if not is_log(path):
        return None
    return [v for v in read_violations(path) if v.get("benchmark") == benchmark]
