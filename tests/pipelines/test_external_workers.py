"""Each benchmark's demo built by SDK workers that share nothing with the driver but files.

A Flink, Spark or Dataflow task manager runs the Python steps in processes of its own: another
working directory, an environment that holds none of the driver's variables, no memory in
common. Beam's external worker pool (``python -m apache_beam.runners.worker.worker_pool_main``,
the process a Flink or Spark deployment runs beside each task manager) is that set-up on one
machine, reached through ``PortableRunner`` with ``--environment_type=EXTERNAL``: started here
with ``env -i``-style settings (PATH and HOME only) in a folder of its own, it proves that

* paths reach the workers (the driver is given *relative* ``--raw-dir`` / ``--out`` and makes
  them absolute once: ``pipelines.common.command_line.absolute_paths``), while the release still names
  no absolute path;
* the steps' counts reach the driver's progress board through the staging folder the steps
  carry (``pipelines.common.progress.ReportsProgress``), not through the environment;
* every Parquet byte equals the embedded runner's build of the same input.

Flink, Spark and Dataflow themselves are not run (their job servers come from Maven Central or
Google Cloud, unreachable here): docs/scaling.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.loopback import free_port
from tests.pipelines.proready.conftest import write_corpus

REPO = Path(__file__).resolve().parents[2]


class WorkerPool:
    """A running ``worker_pool_main`` process: its port, pid, working directory and log."""

    def __init__(self, port: int, proc: subprocess.Popen, cwd: Path, log: Path) -> None:
        self.port, self.proc, self.cwd, self.log = port, proc, cwd, log

    def args(self) -> list[str]:
        """The Beam options that send a build's steps to this pool."""
        return ["--runner=PortableRunner", "--job_endpoint=embed", "--environment_type=EXTERNAL",
                f"--environment_config=localhost:{self.port}"]

    def workers_started(self) -> int:
        """How many SDK worker processes the pool has started so far (one line each in its log)."""
        return self.log.read_text().count("Starting worker with command")


def wait_for_port(port: int, proc: subprocess.Popen, log: Path, limit_s: float = 30.0) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"worker pool exited ({proc.returncode}): {log.read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("localhost", port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail(f"worker pool did not listen on {port} within {limit_s}s: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerPool]:
    """The external worker pool, started the way a task manager starts Python: a clean
    environment (PATH with the venv's ``python`` first — the pool starts each SDK worker as
    ``python -c …`` — and HOME; nothing else, no BENCHFORGE_* variable) in a working directory
    that is neither the repository nor the driver's."""
    cwd = tmp_path_factory.mktemp("task_manager")
    log = cwd.parent / "worker_pool.log"
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(cwd)}
    port = free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main", f"--service_port={port}"],
            cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, proc, log)
        yield WorkerPool(port, proc, cwd, log)
    finally:
        proc.terminate()  # the pool stops its SDK worker processes on exit (atexit)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def parquet_digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.parquet"))}


def build_both(run: Any, args: list[str], pool: WorkerPool, where: Path,
               monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
               ) -> tuple[Path, Path, str]:
    """The same build twice from ``where`` (relative ``--out``): embedded, then on the external
    pool. Returns both results and what the external build's progress board printed."""
    monkeypatch.chdir(where)
    embedded = run([*args, "--out", "embedded"])
    capsys.readouterr()
    started = pool.workers_started()
    external = run([*args, "--out", "external", *pool.args()])
    board = capsys.readouterr().err
    assert pool.workers_started() > started  # the steps ran in the pool's processes
    return embedded, external, board


def assert_same_bytes(embedded: Path, external: Path, at_least: int) -> None:
    reference = parquet_digests(embedded)
    assert len(reference) >= at_least
    assert parquet_digests(external) == reference


def assert_no_absolute_path(release: Path, *roots: Path) -> None:
    """The driver made every path absolute for the workers; the release still names none."""
    for f in release.rglob("*"):
        if f.suffix in {".json", ".jsonl", ".md", ".yaml"}:
            text = f.read_text()
            for root in roots:
                assert str(root) not in text, f"{f.relative_to(release)} names {root}"


