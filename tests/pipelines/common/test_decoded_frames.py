"""The frames a pending-review state keeps for its release (``pipelines/common/decoded_frames.py``):
a record is used only when it checks, and each way it can fail to check is a miss with its
reason, never a wrong frame."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import ModuleType

import pytest

from core.blobs import blob_path
from pipelines.common.decoded_frames import FrameStore, code_fingerprint, settings_key

VIDEO = "a" * 64
SETTINGS = settings_key({"max_side": 448})
FRAMES = [b"\xff\xd8first frame", b"\xff\xd8second frame", b"\xff\xd8first frame"]


@pytest.fixture
def store(tmp_path: Path) -> FrameStore:
    s = FrameStore(str(tmp_path / "frames"))
    s.put(VIDEO, SETTINGS, {"duration_s": 2.5}, FRAMES)
    return s


def _record(store: FrameStore) -> Path:
    return Path(store.record_path(VIDEO, SETTINGS))


def test_a_kept_video_comes_back_with_the_same_frames_and_facts(store: FrameStore) -> None:
    kept, why = FrameStore(store.root).get(VIDEO, SETTINGS)  # another reader of the same folder
    assert why == "" and kept is not None
    assert kept.facts == {"duration_s": 2.5}
    assert [r.read() for r in kept.frames] == FRAMES
    assert kept.frames[0].sha256 == hashlib.sha256(FRAMES[0]).hexdigest() == kept.frames[2].sha256
    assert len(list((Path(store.root) / "blobs").rglob("*"))) - 2 == 2  # two distinct frames, stored once


def test_no_record_is_a_plain_miss(store: FrameStore) -> None:
    assert store.get("b" * 64, SETTINGS) == (None, "")
    assert store.get(VIDEO, settings_key({"max_side": 224})) == (None, "")


@pytest.mark.parametrize("damage, reason", [
    ("frame_bytes", "frame 1 ("),  # same size, other bytes
    ("frame_gone", "frame 1 ("),
    ("frame_cut", "frame 1 ("),
    ("record_cut", "unreadable record"),
    ("record_other_video", "names another video"),
    ("record_format", "format 0"),
    ("record_nan", "unreadable record"),
    ("record_facts", "facts is not an object"),
    ("record_escape", "not a sha256"),  # a frame named by a path out of the store
])
def test_a_record_that_does_not_check_is_a_miss_with_its_reason(store: FrameStore, damage: str,
                                                                reason: str) -> None:
    path = _record(store)
    record = json.loads(path.read_text())
    frame = Path(blob_path(store.blobs.root, record["frames"][1][0]))
    if damage == "frame_bytes":
        frame.write_bytes(frame.read_bytes()[:-1] + b"X")
    elif damage == "frame_gone":
        frame.unlink()
    elif damage == "frame_cut":
        frame.write_bytes(frame.read_bytes()[:5])
    elif damage == "record_cut":
        path.write_text(path.read_text()[:40])
    elif damage == "record_other_video":
        path.write_text(json.dumps(dict(record, video_sha256="c" * 64)))
    elif damage == "record_format":
        path.write_text(json.dumps(dict(record, format=0)))
    elif damage == "record_nan":
        path.write_text(path.read_text().replace("2.5", "NaN").replace('"frames":[', '"frames":[NaN,'))
    elif damage == "record_facts":
        path.write_text(json.dumps(dict(record, facts=[1, 2])))
    elif damage == "record_escape":
        outside = Path(store.root).parent / "secret"
        outside.write_bytes(b"not a frame")
        frames = [*record["frames"][:1], ["../../secret", 11, "6e6f"], *record["frames"][2:]]
        path.write_text(json.dumps(dict(record, frames=frames)))
    kept, why = store.get(VIDEO, SETTINGS)
    assert kept is None
    assert reason in why and str(path) in why


def test_a_record_is_replaced_whole(store: FrameStore) -> None:
    store.put(VIDEO, SETTINGS, {"duration_s": 3.0}, FRAMES[:1])
    kept, _ = store.get(VIDEO, SETTINGS)
    assert kept is not None and kept.facts == {"duration_s": 3.0} and len(kept.frames) == 1
    assert not list(Path(store.root).rglob("*.tmp"))


def test_the_code_fingerprint_follows_the_source(tmp_path: Path) -> None:
    module = tmp_path / "decoder.py"
    module.write_text("X = 1\n")
    fake = ModuleType("decoder")
    fake.__file__ = str(module)
    before = code_fingerprint([fake])
    module.write_text("X = 2\n")  # decoding code that changed is another key
    assert code_fingerprint([fake]) != before
