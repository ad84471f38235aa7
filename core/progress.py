"""Progress of long work on stderr: one line per stage, with count, total, rate and ETA.

Why two halves: the work runs inside Beam workers — threads of the driver process with the
embedded runner, separate processes with ``--direct_running_mode=multi_processing``, machines
elsewhere with a distributed runner — while the person watching looks at the driver's console.
So work only *counts* (:func:`tally`), and one :class:`ProgressBoard` in the driver prints.

* With a board running (:func:`progress_board`), each process that counts writes its own
  counts to ``<folder>/<host>-<pid>.json`` (atomically, at most twice a second, and on
  :func:`flush`), and the board sums them. The folder is the build's staging folder
  (``_build/progress``), which every worker must reach anyway to write its Parquet. It travels
  *with the pipeline*, not through the environment: a counting step records the folder of the
  board running when the driver builds it (:func:`board_folder`), and calls
  :func:`report_to` with it in each worker (``setup``) — a Flink, Spark or Dataflow worker, or
  Beam's external worker pool, shares no environment, working directory or memory with the
  driver (``pipelines.common.progress.ReportsProgress``). In the driver (the embedded runner's
  in-process workers) the board's folder is set for the whole process.
* Without a folder (a command-line tool run on its own, or a worker of a remote runner whose
  files the driver cannot read), :func:`tally` prints directly.

Lines: on a terminal, tqdm bars redrawn in place; otherwise (CI logs, pipes) a plain line per
stage at most every ``LOG_INTERVAL_S`` seconds and a last one when the stage ends. Rates are
measured from when a stage's first item was counted, and shown only after a second of work, so
the first item never reports an absurd rate.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

WRITE_INTERVAL_S = 0.5
LOG_INTERVAL_S = 15.0
MIN_RATE_ELAPSED_S = 1.0


@dataclass
class StageCount:
    done: int = 0
    total: int | None = None
    started: float = field(default_factory=time.time)  # wall clock: comparable across processes
    counters: dict[str, int] = field(default_factory=dict)

    def add(self, n: int, total: int | None, counters: dict[str, int]) -> None:
        self.done += n
        if total is not None:
            self.total = total
        for key, value in counters.items():
            self.counters[key] = self.counters.get(key, 0) + value

    def merge(self, other: StageCount) -> None:
        self.done += other.done
        if other.total is not None:
            self.total = max(self.total or 0, other.total)
        self.started = min(self.started, other.started)
        for key, value in other.counters.items():
            self.counters[key] = self.counters.get(key, 0) + value


class _Tallies:
    """This process's counts, written to the board's folder (or printed without a board)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stages: dict[str, StageCount] = {}
        self.last_write = 0.0
        self.local: ProgressBoard | None = None
        self.folder: str | None = None
        self.target: str | None = None  # the folder this process reports to (report_to)

    def add(self, stage: str, n: int, total: int | None, counters: dict[str, int]) -> None:
        with self.lock:
            folder = self.target
            if folder != self.folder:  # a new build (board): earlier counts are not its counts
                self.stages.clear()
                self.folder = folder
            self.stages.setdefault(stage, StageCount()).add(n, total, counters)
            if folder:
                if time.monotonic() - self.last_write >= WRITE_INTERVAL_S:
                    self._write(Path(folder))
                return
            if self.local is None:
                self.local = ProgressBoard(None)
            self.local.show({stage: self.stages[stage]})

    def flush(self) -> None:
        with self.lock:
            folder = self.target
            if folder:
                if folder == self.folder:
                    self._write(Path(folder))
            elif self.local is not None:
                self.local.show(self.stages, final=True)
                self.local.close()
                self.local = None
                self.stages.clear()

    def _write(self, folder: Path) -> None:
        self.last_write = time.monotonic()
        data = {s: {"done": c.done, "total": c.total, "started": c.started, "counters": c.counters}
                for s, c in self.stages.items()}
        name = f"{socket.gethostname()}-{os.getpid()}"  # workers on several machines share it
        path = folder / f"{name}.json"
        tmp = folder / f".{name}.json.tmp"
        try:
            tmp.write_text(json.dumps(data))
            os.replace(tmp, path)
        except OSError:  # the board is gone (its build ended): nothing to report to
            pass


_TALLIES = _Tallies()


def report_to(folder: str | None) -> None:
    """Write this process's counts into ``folder`` (a board's, :func:`board_folder`) from now
    on. A worker calls it with the folder its step carries; ``None`` changes nothing, so a step
    built without a board (a test's own pipeline) leaves the process as it is."""
    if folder is None:
        return
    with _TALLIES.lock:
        _TALLIES.target = folder


def board_folder() -> str | None:
    """The folder of the board running in this process (the driver's, while a build runs), for
    a step to carry to its workers; ``None`` without one."""
    return _BOARD_FOLDER


_BOARD_FOLDER: str | None = None


