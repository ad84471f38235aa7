"""The least a test needs to declare a :class:`~pipelines.common.benchmark.Benchmark` of its own:
sources and a build that read and write nothing. Why: a test of the driver's mechanisms (the
parser, the splits, the suites) should fail for what it tests, not for a part it had to write
out in full — and every part is required, so a test cannot just leave one out."""

from __future__ import annotations

from typing import Any

from pipelines.common.benchmark import (
    NO_SUITES,
    Benchmark,
    Build,
    BuildContext,
    Finalized,
    Info,
    Quality,
    Sources,
)


class NoSources(Sources[None]):
    """Reads nothing, and says so (no source to tell apart)."""

    def prepare(self, ctx: BuildContext[None], info: Info) -> None:
        return None

    def source_yield(self, ctx: BuildContext[None], counts: dict[str, dict[str, int]], info: Info
                     ) -> dict[str, tuple[str, int, list[str]]]:
        return {}


class NoSteps(Build[None]):
    """One evaluation split, no Beam step; a test that runs it is a test that went too far."""

    def pipeline(self, p: Any, ctx: BuildContext[None]) -> None:
        raise NotImplementedError("a test benchmark has no pipeline")

    def finalize(self, ctx: BuildContext[None], counts: dict[str, dict[str, int]],
                 files: list[dict[str, Any]]) -> Finalized:
        raise NotImplementedError("a test benchmark has no release")


def bare(name: str, build: Build[None] | None = None) -> Benchmark[None]:
    """A benchmark called ``name`` with no suites (said), no demo, and ``build`` (default
    :class:`NoSteps`)."""
    return Benchmark(info=Info(name=name, title=name.title(), citation=f"@misc{{{name}}}"),
                     sources=NoSources(), build=build or NoSteps(),
                     quality=Quality(suites=NO_SUITES), demo=None)
