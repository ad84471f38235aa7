"""The outcomes bundle every pipeline hands its stages' outcomes to: each outcome is written to
its folder once and counted under its stage, a training split's under ``<folder>/train``, and a
stage that counts itself is written without being counted twice."""

from __future__ import annotations

import json
from pathlib import Path

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.testing.test_pipeline import TestPipeline

from core.errors import Rejection
from pipelines.common.outcomes import Outcomes
from schemas.core import Field, RecordSchema

ITEM = RecordSchema("outcomes_test_item", "1.0.0", "An item.", (Field("id", "string", "Id."),))
FILTERED = ITEM.extend("outcomes_test_filtered", "Left out.", Field("reason", "string", "Why."))


def rejection(item: str, stage: str) -> Rejection:
    return Rejection(item, "t", "g", stage, "src.jsonl", "field", "bad")


def rows(folder: Path) -> list[dict]:
    return sorted((r for f in sorted(folder.glob("*.parquet")) for r in pq.read_table(f).to_pylist()),
                  key=lambda r: r.get("id") or r.get("item_id"))


def test_every_outcome_is_written_once_and_counted_under_its_stage(tmp_path: Path) -> None:
    staging = str(tmp_path)
    with TestPipeline() as p:
        outcomes = Outcomes(staging, FILTERED, group_fn=lambda _: "g")
        inputs = p | "Inputs" >> beam.Create([{"id": str(i)} for i in range(6)])
        outcomes.inputs(inputs)
        outcomes.kept(p | "Kept" >> beam.Create([{"id": "0"}, {"id": "1"}]))
        outcomes.filtered(p | "Filtered" >> beam.Create([{"id": "2", "reason": "late"}]))
        outcomes.filtered(p | "TrainFiltered" >> beam.Create([{"id": "5", "reason": "held out"}]),
                          folder="filtered/train")
        outcomes.rejected(p | "Parse" >> beam.Create([rejection("3", "parse")]), "parse")
        outcomes.rejected(p | "Check" >> beam.Create([rejection("4", "check")]), "check")
        # counted by the stage that made it: written, not counted again
        outcomes.counted(p | "OwnTags" >> beam.Create([(("g", "load_rejected"), 1)]))
        outcomes.rejected(p | "Load" >> beam.Create([rejection("6", "load")]), None)
        outcomes.write()
    counts = {(r["environment"], r["stage"]): r["n"]
              for r in json.loads((tmp_path / "_build" / "counts.json").read_text())}
    assert counts == {("g", "enumerated"): 6, ("g", "kept"): 2, ("g", "filtered"): 2,
                      ("g", "parse_rejected"): 1, ("g", "check_rejected"): 1, ("g", "load_rejected"): 1}
    assert [r["id"] for r in rows(tmp_path / "filtered")] == ["2"]
    assert [r["reason"] for r in rows(tmp_path / "filtered" / "train")] == ["held out"]
    assert [(r["item_id"], r["stage"]) for r in rows(tmp_path / "rejected")] == [
        ("3", "parse"), ("4", "check"), ("6", "load")]


def test_a_part_counts_apart(tmp_path: Path) -> None:
    with TestPipeline() as p:
        outcomes = Outcomes(str(tmp_path), part="train", label="Train")
        outcomes.inputs(p | beam.Create([{"environment": "train/x"}]))
        outcomes.rejected(p | "R" >> beam.Create([rejection("1", "build")]), "build", "rejected/train")
        outcomes.write()
    assert not (tmp_path / "_build" / "counts.json").exists()
    assert json.loads((tmp_path / "_build" / "counts-train.json").read_text()) == [
        {"environment": "g", "n": 1, "stage": "build_rejected"},
        {"environment": "train/x", "n": 1, "stage": "enumerated"}]
    assert len(rows(tmp_path / "rejected" / "train")) == 1
