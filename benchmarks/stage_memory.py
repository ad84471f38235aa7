"""Where a build's memory peaks: the resident memory of its process tree, sampled every 0.1 s,
against the stage Beam's embedded runner is running at that moment (the build runs in this process).

    .venv/bin/python benchmarks/stage_memory.py [--top 12] [--tracemalloc 6] -- build streamvibe \
        --config C --raw-dir R --out O --decisions D

Everything after ``--`` is a ``python -m pipelines.cli`` command line, run in this process. The
resident memory is that of the whole process tree — this process and every process it started,
such as the SDK workers of ``--direct_num_workers=2`` — and each new high lists it per process
(the driver first). Prints each stage where the tree reached a new high, then the stages with the
highest peaks. With
``--tracemalloc N`` it also traces Python's allocations (N frames; the build runs a few times
slower) and prints the largest allocation sites of a snapshot taken near the peak (at each new
high of 10 MB or more).

Why: the scale benchmarks give one peak per build; this says which stage reaches it and what
lives then (docs/scaling.md, "The one-worker release's peak, stage by stage").
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.monitor import MB, tree_rss_each  # noqa: E402

BUNDLE_LOGGER = "apache_beam.runners.portability.fn_api_runner.fn_runner.run_bundle"
PREFIX = "Running bundle for stage "


def tree_rss_mb() -> list[int]:
    """Resident MB of this process, then of each of its descendants still running."""
    return [rss // MB for rss in tree_rss_each(os.getpid()) if rss]


class StageLog(logging.Handler):
    """Keeps the name of the stage whose bundle the embedded runner started last."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.stage = "(before the pipeline)"

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if msg.startswith(PREFIX):
            self.stage = msg.split("\n", 1)[0][len(PREFIX):]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--top", type=int, default=12, help="stages to list by their peak")
    ap.add_argument("--tracemalloc", type=int, default=0, metavar="FRAMES",
                    help="also trace Python allocations with this many frames (slow)")
    ap.add_argument("build", nargs=argparse.REMAINDER, help="-- then a pipelines.cli command line")
    args = ap.parse_args()
    build = args.build[1:] if args.build[:1] == ["--"] else args.build
    if not build:
        ap.error("give the build after --, e.g. -- build streamvibe --config …")

    stages = StageLog()
    logger = logging.getLogger(BUNDLE_LOGGER)
    logger.setLevel(logging.DEBUG)
    logger.addHandler(stages)
    logger.propagate = False
    if args.tracemalloc:
        tracemalloc.start(args.tracemalloc)
    peaks: dict[str, int] = {}
    snapshot: list = [0, None, ""]  # RSS when taken, the snapshot, its stage
    done = threading.Event()
    start = time.time()

    def sample() -> None:
        high = 0
        while not done.is_set():
            each, stage = tree_rss_mb(), stages.stage
            rss = sum(each)
            peaks[stage] = max(peaks.get(stage, 0), rss)
            if rss > high:
                high = rss
                split = f" ({' + '.join(map(str, each))})" if len(each) > 1 else ""
                print(f"{time.time() - start:7.1f} s {rss:6d} MB{split}  {stage[:150]}", flush=True)
            if args.tracemalloc and rss >= snapshot[0] + 10:
                snapshot[:] = [rss, tracemalloc.take_snapshot(), stage]
            time.sleep(0.1)

    from pipelines.cli import main as cli
    from pipelines.common import driver

    run_pipeline = driver.run_pipeline

    def marked(*a, **kw):  # what follows the pipeline (the driver's steps, the gate) is named too
        try:
            return run_pipeline(*a, **kw)
        finally:
            stages.stage = "(after the pipeline: the driver's steps and the release gate)"

    driver.run_pipeline = marked
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()

    try:
        rc = cli(build)
    finally:
        done.set()
        sampler.join()
    print(f"\nbuild rc {rc}, {time.time() - start:.1f} s; stages by their peak resident memory:")
    for stage, mb in sorted(peaks.items(), key=lambda x: -x[1])[:args.top]:
        print(f"{mb:6d} MB  {stage[:160]}")
    if snapshot[1] is not None:
        stats = snapshot[1].statistics("traceback")
        print(f"\nPython allocations at {snapshot[0]} MB resident ({sum(x.size for x in stats) / MB:.0f} MB "
              f"traced), in {snapshot[2][:100]}:")
        for st in stats[:args.top]:
            where = "; ".join(f"{Path(f.filename).name}:{f.lineno}" for f in st.traceback)
            print(f"{st.size / MB:7.1f} MB {st.count:9d} objects  {where}")
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
