"""Held out, proven: no source video of the evaluation split appears in the training split
(StreamVibe App. B.4: "the evaluation samples are held out"; B.1 holds General-Timing out the same
way, "used for neither supervised fine-tuning nor reinforcement learning").

Two keys name a source video, and a training video is held out only if it matches the evaluation
split on neither:

* **source id** — ``<collection>/<video id>`` of the source manifest (App. B.2 keeps "the source
  collection and video identifier"). Conservative on purpose: a training line that reuses an
  evaluation id is a leak even when it points at another file;
* **content** — :func:`stream_sha256`, the hash of the decoded 1 FPS stream (every frame time and
  the sha256 of the frame's JPEG). Unlike the file's sha256 it sees through a renamed or re-muxed
  copy (another container, another id, the same decoded frames at the same times: vtest.avi
  stream-copied into Matroska matches; tree.avi does not, as the copy drops its "repeat the
  previous frame" chunks and so shifts what is on screen when). An exact hash does not match a
  re-encoded copy, and it is a hash of the *whole* stream: a clip cut from an evaluation video
  decodes to a different stream and is not matched — the unit held out is the source video, as
  the paper's is; sharing footage between two source videos is the source collection's business
  (docs/streamvibe.md §Training split).

The build filters a training video that matches any video the evaluation *manifest* lists
(released or not: a candidate still under review may be released later) as ``held_out`` before
any candidate is generated for it, with the match as evidence; the release gate
(``quality.held_out_frame``) then proves the property on what is published, recomputing the
evaluation streams' hashes from their released frames.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from pipelines.streamvibe.training import is_train
from schemas.streamvibe import TRAIN_PREFIX

HELD_OUT = "held_out"


def stream_sha256(frame_times: Iterable[float], frame_sha256: Iterable[str]) -> str:
    """The content key of a decoded 1 FPS stream (module doc)."""
    listing = "\n".join(f"{t:.3f}\t{h}" for t, h in zip(frame_times, frame_sha256, strict=True))
    return hashlib.sha256(listing.encode()).hexdigest()


def frames_stream_sha256(frame_times: list[float], frames: list[bytes]) -> str:
    """:func:`stream_sha256` of frames given as JPEG bytes (what a release holds)."""
    return stream_sha256(frame_times, (hashlib.sha256(f).hexdigest() for f in frames))


def source_id(video_key: str) -> str:
    """``<collection>/<video id>`` of a (split-scoped) video key."""
    return video_key.removeprefix(TRAIN_PREFIX)


def split_video_key(item: dict[str, Any], key: str) -> str:
    """The video key of a pair or candidate, scoped to its split: the same id in two manifests may
    name two different files, so each split decodes its own."""
    return TRAIN_PREFIX + key if is_train(item["id"]) else key


def matches(sid: str, content: str | None, test_ids: set[str], test_streams: dict[str, str]
            ) -> list[dict[str, str]]:
    """How a training video matches the evaluation split: by source id and/or by stream content
    (``test_streams``: stream sha256 → evaluation source id)."""
    out = []
    if sid in test_ids:
        out.append({"by": "source_id", "test_source": sid})
    if content is not None and content in test_streams:
        out.append({"by": "stream_sha256", "test_source": test_streams[content], "stream_sha256": content})
    return out