def tally(stage: str, n: int = 1, *, total: int | None = None, **counters: int) -> None:
    """Count ``n`` finished items of ``stage`` (``total``: how many there are, when known;
    ``counters``: extra per-stage counts such as ``cached=3``)."""
    _TALLIES.add(stage, n, total, counters)


def flush() -> None:
    """Report this process's counts now (end of a bundle, end of a batch of requests)."""
    _TALLIES.flush()


def _fmt_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}" if m else f"{s}s"


def describe(stage: str, count: StageCount, now: float | None = None, final: bool = False) -> str:
    """``stage: done/total (pct) rate ETA`` — the plain-text line."""
    now = time.time() if now is None else now
    elapsed = max(now - count.started, 0.0)
    line = f"[benchforge] {stage}: {count.done}"
    if count.total:
        line += f"/{count.total} ({100 * count.done / count.total:.0f}%)"
    if elapsed >= MIN_RATE_ELAPSED_S and count.done:
        rate = count.done / elapsed
        line += f" {rate:.1f}/s" if rate >= 1 else f" {elapsed / count.done:.1f} s/item"
        if count.total and not final and count.done < count.total:
            line += f" ETA {_fmt_duration((count.total - count.done) / rate)}"
    if final:
        line += f" in {_fmt_duration(elapsed)}"
    extra = " ".join(f"{k}={v}" for k, v in sorted(count.counters.items()))
    return f"{line} {extra}".rstrip()


class ProgressBoard:
    """Renders one line per stage. With a ``folder``, a thread polls the workers' files."""

    def __init__(self, folder: Path | None, stream: TextIO | None = None,
                 poll_s: float = WRITE_INTERVAL_S) -> None:
        self.folder = folder
        self.stream = stream or sys.stderr
        self.poll_s = poll_s
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.bars: dict[str, object] = {}
        self.logged: dict[str, float] = {}
        self.finished: set[str] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- folder mode -------------------------------------------------------------------------
    def start(self) -> None:
        assert self.folder is not None
        self.folder.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._poll, name="benchforge-progress", daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(self.poll_s):
            self.show(self.read())

    def read(self) -> dict[str, StageCount]:
        totals: dict[str, StageCount] = {}
        for path in sorted(self.folder.glob("*.json")) if self.folder else []:
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                continue  # being replaced right now; read next time
            for stage, c in data.items():
                count = StageCount(c["done"], c["total"], c["started"], dict(c["counters"]))
                if stage in totals:
                    totals[stage].merge(count)
                else:
                    totals[stage] = count
        return totals

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        flush()  # the driver's own counts (in-process workers)
        self.show(self.read(), final=True)
        self.close()

    # -- rendering ---------------------------------------------------------------------------
    def show(self, stages: dict[str, StageCount], final: bool = False) -> None:
        now = time.time()
        for stage, count in stages.items():
            if stage in self.finished:
                continue
            done = final or (count.total is not None and count.done >= count.total)
            if self.tty:
                self._bar(stage, count)
            elif done or now - self.logged.get(stage, count.started) >= LOG_INTERVAL_S:
                self.logged[stage] = now
                print(describe(stage, count, now, final=done), file=self.stream, flush=True)
            if done:
                self.finished.add(stage)

    def _bar(self, stage: str, count: StageCount) -> None:
        from tqdm import tqdm

        bar = self.bars.get(stage)
        if bar is None:
            bar = tqdm(total=count.total, desc=f"[benchforge] {stage}", file=self.stream,
                       position=len(self.bars), leave=True, dynamic_ncols=True, mininterval=0.2)
            bar.start_t = count.started  # rates from the first counted item, not from now
            self.bars[stage] = bar
        if count.total is not None and bar.total != count.total:
            bar.total = count.total
        bar.set_postfix(count.counters, refresh=False)
        bar.update(count.done - bar.n)

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
        self.bars.clear()


@contextmanager
def progress_board(folder: Path) -> Iterator[ProgressBoard]:
    """Run a board over ``folder`` for the duration of a build: this process reports into it,
    and the steps built meanwhile carry it to their workers (:func:`board_folder`)."""
    global _BOARD_FOLDER
    board = ProgressBoard(folder)
    previous = (_BOARD_FOLDER, _TALLIES.target)
    _BOARD_FOLDER = str(Path(folder).absolute())
    _TALLIES.target = _BOARD_FOLDER
    board.start()
    try:
        yield board
    finally:
        try:
            board.stop()
        finally:
            with _TALLIES.lock:
                _BOARD_FOLDER, _TALLIES.target = previous


class Stage:
    """A named stage with a known total, for loops that count in several places."""

    def __init__(self, name: str, total: int | None = None, enabled: bool = True) -> None:
        self.name = name
        self.total = total
        self.enabled = enabled

    def advance(self, n: int = 1, **counters: int) -> None:
        if self.enabled and (n or counters):
            tally(self.name, n, total=self.total, **counters)

    def close(self) -> None:
        if self.enabled:
            flush()
