"""A finished process ends without interpreter teardown, after every exit handler ran; a failed
Beam worker keeps its exit status and traceback; a process that is not a worker is untouched."""

import os
import subprocess
import sys
from pathlib import Path

from core.process_end import WORKER_ENV

ROOT = Path(__file__).resolve().parents[2]

# An exit handler registered first (so it runs after any registered later, as the response
# cache's flush does) must still run; an object finalized at interpreter teardown shows whether
# the process was torn down (it writes to the standard output's descriptor directly).
PROGRAM = """
import atexit
import os
import sys

from core.process_end import end_process, end_worker_without_teardown

atexit.register(lambda: print("handler ran", end=" ", flush=True))

class TornDown:
    def __del__(self, write=os.write):
        write(1, b"torn down")

keep = TornDown()
print("registered", end_worker_without_teardown(), end=" ")  # no newline: must be flushed
if sys.argv[1] == "fail":
    raise RuntimeError("the harness failed")
if sys.argv[1] == "end":
    end_process(3)
"""


def run(worker: bool, outcome: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != WORKER_ENV}
    env["PYTHONPATH"] = str(ROOT)
    if worker:
        env[WORKER_ENV] = "url: 'localhost:1'"
    return subprocess.run([sys.executable, "-c", PROGRAM, outcome], env=env,
                          capture_output=True, text=True, timeout=60)


def test_a_worker_that_finished_runs_its_exit_handlers_and_skips_teardown():
    done = run(worker=True, outcome="ok")
    assert (done.returncode, done.stdout) == (0, "registered True handler ran ")


def test_a_failed_worker_keeps_its_exit_status_and_traceback():
    done = run(worker=True, outcome="fail")
    assert done.returncode == 1
    assert "RuntimeError: the harness failed" in done.stderr
    assert done.stdout == "registered True handler ran torn down"


def test_a_process_that_is_not_a_worker_is_untouched():
    done = run(worker=False, outcome="ok")
    assert (done.returncode, done.stdout) == (0, "registered False handler ran torn down")


def test_an_entry_point_ends_with_its_code_after_the_exit_handlers():
    done = run(worker=False, outcome="end")
    assert (done.returncode, done.stdout) == (3, "registered False handler ran ")
