"""A finished Beam worker process exits without interpreter teardown; a failed one keeps its
exit status and traceback; any other process is untouched."""

import os
import subprocess
import sys
from pathlib import Path

from core.worker import WORKER_ENV

ROOT = Path(__file__).resolve().parents[2]

# Exit work registered before the handler runs after it (atexit is last in, first out), as
# interpreter teardown does: a file it writes shows whether the process went on to tear down.
PROGRAM = """
import atexit
import sys
from core.worker import exit_without_teardown

atexit.register(lambda: open(sys.argv[1], "w").write("torn down"))
print("registered", exit_without_teardown(), end="")  # no newline: must still be flushed
if sys.argv[2] == "fail":
    raise RuntimeError("the harness failed")
"""


def run(tmp_path: Path, worker: bool, outcome: str) -> tuple[subprocess.CompletedProcess, Path]:
    marker = tmp_path / "marker"
    env = {k: v for k, v in os.environ.items() if k != WORKER_ENV}
    env["PYTHONPATH"] = str(ROOT)
    if worker:
        env[WORKER_ENV] = "url: 'localhost:1'"
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(marker), outcome], env=env,
                          capture_output=True, text=True, timeout=60)
    return done, marker


def test_a_worker_that_finished_skips_teardown_and_flushes_its_output(tmp_path):
    done, marker = run(tmp_path, worker=True, outcome="ok")
    assert (done.returncode, done.stdout) == (0, "registered True")
    assert not marker.exists()


def test_a_failed_worker_keeps_its_exit_status_and_traceback(tmp_path):
    done, marker = run(tmp_path, worker=True, outcome="fail")
    assert done.returncode == 1
    assert "RuntimeError: the harness failed" in done.stderr
    assert marker.read_text() == "torn down"


def test_a_process_that_is_not_a_worker_is_untouched(tmp_path):
    done, marker = run(tmp_path, worker=False, outcome="ok")
    assert (done.returncode, done.stdout) == (0, "registered False")
    assert marker.read_text() == "torn down"
