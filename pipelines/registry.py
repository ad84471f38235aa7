"""Which benchmarks exist: every folder of ``pipelines/`` with a ``build.py`` defining one
:class:`~pipelines.common.benchmark.Benchmark`. Why a module of its own: the CLI and the export
commands both look benchmarks up by name, and neither may import the other (no import circles).
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

import pipelines
from annotation.rubrics import Rubric
from pipelines.common.benchmark import Benchmark, ExportCommand

PIPELINES = Path(__file__).resolve().parent


def discover(root: Path) -> list[str]:
    """Every folder of ``root`` with a ``build.py`` is a benchmark, so a new benchmark folder
    needs no line here; its Benchmark is imported on use (each pulls in its own dependencies)."""
    return sorted(p.parent.name for p in root.glob("*/build.py"))


# this folder's benchmarks and those of the folders BENCHFORGE_EXTENSIONS adds to the package
BENCHMARKS = sorted({name for folder in pipelines.__path__ for name in discover(Path(folder))})


def benchmark(name: str) -> Benchmark:
    if name not in BENCHMARKS:
        raise SystemExit(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
    found = [v for v in vars(import_module(f"pipelines.{name}.build")).values()
             if isinstance(v, Benchmark) and v.name == name]
    if len(found) != 1:
        raise SystemExit(f"pipelines/{name}/build.py must define one Benchmark named {name!r}")
    return found[0]


def rubric(name: str) -> Rubric:
    """The review rubric ``name`` of whichever benchmark declares it (its folder's ``rubric.py``,
    listed in its :class:`~pipelines.common.benchmark.Review`): what ``benchforge review`` push, pull and
    gemini-review decide by."""
    known = {r.name: r for b in BENCHMARKS if (review := benchmark(b).review) for r in review.rubrics}
    if name not in known:
        raise SystemExit(f"unknown rubric {name!r}; known: {', '.join(sorted(known))}")
    return known[name]


def export_commands() -> dict[str, ExportCommand]:
    """The ``benchforge export`` commands the benchmark folders declare, by name."""
    return {c.name: c for b in BENCHMARKS for c in benchmark(b).exports.commands}
