"""Beam steps that count what flows through them (see :mod:`core.progress`)."""

from __future__ import annotations

import apache_beam as beam

from core import progress


class ReportsProgress(beam.DoFn):
    """A step whose counts reach the driver's progress board, wherever its workers run.

    Why a base class: a Flink, Spark or Dataflow worker (or Beam's external worker pool) shares
    no environment, working directory or memory with the driver, so it cannot learn the board's
    folder from either. The step itself carries it: built in the driver while the board runs, it
    records the board's folder (the build's staging folder, which the workers reach to write
    their Parquet anyway), is pickled with the pipeline, and in each worker's ``setup`` tells
    :mod:`core.progress` where this process's counts go. Subclasses call ``super().__init__()``
    and ``super().setup()``."""

    def __init__(self) -> None:
        super().__init__()
        self.progress_dir = progress.board_folder()

    def setup(self) -> None:
        progress.report_to(self.progress_dir)


class ReportProgress(ReportsProgress):
    """Count each element under ``stage``; ``total`` (optional side input) is how many are
    expected overall. The driver's progress board prints one line per stage."""

    def __init__(self, stage: str) -> None:
        super().__init__()
        self.stage = stage

    def process(self, element, total=None):
        progress.tally(self.stage, total=total)
        yield element

    def finish_bundle(self) -> None:
        progress.flush()
