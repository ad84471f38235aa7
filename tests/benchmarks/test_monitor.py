"""The memory the scale benchmarks report: a forked child that has not exec'd yet maps all of its
parent's pages, so the summed RSS of the tree counts them twice while the summed PSS counts them
once — the reason the benchmarks report both (``benchmarks/monitor.py`` ``tree_pss``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks.monitor import PeakRss, run_monitored

MB = 1024 * 1024
HELD = 160 * MB


@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(),
                    reason="the kernel gives no smaps_rollup (PSS) here")
def test_a_fork_doubles_the_summed_rss_but_not_the_summed_pss(tmp_path: Path) -> None:
    script = (
        "import os, time\n"
        f"held = bytearray(b'x') * {HELD}\n"  # resident: every page written
        "time.sleep(0.6)\n"
        "pid = os.fork()\n"
        "time.sleep(1.5)\n"  # parent and child both hold the pages, shared copy-on-write
        "if pid == 0:\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
    )
    run = run_monitored([sys.executable, "-c", script], tmp_path / "logs", timeout=60)
    assert run.returncode == 0 and run.peak_procs == 2
    assert run.peak_rss_bytes > 1.8 * HELD  # the parent's pages counted in both processes
    assert run.peak_pss_bytes is not None
    assert HELD < run.peak_pss_bytes < 1.3 * HELD  # counted once across the tree


def test_the_peak_of_a_block_is_its_own_not_the_processes() -> None:
    """A block that holds 200 MB for a moment rises by about that much; a later block that
    holds little reads its own small rise, where ``ru_maxrss`` would still read the first peak."""
    import time

    with PeakRss() as big:
        held = bytearray(200 * 2**20)
        held[::4096] = b"x" * len(held[::4096])  # touch every page: resident, not just reserved
        time.sleep(0.2)
        del held
    with PeakRss() as small:
        time.sleep(0.2)
    assert 180 <= big.rise_mb <= 260
    assert small.rise_mb < 20
