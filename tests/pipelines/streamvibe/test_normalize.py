"""StreamVibe's causal 1 FPS stream (``pipelines/streamvibe/normalize.py``) is the project's one
sampler with the streams' cap: same frames, same resize, same JPEG bytes as every other caller."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import cv2
import numpy as np
import pytest

from core.media.video import STREAM_MAX_SIDE, causal_frames
from pipelines.common.decoded_frames import FrameStore
from pipelines.streamvibe import normalize
from pipelines.streamvibe.normalize import NormalizedVideo, decoder_key, normalize_video


def test_stream_frames_are_the_samplers_with_the_streams_cap(media: Path) -> None:
    video = normalize_video((media / "vtest.avi").read_bytes(), "videos/vtest.avi")
    ref = causal_frames(media / "vtest.avi", max_side=STREAM_MAX_SIDE)
    assert list(video.frames) == [f.image for f in ref.frames]
    assert video.frame_times == tuple(float(k) for k in range(80))
    assert video.frame_pts == video.frame_times  # 10 fps: a frame exactly on every second
    shapes = {cv2.imdecode(np.frombuffer(f, np.uint8), cv2.IMREAD_COLOR).shape for f in video.frames}
    assert shapes == {(336, 448, 3)}  # 768x576, longest side capped at 448, aspect 4:3 kept
    assert (video.width, video.height, video.duration_s) == (768, 576, 79.5)  # the source's facts


def test_the_decoder_key_changes_with_the_samplers_settings() -> None:
    assert decoder_key(448, 90) == decoder_key(448, 90)
    assert len({decoder_key(448, 90), decoder_key(224, 90), decoder_key(448, 85)}) == 3


def test_a_video_survives_its_timeline_round_trip_through_the_frame_store(media: Path,
                                                                          tmp_path: Path) -> None:
    """What the release reads back from the pending state's frames is the video decoding gave."""
    video = normalize_video((media / "vtest.avi").read_bytes(), "videos/vtest.avi")
    store = FrameStore(str(tmp_path / "frames"))
    key = decoder_key(448, 90)
    store.put(video.sha256, key, video.timeline(), video.frames)
    kept, why = store.get(video.sha256, key)
    assert why == "" and kept is not None
    back = NormalizedVideo.from_timeline(kept.facts, "copies/vtest.avi", kept.frames)
    assert back.source_file == "copies/vtest.avi"
    assert [f.read() for f in back.frames] == list(video.frames)
    assert back == dataclasses.replace(video, source_file="copies/vtest.avi", frames=back.frames)
    with pytest.raises(ValueError, match="fields"):
        NormalizedVideo.from_timeline({**video.timeline(), "extra": 1}, "x", ())


@pytest.mark.parametrize("damage", [
    {"duration_s": float("nan")}, {"duration_s": "79.5"}, {"width": 768.5}, {"height": True},
    {"frame_times": [0.0, 1.0]}, {"frame_pts": "0,1"}, {"frame_times": [float("inf")] * 80},
    {"sha256": 7}])
def test_a_damaged_timeline_is_refused_by_name(media: Path, damage: dict) -> None:
    """A kept record is checked before the release uses it: the wrong kind of value, a number
    that is not finite or a frame time too few is a ValueError naming the field, not a stream."""
    video = normalize_video((media / "vtest.avi").read_bytes(), "videos/vtest.avi")
    timeline = {**video.timeline(), **damage}
    with pytest.raises(ValueError, match="timeline field|frame times"):
        NormalizedVideo.from_timeline(timeline, "videos/vtest.avi", video.frames)


def test_every_timeline_field_has_its_type() -> None:
    assert set(normalize._TIMELINE_TYPES) == {  # noqa: SLF001 - the check's table
        f.name for f in dataclasses.fields(NormalizedVideo)} - {"source_file", "frames"}
