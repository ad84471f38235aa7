"""Counting steps carry the driver's progress folder to their workers (pipelines/common/progress.py).

Why tested: the folder used to reach worker processes through ``BENCHFORGE_PROGRESS_DIR`` in the
environment they inherited; a Flink, Spark or Dataflow worker inherits nothing from the driver,
so its counts never reached the board. Now the step itself holds the folder.
"""

from __future__ import annotations

import io
import pickle
import subprocess
import sys
from pathlib import Path

from core import progress
from core.progress import ProgressBoard, progress_board
from pipelines.common.progress import ReportProgress

REPO = Path(__file__).resolve().parents[3]

WORKER = """
import pickle, sys
step = pickle.loads(sys.stdin.buffer.read())
step.setup()
for _ in step.process("x", total=2):
    pass
step.finish_bundle()
"""


def test_a_step_built_under_a_board_reports_there_from_a_process_that_shares_nothing(
        tmp_path: Path) -> None:
    folder = tmp_path / "staging" / "_build" / "progress"
    folder.mkdir(parents=True)
    with progress_board(folder):
        step = ReportProgress("episodes kept")
        assert progress.board_folder() == str(folder)
    assert step.progress_dir == str(folder) and progress.board_folder() is None
    blob = pickle.dumps(step)  # as Beam ships it to a worker
    for _ in range(2):  # two workers: a clean environment, another working directory
        subprocess.run([sys.executable, "-c", WORKER], input=blob, cwd=tmp_path, check=True,
                       env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)})
    assert len(list(folder.glob("*-*.json"))) == 2  # <host>-<pid>.json, one per process
    out = io.StringIO()
    board = ProgressBoard(folder, stream=out)
    board.show(board.read(), final=True)
    assert "[benchforge] episodes kept: 2/2 (100%)" in out.getvalue()


def test_a_step_built_without_a_board_carries_no_folder() -> None:
    step = ReportProgress("requests")
    assert step.progress_dir is None
    step.setup()  # changes nothing: a tool run on its own prints its own lines
    assert progress.board_folder() is None
