"""benchmarks/scale_video.py: the floor decodes exactly the videos the build decodes.

Why it matters: ``×floor`` divides the build's time by the floor's. A floor over fewer videos
than the build reads — only those with candidates, say, when the build also decodes the videos
that yield none and the truncated ones it must decode to reject — makes the build look slower
against its floor than it is (at 100× of the demo corpus, 600 of the 1,700 videos it decodes).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.scale_video import (
    candidate_videos,
    listed_videos,
    pending_state,
    scale_config,
    write_decisions,
)
from core.files import sha256_hex


@pytest.fixture(scope="module")
def release(videos: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, Path]:
    """(raw dir, scale config, pending state, release) of the StreamVibe demo corpus, built as
    ``scale_video.py`` builds a release row: pending state, scripted panel, release."""
    from pipelines.streamvibe import demo as streamvibe_demo
    from pipelines.streamvibe.build import run

    base = tmp_path_factory.mktemp("scale")
    raw = base / "raw"
    streamvibe_demo.build(videos, raw / "streamvibe")
    config = scale_config("streamvibe", base / "streamvibe.yaml")
    out = base / "out"
    common = ["--config", str(config), "--raw-dir", str(raw), "--out", str(out), "--no-review-media"]
    run(common)
    state = pending_state(out, "streamvibe")
    assert state is not None
    released = run([*common, *write_decisions(state, "streamvibe", base / "decisions")])
    return raw, config, state, released


def test_the_floor_decodes_every_video_the_release_lists(release: tuple[Path, Path, Path, Path]) -> None:
    raw, config, state, released = release
    facts = json.loads((released / "manifest.json").read_text())["videos"]
    listed = listed_videos(raw, config, train=False)
    # every video the release read is listed (the same bytes), and nothing more: a truncated or
    # corrupt file is in both, named unreadable by the release, decoded by both
    read = Counter(f["sha256"] for f in facts if not f["sha256"].startswith("unreadable"))
    assert read and not read - Counter(sha256_hex(p.read_bytes()) for p in listed)
    assert len(listed) == len(facts) == len(set(listed))
    assert len(read) < len(facts)  # the demo's bad files are among them
    # the review copies' videos (those with candidates) are among them, and fewer
    with_candidates = candidate_videos(state, "streamvibe", raw)
    assert set(with_candidates) < set(listed)
