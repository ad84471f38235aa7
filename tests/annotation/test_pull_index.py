"""What a pull keeps on disk (``annotation/pull_index.py``) answers as the dicts and lists it
replaced did, and the snapshot a pull streams into the decision log is the one it would have
written whole."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from annotation import decision_log, webhooks
from annotation.projects import first_records, project_pages
from annotation.pull_index import PullIndex


def _push(sid: str, ver: int, tids: dict[str, int], pids: dict[str, int]) -> dict[str, Any]:
    return {"sample_id": sid, "version": ver, "pushed_at": f"2026-12-06T10:0{ver}:00+00:00",
            "tasks": {rv: tid for rv, tid in tids.items()}, "projects": pids,
            "pages": {rv: {"label_config_sha256": f"l{pid}", "instructions_sha256": f"i{pid}"}
                      for rv, pid in pids.items()},
            "data": {"sample_id": sid, "version": ver}, "media": [], "media_root": f"/m/{sid}"}


def _decision(sid: str, ver: int, rv: str, aid: int, tid: int, decision: str = "approve",
              benchmark: str = "b", review_round: str = "r1") -> dict[str, Any]:
    return {"benchmark": benchmark, "review_round": review_round, "sample_id": sid, "version": ver,
            "content_hash": "c" * 64, "task_type": "T", "reviewer": rv, "rater_kind": "human",
            "decision": decision, "criteria": [], "comment": "", "lead_time": 1.5,
            "created_at": "2026-12-06T10:00:00Z", "source_task_id": tid, "source_annotation_id": aid}


PIDS = {"r1": 11, "r2": 12}
PUSHES = [_push("s1", 1, {"r1": 1, "r2": 2}, PIDS), _push("s2", 1, {"r1": 3, "r2": 4}, PIDS),
          _push("s1", 2, {"r1": 5, "r2": 6}, PIDS),
          _push("s1", 1, {"r1": 1, "r2": 2}, {"r1": 11, "r2": 99})]  # a re-push names task 1 again


def test_push_records_answer_as_first_records_and_project_pages() -> None:
    with PullIndex() as index:
        pages = index.add_pushes(iter(PUSHES))
        assert pages == project_pages(PUSHES)
        first = first_records(PUSHES)
        for tid, rec in first.items():
            found = index.task(tid)
            assert found is not None and found[1] == rec
            assert found[0] == next(rv for rv, t in rec["tasks"].items() if t == tid)
        assert index.task(77) is None
        assert [t for t, _, _ in index.tasks()] == sorted(first)
        assert [(s, v) for s, v, _, _ in index.versions()] == [(r["sample_id"], r["version"])
                                                               for r in PUSHES]
        assert index.last_push == PUSHES[-1]


def test_events_replay_as_the_in_memory_reader() -> None:
    rng = random.Random(7)
    records: list[dict[str, Any]] = []
    for seq in range(300):
        action = rng.choice([*webhooks.ANNOTATION_WRITES, webhooks.DELETED, "TASKS_DELETED"])
        records.append({"kind": rng.choice(["event", "event", "receiver"]), "action": action,
                        "at": f"t{seq:04d}", "seq": seq,
                        "annotations": [{"id": rng.randrange(20), "task": rng.randrange(5),
                                         "decision": rng.choice(["approve", "reject"])}
                                        for _ in range(rng.randrange(3))] + [{"id": None}]})
    expected = webhooks.annotation_events(records)
    with PullIndex() as index:
        for r in records:
            index.add_event_record(r)
        assert dict(index.event_annotations()) == expected
        assert index.events(999) is None


def test_decisions_pulled_before() -> None:
    rows = [_decision("s1", 1, "r1", 100, 1, "reject"), _decision("s1", 1, "r1", 100, 1, "reject"),
            _decision("s1", 1, "r1", 100, 5, "approve"),  # moved and changed later
            _decision("x", 1, "r1", 200, 9, "approve", review_round="r0"),  # another round
            dict(_decision("s1", 1, "gemini:m", 300, 1), rater_kind="model")]
    with PullIndex() as index:
        index.add_logged(iter(rows), "b", "r1")
        assert index.first_pulled(100) == (1, "reject")
        assert index.first_pulled(200) == (9, "approve")  # over the whole log
        assert index.first_pulled(300) is None  # a model's rows are not pulled decisions
        assert index.approved_before(100) and not index.approved_before(200)
        assert index.pulled(100) and not index.pulled(200)
        history = list(index.history())
        assert history == [rows[0], rows[2]]  # this round's distinct states, first read first


def test_single_decisions_duplicates_and_violations() -> None:
    valid = [_decision("s2", 1, "r1", 7, 3), _decision("s1", 1, "r2", 4, 2),
             _decision("s1", 1, "r1", 2, 1), _decision("s1", 1, "r1", 3, 1, "reject")]
    with PullIndex() as index:
        for d in valid:
            index.add_valid(d)
        assert list(index.single_decisions()) == [valid[1], valid[0]]  # sample, version, reviewer
        assert list(index.duplicates()) == [(("s1", 1, "r1"), [valid[2], valid[3]])]
        assert index.decided("s1", 1, "r2") and not index.decided("s1", 1, "r1")
        v = {"kind": "cancelled", "benchmark": "b", "review_round": "r1", "sample_id": "s1",
             "version": 1, "task_id": 1, "annotation_id": 2, "reviewer": "r1", "detail": "d"}
        found = [dict(v, kind="task_deleted", detail="2"), v, dict(v, detail="other"),
                 dict(v, kind="task_deleted", detail="1"), v]
        for x in found:
            index.add_violation(x)
        assert list(index.violations()) == [v, dict(v, detail="other"),
                                            dict(v, kind="task_deleted", detail="2"),
                                            dict(v, kind="task_deleted", detail="1")]


def test_the_index_file_is_removed_with_the_pull() -> None:
    with PullIndex() as index:
        folder = Path(index._dir.name)  # noqa: SLF001 - where the tables live
        assert (folder / "pull.sqlite").is_file()
    assert not folder.exists()
    with pytest.raises(RuntimeError), PullIndex() as index:
        folder = Path(index._dir.name)  # noqa: SLF001
        raise RuntimeError("a pull that fails")
    assert not folder.exists()


def test_a_streamed_snapshot_holds_the_rows_of_a_whole_one(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    rows = sorted((_decision(f"s{k:03d}", 1 + k % 2, f"r{1 + k % 4}", k, k) for k in range(50)),
                  key=decision_log._order)  # noqa: SLF001 - the snapshot's order
    monkeypatch.setattr(decision_log, "ROWS_PER_BATCH", 7)  # several batches, a short last one
    whole = decision_log.append(tmp_path / "a", rows, benchmark="b", review_round="r1")
    streamed = decision_log.append(tmp_path / "b", iter(rows), benchmark="b", review_round="r1",
                                   violations=iter([{"kind": "k"}]), in_order=True)
    assert pq.read_table(streamed).to_pylist() == pq.read_table(whole).to_pylist() == rows
    assert pq.ParquetFile(streamed).metadata.num_row_groups == 8
    assert decision_log.read(tmp_path / "b") == rows  # the chain holds it
    empty = decision_log.append(tmp_path / "c", iter([]), benchmark="b", review_round="r1",
                                in_order=True)
    assert pq.read_table(empty).num_rows == 0
    assert pq.read_schema(empty) == pq.read_schema(whole)
    with pytest.raises(ValueError, match="out of order"):
        decision_log.append(tmp_path / "d", iter(rows[::-1]), benchmark="b", review_round="r1",
                            in_order=True)
    assert not list((tmp_path / "d").rglob("*.parquet")) and not list((tmp_path / "d").rglob("*.tmp"))
