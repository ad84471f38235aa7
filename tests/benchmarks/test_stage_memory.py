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


def test_the_memory_sampled_is_that_of_the_whole_process_tree() -> None:
    """With two workers the work runs in child processes (and theirs): each must be counted."""
    import os
    import signal
    import subprocess
    import sys

    from benchmarks.monitor import _tree_pids
    from benchmarks.stage_memory import tree_rss_mb

    alone = tree_rss_mb()
    # a child that holds 64 MB and starts a grandchild of its own
    code = ("import subprocess, sys, time; b = b'x' * (64 << 20); "
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']); "
            "print('ready', flush=True); time.sleep(30)")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        each = tree_rss_mb()
    finally:
        for pid in _tree_pids(child.pid)[1:]:  # the grandchild
            os.kill(pid, signal.SIGKILL)
        child.kill()
        child.wait()
    assert len(each) == len(alone) + 2, each
    assert sum(each) - sum(alone) >= 64, (alone, each)  # the child's 64 MB, counted in the tree
