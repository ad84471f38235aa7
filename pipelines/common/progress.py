"""A pass-through Beam step that counts what flows through it (see :mod:`core.progress`)."""

from __future__ import annotations

import apache_beam as beam

from core import progress


class ReportProgress(beam.DoFn):
    """Count each element under ``stage``; ``total`` (optional side input) is how many are
    expected overall. The driver's progress board prints one line per stage."""

    def __init__(self, stage: str) -> None:
        self.stage = stage

    def process(self, element, total=None):
        progress.tally(self.stage, total=total)
        yield element

    def finish_bundle(self) -> None:
        progress.flush()
