"""Staging directories: a build killed with ``kill -9`` leaves nothing the next build keeps."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from exports.release import publish, staging_dir

ROOT = Path(__file__).resolve().parents[2]
HOLD = """
import sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from exports.release import staging_dir
with staging_dir(Path({parent!r}), "1.0.0") as staging:
    (staging / "data.parquet").write_bytes(b"half written")
    print(staging, flush=True)
    time.sleep(600)
"""


def _start_build(parent: Path) -> tuple[subprocess.Popen, Path]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD.format(root=str(ROOT), parent=str(parent))],
                            stdout=subprocess.PIPE, text=True)
    staging = Path(proc.stdout.readline().strip())
    assert staging.is_dir()
    return proc, staging


def test_killed_build_is_swept_and_live_build_is_kept(tmp_path: Path) -> None:
    killed, stale = _start_build(tmp_path)
    live, running = _start_build(tmp_path)
    try:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        assert stale.is_dir()  # kill -9: the build could not clean up
        with staging_dir(tmp_path, "1.0.0") as mine:
            assert not stale.exists() and not stale.with_name(stale.name + ".lock").exists()
            assert running.is_dir()  # another build still holds its lock
            assert mine.is_dir()
        assert not mine.exists()
    finally:
        live.kill()
        live.wait()
    with staging_dir(tmp_path, "1.0.0"):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_publish_killed_between_renames_restores_the_release(tmp_path: Path) -> None:
    final = tmp_path / "1.0.0"
    backup = tmp_path / ".1.0.0.previous"
    backup.mkdir()
    (backup / "README.md").write_text("old release")
    new = tmp_path / "new"
    new.mkdir()
    (new / "README.md").write_text("new release")
    publish(new, final)  # the old release is found again, then replaced as usual
    assert (final / "README.md").read_text() == "new release"
    assert not backup.exists()


def test_staging_is_removed_when_the_build_fails(tmp_path: Path) -> None:
    try:
        with staging_dir(tmp_path, "1.0.0") as staging:
            (staging / "x").write_text("x")
            raise RuntimeError("worker failed")
    except RuntimeError:
        pass
    assert list(tmp_path.iterdir()) == []
