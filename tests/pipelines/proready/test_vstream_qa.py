"""VStream-QA's RVS-Ego files read over the Ego4D demo (pipelines/common/video_sources/demo/native.py): each
clip a video with the Ego4D narrations inside its range in clip time, every question filtered by the
paper's rule, and the bad inputs of the layout named by file and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.errors import BadInput
from pipelines.common.video_sources.base import NativeFiltered, NativeVideo
from pipelines.proready.vstream_qa import CLIPS, PAST_DEPENDENT, QA, VStreamQA
from tests.pipelines.common.video_sources.conftest import listed

BIKES = "3f1c2a9e-5b7d-4c1e-9a2f-6d8e0b4c7a15"


@pytest.fixture(scope="module")
def demo(media: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pipelines.common.video_sources.demo import native as native_layouts

    out = tmp_path_factory.mktemp("native")
    native_layouts.build(media, out, ["ego4d", "vstream_qa"])
    return out


def _copy(demo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo / "vstream_qa", tmp_path / "vstream_qa"))


def _listed(root: Path, demo: Path) -> tuple[dict[str, NativeVideo], list[NativeFiltered], list[BadInput]]:
    return listed(VStreamQA(str(root), str(demo / "ego4d")))


def test_clips_carry_the_ego4d_narrations_and_every_question_is_filtered(demo: Path) -> None:
    reader = VStreamQA(str(demo / "vstream_qa"), str(demo / "ego4d"))
    reader.check()
    assert list(reader.unrecognized()) == []
    videos, filtered, bad = _listed(demo / "vstream_qa", demo)
    assert sorted(videos) == ["000001", "000002"]
    bikes = videos["000001"]
    assert bikes.video == "vstream-realtime/ego4d_videos/000001.mp4"
    assert [(s.start, s.label) for s in bikes.spans][:2] == [
        (0.6, "a car drives along the road"), (1.4, "a man rides a bicycle past the cars")]
    assert bikes.spans[0].field == \
        f"v2/annotations/narration.json: {BIKES}.narration_pass_1.narrations[1].timestamp_sec"
    assert [(f.item_id, f.rule) for f in filtered] == [
        (f"vstream_qa/question/{k}", PAST_DEPENDENT) for k in (1, 2, 3)]
    assert {(b.item_id, b.source_file, b.field) for b in bad} == {
        ("vstream_qa/000003", CLIPS, "[2].end_time"),  # [0, 30] s of a 4 s video
        ("vstream_qa/000004", CLIPS, "[3].original_video"),  # the Ego4D video was never downloaded
        ("vstream_qa/question/4", QA, "[3].video_id")}  # a clip rvs_ego.json does not define


def test_a_clip_range_is_shifted_to_clip_time(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    clips = json.loads((root / CLIPS).read_text())
    clips[0].update(start_time=4, end_time=9)
    (root / CLIPS).write_text(json.dumps(clips))
    videos, _, _ = _listed(root, demo)
    spans = videos["000001"].spans
    # Ego4D's narrations at 4.2, 6.5 and 8.6 s lie inside [4, 9): 0.2, 2.5 and 4.6 s of the clip
    assert [(s.start, s.get("clip_offset_s")) for s in spans] == [(0.2, "4"), (2.5, "4"), (4.6, "4")]
    assert videos["000001"].annotated_duration_s == 5.0


def test_an_unknown_original_video_is_rejected_naming_it(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    clips = json.loads((root / CLIPS).read_text())
    clips[1]["original_video"] = "not-an-ego4d-uid"
    (root / CLIPS).write_text(json.dumps(clips))
    videos, _, bad = _listed(root, demo)
    assert "000002" not in videos
    (err,) = [b for b in bad if b.item_id == "vstream_qa/000002"]
    assert (err.source_file, err.field) == (CLIPS, "[1].original_video")
    assert err.reason == ("Ego4D video not-an-ego4d-uid is in neither Ego4D's narration.json nor "
                          "its video folder")
    # its cut clip on disk is listed by the definition, so it is not an unannotated input
    assert not [b for b in bad if b.source_file.endswith("000002.mp4")]


@pytest.mark.parametrize("name", [CLIPS, QA])
def test_a_file_that_is_not_json_stops_the_build(demo: Path, tmp_path: Path, name: str) -> None:
    root = _copy(demo, tmp_path)
    (root / name).write_text('[{"video_id": "000001",')
    with pytest.raises(BadInput) as exc:
        VStreamQA(str(root), str(demo / "ego4d")).check()
    assert (exc.value.source_file, exc.value.field) == (name, "json")
