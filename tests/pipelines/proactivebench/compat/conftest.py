"""One release holding every environment (and two COCO edge cases) and its compat export, shared
by the compat tests of this package (built once: the frames are real PNG crops).

``official`` is the Python 3.12 interpreter and the authors' sources (``tests/support/system.py``)
for the tests that replay the export in their classes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.proactivebench.compat import export
from tests.pipelines.proactivebench.fixtures import (
    all_environment_episodes,
    rounded_zoom_episode,
    sliding_coco_episode,
    write_release,
)


@pytest.fixture(scope="package")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    eps = [*all_environment_episodes(), rounded_zoom_episode(), sliding_coco_episode()]
    root = tmp_path_factory.mktemp("release")
    return write_release(root, eps), eps


@pytest.fixture(scope="package")
def exported(release, tmp_path_factory: pytest.TempPathFactory):
    root, _ = release
    out = tmp_path_factory.mktemp("compat") / "proactivebench"
    return out, export(root, out)


@pytest.fixture(scope="package")
def official(python312: str, official_source: Path):
    return {"python": python312, "source": official_source}
