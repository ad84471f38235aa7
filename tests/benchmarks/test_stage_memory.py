"""benchmarks/stage_memory.py names the stage the embedded runner is running from Beam's own log:
if a Beam release renames that logger or its message, the tool would attribute every sample to
"before the pipeline" — this fails instead."""

from __future__ import annotations

import logging

import apache_beam as beam

from benchmarks.stage_memory import BUNDLE_LOGGER, StageLog


def test_the_stage_log_names_each_stage_the_embedded_runner_runs() -> None:
    seen: list[str] = []

    class Recording(StageLog):
        def emit(self, record: logging.LogRecord) -> None:
            super().emit(record)
            seen.append(self.stage)

    handler = Recording()
    logger = logging.getLogger(BUNDLE_LOGGER)
    level, propagate = logger.level, logger.propagate
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with beam.Pipeline(runner="FnApiRunner") as p:
            _ = (p | "Numbers" >> beam.Create(range(10)) | "ByParity" >> beam.Map(lambda x: (x % 2, x))
                 | "GroupParity" >> beam.GroupByKey() | "Sums" >> beam.MapTuple(lambda k, v: sum(v)))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
    assert any("GroupParity/Read" in s and "Sums" in s for s in seen), seen
    assert any("ByParity" in s for s in seen), seen
