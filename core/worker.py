"""A Beam worker process that has finished ends at once, without tearing its interpreter down.

Why: the embedded runner stops its worker processes one after the other and waits for each to
exit (``WorkerHandlerManager.close_all``). A worker that has built a benchmark then spends
~0.45 s finalizing its interpreter — destroying every module and freeing its heap one object at
a time — so two workers added ~0.9–1.0 s of serial time to the end of every two-worker build
(100× ProactiveBench: the last stage ended 1.05 s before the pipeline returned; with this,
0.15 s; docs/scaling.md). Nothing in that teardown matters once the SDK harness has returned:
every bundle has closed its files and the harness has closed its log channel before the
interpreter exits.

:func:`exit_without_teardown` registers, once per worker process, an exit handler that flushes
logging and the standard streams and ends the process with ``os._exit(0)``. A worker whose
harness failed keeps Python's own exit (its traceback and exit status 1 reach the runner),
and a process that is not an SDK worker — the driver, the embedded in-process runner, a test —
is never touched.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys

WORKER_ENV = "CONTROL_API_SERVICE_DESCRIPTOR"  # set by Beam for every SDK worker process it starts
_registered_pid: int | None = None


def exit_without_teardown() -> bool:
    """In a Beam SDK worker process, end it without interpreter teardown once it exits normally;
    True when the handler is registered (once per process, so call it from any step's setup)."""
    global _registered_pid
    if WORKER_ENV not in os.environ:
        return False
    if _registered_pid != os.getpid():
        _registered_pid = os.getpid()
        atexit.register(_exit_now)
    return True


def _exit_now() -> None:
    if hasattr(sys, "last_value"):  # an unhandled exception: Python reports it and exits with 1
        return
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, OSError, ValueError):  # closed or replaced
            stream.flush()
    os._exit(0)
