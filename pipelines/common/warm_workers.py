"""Local worker processes forked from one that imported everything while the pipeline was built.

Why: with ``--direct_running_mode=multi_processing`` the embedded runner starts each worker
process at the first stage: a fresh ``python -m apache_beam.runners.worker.sdk_worker_main``
that imports Beam, then our steps, cv2 and pyarrow at the first stages that use
them, while the driver waits. The driver itself is busy on one core from its start to the first
stage (building and optimizing the pipeline), so on a two-core machine one core idles
then. :func:`warm_workers` starts a single *template* process as the pipeline is being built,
which does that import on the idle core; each worker the runner starts is then a ``fork`` of it
— ready at once, its imported pages shared with the template until written. (One template,
not one process per worker: two importing processes beside the driver slowed the driver by as
much as they saved.)

How: the runner's worker command becomes this module with ``attach <folder>``, a client that
imports nothing beyond the standard library. It hands the template the environment the runner
gave the worker (control and logging addresses, pipeline options, worker id) over a Unix
socket and waits for the forked worker to finish, exiting with its status. The worker runs
Beam's own harness (``sdk_worker_main.main``) with that environment — the code a cold worker
runs, so the work and its output are the same. When the template has already forked as many
workers as the build asked for, is gone or never answers, the client becomes a cold worker
itself (``exec`` of Beam's command). The template stays the parent of its workers until the
pipeline has run, so they stay in the build's process tree.

Fork safety: the template only imports; at fork it has no gRPC channel or server, no Python
thread, and the two native threads the imports start (OpenBLAS's pool, pyarrow's jemalloc
background thread) are both handled by their libraries' ``pthread_atfork`` hooks.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

HARNESS = "apache_beam.runners.worker.sdk_worker_main"
COLD_COMMAND = (sys.executable, "-m", HARNESS)
TEMPLATE_SOCKET = "template.sock"
STARTED = b"S"  # the template forked a worker for this client


def attach_command(folder: Path) -> str:
    """The worker command line (the runner runs it with a shell) that attaches to ``folder``."""
    return " ".join(shlex.quote(a) for a in (sys.executable, "-m", __spec__.name, "attach", str(folder)))


@contextlib.contextmanager
def warm_workers(count: int, preload: Sequence[str] = ()) -> Iterator[str]:
    """Start the template process that imports Beam's harness and ``preload`` and forks up to
    ``count`` workers; yield the worker command that attaches to it. On exit, a template still
    waiting ends (its stdin closes) and its folder is removed."""
    folder = Path(tempfile.mkdtemp(prefix="benchforge-workers-"))
    template = subprocess.Popen(
        [sys.executable, "-m", __spec__.name, "serve", str(folder), str(count), *preload],
        stdin=subprocess.PIPE)
    try:
        yield attach_command(folder)
    finally:
        with contextlib.suppress(OSError):
            template.stdin.close()
        template.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _send(conn: socket.socket, payload: bytes) -> None:
    conn.sendall(struct.pack("!I", len(payload)) + payload)


def _receive(conn: socket.socket) -> bytes | None:
    head = _read_exactly(conn, 4)
    return None if head is None else _read_exactly(conn, struct.unpack("!I", head)[0])


def _read_exactly(conn: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    """Bind or connect the socket by its short name from inside its folder. Why: an AF_UNIX
    address holds at most ~108 bytes, and a deep temporary folder (a test's ``tmp_path`` once
    pytest's counter reached three digits, or a long ``TMPDIR``) made the full path longer:
    the template failed to start ("AF_UNIX path too long") and every worker started cold. Only
    this process's own working directory moves, and only for the call."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def attach(folder: Path) -> int:
    """Client side: hand this worker's environment to the template and wait for the worker it
    forks; that worker's exit status. Without a template, become a cold worker (no return)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        cwd = os.getcwd()  # the worker's, sent before the connect moves into the folder
        with _inside(folder):
            conn.connect(TEMPLATE_SOCKET)
        _send(conn, json.dumps({"environ": dict(os.environ), "cwd": cwd}).encode())
        started = _receive(conn) == STARTED
    except OSError:  # no template (gone, or it failed to start)
        started = False
    if not started:
        conn.close()
        os.execv(COLD_COMMAND[0], list(COLD_COMMAND))
    status = _receive(conn)  # blocks until the worker has finished
    return int(status) if status is not None else 1


def serve(folder: Path, count: int, preload: Sequence[str]) -> int:
    """Template side: listen, import, then fork one worker per client until ``count`` have been
    forked; when stdin ends (the pipeline has run), wait for the workers and end."""
    import importlib

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with _inside(folder):
        listener.bind(TEMPLATE_SOCKET)  # first: a client that comes now just waits
    listener.listen(max(count, 1))
    before = dict(os.environ)
    harness = importlib.import_module(HARNESS)
    for name in preload:
        importlib.import_module(name)
    # what the imports put in the environment (e.g. OpenCV's ffmpeg log level): a cold worker
    # would set it too, on top of the environment the runner gives it
    set_by_imports = {k: v for k, v in os.environ.items() if before.get(k) != v}
    workers: list[int] = []
    with selectors.DefaultSelector() as selector:
        selector.register(listener, selectors.EVENT_READ)
        selector.register(sys.stdin, selectors.EVENT_READ)
        while True:
            ready = {key.fileobj for key, _ in selector.select()}
            if listener in ready:
                conn, _ = listener.accept()
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    return _run_worker(conn, harness, set_by_imports)
                conn.close()
                workers.append(pid)
                if len(workers) == count:  # later clients start cold
                    selector.unregister(listener)
                    listener.close()
            elif not sys.stdin.buffer.read1(1):
                break
    # the workers stay this process's children until the build ends, so they stay in the
    # build's process tree (what `ps`, the scale benchmark and a killed build's group see)
    for pid in workers:
        os.waitpid(pid, 0)
    # end without tearing down the imported modules (the build waits for it; nothing is left
    # to flush but the standard streams: core/process_end.py)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _run_worker(conn: socket.socket, harness, set_by_imports: dict[str, str]) -> int:
    """In a forked worker: take the client's environment, run Beam's harness, report."""
    message = _receive(conn)
    if message is None:
        os._exit(1)
    request = json.loads(message)
    os.environ.clear()
    os.environ.update(request["environ"])
    for key, value in set_by_imports.items():
        os.environ.setdefault(key, value)
    os.chdir(request["cwd"])
    if "numpy" in sys.modules:  # a fresh process seeds numpy's global generator from the OS
        sys.modules["numpy"].random.seed()  # (Python's own random reseeds itself at fork)
    _send(conn, STARTED)
    # a client that is gone (killed by the runner) takes its worker with it, as a cold one would go
    threading.Thread(target=lambda: conn.recv(1) or os._exit(1), daemon=True).start()
    try:
        harness.main(sys.argv)
    except BaseException:
        _send(conn, b"1")
        raise
    _send(conn, b"0")
    return 0


def _main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "attach":
        return attach(Path(argv[1]))
    if len(argv) >= 3 and argv[0] == "serve":
        return serve(Path(argv[1]), int(argv[2]), argv[3:])
    print(f"usage: python -m {__spec__.name} attach FOLDER | serve FOLDER COUNT [MODULE...]",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
