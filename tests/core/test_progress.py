"""Progress lines (core/progress.py): what a person watching a build reads.

Why tested: the first round printed ``306278.7/s`` after one item, ``episodes kept: 1`` when 36
were kept, and one partial line per worker that never reached 100%. Counts now come from every
process through the board's folder and are summed; a rate shows only after a second of work.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from core import progress
from core.progress import ProgressBoard, StageCount, describe

REPO = Path(__file__).resolve().parents[2]


def test_no_rate_before_a_second_then_rate_and_eta_then_the_final_line() -> None:
    count = StageCount(done=1, total=4, started=100.0)
    assert describe("read coco", count, now=100.2) == "[benchforge] read coco: 1/4 (25%)"
    count.done = 2
    assert describe("read coco", count, now=102.0) == \
        "[benchforge] read coco: 2/4 (50%) 1.0/s ETA 2s"
    count.done, count.counters = 4, {"rejected": 1}
    assert describe("read coco", count, now=104.0, final=True) == \
        "[benchforge] read coco: 4/4 (100%) 1.0/s in 4s rejected=1"
    slow = StageCount(done=2, total=None, started=0.0)
    assert describe("probe", slow, now=10.0) == "[benchforge] probe: 2 5.0 s/item"


def test_counts_of_workers_are_summed_from_the_earliest_start() -> None:
    a = StageCount(done=3, total=5, started=10.0, counters={"rejected": 1})
    a.merge(StageCount(done=2, total=5, started=8.0, counters={"rejected": 1, "cached": 2}))
    assert (a.done, a.total, a.started, a.counters) == (5, 5, 8.0, {"rejected": 2, "cached": 2})


def test_the_board_sums_what_separate_worker_processes_tally(tmp_path: Path) -> None:
    """Two real processes tally into the board's folder (as Beam worker processes do, given the
    folder by the step they run, not by their environment); the board's last line is the sum,
    at 100%, not one partial line per worker."""
    script = ("from core import progress\n"
              "import sys\n"
              "progress.report_to(sys.argv[2])\n"
              "progress.tally('episodes kept', int(sys.argv[1]), total=36)\n"
              "progress.flush()\n")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO)}  # nothing of this process
    for n in ("20", "16"):
        subprocess.run([sys.executable, "-c", script, n, str(tmp_path)], env=env, cwd="/", check=True)
    assert len(list(tmp_path.glob("*.json"))) == 2  # one file per process
    out = io.StringIO()
    board = ProgressBoard(tmp_path, stream=out)
    counts = board.read()
    assert (counts["episodes kept"].done, counts["episodes kept"].total) == (36, 36)
    board.show(counts, final=True)
    assert "[benchforge] episodes kept: 36/36 (100%)" in out.getvalue()


def test_without_a_board_a_tool_prints_its_own_final_line(monkeypatch) -> None:
    assert progress.board_folder() is None
    out = io.StringIO()
    monkeypatch.setattr(sys, "stderr", out)
    for _ in range(3):
        progress.tally("requests", total=3, cached=1)
    progress.flush()
    assert "[benchforge] requests: 3/3 (100%)" in out.getvalue()
    assert "cached=3" in out.getvalue()
