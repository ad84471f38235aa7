"""What a build costs on a dask.distributed cluster: the embedded runner against 1, 2, … dask workers.

The same ProactiveBench replica (``benchmarks/replicate_corpus.py``; the demo corpus ×
``--factor``) is built, in this one run, by ``python -m pipelines.proactivebench`` on the
embedded runner and then with ``--runner=dask`` on a local cluster of each size in
``--workers`` — one ``dask scheduler`` and N ``dask worker --nworkers 1 --nthreads 1``
processes (each with its nanny, as deployed) on 127.0.0.1, started fresh for each size and
stopped by their process ids after it. For every build it records the wall time of the build
command, and for every process — the driver (with any children), the scheduler, each worker
(nanny and worker process) — its peak resident memory (``benchmarks/monitor.py``'s sampler,
every 0.2 s) and the CPU seconds it used during the build; the cluster's start-up is timed
apart and not counted in the build. Every dask build's Parquet bytes are compared with the
embedded build's.

    .venv/bin/python benchmarks/scale_dask.py                          # demo ×10; 1 and 2 workers
    .venv/bin/python benchmarks/scale_dask.py --factor 1 --repeat 3 --json dask.json
    .venv/bin/python benchmarks/scale_dask.py --factor 100 --workers 1,2,4,8,16   # a bigger machine

Each cluster builds twice: ``dask`` is its first build (every worker process still imports
the pipeline's modules and sets up its steps), ``dask warm`` the second on the same processes
(what every later build of a long-running cluster costs).

Columns: ``runner`` (embedded, or dask with ``w`` workers), ``wall s`` (median of ``--repeat``;
runners take turns within each repeat, so a slow minute of a shared machine hits all),
``×embedded`` (the overhead ratio: this wall over the embedded runner's), ``speed-up`` (the
1-worker wall of the same kind, cold or warm, over this one's), ``driver MB`` / ``scheduler
MB`` / ``worker MB`` (peak RSS; for workers the largest of them, the JSON lists each), ``total
MB`` (the sum of those peaks: an upper bound of what the machine held), ``driver cpu s`` /
``cluster cpu s`` (CPU seconds used during the build), ``start s`` (the cluster's start-up
until all workers had registered), ``same bytes`` (every Parquet file equal to the embedded
build's), ``load`` (the 1-minute load average at the start of the build: other work on the
machine). Absolute seconds depend on the machine; the ratios of one run are what to compare.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.monitor import MB, SAMPLE_INTERVAL_S, log, python_exe, run_monitored, tree_sampler  # noqa: E402
from benchmarks.replicate_corpus import DEFAULT_CONFIG, parse_factors, replicate  # noqa: E402
from benchmarks.scale_proactivebench import find_release, parse_scales, write_config  # noqa: E402
from core.loopback import free_port  # noqa: E402

DASK = Path(python_exe()).with_name("dask")


@dataclass
class Row:
    runner: str  # embedded | dask (a fresh cluster's first build) | dask warm (its second)
    workers: int
    status: str = "ok"
    walls_s: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    overhead: float | None = None
    speedup: float | None = None
    driver_peak_mb: float = 0.0
    scheduler_peak_mb: float = 0.0
    worker_peaks_mb: list[float] = field(default_factory=list)
    driver_cpu_s: float = 0.0
    scheduler_cpu_s: float = 0.0
    worker_cpu_s: list[float] = field(default_factory=list)
    startup_s: float = 0.0
    same_bytes: bool | None = None
    episodes: int = 0
    load_avg_1m: float = 0.0
    stderr_tail: list[str] = field(default_factory=list)

    @property
    def total_peak_mb(self) -> float:
        return self.driver_peak_mb + self.scheduler_peak_mb + sum(self.worker_peaks_mb)

    @property
    def cluster_cpu_s(self) -> float:
        return self.scheduler_cpu_s + sum(self.worker_cpu_s)


# -- a local cluster ---------------------------------------------------------------------------------
class LocalDaskCluster:
    """``dask scheduler`` and ``workers`` × ``dask worker --nworkers 1 --nthreads 1`` on
    127.0.0.1, each on ports of its own, in a clean environment (PATH and HOME) and a folder of
    its own; a context manager that stops them by their process ids."""

    def __init__(self, workers: int, folder: Path) -> None:
        self.workers, self.folder = workers, folder
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.scheduler: subprocess.Popen | None = None
        self.worker_procs: list[subprocess.Popen] = []
        self.startup_s = 0.0

    def _start(self, args: list[str], log_name: str) -> subprocess.Popen:
        env = {"PATH": f"{DASK.parent}:/usr/bin:/bin", "HOME": str(self.folder)}
        with (self.folder / log_name).open("w") as out:
            return subprocess.Popen([str(DASK), *args], cwd=self.folder, env=env, stdout=out,
                                    stderr=subprocess.STDOUT)

    def __enter__(self) -> LocalDaskCluster:
        from distributed import Client

        self.folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        self.scheduler = self._start(["scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                                      "--no-dashboard", "--idle-timeout", "600"], "scheduler.log")
        try:
            for i in range(self.workers):
                self.worker_procs.append(self._start(
                    ["worker", self.address, "--nworkers", "1", "--nthreads", "1", "--host", "127.0.0.1",
                     "--no-dashboard", "--name", f"w{i}", "--death-timeout", "60",
                     "--local-directory", str(self.folder / f"w{i}")], f"worker{i}.log"))
            with Client(self.address, set_as_default=False, timeout=60) as client:
                client.wait_for_workers(self.workers, timeout=120)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.perf_counter() - started
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        for proc in [*self.worker_procs, self.scheduler]:
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def processes(self) -> dict[str, int]:
        assert self.scheduler is not None
        return {"scheduler": self.scheduler.pid,
                **{f"worker{i}": p.pid for i, p in enumerate(self.worker_procs)}}


# -- sampling processes that are not the build's children ------------------------------------------
def tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its descendants so far."""
    try:
        top = psutil.Process(pid)
        procs = [top, *top.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for proc in procs:
        try:
            t = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system
    return total


class TreeSampler(threading.Thread):
    """Peak RSS of each named process tree, sampled like the build's own (monitor.py) while
    the build runs; CPU seconds each used between :meth:`start` and :meth:`finish`."""

    def __init__(self, pids: dict[str, int]) -> None:
        super().__init__(daemon=True)
        self.pids = pids
        self.peak = dict.fromkeys(pids, 0)
        self.cpu_before = {name: tree_cpu_s(pid) for name, pid in pids.items()}
        self.cpu: dict[str, float] = {}
        self.done = threading.Event()
        self.sample = tree_sampler()

    def run(self) -> None:
        while not self.done.is_set():
            for name, pid in self.pids.items():
                self.peak[name] = max(self.peak[name], self.sample(pid)[0])
            time.sleep(SAMPLE_INTERVAL_S)

    def finish(self) -> None:
        self.done.set()
        self.join()
        self.cpu = {name: tree_cpu_s(pid) - self.cpu_before[name] for name, pid in self.pids.items()}


# -- builds ----------------------------------------------------------------------------------------
def parquet_digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.parquet"))}


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(row: Row, config: Path, corpus: Path, out: Path, logs: Path, timeout: float | None,
          cluster: LocalDaskCluster | None) -> Path | None:
    """One monitored build into a fresh ``out``; returns its release, None when it failed."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [python_exe(), "-m", "pipelines.proactivebench", "--config", str(config),
           "--raw-dir", str(corpus), "--out", str(out)]
    if cluster is not None:
        cmd += ["--runner=dask", f"--dask_client_address={cluster.address}"]
    row.load_avg_1m = max(row.load_avg_1m, os.getloadavg()[0])
    sampler = TreeSampler(cluster.processes() if cluster is not None else {})
    sampler.start()
    cpu_before = children_cpu_s()  # the build is this process's only child that ends meanwhile
    try:
        run = run_monitored(cmd, logs, timeout)
    finally:
        sampler.finish()
    row.walls_s.append(run.wall_s)
    row.driver_cpu_s = max(row.driver_cpu_s, children_cpu_s() - cpu_before)
    row.driver_peak_mb = max(row.driver_peak_mb, run.peak_rss_bytes / MB)
    if cluster is not None:
        row.startup_s = max(row.startup_s, cluster.startup_s)
        row.scheduler_peak_mb = max(row.scheduler_peak_mb, sampler.peak["scheduler"] / MB)
        row.scheduler_cpu_s = max(row.scheduler_cpu_s, sampler.cpu["scheduler"])
        peaks = [sampler.peak[f"worker{i}"] / MB for i in range(row.workers)]
        cpus = [sampler.cpu[f"worker{i}"] for i in range(row.workers)]
        row.worker_peaks_mb = [max(a, b) for a, b in zip(peaks, row.worker_peaks_mb or peaks, strict=True)]
        row.worker_cpu_s = [max(a, b) for a, b in zip(cpus, row.worker_cpu_s or cpus, strict=True)]
    release = find_release(out)
    if run.timed_out or run.returncode != 0 or release is None:
        row.status = "timeout" if run.timed_out else f"failed rc={run.returncode}"
        row.stderr_tail = run.stderr_tail
        return None
    counts = json.loads((release / "manifest.json").read_text())["counts"]
    row.episodes = sum(c["kept"] for c in counts.values())
    return release


def finish_rows(rows: list[Row]) -> None:
    embedded = next((r for r in rows if r.runner == "embedded" and r.status == "ok"), None)
    for row in rows:
        if row.status != "ok":
            continue
        row.wall_s = statistics.median(row.walls_s)
    for row in rows:
        if row.status != "ok":
            continue
        if embedded is not None:
            row.overhead = row.wall_s / embedded.wall_s
        one = next((r for r in rows if r.runner == row.runner and r.workers == 1 and r.status == "ok"), None)
        if one is not None and row.runner != "embedded":
            row.speedup = one.wall_s / row.wall_s


COLUMNS = [  # header, width, value
    ("runner", 10, lambda r: r.runner),
    ("w", 3, lambda r: str(r.workers)),
    ("wall s", 7, lambda r: f"{r.wall_s:.1f}"),
    ("×embedded", 10, lambda r: _opt(r.overhead, "{:.2f}")),
    ("speed-up", 9, lambda r: _opt(r.speedup, "{:.2f}")),
    ("driver MB", 10, lambda r: f"{r.driver_peak_mb:.0f}"),
    ("scheduler MB", 13, lambda r: f"{r.scheduler_peak_mb:.0f}" if r.runner != "embedded" else "-"),
    ("worker MB", 10, lambda r: f"{max(r.worker_peaks_mb):.0f}" if r.worker_peaks_mb else "-"),
    ("total MB", 9, lambda r: f"{r.total_peak_mb:.0f}"),
    ("driver cpu s", 13, lambda r: f"{r.driver_cpu_s:.1f}"),
    ("cluster cpu s", 14, lambda r: f"{r.cluster_cpu_s:.1f}" if r.runner != "embedded" else "-"),
    ("start s", 8, lambda r: f"{r.startup_s:.1f}" if r.runner != "embedded" else "-"),
    ("same bytes", 11, lambda r: "-" if r.same_bytes is None else ("yes" if r.same_bytes else "NO")),
    ("load", 5, lambda r: f"{r.load_avg_1m:.1f}"),
]


def _opt(value: float | None, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)


def render_table(rows: list[Row]) -> str:
    lines = ["  ".join(f"{h:>{w}}" for h, w, _ in COLUMNS)]
    for row in rows:
        if row.status != "ok":
            tail = " | ".join(row.stderr_tail[-3:])
            lines.append(f"{row.runner:>10}  {row.workers:>3}  {row.status}: {tail}")
            continue
        lines.append("  ".join(f"{fn(row):>{w}}" for _, w, fn in COLUMNS))
    return "\n".join(lines)


def demo_corpus(work: Path) -> Path:
    """The ProactiveBench demo corpus (scripts/make_demo_corpus.py) in ``work``."""
    out = work / "demo"
    subprocess.run([python_exe(), str(ROOT / "scripts" / "make_demo_corpus.py"), "--out", str(out),
                    "--no-check"], cwd=ROOT, check=True, capture_output=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw-dir", type=Path, default=None,
                        help="a ProactiveBench demo corpus (default: made in the work folder)")
    parser.add_argument("--factor", type=int, default=10, help="replication factor (default 10)")
    parser.add_argument("--workers", default="1,2", help="dask worker counts, comma-separated")
    parser.add_argument("--repeat", type=int, default=1, help="builds per runner (median wall)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per build")
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep corpora, releases and logs")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args(argv)
    workers = parse_scales(args.workers, "--workers")
    if args.repeat < 1 or args.factor < 1:
        raise SystemExit("--repeat and --factor: at least 1")
    work = (args.work_dir or Path(tempfile.mkdtemp(prefix="scale-dask-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    rows = [Row("embedded", 1), *(Row(kind, n) for n in workers for kind in ("dask", "dask warm"))]
    try:
        raw = args.raw_dir.resolve() if args.raw_dir else demo_corpus(work)
        log(f"replicating {raw} ×{args.factor}")
        summary = replicate(raw, work / "corpus", parse_factors(args.factor, [], False))
        config = write_config(DEFAULT_CONFIG, summary["reader_per_class"], work / "config.yaml")
        reference: dict[str, str] | None = None
        for turn in range(args.repeat):
            for group in [rows[:1], *(rows[i:i + 2] for i in range(1, len(rows), 2))]:
                with contextlib.ExitStack() as stack:
                    cluster = None
                    if group[0].runner != "embedded":  # a fresh cluster: its first build, then a second
                        cluster = stack.enter_context(LocalDaskCluster(
                            group[0].workers, work / f"cluster-w{group[0].workers}-{turn}"))
                    for row in group:
                        name = f"{row.runner.replace(' ', '-')}-w{row.workers}"
                        log(f"run {turn + 1}/{args.repeat}: {name}")
                        release = build(row, config, work / "corpus", work / f"out-{name}",
                                        work / f"logs-{name}-{turn}", args.timeout, cluster)
                        if release is None:
                            continue
                        digests = parquet_digests(release)
                        reference = reference or digests
                        row.same_bytes = None if row.runner == "embedded" else (
                            digests == reference and row.same_bytes is not False)
    finally:
        if args.work_dir is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    finish_rows(rows)
    print(render_table(rows))
    if args.json:
        args.json.write_text(json.dumps(report(rows, args), indent=2) + "\n")
    return 0 if all(r.status == "ok" and r.same_bytes is not False for r in rows) else 1


def report(rows: list[Row], args: argparse.Namespace) -> dict[str, Any]:
    import apache_beam
    import dask

    return {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "beam": apache_beam.__version__, "dask": dask.__version__},
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "factor": args.factor, "repeat": args.repeat,
        "rows": [{**asdict(r), "total_peak_mb": r.total_peak_mb, "cluster_cpu_s": r.cluster_cpu_s}
                 for r in rows],
    }


if __name__ == "__main__":
    sys.exit(main())
