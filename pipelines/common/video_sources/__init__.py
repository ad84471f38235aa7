"""Readers of the video datasets the video benchmarks build from, in their released layouts
(one module per dataset; :mod:`pipelines.common.video_sources.base` says what each gives).
``DATASETS`` maps the folder name under ``<RAW_DIR>/<benchmark>/`` to the reader."""

from __future__ import annotations

from pipelines.common.video_sources.activitynet_captions import ActivityNetCaptions
from pipelines.common.video_sources.assembly101 import Assembly101
from pipelines.common.video_sources.base import VideoDataset
from pipelines.common.video_sources.charades import Charades
from pipelines.common.video_sources.ego4d import Ego4D
from pipelines.common.video_sources.holoassist import HoloAssist
from pipelines.common.video_sources.perception_test import PerceptionTest
from pipelines.common.video_sources.videocua import VideoCUA
from pipelines.common.video_sources.youcook2 import YouCook2

DATASETS: dict[str, type[VideoDataset]] = {
    cls.name: cls for cls in (YouCook2, ActivityNetCaptions, Charades, Ego4D, Assembly101, HoloAssist,
                              PerceptionTest, VideoCUA)}
