"""The shared Beam steps of pipelines/common/transforms.py that no benchmark test pins alone."""

from __future__ import annotations

import json
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing import test_pipeline

from pipelines.common import transforms
from pipelines.common.transforms import BuildFacts


def _write(values: list, staging: Path, facts: BuildFacts) -> None:
    with test_pipeline.TestPipeline(runner="FnApiRunner") as p:
        _ = p | beam.Create(values, reshuffle=False) | facts.write(str(staging))


def test_build_facts_come_back_in_json_order_from_parts_no_worker_holds_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Facts are written in parts of a bounded size and read back merged: the same list, in the
    same order, that sorting them all by their JSON gives — duplicates and key order included."""
    monkeypatch.setattr(transforms, "FACT_ROWS_PER_PART", 7)
    values = [{"z": i % 5, "id": f"s/{i:03d}", "nested": {"b": [i, None], "a": "é"}} for i in range(50)]
    values += [values[3], {"id": "only-one-key"}, [1, 2], "text", 4.5]  # a duplicate, other types
    facts = BuildFacts("things")
    _write(values, tmp_path, facts)

    folder = facts.folder(tmp_path)
    index = json.loads((folder / "index.json").read_text())
    parts = sorted(folder.glob("part-*.jsonl"))
    assert index == {"rows": 55, "parts": 8}
    assert 1 < len(parts) <= 8 and all(p.name.endswith("-of-00008.jsonl") for p in parts)
    assert sum(len(p.read_text().splitlines()) for p in parts) == 55
    for p in parts:  # each part sorted by its lines, so the merge is a plain merge
        lines = p.read_text().splitlines()
        assert lines == sorted(lines)
    assert facts.read(tmp_path) == json.loads(json.dumps(sorted(values, key=json.dumps)))


def test_a_lost_part_is_an_error_not_a_shorter_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transforms, "FACT_ROWS_PER_PART", 4)
    facts = BuildFacts("things")
    _write([{"id": i} for i in range(20)], tmp_path, facts)
    next(facts.folder(tmp_path).glob("part-*.jsonl")).unlink()
    with pytest.raises(ValueError, match=r"things: its parts hold \d+ facts, its index.json says 20"):
        facts.read(tmp_path)


def test_no_facts_is_an_empty_list_and_no_index_is_an_error(tmp_path: Path) -> None:
    facts = BuildFacts("nothing")
    _write([], tmp_path, facts)
    assert facts.read(tmp_path) == []
    with pytest.raises(FileNotFoundError):
        BuildFacts("never-written").read(tmp_path)
