"""Processes that are done end at once, without tearing their interpreter down.

Why: ending a Python process that has imported Beam, pandas, great-expectations and matplotlib
first destroys every module and frees its heap one object at a time — a second or more for a
build's driver, whatever its size, and a good part of one for each Beam worker process. The
embedded runner stops its workers one after the other and waits for each, so that teardown was
serial time in every two-worker build, and every command of the CLI ended with it (measured:
docs/scaling.md). Nothing in that teardown matters once the
work is done: every file is closed where it was written, and every exit handler still runs
first (the response cache's flush, logging's), then the standard streams are flushed.

* :func:`end_process` ends a command-line entry point after its work (``benchforge``,
  ``python -m pipelines.<benchmark>``); an entry point that fails raises instead and keeps
  Python's own exit. Only entry points call it, never library code, so a test or a notebook
  calling ``main()`` in-process is never ended.
* :func:`end_worker_without_teardown` registers, once per Beam SDK worker process, an exit
  handler that ends it the same way after its harness has returned. A worker whose harness
  failed keeps Python's own exit (its traceback and exit status 1 reach the runner), and a
  process that is not an SDK worker — the driver, the embedded in-process runner, a test — is
  never touched.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys

WORKER_ENV = "CONTROL_API_SERVICE_DESCRIPTOR"  # set by Beam for every SDK worker process it starts
_registered_pid: int | None = None


def end_process(code: int = 0) -> None:
    """Run every exit handler (as a normal exit would), flush the standard streams and end this
    process with ``code``, skipping interpreter teardown."""
    atexit._run_exitfuncs()  # noqa: SLF001 - the one way to run them and then skip teardown
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, OSError, ValueError):  # closed or replaced
            stream.flush()
    os._exit(code)


def end_worker_without_teardown() -> bool:
    """In a Beam SDK worker process, end it without interpreter teardown once it exits normally;
    True when the handler is registered (once per process, so call it from any step's setup)."""
    global _registered_pid
    if WORKER_ENV not in os.environ:
        return False
    if _registered_pid != os.getpid():
        _registered_pid = os.getpid()
        atexit.register(_end_worker)
    return True


def _end_worker() -> None:
    if hasattr(sys, "last_value"):  # an unhandled exception: Python reports it and exits with 1
        return
    atexit.unregister(_end_worker)  # it is running: the handlers registered before it run next
    end_process(0)