def demo_config(name: str, absolute: tuple[str, ...], folder: Path) -> Path:
    """``configs/<name>.yaml`` without its video datasets (the custom manifest alone, as in the
    benchmarks' own build tests), its repo-relative files made absolute."""
    cfg = yaml.safe_load((REPO / "configs" / f"{name}.yaml").read_text())
    cfg.pop("datasets", None)
    for key in absolute:
        cfg[key] = str(REPO / cfg[key])
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.fixture(scope="module")
def demo_raw(videos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RAW_DIR holding the StreamVibe demo corpus (pipelines/streamvibe/demo.py)."""
    from pipelines.streamvibe import demo as streamvibe_demo

    raw = tmp_path_factory.mktemp("raw")
    streamvibe_demo.build(videos, raw / "streamvibe")
    return raw


def test_the_pool_shares_no_environment_or_working_directory_with_the_driver(pool: WorkerPool) -> None:
    environ = Path(f"/proc/{pool.proc.pid}/environ").read_bytes().split(b"\0")
    names = sorted(e.split(b"=", 1)[0].decode() for e in environ if e)
    assert names == ["HOME", "PATH"]
    assert Path(os.readlink(f"/proc/{pool.proc.pid}/cwd")) == pool.cwd
    assert pool.cwd != Path.cwd() and REPO not in pool.cwd.parents


def test_proactivebench_demo_on_external_workers(pool: WorkerPool, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from pipelines.proactivebench.build import run

    subprocess.run([sys.executable, str(REPO / "scripts" / "make_demo_corpus.py"),
                    "--out", str(tmp_path / "demo"), "--no-check"], check=True, capture_output=True)
    embedded, external, board = build_both(run, ["--raw-dir", "demo"], pool, tmp_path, monkeypatch, capsys)
    assert external == tmp_path / "external" / "proactivebench" / embedded.name
    assert_same_bytes(embedded, external, at_least=10)  # 7 environments + filtered, rejected, …
    assert_no_absolute_path(external, tmp_path, pool.cwd)
    # counted in the pool's processes only, summed by the driver's board from the staging folder
    assert "read quickdraw: 8/8 (100%)" in board and "episodes kept: 36" in board


def streamvibe_release_args(demo_raw: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The StreamVibe demo's pending state built (embedded) in ``tmp_path``, the working
    directory from now on, and the release's arguments with the scripted panel's decisions, every
    path relative to it."""
    from pipelines.streamvibe import demo as streamvibe_demo
    from pipelines.streamvibe.build import run

    (tmp_path / "raw").symlink_to(demo_raw)  # typed relative to the driver's working directory
    config = demo_config("streamvibe", ("intents", "prompt"), tmp_path)
    args = ["--config", str(config), "--raw-dir", "raw"]
    monkeypatch.chdir(tmp_path)
    pending = run([*args, "--out", "pending", "--no-review-media"])
    rows = streamvibe_demo.decisions(pending / "review_candidates.jsonl")
    Path("decisions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return [*args, "--decisions", "decisions.jsonl"]


def proready_release_args(videos: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A ProReady corpus of two real videos and one missing one, its pending state built
    (embedded) in ``tmp_path``, the working directory from now on, and the release's arguments
    with the demo panel's decisions and corrections, every path relative to it."""
    from pipelines.proready import demo as proready_demo
    from pipelines.proready.build import run

    by_id = {v["video_id"]: v for v in proready_demo.MANIFEST["videos"]}
    write_corpus(tmp_path / "raw", videos, [by_id["tree"], by_id["bikes"],
                                            {"video_id": "missing", "path": "video/none.mp4",
                                             "annotations": {}}])
    config = demo_config("proready", ("prompts_dir",), tmp_path)
    args = ["--config", str(config), "--raw-dir", "raw"]
    monkeypatch.chdir(tmp_path)
    pending = run([*args, "--out", "pending"])
    decisions, corrections = proready_demo.make_decisions(pending, tmp_path / "review")
    return [*args, "--decisions", str(decisions.relative_to(tmp_path)),
            "--corrections", str(corrections.relative_to(tmp_path))]


def test_streamvibe_demo_on_external_workers(pool: WorkerPool, demo_raw: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Pending review (embedded), the scripted panel's decisions, then the release twice."""
    from pipelines.streamvibe.build import run

    args = streamvibe_release_args(demo_raw, tmp_path, monkeypatch)
    embedded, external, board = build_both(run, args, pool, tmp_path, monkeypatch, capsys)
    manifest = json.loads((external / "manifest.json").read_text())
    assert sum(c["kept"] for c in manifest["counts"].values()) == 12
    assert manifest["counts"] == json.loads((embedded / "manifest.json").read_text())["counts"]
    assert_same_bytes(embedded, external, at_least=3)
    assert_no_absolute_path(external, tmp_path, pool.cwd)
    assert "(100%)" in board


def test_proready_corpus_on_external_workers(pool: WorkerPool, videos: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Pending review (embedded), the demo panel's decisions and corrections, then the release
    twice; a small corpus of two real videos and one missing one."""
    from pipelines.proready.build import run

    args = proready_release_args(videos, tmp_path, monkeypatch)
    embedded, external, board = build_both(run, args, pool, tmp_path, monkeypatch, capsys)
    manifest = json.loads((external / "manifest.json").read_text())
    assert manifest["counts"]["videos"] == {"inputs": 3, "kept": 2, "filtered": 0, "rejected": 1}
    assert manifest["counts"]["items"]["kept"] > 0
    assert manifest["counts"] == json.loads((embedded / "manifest.json").read_text())["counts"]
    assert_same_bytes(embedded, external, at_least=3)
    assert_no_absolute_path(external, tmp_path, pool.cwd)
    assert "(100%)" in board
