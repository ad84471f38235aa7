"""The video datasets' demo layouts (pipelines/common/video_sources/demo/native.py), made once per
session from the real registry videos; a test that breaks one copies it first (:func:`copy_of`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="session")
def native_demo(videos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding one demo layout per dataset (``<folder>/<dataset>/``)."""
    from pipelines.common.video_sources.demo import native as demo

    out = tmp_path_factory.mktemp("native")
    demo.build(videos, out)
    return out


def copy_of(native_demo: Path, dataset: str, tmp_path: Path) -> Path:
    """A private copy of one dataset's demo layout, to break."""
    return Path(shutil.copytree(native_demo / dataset, tmp_path / dataset))


def listed(reader) -> tuple[dict, list, list]:
    """(video id → native video, filtered, bad inputs) of a reader's listing."""
    from core.errors import BadInput
    from pipelines.common.video_sources.base import NativeFiltered

    videos, filtered, bad = {}, [], []
    for x in reader.videos():
        if isinstance(x, BadInput):
            bad.append(x)
        elif isinstance(x, NativeFiltered):
            filtered.append(x)
        else:
            videos[x.video_id] = x
    return videos, filtered, bad
