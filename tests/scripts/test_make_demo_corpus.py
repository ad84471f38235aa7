"""``make demo-corpus`` (scripts/make_demo_corpus.py) replaces only ProactiveBench's datasets:
the StreamVibe and ProReady-QA demo corpora beside them, and anything else a user keeps in the
folder, stay (it published a whole new folder over them and deleted them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_rebuilding_the_proactivebench_corpus_keeps_the_other_benchmarks_data(
        demo_media: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "demo_corpus"
    video = corpus / "streamvibe" / "videos" / "clip.mp4"
    video.parent.mkdir(parents=True)
    video.write_bytes(b"the streamvibe demo video")
    (corpus / "proready").mkdir()
    (corpus / "proready" / "manifest.yaml").write_text("videos: []\n")
    (corpus / "coco").mkdir()
    (corpus / "coco" / "stale.txt").write_text("a file of an earlier ProactiveBench corpus\n")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "make_demo_corpus.py"), "--out",
                           str(corpus), "--no-check"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert video.read_bytes() == b"the streamvibe demo video"
    assert (corpus / "proready" / "manifest.yaml").read_text() == "videos: []\n"
    assert not (corpus / "coco" / "stale.txt").exists()  # its own datasets are replaced whole
    assert (corpus / "coco" / "annotations").is_dir() and (corpus / "quickdraw").is_dir()
    assert not list(tmp_path.glob(".*"))  # no staging folder left beside it
