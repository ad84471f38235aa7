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

import pyarrow.parquet as pq
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
    listed = listed_videos("streamvibe", raw, config)
    # every video the release read is listed (the same bytes), and nothing more: a truncated or
    # corrupt file is in both, named unreadable by the release, decoded by both
    read = Counter(f["sha256"] for f in facts if not f["sha256"].startswith("unreadable"))
    assert read and not read - Counter(sha256_hex(p.read_bytes()) for p in listed)
    assert len(listed) == len(facts) == len(set(listed))
    assert len(read) < len(facts)  # the demo's bad files are among them
    # the review copies' videos (those with candidates) are among them, and fewer
    with_candidates = candidate_videos(state, "streamvibe", raw)
    assert set(with_candidates) < set(listed)


def test_the_proready_floor_decodes_every_video_the_release_read(tmp_path: Path) -> None:
    """ProReady-QA's listing (the manifest's entries and the listed datasets' videos) names
    exactly the files its release records as read — the same (file, sha256) checksum — and more
    than the candidates name."""
    from exports.release import source_digest
    from pipelines.proready.build import run
    from pipelines.proready.demo import make_corpus

    raw = tmp_path / "raw"
    root = make_corpus(raw)
    config = scale_config("proready", tmp_path / "proready.yaml")
    out = tmp_path / "out"
    common = ["--config", str(config), "--raw-dir", str(raw), "--out", str(out),
              "--review-media", "source"]
    run(common)
    state = pending_state(out, "proready")
    assert state is not None
    released = run([*common, *write_decisions(state, "proready", tmp_path / "decisions")])
    read = json.loads((released / "manifest.json").read_text())["sources"]["videos"]
    listed = listed_videos("proready", raw, config)
    # the videos decoded and then rejected (an annotation past the decoded end) are decoded by
    # both, and the release records only the others as read
    rejected = pq.read_table(next((released / "rejected").glob("*.parquet"))).to_pylist()
    decoded_then_rejected = {r["item_id"].split("/")[-1] for r in rejected
                             if r["environment"] == "videos" and r["stage"] == "read"}
    assert len(decoded_then_rejected) == 2
    kept = [p for p in listed if p.stem not in decoded_then_rejected]
    assert len(kept) == len(listed) - 2
    files = [{"file": p.relative_to(root).as_posix(), "sha256": sha256_hex(p.read_bytes())} for p in kept]
    assert {k: read[k] for k in ("files", "sha256")} == source_digest(files)
    assert set(candidate_videos(state, "proready", raw)) < set(listed)


def test_builds_with_other_worker_counts_must_write_the_same_bytes() -> None:
    from benchmarks.scale_video import Row, check_same_bytes

    rows = [Row(100, "release", 1, output_sha256="a" * 64), Row(100, "release", 2, output_sha256="a" * 64),
            Row(100, "pending", 1, output_sha256="b" * 64), Row(100, "pending", 2, output_sha256="c" * 64),
            Row(1, "pending", 1, output_sha256="d" * 64)]
    assert check_same_bytes(rows) == [
        f"100x pending: w1, w2: DIFFERENT bytes: w1 {'b' * 12}, w2 {'c' * 12}",
        f"100x release: w1, w2: same bytes ({'a' * 12})"]
    assert [r.status for r in rows] == ["ok", "ok", "ok", "bytes differ from w1", "ok"]
