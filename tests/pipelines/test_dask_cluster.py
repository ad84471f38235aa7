"""Each benchmark's demo built on a real dask.distributed cluster: one ``dask scheduler`` and two
``dask worker --nworkers 1 --nthreads 1`` processes on 127.0.0.1, on ports of their own.

What a Slurm allocation started by ``dask-jobqueue`` gives a build, on one machine: worker
processes that share nothing with the driver but files (started here with PATH and HOME only,
in a folder of their own), reached through ``--runner=dask --dask_client_address=…``
(:mod:`pipelines.common.dask_runner`). Each demo is built twice from relative paths — on the
embedded runner, then on the cluster — and every Parquet byte must be equal, the manifest's
counts balance (``inputs = kept + filtered + rejected``) and the work must have run on both
workers. One build loses a worker process in the middle (SIGKILL; its nanny starts another,
the scheduler runs the lost tasks again) and still gives the same bytes. The processes are
stopped by their own ids, and must be gone afterwards.

The helpers are those of the external-worker-pool tests (``test_external_workers.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from distributed import Client

from tests.pipelines.test_external_workers import (  # noqa: F401 - demo_raw is a fixture
    assert_no_absolute_path,
    assert_same_bytes,
    build_both,
    demo_raw,
    free_port,
    proready_release_args,
    streamvibe_release_args,
    wait_for_port,
)

REPO = Path(__file__).resolve().parents[2]
DASK = Path(sys.executable).with_name("dask")


class DaskCluster:
    """A running scheduler and its workers: address, processes, and a client of the test's own
    that watches which worker ran which task (the scheduler's task stream)."""

    def __init__(self, address: str, procs: list[subprocess.Popen], cwd: Path, observer: Client) -> None:
        self.address, self.procs, self.cwd, self.observer = address, procs, cwd, observer
        self.since = time.time()

    def args(self) -> list[str]:
        """The options that send a build's steps to this cluster."""
        return ["--runner=dask", f"--dask_client_address={self.address}"]

    def tasks_by_worker(self, since: float | None = None) -> Counter[str]:
        stream = self.observer.get_task_stream(start=self.since if since is None else since)
        return Counter(t["worker"] for t in stream)

    def workers_started(self) -> int:
        """How many tasks the workers have run so far (what ``build_both`` checks grew)."""
        return sum(self.tasks_by_worker().values())

    def worker_pids(self) -> dict[str, int]:
        return self.observer.run(os.getpid)


def start(cmd: list[str], cwd: Path, log: Path) -> subprocess.Popen:
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(cwd)}
    with log.open("w") as out:
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)


