"""What a pull looks things up in, kept on disk (a temporary SQLite file), not in memory.

Why: a pull checks every task against the push record that created it, every annotation
against the decisions pulled before and against the webhook's events, and collects the valid
decisions and the violations of the whole round before it writes them. Held in dicts and lists
these grew with the round (about 23 KB per candidate, docs/scaling.md), so the review of a
paper-sized benchmark (4,100 candidates, 16,400 tasks) held ~100 MB for a pull. Here each is a
table, filled as the log and the export stream by, read back one row at a time; the process
holds SQLite's page cache (capped by :data:`CACHE_KIB`) and the current task.

SQLite is the standard library's; the file lives in a temporary folder removed when the pull
ends (also on error). Rows go in and come out as canonical JSON, so what a pull reads back is
what it put in.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from annotation import decision_log
from annotation.projects import project_pages
from annotation.webhooks import AnnotationEvents, event_updates
from core.files import canonical_json

CACHE_KIB = 8192  # SQLite's page cache, per connection
_TABLES = """
CREATE TABLE push (n INTEGER PRIMARY KEY, sample_id TEXT, version INTEGER, pushed_at TEXT,
                   reviewers TEXT, record TEXT);
CREATE TABLE task (tid INTEGER PRIMARY KEY, reviewer TEXT, push INTEGER);
CREATE TABLE event (aid INTEGER, n INTEGER, action TEXT, at TEXT, state TEXT);
CREATE INDEX event_aid ON event (aid, n);
CREATE TABLE pulled_first (aid INTEGER PRIMARY KEY, tid INTEGER, decision TEXT);
CREATE TABLE history (row TEXT PRIMARY KEY, aid INTEGER, decision TEXT);  -- row: row_key
CREATE INDEX history_aid ON history (aid);
CREATE TABLE present_task (tid INTEGER PRIMARY KEY);
CREATE TABLE present_annotation (aid INTEGER PRIMARY KEY);
CREATE TABLE valid (sample_id TEXT, version INTEGER, reviewer TEXT, aid INTEGER, row TEXT);
CREATE INDEX valid_key ON valid (sample_id, version, reviewer);
CREATE TABLE violation (n INTEGER PRIMARY KEY, key TEXT UNIQUE, kind TEXT, sample_id TEXT,
                        version INTEGER, task_id INTEGER, annotation_id INTEGER, reviewer TEXT,
                        row TEXT);
