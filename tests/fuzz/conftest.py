"""The corpora the fuzz mutates: the three demo corpora (``make demo-corpus``, the StreamVibe and
ProReady-QA demo scripts) and ChangeIt's public release layout made from the same real media."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
from pathlib import Path

import pytest

from pipelines.common.video_sources.base import NativeVideo
from tests.fuzz.readers import SUBJECTS, Outcome, matching, problems
from tests.support.fuzz import files_under

REPO = Path(__file__).resolve().parents[2]


def changeit_release(raw: Path) -> Path:
    """ChangeIt's public release layout (docs/sources.md) holding the demo's two annotated videos:
    ``categories.csv``, ``labels.csv``, ``annotations/<category>/<video>.fps1.csv`` and the videos
    under ``downloads/`` — the demo corpus has ChangeIt as a sequence manifest only, and the
    release layout is the reader's CSV path."""
    root = raw / "changeit_release"
    rows = {json.loads(line)["id"]: json.loads(line)
            for line in (raw / "changeit" / "manifest.jsonl").read_text().splitlines() if line}
    videos = {"bicycle_riding": ("bikes", raw / "streamvibe" / "videos" / "bikes.mp4",
                                 rows["bikes-action"]["labels"]),
              "hand_waving": ("tree", raw / "vsod" / "tree.avi", rows["tree-action"]["labels"])}
    (root / "annotations").mkdir(parents=True)
    (root / "categories.csv").write_text(
        'DIR_NAME,ACTION_NAME,CENTERING_PARAM\nbicycle_riding,"Bicycle Riding",0.3\n'
        'hand_waving,"Hand Waving",0.25\ncandle,"Candle Lighting",0.278\n')
    (root / "labels.csv").write_text('LABEL_ID,MEANING\n0,"background/noannotation"\n1,"state1"\n'
                                     '2,"action"\n3,"state2"\n')
    for cat, (vid, src, labels) in videos.items():
        (root / "annotations" / cat).mkdir()
        (root / "annotations" / cat / f"{vid}.fps1.csv").write_text(
            "".join(f"{s},{lab}\n" for s, lab in enumerate(labels)))
        (root / "downloads" / cat).mkdir(parents=True)
        shutil.copyfile(src, root / "downloads" / cat / f"{vid}{src.suffix}")
    return root


@pytest.fixture(scope="session")
def fuzz_corpora(demo_media: Path, videos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpora every fuzz case copies one folder of (never changed themselves)."""
    sys.path.insert(0, str(REPO / "scripts"))
    import demo_fingerprint

    raw = tmp_path_factory.mktemp("fuzz-corpora") / "raw"
    with contextlib.redirect_stderr(io.StringIO()):
        demo_fingerprint.make_corpora(raw)
    changeit_release(raw)
    return raw


@pytest.fixture(scope="session")
def baselines() -> dict[str, Outcome]:
    """Each reader's outcome on its unchanged folder (:func:`baseline`), filled as the cases
    need them: what a case compares with."""
    return {}


def baseline(name: str, fuzz_corpora: Path, cache: dict[str, Outcome], scratch: Path) -> Outcome:
    """Reader ``name`` on its unchanged demo folder, once per session; it must read cleanly (no
    refusal, items kept, no broken rule), or every case of it would test nothing."""
    if name not in cache:
        subject = SUBJECTS[name]
        root = fuzz_corpora / subject.folder
        out = subject.run(root, scratch)
        assert out.refused is None and out.kept, f"{name}: the demo folder reads: {out.summary()}"
        assert not problems(subject, out, root), problems(subject, out, root)
        cache[name] = out
    return cache[name]


def pools(name: str, root: Path, base: Outcome) -> list[list[str]]:
    """Where a case picks the file to change: the listing files, the preferred ones, the files
    the unchanged folder's kept items read (then, in the mutator, any file)."""
    subject = SUBJECTS[name]
    files = files_under(root)
    read = sorted({f for item in base.kept.values() for f, _ in getattr(item, "source_files", [])}
                  | {f for item in base.kept.values() if isinstance(item, NativeVideo)
                     for f in (item.video, item.annotation_file)})
    return [matching(files, subject.listing), matching(files, subject.prefer), read]