def stop(procs: list[subprocess.Popen]) -> list[int]:
    """Stop the processes by their ids (workers first, then the scheduler): SIGTERM, SIGKILL
    after 20 s; returns every pid they and their children (the nannies' worker processes) had."""
    pids = []
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            pids += [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
        pids.append(proc.pid)
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return pids


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    """``dask scheduler`` and two ``dask worker`` processes (each with its nanny, as deployed),
    in a clean environment and a working directory that is neither the repository nor the
    driver's; stopped by their own ids, and checked to be gone."""
    cwd = tmp_path_factory.mktemp("dask_cluster")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    log = cwd / "scheduler.log"
    # an idle scheduler ends on its own after 5 min, and workers 60 s after losing it, should
    # this process die before its finalizer runs
    procs = [start([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard",
                    "--idle-timeout", "300"], cwd, log)]
    observer = None
    try:
        wait_for_port(port, procs[0], log)
        for i in (1, 2):
            procs.append(start([str(DASK), "worker", address, "--nworkers", "1", "--nthreads", "1",
                                "--host", "127.0.0.1", "--worker-port", str(free_port()),
                                "--nanny-port", str(free_port()), "--no-dashboard", "--name", f"w{i}",
                                "--death-timeout", "60", "--local-directory", str(cwd / f"w{i}")],
                               cwd, cwd / f"worker{i}.log"))
        observer = Client(address, set_as_default=False, timeout=30)
        observer.wait_for_workers(2, timeout=60)
        observer.get_task_stream(start=time.time())  # starts the scheduler's task stream
        yield DaskCluster(address, procs, cwd, observer)
    finally:
        if observer is not None:
            observer.close()
        pids = stop(procs[1:] + procs[:1])
        assert [p for p in pids if alive(p)] == [], "cluster processes still running"


def assert_balanced(manifest: dict[str, Any]) -> None:
    for group, c in manifest["counts"].items():
        assert c["inputs"] == c["kept"] + c["filtered"] + c["rejected"], (group, c)


def assert_spread(cluster: DaskCluster, since: float) -> None:
    """The build's tasks ran on both workers."""
    assert len(cluster.tasks_by_worker(since)) == 2


def test_the_cluster_shares_no_environment_or_working_directory_with_the_driver(cluster: DaskCluster) -> None:
    for pid in cluster.worker_pids().values():
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        names = {e.split(b"=", 1)[0].decode() for e in environ if e}
        assert "BENCHFORGE" not in " ".join(names) and {"HOME", "PATH"} <= names
        assert Path(os.readlink(f"/proc/{pid}/cwd")) == cluster.cwd
    assert len(cluster.worker_pids()) == 2


def test_proactivebench_demo_on_dask(cluster: DaskCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    from pipelines.proactivebench.build import run

    subprocess.run([sys.executable, str(REPO / "scripts" / "make_demo_corpus.py"),
                    "--out", str(tmp_path / "demo"), "--no-check"], check=True, capture_output=True)
    since = time.time()
    embedded, remote, board = build_both(run, ["--raw-dir", "demo"], cluster, tmp_path, monkeypatch, capsys)
    assert remote == tmp_path / "external" / "proactivebench" / embedded.name
    assert_same_bytes(embedded, remote, at_least=10)  # 7 environments + filtered, rejected, …
    manifest = json.loads((remote / "manifest.json").read_text())
    assert manifest["counts"] == json.loads((embedded / "manifest.json").read_text())["counts"]
    assert sum(c["kept"] for c in manifest["counts"].values()) == 36
    assert_balanced(manifest)
    assert_no_absolute_path(remote, tmp_path, cluster.cwd)
    assert_spread(cluster, since)
    # counted in the workers only, summed by the driver's board from the staging folder
    assert "read quickdraw: 8/8 (100%)" in board and "episodes kept: 36" in board


def test_a_worker_killed_mid_build_changes_no_byte(cluster: DaskCluster, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """SIGKILL to the worker process running one of the build's tasks: its nanny starts a new
    one, the scheduler runs the tasks it lost again (their outputs are files written whole
    and content-addressed blobs, so a second run writes the same bytes), and the release equals
    the embedded build's."""
    from pipelines.proactivebench.build import run

    subprocess.run([sys.executable, str(REPO / "scripts" / "make_demo_corpus.py"),
                    "--out", str(tmp_path / "demo"), "--no-check"], check=True, capture_output=True)
    monkeypatch.chdir(tmp_path)
    embedded = run(["--raw-dir", "demo", "--out", "embedded"])
    before = cluster.worker_pids()
    killed: list[int] = []
    done = threading.Event()

    def kill_a_busy_worker() -> None:
        while not done.is_set() and not killed:
            busy = [w for w, keys in cluster.observer.processing().items() if keys]
            if busy and busy[0] in before:
                os.kill(before[busy[0]], signal.SIGKILL)
                killed.append(before[busy[0]])
            time.sleep(0.02)

    killer = threading.Thread(target=kill_a_busy_worker, daemon=True)
    killer.start()
    try:
        remote = run(["--raw-dir", "demo", "--out", "external", *cluster.args()])
    finally:
        done.set()
        killer.join()
    assert killed and not alive(killed[0])
    assert_same_bytes(embedded, remote, at_least=10)
    assert_balanced(json.loads((remote / "manifest.json").read_text()))
    cluster.observer.wait_for_workers(2, timeout=60)  # the nanny's new worker process
    assert killed[0] not in cluster.worker_pids().values()


def test_streamvibe_demo_on_dask(cluster: DaskCluster, demo_raw: Path, tmp_path: Path,  # noqa: F811
                                 monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Pending review (embedded), the scripted panel's decisions, then the release twice."""
    from pipelines.streamvibe.build import run

    args = streamvibe_release_args(demo_raw, tmp_path, monkeypatch)
    since = time.time()
    embedded, remote, board = build_both(run, args, cluster, tmp_path, monkeypatch, capsys)
    manifest = json.loads((remote / "manifest.json").read_text())
    assert sum(c["kept"] for c in manifest["counts"].values()) == 12
    assert manifest["counts"] == json.loads((embedded / "manifest.json").read_text())["counts"]
    assert_balanced(manifest)
    assert_same_bytes(embedded, remote, at_least=3)
    assert_no_absolute_path(remote, tmp_path, cluster.cwd)
    assert_spread(cluster, since)
    assert "(100%)" in board


def test_proready_corpus_on_dask(cluster: DaskCluster, videos: Path, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Pending review (embedded), the demo panel's decisions and corrections, then the release
    twice; two real videos and one missing one."""
    from pipelines.proready.build import run

    args = proready_release_args(videos, tmp_path, monkeypatch)
    since = time.time()
    embedded, remote, board = build_both(run, args, cluster, tmp_path, monkeypatch, capsys)
    manifest = json.loads((remote / "manifest.json").read_text())
    assert manifest["counts"]["videos"] == {"inputs": 3, "kept": 2, "filtered": 0, "rejected": 1}
    assert manifest["counts"]["items"]["kept"] > 0
    assert manifest["counts"] == json.loads((embedded / "manifest.json").read_text())["counts"]
    assert_balanced(manifest)
    assert_same_bytes(embedded, remote, at_least=3)
    assert_no_absolute_path(remote, tmp_path, cluster.cwd)
    assert_spread(cluster, since)
    assert "(100%)" in board
