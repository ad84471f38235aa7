"""benchmarks/scale_proactivebench.py: the decode+re-encode floor split over processes covers
exactly the frames of the one-process floor, and the disk a build used at its largest is seen.

Why it matters: the benchmark compares a build's two-worker speed-up with what two processes
gain on the bare floor work; a split that skipped or repeated frames would make that ceiling
wrong without any error.
"""

from __future__ import annotations

import sys

from benchmarks.monitor import run_monitored
from benchmarks.scale_proactivebench import decode_encode_floor, parallel_floor
from tests.support.demo import DemoReleases


def test_the_floor_split_over_two_processes_covers_every_frame_once(demo_releases: DemoReleases):
    release = demo_releases.paths["proactivebench"]
    frames, nbytes, seconds = decode_encode_floor(release)
    shares = [decode_encode_floor(release, part, 2) for part in (0, 1)]
    assert frames > 300 and seconds > 0
    assert sum(s[0] for s in shares) == frames and sum(s[1] for s in shares) == nbytes
    assert abs(shares[0][0] - shares[1][0]) <= 1  # every other frame: an even split
    assert parallel_floor(release, 2)[:2] == (frames, nbytes)


def test_a_monitored_build_reports_the_disk_it_used_at_its_largest(tmp_path):
    """The disk column must see space a build used and gave back before it ended (its staging
    folder), not only what is left at the end."""
    target = tmp_path / "staging.bin"
    script = (
        "import os, time\n"
        f"with open({str(target)!r}, 'wb') as f:\n"
        "    f.write(os.urandom(32 * 1024 * 1024)); f.flush(); os.fsync(f.fileno())\n"
        "time.sleep(1.0)\n"
        f"os.remove({str(target)!r})\n"
    )
    run = run_monitored([sys.executable, "-c", script], tmp_path / "logs", timeout=60,
                        disk_of=tmp_path)
    assert run.returncode == 0 and not target.exists()
    assert run.peak_disk_bytes >= 32 * 1024 * 1024
