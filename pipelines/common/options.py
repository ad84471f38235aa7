"""Beam pipeline options every benchmark driver shares."""

from __future__ import annotations

from apache_beam.options.pipeline_options import PipelineOptions


def beam_options(beam_args: list[str]) -> PipelineOptions:
    """Embedded FnApiRunner by default (SPEC §4: Beam's DirectRunner first tries to download the
    Prism runner binary, which cannot work offline); any ``--runner=`` given wins."""
    args = list(beam_args)
    if not any(a.startswith("--runner") for a in args):
        args.append("--runner=FnApiRunner")
    return PipelineOptions(args)