"""


class PullIndex:
    """The tables of one pull. A context manager: the file is removed on exit."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="benchforge-pull-")
        self.db = sqlite3.connect(Path(self._dir.name) / "pull.sqlite")
        for pragma in ("journal_mode=OFF", "synchronous=OFF", f"cache_size=-{CACHE_KIB}",
                       "temp_store=FILE"):
            self.db.execute(f"PRAGMA {pragma}")
        self.db.executescript(_TABLES)
        self._events = 0
        self.last_push: dict[str, Any] | None = None

    def __enter__(self) -> PullIndex:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.db.close()
        self._dir.cleanup()

    # -- push records --------------------------------------------------------------------------
    def add_pushes(self, records: Iterable[dict[str, Any]]) -> dict[int, dict[str, str]]:
        """Keep the push records, oldest first; each task's is the record that created it. Returns
        project id -> its page as the push that created it recorded it (one per project)."""
        pages: dict[int, dict[str, str]] = {}
        for n, rec in enumerate(records):
            self.db.execute("INSERT INTO push VALUES (?, ?, ?, ?, ?, ?)", (
                n, str(rec["sample_id"]), int(rec["version"]), rec.get("pushed_at"),
                canonical_json(sorted(rec["projects"])), canonical_json(rec)))
            self.db.executemany("INSERT OR IGNORE INTO task VALUES (?, ?, ?)",
                                [(int(tid), rv, n) for rv, tid in rec["tasks"].items()])
            for pid, page in project_pages([rec]).items():
                pages.setdefault(pid, page)
            self.last_push = rec
        return pages

    def task(self, tid: int) -> tuple[str, dict[str, Any]] | None:
        """(reviewer, the push record that created task ``tid``), or None: no push made it."""
        row = self.db.execute("SELECT task.reviewer, push.record FROM task JOIN push "
                              "ON push.n = task.push WHERE tid = ?", (tid,)).fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    def tasks(self) -> Iterator[tuple[int, str, dict[str, Any]]]:
        """(task id, reviewer, record) of every pushed task, by task id."""
        for tid, rv, rec in self.db.execute("SELECT tid, task.reviewer, push.record FROM task "
                                            "JOIN push ON push.n = task.push ORDER BY tid"):
            yield tid, rv, json.loads(rec)

    def versions(self) -> Iterator[tuple[str, int, str | None, list[str]]]:
        """(sample id, version, pushed at, reviewers) of every push record, oldest first."""
        for sid, ver, at, rvs in self.db.execute(
                "SELECT sample_id, version, pushed_at, reviewers FROM push ORDER BY n"):
            yield sid, ver, at, json.loads(rvs)

    # -- webhook events ------------------------------------------------------------------------
    def add_event_record(self, r: dict[str, Any]) -> None:
        """Keep what one chain record says of annotations (``webhooks.event_updates``)."""
        for aid, action, at, state in event_updates(r):
            self._events += 1
            self.db.execute("INSERT INTO event VALUES (?, ?, ?, ?, ?)", (
                aid, self._events, action, at, None if state is None else canonical_json(state)))

    def events(self, aid: int) -> AnnotationEvents | None:
        """What the receiver saw of annotation ``aid`` (None: nothing)."""
        return _replay(self.db.execute("SELECT action, at, state FROM event WHERE aid = ? "
                                       "ORDER BY n", (aid,)))

    def event_annotations(self) -> Iterator[tuple[int, AnnotationEvents]]:
        """(annotation id, its events) of every annotation the receiver saw, by id."""
        aids = self.db.execute("SELECT DISTINCT aid FROM event ORDER BY aid").fetchall()
        for (aid,) in aids:  # ids only: one annotation's events at a time
            ev = self.events(aid)
            if ev is not None:
                yield aid, ev

    # -- decisions pulled before ---------------------------------------------------------------
    def add_logged(self, rows: Iterable[dict[str, Any]], benchmark: str, review_round: str) -> None:
        """Keep every human decision state pulled before: each annotation's first (task, decision)
        over the whole log, and this round's distinct states."""
        for d in rows:
            if d["rater_kind"] != "human":
                continue
            aid = int(d["source_annotation_id"])
            self.db.execute("INSERT OR IGNORE INTO pulled_first VALUES (?, ?, ?)",
                            (aid, int(d["source_task_id"]), str(d["decision"])))
            if d["benchmark"] == benchmark and d["review_round"] == review_round:
                self.db.execute("INSERT OR IGNORE INTO history VALUES (?, ?, ?)",
                                (decision_log.row_key(d), aid, str(d["decision"])))

    def first_pulled(self, aid: int) -> tuple[int, str] | None:
        """(task, decision) of annotation ``aid``'s first pulled state."""
        row = self.db.execute("SELECT tid, decision FROM pulled_first WHERE aid = ?", (aid,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def approved_before(self, aid: int) -> bool:
        """Whether a pull of this round logged annotation ``aid`` as an approval."""
        return self.db.execute("SELECT 1 FROM history WHERE aid = ? AND decision = 'approve'",
                               (aid,)).fetchone() is not None

    def pulled(self, aid: int) -> bool:
        return self.db.execute("SELECT 1 FROM history WHERE aid = ?", (aid,)).fetchone() is not None

    def history(self) -> Iterator[dict[str, Any]]:
        """This round's pulled decision states, in the order they were first read."""
        for (row,) in self.db.execute("SELECT row FROM history ORDER BY rowid"):
            yield json.loads(row)

    # -- what the export holds -----------------------------------------------------------------
    def saw(self, tid: int, annotation_ids: Iterable[int]) -> None:
        self.db.execute("INSERT OR IGNORE INTO present_task VALUES (?)", (tid,))
        self.db.executemany("INSERT OR IGNORE INTO present_annotation VALUES (?)",
                            [(a,) for a in annotation_ids])

    def task_present(self, tid: int) -> bool:
        return self.db.execute("SELECT 1 FROM present_task WHERE tid = ?", (tid,)).fetchone() is not None

    def annotation_present(self, aid: int) -> bool:
        return self.db.execute("SELECT 1 FROM present_annotation WHERE aid = ?",
                               (aid,)).fetchone() is not None

    # -- what the pull found -------------------------------------------------------------------
    def add_valid(self, d: dict[str, Any]) -> None:
        self.db.execute("INSERT INTO valid VALUES (?, ?, ?, ?, ?)", (
            d["sample_id"], d["version"], d["reviewer"], d["source_annotation_id"], canonical_json(d)))

    def duplicates(self) -> Iterator[tuple[tuple[str, int, str], list[dict[str, Any]]]]:
        """((sample, version, reviewer), its valid decisions) of every key with more than one."""
        keys = self.db.execute("SELECT sample_id, version, reviewer FROM valid GROUP BY "
                               "sample_id, version, reviewer HAVING COUNT(*) > 1 ORDER BY "
                               "sample_id, version, reviewer").fetchall()
        for sid, ver, rv in keys:
            rows = self.db.execute("SELECT row FROM valid WHERE sample_id = ? AND version = ? AND "
                                   "reviewer = ? ORDER BY rowid", (sid, ver, rv))
            yield (sid, ver, rv), [json.loads(r) for (r,) in rows]

    def single_decisions(self) -> Iterator[dict[str, Any]]:
        """One decision per (sample, version, reviewer) with no duplicate, in the snapshot's
        order (``decision_log``: sample, version, reviewer, annotation)."""
        for (row,) in self.db.execute(
                "SELECT MIN(row) FROM valid GROUP BY sample_id, version, reviewer "
                "HAVING COUNT(*) = 1 ORDER BY sample_id, version, reviewer"):
            yield json.loads(row)

    def decided(self, sid: str, ver: int, reviewer: str) -> bool:
        """Whether ``reviewer``'s single decision on the version counts."""
        row = self.db.execute("SELECT COUNT(*) FROM valid WHERE sample_id = ? AND version = ? AND "
                              "reviewer = ?", (sid, ver, reviewer)).fetchone()
        return row[0] == 1

    def add_violation(self, v: dict[str, Any]) -> None:
        """Keep ``v`` once (the same violation found twice is one)."""
        self.db.execute("INSERT OR IGNORE INTO violation (key, kind, sample_id, version, task_id, "
                        "annotation_id, reviewer, row) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (
                            canonical_json(v), v["kind"], v["sample_id"], v["version"],
                            v["task_id"], v["annotation_id"], v["reviewer"], json.dumps(v)))

    def violations(self) -> Iterator[dict[str, Any]]:
        """Every violation once, by kind, sample, version, task, annotation and reviewer."""
        for (row,) in self.db.execute(
                "SELECT row FROM violation ORDER BY kind, sample_id, version, task_id, "
                "annotation_id, reviewer, n"):
            yield json.loads(row)


def _replay(rows: Iterable[tuple[str, str, str | None]]) -> AnnotationEvents | None:
    ev: AnnotationEvents | None = None
    for action, at, state in rows:
        ev = ev or AnnotationEvents([])
        ev.add(action, at, None if state is None else json.loads(state))
    return ev
