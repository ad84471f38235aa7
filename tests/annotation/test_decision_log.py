"""A push's records are streamed into the log (``decision_log.append_push``): the same bytes as
the records given as a list, and a stream that fails leaves neither a file nor a chain record —
no server needed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation import decision_log

RECORDS = [{"benchmark": "b", "review_round": "r", "sample_id": f"s{i}", "version": 1,
            "data": {"candidate": "é \u2028 text", "z": [1, 2.5, None]}, "tasks": {"r1": i}}
           for i in range(5)]


def _written(path: Path) -> tuple[bytes, str]:
    """The push file's bytes and the ``pushed_at`` every one of its records carries."""
    raw = path.read_bytes()
    ats = {json.loads(line)["pushed_at"] for line in raw.splitlines()}
    assert len(ats) == 1
    return raw, ats.pop()


def test_a_streamed_push_writes_the_bytes_of_a_listed_one(tmp_path: Path) -> None:
    def gen() -> Iterator[dict[str, Any]]:
        yield from (dict(r) for r in RECORDS)

    listed = decision_log.append_push(tmp_path / "a", RECORDS, benchmark="b", review_round="r")
    streamed = decision_log.append_push(tmp_path / "b", gen(), benchmark="b", review_round="r")
    (a, at_a), (b, at_b) = _written(listed), _written(streamed)
    # the file format: one key-sorted JSON object per line, pushed_at added
    assert a == "".join(json.dumps(dict(r, pushed_at=at_a), sort_keys=True) + "\n"
                        for r in RECORDS).encode("utf-8")
    assert b == a.replace(at_a.encode(), at_b.encode())
    assert [r["sample_id"] for r in decision_log.read_pushes(tmp_path / "b")] == [
        r["sample_id"] for r in RECORDS]
    assert [r["kind"] for r in decision_log.chain(tmp_path / "b")] == ["push"]


def test_a_failing_stream_leaves_no_file_and_no_chain_record(tmp_path: Path) -> None:
    log = tmp_path / "log"
    decision_log.append_push(log, RECORDS[:1], benchmark="b", review_round="r")
    head = decision_log.verify(log)

    def failing() -> Iterator[dict[str, Any]]:
        yield RECORDS[1]
        raise RuntimeError("the candidates changed")

    with pytest.raises(RuntimeError, match="the candidates changed"):
        decision_log.append_push(log, failing(), benchmark="b", review_round="r")
    assert decision_log.verify(log) == head  # nothing chained, nothing unrecorded left
    assert len(list((log / "pushes").iterdir())) == 1  # no second file, no temporary file
    with pytest.raises(RuntimeError, match="the candidates changed"):  # into a new log
        decision_log.append_push(tmp_path / "new", failing(), benchmark="b", review_round="r")
    assert decision_log.verify(tmp_path / "new") == decision_log.GENESIS
    assert not (tmp_path / "new" / "pushes").exists()
