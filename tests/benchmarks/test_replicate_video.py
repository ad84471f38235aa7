"""benchmarks/replicate_video.py: N replicas of a video demo corpus are N× of every input, read by
the real readers in their released layouts — every video under a new id, nothing lost, nothing
counted twice.

Why it matters: the scale benchmark divides time and memory by the replica count; a replica
that dropped a dataset's videos, or repeated an id the reader then rejects as a duplicate,
would make the build look faster (or slower) per minute of video than it is.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.replicate_video import REPLICATED, new_id, replicate
from core.errors import BadInput
from pipelines.common.video_sources import DATASETS
from pipelines.common.video_sources.base import NativeFiltered


@pytest.fixture(scope="module")
def demo(videos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The StreamVibe demo raw-dir (pipelines/streamvibe/demo.py)."""
    from pipelines.streamvibe import demo as streamvibe_demo

    raw = tmp_path_factory.mktemp("raw")
    streamvibe_demo.build(videos, raw / "streamvibe")
    return raw


def _outcomes(root: Path, name: str) -> Counter:
    out: Counter = Counter()
    for x in DATASETS[name](str(root)).videos():
        kind = "bad" if isinstance(x, BadInput) else "filtered" if isinstance(x, NativeFiltered) else "kept"
        out[kind] += 1
    return out


def test_three_replicas_triple_every_outcome_of_every_replicated_layout(demo: Path, tmp_path: Path) -> None:
    summary = replicate(demo, tmp_path / "x3", "streamvibe", 3)
    src, dst = demo / "streamvibe", tmp_path / "x3" / "streamvibe"
    assert REPLICATED["streamvibe"] == ("youcook2", "ego4d", "charades", "videocua")
    for name in REPLICATED["streamvibe"]:
        once, thrice = _outcomes(src / name, name), _outcomes(dst / name, name)
        assert thrice == Counter({k: 3 * v for k, v in once.items()}), name
        assert list(DATASETS[name](str(dst / name)).unrecognized()) == []
    records = [json.loads(x) for x in (dst / "manifest.jsonl").read_text().splitlines()]
    assert len(records) == 3 * len((src / "manifest.jsonl").read_text().splitlines())
    ids = [r["video_id"] for r in records]
    assert len(set(ids)) == len(ids) and {"bikes", "bikesr1", "bikesr2"} <= set(ids)
    bikes2 = next(r for r in records if r["video_id"] == "bikesr2")
    assert (bikes2["video"], bikes2["task_record"]) == ("videos/bikesr2.mp4", "tasks/bikesr2.json")
    # hard links: the same bytes, no new disk
    assert (dst / "videos" / "bikesr2.mp4").stat().st_ino == (src / "videos" / "bikes.mp4").stat().st_ino
    assert summary["factor"] == 3 and summary["datasets"]["ego4d"] == 15
    # VideoCUA: each task folder under its replica id, the log naming it (the reader checks)
    log = json.loads((dst / "videocua/data/Notes/90011r2/action_log.json").read_text())
    assert log["task_id"] == "90011r2" and summary["datasets"]["videocua"] == 3 * 3


def test_unique_bytes_copies_differ_in_bytes_not_in_frames(demo: Path, tmp_path: Path) -> None:
    from core.media.probe import probe_video

    replicate(demo, tmp_path / "u2", "streamvibe", 2, unique_bytes=True)
    dst = tmp_path / "u2" / "streamvibe"
    a, b = dst / "videos" / "bikes.mp4", dst / "videos" / "bikesr1.mp4"
    assert a.read_bytes() != b.read_bytes()
    pa, pb = probe_video(a), probe_video(b)
    assert (pa.decodable_frames, pa.duration_s) == (pb.decodable_frames, pb.duration_s)


def test_an_existing_target_or_a_bad_factor_is_refused(demo: Path, tmp_path: Path) -> None:
    (tmp_path / "busy" / "streamvibe").mkdir(parents=True)
    with pytest.raises(SystemExit, match="exists"):
        replicate(demo, tmp_path / "busy", "streamvibe", 2)
    with pytest.raises(SystemExit, match="at least 1"):
        replicate(demo, tmp_path / "zero", "streamvibe", 0)
    assert new_id("3f1c2a9e-5b7d", 0) == "3f1c2a9e-5b7d" and new_id("B1KES", 4) == "B1KESr4"


def test_long_videos_repeat_the_clip_and_its_annotations(tmp_path: Path) -> None:
    """ProReady-QA's papers' videos are 30-60 minutes long: a clip played k times is a video of
    real frames whose annotations repeat every clip length."""
    import yaml

    from core.media.probe import probe_video
    from pipelines.proready import demo as proready_demo

    proready_demo.make_corpus(tmp_path / "raw")
    summary = replicate(tmp_path / "raw", tmp_path / "long", "proready", 1, long_minutes=2)
    # vtest.avi (79.5 s) twice, bikes.mp4 (10 s) twelve times; tree.avi's header claims more
    # frames than decode (a concatenation would not keep its timeline): left as it is
    assert summary["long_videos_s"] == {"vtest": 159.0, "bikes": 120.0}
    root = tmp_path / "long" / "proready"
    assert probe_video(root / "video" / "vtest.avi").duration_s == 159.0
    doc = yaml.safe_load((root / "manifest.yaml").read_text())
    vtest = next(v for v in doc["videos"] if v["video_id"] == "vtest")
    assert [(a["start"], a["end"]) for a in vtest["annotations"]["actions"]] == [
        (51.0, 58.0), (59.0, 70.0), (71.0, 77.0), (130.5, 137.5), (138.5, 149.5), (150.5, 156.5)]
    assert (vtest["annotations"]["goal"]["start"], vtest["annotations"]["goal"]["end"]) == (67.0, 70.0)
    # the demo corpus itself is untouched (its videos were hard links)
    assert probe_video(tmp_path / "raw" / "proready" / "video" / "vtest.avi").duration_s == 79.5
