"""benchmarks/scale_proactivebench.py: the decode+re-encode floor split over processes covers
exactly the frames of the one-process floor.

Why it matters: the benchmark compares a build's two-worker speed-up with what two processes
gain on the bare floor work; a split that skipped or repeated frames would make that ceiling
wrong without any error.
"""

from __future__ import annotations

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
