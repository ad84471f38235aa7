"""The source manifest reader: every bad entry is a rejection naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import BadInput, Rejection
from pipelines.common.sources import ItemRef, ReaderConfig
from pipelines.proready.sources import ProReadyReader
from tests.pipelines.proready.conftest import write_corpus


def _reader(root: Path, manifest: str = "manifest.yaml") -> ProReadyReader:
    return ProReadyReader(str(root), ReaderConfig(extra={"manifest": manifest}))


def test_jsonl_manifest_listing_rejections(tmp_path: Path) -> None:
    lines = [json.dumps({"video_id": "a", "path": "a.mp4"}), "{not json", json.dumps({"path": "x"}),
             json.dumps({"video_id": "a", "path": "b.mp4"})]
    (tmp_path / "m.jsonl").write_text("\n".join(lines) + "\n")
    out = list(_reader(tmp_path, "m.jsonl").enumerate())
    assert not [x for x in out if isinstance(x, ItemRef)]  # both entries of id "a" are rejected
    rej = [(r.source_file, r.field, r.stage) for r in out if isinstance(r, Rejection)]
    assert rej == [("m.jsonl", "videos[0].video_id", "listing"), ("m.jsonl", "line 2", "listing"),
                   ("m.jsonl", "videos[2].video_id", "listing"),
                   ("m.jsonl", "videos[3].video_id", "listing")]


@pytest.mark.parametrize(
    ("annotations", "field", "words"),
    [
        ({"actions": [{"start": 5, "end": 31, "label": "x"}]}, "videos[0].annotations.actions[0].end",
         "past the end of the video (29.6s"),
        ({"steps": [{"start": 5, "end": 4, "label": "x"}]}, "videos[0].annotations.steps[0].end",
         "not after start"),
        ({"scenes": [{"start": 1, "end": 2}]}, "videos[0].annotations.scenes[0].label", "missing"),
        ({"causal": [{"cause": {"start": 5, "end": 6, "label": "c"},
                      "effect": {"start": 4, "end": 6, "label": "e"}}]},
         "videos[0].annotations.causal[0].effect.start", "before its cause"),
        ({"clues": [{"task": "xyz", "question": "q", "answer": "a", "start": 1, "end": 2}]},
         "videos[0].annotations.clues[0].task", "unknown task"),
        ({"gestures": []}, "videos[0].annotations", "unknown annotation kinds"),
        ({"goal": {"start": "soon", "end": 3, "label": "g"}}, "videos[0].annotations.goal[0].start",
         "finite number"),
    ],
)
def test_bad_annotations(tmp_path: Path, media: Path, annotations: dict, field: str, words: str) -> None:
    entry = {"video_id": "tree", "path": "video/tree.avi", "annotations": annotations}
    src = write_corpus(tmp_path, media, [entry])
    with pytest.raises(BadInput) as exc:
        _reader(src).load_video(entry, 0)
    assert (exc.value.source_file, exc.value.field) == ("manifest.yaml", field)
    assert words in exc.value.reason and exc.value.item_id == "tree"


def test_good_video_uses_the_real_timeline(tmp_path: Path, media: Path) -> None:
    entry = {"video_id": "tree", "path": "video/tree.avi", "source": "opencv-doc", "annotations": {
        "steps": [{"start": 27.5, "end": 29.9, "label": "b"}, {"start": 23, "end": 25, "label": "a"}]}}
    src = write_corpus(tmp_path, media, [entry])
    v = _reader(src).load_video(entry, 0)
    assert v.duration_s == 29.6 and "444" in v.probe_note
    # sorted by time; an end within the 0.5 s tolerance is clipped to the real end
    assert [(s.start, s.end, s.label) for s in v.span_list("steps")] == [(23.0, 25.0, "a"), (27.5, 29.6, "b")]
