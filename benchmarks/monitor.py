"""Running one build as a subprocess and measuring it: the peak memory of its whole process tree
(Beam worker processes count), the disk it fills, its wall time, and its stderr if it fails.

Shared by the scale benchmarks (``scale_proactivebench.py``, ``scale_video.py``): a figure is
only comparable across benchmarks when it is sampled the same way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_INTERVAL_S = 0.2
STDERR_TAIL_LINES = 12
MB = 1024 * 1024


# -- process-tree memory -------------------------------------------------------------------------------
def _proc_children() -> dict[int, list[int]]:
    """parent pid → child pids, from /proc/<pid>/stat (field 4, after the parenthesised name)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:  # the process ended while we looked
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    return children


def _proc_rss(pid: int) -> int:
    try:
        resident_pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def _tree_pids(root: int) -> list[int]:
    """``root`` and its descendants, from /proc."""
    children = _proc_children()
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo.extend(children.get(pid, []))
    return pids


def tree_rss_each(root: int) -> list[int]:
    """RSS bytes of ``root``, then of each of its descendants (0: ended while we looked)."""
    return [_proc_rss(p) for p in _tree_pids(root)]


def tree_rss_proc(root: int) -> tuple[int, int]:
    """(sum of RSS bytes, process count) over ``root`` and its descendants, from /proc."""
    each = tree_rss_each(root)
    return sum(each), len(each)


def tree_rss_psutil(root: int) -> tuple[int, int]:
    import psutil

    try:
        top = psutil.Process(root)
        procs = [top, *top.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0, 0
    total = 0
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):  # ended between listing and reading
            total += proc.memory_info().rss
    return total, len(procs)


def _proc_pss(pid: int) -> int | None:
    """The proportional set size of ``pid`` (``/proc/<pid>/smaps_rollup``: each shared page
    divided among the processes that map it); None where the kernel does not give it."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        return None
    return None


def tree_pss(root: int) -> int | None:
    """Sum of PSS over ``root`` and its descendants; None where PSS cannot be read.

    Why beside the RSS sum: a process that starts ffmpeg forks first, and until the child execs
    it maps every page of its parent — summed RSS counts the Python build twice for that instant
    (seen: 326 + 326 MB in one 1-second sample of a 100× StreamVibe pending build making ~900
    review copies, where every other sample held one 326 MB build process). The more subprocesses
    a build starts, the likelier a sample lands in that instant, so the summed-RSS peak grows with
    the scale although no process does. PSS counts a shared page once across the tree."""
    total = 0
    for pid in _tree_pids(root):
        pss = _proc_pss(pid)
        if pss is None:
            if pid == root:
                return None
            continue  # the process ended while we looked
        total += pss
    return total


def tree_sampler() -> Callable[[int], tuple[int, int]]:
    """psutil if the venv has it (portable), else /proc (Linux, what these machines run)."""
    try:
        import psutil  # noqa: F401
    except ImportError:
        return tree_rss_proc
    return tree_rss_psutil


class PeakRss:
    """This process's resident memory before a block and its peak during it, sampled every
    ``interval_s`` from a thread. Why not ``ru_maxrss``: that is the peak of the whole life of
    the process, so a step measured after a larger one reads the larger one's peak."""

    def __init__(self, interval_s: float = 0.05) -> None:
        self.interval_s = interval_s
        self.before = self.peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.peak = max(self.peak, _proc_rss(os.getpid()))

    def __enter__(self) -> PeakRss:
        self.before = self.peak = _proc_rss(os.getpid())
        self._thread = threading.Thread(target=self._sample, name="peak-rss", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.peak = max(self.peak, _proc_rss(os.getpid()))

    @property
    def rise_mb(self) -> float:
        return (self.peak - self.before) / MB


# -- running one build -------------------------------------------------------------------------------
@dataclass
class BuildRun:
    returncode: int | None
    wall_s: float
    peak_rss_bytes: int
    peak_procs: int
    samples: int
    timed_out: bool
    stderr_tail: list[str]
    peak_disk_bytes: int = 0
    peak_pss_bytes: int | None = None  # None: PSS not readable here (tree_pss)


def disk_used(path: Path) -> int:
    """Bytes in use on the file system holding ``path`` (statvfs: cheap enough to sample at
    0.2 s, unlike walking a staging folder of ~150K blob files)."""
    return shutil.disk_usage(path).used


def run_monitored(cmd: list[str], log_dir: Path, timeout: float | None,
                  disk_of: Path | None = None) -> BuildRun:
    """Run ``cmd`` in its own session (so a timeout can end exactly its process group), sampling
    the tree's RSS (and PSS: :func:`tree_pss`) every 0.2 s and, with ``disk_of``, how far the
    used bytes of that file system rose above where they were at the start (staging, blob store
    and release together: what a build needs free; anything else writing to the same disk
    meanwhile counts too); stdout/stderr go to files, never to a pipe that could fill up."""
    sample = tree_sampler()
    log_dir.mkdir(parents=True, exist_ok=True)
    out_path, err_path = log_dir / "stdout.log", log_dir / "stderr.log"
    peak = procs = samples = peak_disk = 0
    peak_pss: int | None = None
    disk_before = disk_used(disk_of) if disk_of is not None else 0
    timed_out = False
    with out_path.open("wb") as out, err_path.open("wb") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, start_new_session=True)
        while proc.poll() is None:
            rss, n = sample(proc.pid)
            peak, procs, samples = max(peak, rss), max(procs, n), samples + 1
            pss = tree_pss(proc.pid)
            if pss is not None:
                peak_pss = max(peak_pss or 0, pss)
            if disk_of is not None:
                peak_disk = max(peak_disk, disk_used(disk_of) - disk_before)
            if timeout is not None and time.perf_counter() - started > timeout:
                timed_out = True
                _kill_group(proc)
                break
            time.sleep(SAMPLE_INTERVAL_S)
        proc.wait()
        wall = time.perf_counter() - started
    tail = err_path.read_text(errors="replace").splitlines()[-STDERR_TAIL_LINES:]
    return BuildRun(proc.returncode, wall, peak, procs, samples, timed_out, tail, peak_disk, peak_pss)


def _kill_group(proc: subprocess.Popen) -> None:
    """End the build's own process group (it was started with a new session): TERM, then KILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


def python_exe() -> str:
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def log(message: str) -> None:
    print(f"[scale] {message}", file=sys.stderr, flush=True)
