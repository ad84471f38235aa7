"""The Perception Test in its released layout (all_<split>.json keyed by video id, videos/<id>.mp4):
every action segment mapped as a span with its file and field, the duration from the metadata,
every bad input a person can produce named by file and field."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from core.errors import BadInput
from pipelines.common.video_sources.perception_test import PerceptionTest, microseconds
from tests.pipelines.common.video_sources.conftest import listed

TRAIN, VALID, TEST = "all_train.json", "all_valid.json", "all_test.json"
CAR, BIKES, CUT = "video_10001", "video_10002", "video_10003"
GONE, EMPTY, HELD_OUT, STRAY = "video_10004", "video_10005", "video_10006", "video_19999"
ACTIONS = "action_localisation"


@pytest.fixture(scope="module")
def demo(videos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo layout (pipelines/common/video_sources/demo/perception_test.py), made once for the module."""
    from pipelines.common.video_sources.demo.perception_test import write

    root = tmp_path_factory.mktemp("pt") / "perception_test"
    write(videos, root)
    return root


def _copy(demo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo, tmp_path / "perception_test"))


def _edit(root: Path, rel: str, edit) -> None:
    path = root / rel
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


def _one_bad(root: Path, vid: str) -> BadInput:
    videos, _filtered, bad = listed(PerceptionTest(str(root)))
    assert vid not in videos
    (err,) = [b for b in bad if b.item_id == f"perception_test/{vid}"]
    return err


# -- the demo layout, field by field ------------------------------------------------------------

def test_demo_layout_maps_every_action_with_its_file_and_field(demo: Path) -> None:
    reader = PerceptionTest(str(demo))
    reader.check()
    assert reader.annotation_files() == [TRAIN, VALID, TEST]
    videos, filtered, bad = listed(reader)
    assert sorted(videos) == [CAR, BIKES, CUT]
    car = videos[CAR]
    assert (car.dataset, car.video_id, car.key) == ("perception_test", CAR, f"perception_test/{CAR}")
    assert (car.video, car.split, car.environment, car.annotation_file) == \
        (f"videos/{CAR}.mp4", "train", "physical", TRAIN)
    assert (car.task, car.topic) == ("a short scripted real-world scene", "what happens in the scene")
    # num_frames / frame_rate: 120 frames at 30000/1001 fps
    assert car.annotated_duration_s == 4.004
    assert [(s.kind, s.start, s.end) for s in car.spans] == \
        [("action", 0.0, 2.3), ("action", 2.3, 3.2), ("action", 3.2, 4.0)]
    raise_hand = car.spans[1]
    assert (raise_hand.label, raise_hand.text, raise_hand.phrase) == \
        ("raising a hand", "Raising a hand", "someone starts raising a hand")
    assert raise_hand.field == f"{TRAIN}: {CAR}.{ACTIONS}[1].timestamps"
    assert (raise_hand.get("label_id"), raise_hand.get("state")) == ("1", "someone is raising a hand")
    bikes = videos[BIKES]
    assert (bikes.video, bikes.split, bikes.annotated_duration_s, bikes.annotation_file) == \
        (f"videos/{BIKES}.mp4", "val", 10.0, VALID)
    # one class twice: the label tells the repeat apart
    assert [s.label for s in bikes.spans] == \
        ["riding a bicycle", "riding a bicycle", "walking past something"]
    assert [(s.start, s.end) for s in bikes.spans] == [(1.2, 3.04), (3.04, 5.48), (7.48, 9.68)]
    assert bikes.spans[2].field == f"{VALID}: {BIKES}.{ACTIONS}[2].timestamps"
    # the download cut at 4 s keeps its 10 s annotation: the benchmark checks the decoded end
    assert (videos[CUT].video, videos[CUT].annotated_duration_s) == (f"videos/{CUT}.mp4", 10.0)
    assert sorted((f.item_id, f.source_file, f.rule) for f in filtered) == [
        (f"perception_test/{EMPTY}", TRAIN, "no action segments"),
        (f"perception_test/{HELD_OUT}", TEST, "test split: action segments withheld"),
    ]
    assert sorted((b.source_file, b.field, b.item_id) for b in bad) == [
        (TRAIN, GONE, f"perception_test/{GONE}"),
        (f"videos/{STRAY}.mp4", "path", f"perception_test/{STRAY}"),
    ]
    assert "not on disk (looked for videos/video_10004.mp4)" in next(b.reason for b in bad if b.field == GONE)
    assert "unannotated input" in next(b.reason for b in bad if b.field == "path")
    assert list(reader.unrecognized()) == []


def test_the_demo_is_written_identically_on_every_run(demo: Path, videos: Path, tmp_path: Path) -> None:
    from pipelines.common.video_sources.demo.perception_test import write

    write(videos, tmp_path / "again")

    def digest(root: Path) -> dict[str, str]:
        return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(root.rglob("*")) if p.is_file()}

    assert digest(tmp_path / "again") == digest(demo)


def test_the_planner_reads_the_spans_as_actions(demo: Path) -> None:
    from pipelines.streamvibe.planner import native_record, plan_requests

    videos, _f, _b = listed(PerceptionTest(str(demo)))
    native = native_record(videos[BIKES])
    assert [e["label"] for e in native["events"]] == ["riding a bicycle", "riding a bicycle",
                                                     "walking past something"]
    assert native["states"][0]["to"] == "someone is riding a bicycle"
    assert native["steps"] == [] and native["actions"] == []
    subtypes = {r["subtype"] for r in plan_requests(videos[BIKES], native, 0)}
    assert {"I", "R", "M", "P"} <= subtypes and not subtypes & {"G", "L", "T"}


def test_timestamps_are_microseconds() -> None:
    assert microseconds(1_234_567, TRAIN, "t", "x") == 1.235
    assert microseconds(0, TRAIN, "t", "x") == 0.0
    assert microseconds(2.5e6, TRAIN, "t", "x") == 2.5


# -- bad input: each rejects its video only, naming file and field --------------------------------

def _segment(k: int, **change) -> object:
    return lambda d: d[CAR][ACTIONS][k].update(change)


def _stamps(start, end) -> object:
    return _segment(1, timestamps=[start, end])


@pytest.mark.parametrize(("edit", "field", "reason"), [
    (_stamps(2_300_000, 30_000_000), f"{CAR}.{ACTIONS}[1].timestamps",
     "span [2.3, 30.0] s ends past the annotated duration (4.004 s"),
    (_stamps(3_200_000, 2_300_000), f"{CAR}.{ACTIONS}[1].timestamps", "end 2.3 s is before start 3.2 s"),
    (_stamps("2300000", 3_200_000), f"{CAR}.{ACTIONS}[1].timestamps[0]",
     "must be a number of microseconds, got '2300000'"),
    (_stamps(2_300_000, None), f"{CAR}.{ACTIONS}[1].timestamps[1]", "must be a number of microseconds"),
    (_stamps(2_300_000, float("nan")), f"{CAR}.{ACTIONS}[1].timestamps[1]", "not finite: nan"),
    (_stamps(float("-inf"), 3_200_000), f"{CAR}.{ACTIONS}[1].timestamps[0]", "not finite: -inf"),
    (_stamps(-2_000_000, 3_200_000), f"{CAR}.{ACTIONS}[1].timestamps[0]", "negative time -2e+06 µs"),
    (_stamps(2_300_000, 1e300), f"{CAR}.{ACTIONS}[1].timestamps", "ends past the annotated duration"),
    (_stamps(2_300_000, 10 ** 400), f"{CAR}.{ACTIONS}[1].timestamps[1]",
     "not finite: an integer of 401 digits"),
    (_segment(1, timestamps=[2_300_000]), f"{CAR}.{ACTIONS}[1].timestamps", "must be [start, end]"),
    (_segment(1, label=" "), f"{CAR}.{ACTIONS}[1].label", "empty"),
    (_segment(1, label=7), f"{CAR}.{ACTIONS}[1].label", "must be a string"),
    (_segment(1, label_id="1"), f"{CAR}.{ACTIONS}[1].label_id", "must be a class id"),
    (_segment(1, label_id=-1), f"{CAR}.{ACTIONS}[1].label_id", "must be a class id"),
    # no class list is released: a label_id the other segments give another class is bad input
    (_segment(1, label_id=0), f"{CAR}.{ACTIONS}[1].label_id",
     "label_id 0 names 'Raising a hand' here, but other segments give it 'Talking to the camera' (2)"),
    (_segment(1, label_id=9), f"{CAR}.{ACTIONS}[1].label_id",
     "'Raising a hand' has label_id 9 here, but other segments give it 1 (1)"),
    (lambda d: d[CAR][ACTIONS].__setitem__(1, [2_300_000, 3_200_000]), f"{CAR}.{ACTIONS}[1]",
     "must be an object"),
    (lambda d: d[CAR].pop(ACTIONS), f"{CAR}.{ACTIONS}", "missing"),
    (lambda d: d[CAR].update({ACTIONS: {}}), f"{CAR}.{ACTIONS}", "must be a list, got dict"),
    (lambda d: d[CAR].pop("metadata"), f"{CAR}.metadata", "missing"),
    (lambda d: d[CAR]["metadata"].update(num_frames=float("nan")), f"{CAR}.metadata.num_frames",
     "not finite"),
    (lambda d: d[CAR]["metadata"].update(num_frames=-5), f"{CAR}.metadata.num_frames",
     "must be non-negative"),
    (lambda d: d[CAR]["metadata"].update(frame_rate=0), f"{CAR}.metadata.frame_rate", "must be positive"),
    (lambda d: d[CAR]["metadata"].update(frame_rate="30"), f"{CAR}.metadata.frame_rate",
     "must be a number"),
    (lambda d: d[CAR]["metadata"].update(split="valid"), f"{CAR}.metadata.split",
     "'valid', but the video is in all_train.json (split 'train')"),
    (lambda d: d[CAR]["metadata"].update(video_id="video_77"), f"{CAR}.metadata.video_id",
     "'video_77' is not the video's key"),
    (lambda d: d[CAR]["metadata"].update(is_cup_game="yes"), f"{CAR}.metadata.is_cup_game",
     "must be true or false"),
    (lambda d: d.update({CAR: []}), CAR, "must be an object"),
])
def test_a_bad_field_rejects_that_video_only(demo: Path, tmp_path: Path, edit, field: str,
                                             reason: str) -> None:
    root = _copy(demo, tmp_path)
    _edit(root, TRAIN, edit)
    videos, _filtered, bad = listed(PerceptionTest(str(root)))
    assert CAR not in videos and CUT in videos and BIKES in videos
    (err,) = [b for b in bad if b.item_id == f"perception_test/{CAR}"]
    assert (err.source_file, err.field) == (TRAIN, field)
    assert reason in err.reason, err


def test_an_end_within_the_rounding_tolerance_is_kept(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    _edit(root, TRAIN, _segment(2, timestamps=[3_200_000, 4_400_000]))  # 4.4 s on a 4.004 s video
    videos, _f, _b = listed(PerceptionTest(str(root)))
    assert videos[CAR].spans[2].end == 4.4


def test_a_byte_that_is_not_utf8_in_a_label_rejects_its_video(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    path = root / TRAIN
    path.write_bytes(path.read_bytes().replace(b'"Tilting the head"', b'"Tilting th\xe9 head"', 1))
    videos, _f, bad = listed(PerceptionTest(str(root)))
    assert CAR not in videos and CUT in videos
    (err,) = [b for b in bad if b.item_id == f"perception_test/{CAR}"]
    assert (err.source_file, err.field, err.reason) == \
        (TRAIN, f"{CAR}.{ACTIONS}[2].label", "not valid UTF-8: byte 0xe9 at column 11")


def test_a_byte_that_is_not_utf8_in_a_video_id_rejects_it_by_the_id_shown(demo: Path,
                                                                         tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    path = root / VALID
    path.write_bytes(path.read_bytes().replace(b'"video_10002": {', b'"video_1\xe902": {', 1))
    videos, _f, bad = listed(PerceptionTest(str(root)))
    assert BIKES not in videos and CAR in videos
    err = next(b for b in bad if b.source_file == VALID)
    assert (err.field, err.item_id) == ("video_1\\xe902", "perception_test/video_1\\xe902")
    assert "the video id is not valid UTF-8: byte 0xe9" in err.reason
    # its video on disk is now a file no annotation lists
    assert (f"videos/{BIKES}.mp4", "path") in {(b.source_file, b.field) for b in bad}
    for b in bad:
        (b.source_file + b.field + b.reason + b.item_id).encode("utf-8")


def test_a_lone_surrogate_escape_in_an_id_or_a_label_is_rejected(demo: Path, tmp_path: Path) -> None:
    """``"\\ud800"`` in JSON reads as a lone surrogate that no release can write: not text."""
    root = _copy(demo, tmp_path)
    path = root / TRAIN
    path.write_text(path.read_text().replace('"Tilting the head"', '"Tilting \\ud800 head"', 1))
    err = _one_bad(root, CAR)
    assert (err.field, err.reason) == (f"{CAR}.{ACTIONS}[2].label", "not valid UTF-8: 'Tilting \\ud800 head'")
    path = root / VALID
    path.write_text(path.read_text().replace('"video_10002": {', '"video_\\ud80002": {', 1))
    _videos, _f, bad = listed(PerceptionTest(str(root)))
    (err,) = [b for b in bad if b.source_file == VALID]
    assert (err.field, err.item_id) == ("video_\\ud80002", "perception_test/video_\\ud80002")
    for b in bad:
        (b.source_file + b.field + b.reason + b.item_id).encode("utf-8")


def test_the_same_video_in_two_split_files_is_rejected(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    car = json.loads((root / TRAIN).read_text())[CAR]
    _edit(root, VALID, lambda d: d.update({CAR: car}))
    err = _one_bad(root, CAR)
    assert (err.source_file, err.field) == (VALID, CAR)
    assert err.reason == f"video {CAR} is also in {TRAIN}; a video belongs to one split"


def test_a_video_listed_twice_or_a_key_held_twice_is_rejected(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    path = root / VALID
    doc = json.loads(path.read_text())
    # JSON allows a key twice; json.loads would keep the last without a word
    path.write_text(json.dumps(doc)[:-1] + f', "{BIKES}": {json.dumps(doc[BIKES])}}}')
    err = _one_bad(root, BIKES)
    assert (err.source_file, err.field) == (VALID, BIKES) and "listed twice" in err.reason
    path = root / TRAIN
    text = path.read_text().replace('"label": "Raising a hand"',
                                    '"label": "Raising a hand", "label": "Waving"', 1)
    path.write_text(text)
    err = _one_bad(root, CAR)
    assert (err.source_file, err.field) == (TRAIN, f"{CAR}.{ACTIONS}[1].label")
    assert "key appears twice" in err.reason


def test_the_class_other_is_left_out_and_only_other_is_filtered(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)

    def other(d):
        d[CAR][ACTIONS][0].update(label="Other", label_id=62)
        for seg in d[EMPTY][ACTIONS] + [dict(d[CAR][ACTIONS][0])]:
            d[EMPTY][ACTIONS].append(seg)

    _edit(root, TRAIN, other)
    videos, filtered, _bad = listed(PerceptionTest(str(root)))
    assert [s.label for s in videos[CAR].spans] == ["raising a hand", "tilting the head"]
    assert videos[CAR].spans[0].field == f"{TRAIN}: {CAR}.{ACTIONS}[1].timestamps"
    rules = {f.item_id: (f.rule, f.reason) for f in filtered}
    assert rules[f"perception_test/{EMPTY}"] == \
        ("no named action", f"all 1 of {EMPTY}.{ACTIONS} are of the class Other")


def test_a_cups_game_and_a_video_without_frame_counts(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)

    def edit(d):
        d[CAR]["metadata"]["is_cup_game"] = True
        del d[CUT]["metadata"]["num_frames"]

    _edit(root, TRAIN, edit)
    videos, _f, _b = listed(PerceptionTest(str(root)))
    assert videos[CAR].task.startswith("a cups game") and videos[CAR].topic == "where the hidden object is"
    # no num_frames: the duration is unknown, the spans are still checked for the rest
    assert videos[CUT].annotated_duration_s is None and len(videos[CUT].spans) == 3


def test_a_test_split_video_with_segments_is_read(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    bikes = json.loads((root / VALID).read_text())[BIKES][ACTIONS]
    _edit(root, TEST, lambda d: d[HELD_OUT].update({ACTIONS: bikes}))
    videos, filtered, _b = listed(PerceptionTest(str(root)))
    assert (videos[HELD_OUT].split, len(videos[HELD_OUT].spans)) == ("test", 3)
    assert videos[HELD_OUT].spans[0].field == f"{TEST}: {HELD_OUT}.{ACTIONS}[0].timestamps"
    _edit(root, TEST, lambda d: d[HELD_OUT].pop(ACTIONS))
    _videos, filtered, _b = listed(PerceptionTest(str(root)))
    assert (f"perception_test/{HELD_OUT}", "test split: action segments withheld") in \
        {(f.item_id, f.rule) for f in filtered}


def test_files_outside_the_layout_are_each_named(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    (root / "notes.txt").write_text("mine\n")
    (root / "features").mkdir()
    (root / "features" / "a.npy").write_bytes(b"x")
    (root / "features" / "b.npy").write_bytes(b"x")
    shutil.copyfile(root / "videos" / f"{CAR}.mp4", root / "videos" / "clip.mkv")
    (root / "videos" / "train").mkdir()
    shutil.copyfile(root / "videos" / f"{CAR}.mp4", root / "videos" / "train" / f"{CAR}.mp4")
    (root / "annotations").mkdir()
    shutil.copyfile(root / TRAIN, root / "annotations" / TRAIN)  # a second copy
    # part of the release, not read
    (root / "sample.json").write_text("{}")
    (root / "mc_question_valid.json").write_text("{}")
    (root / "localisation_challenge_valid_id_list.csv").write_text("video_id\n")
    (root / "audios").mkdir()
    (root / "audios" / f"{CAR}.wav").write_bytes(b"RIFF")
    reader = PerceptionTest(str(root))
    got = sorted((r.source_file, r.reason) for r in reader.unrecognized())
    assert got == [
        ("annotations/all_train.json",
         "a second copy of all_train.json (the one at the root is read) (1 file)"),
        ("features/", "not part of the Perception Test layout (all_train.json, all_valid.json, "
                      "all_test.json, annotations/, videos/, audios/) (2 files)"),
        ("notes.txt", "not part of the Perception Test layout (all_train.json, all_valid.json, "
                      "all_test.json, annotations/, videos/, audios/) (1 file)"),
        ("videos/clip.mkv", "not a video at videos/<video_id>.mp4 (1 file)"),
        (f"videos/train/{CAR}.mp4", "not a video at videos/<video_id>.mp4 (1 file)"),
    ]
    # the listing reads neither the stray files nor the copy
    videos, _f, _b = listed(reader)
    assert sorted(videos) == [CAR, BIKES, CUT]


def test_the_annotations_folder_is_read_when_the_root_has_none(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    (root / "annotations").mkdir()
    for name in (TRAIN, VALID):
        (root / name).rename(root / "annotations" / name)
    reader = PerceptionTest(str(root))
    assert reader.annotation_files() == [f"annotations/{TRAIN}", f"annotations/{VALID}", TEST]
    videos, _f, _b = listed(reader)
    assert videos[CAR].annotation_file == f"annotations/{TRAIN}"
    assert videos[CAR].spans[0].field == f"annotations/{TRAIN}: {CAR}.{ACTIONS}[0].timestamps"
    assert list(reader.unrecognized()) == []


def test_whole_source_problems_stop_before_the_build(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    (root / VALID).write_text('{"video_10002": ')
    with pytest.raises(BadInput) as err:
        PerceptionTest(str(root)).check()
    assert (err.value.source_file, err.value.field) == (VALID, "json")
    (root / VALID).write_text("[]")
    with pytest.raises(BadInput) as err:
        PerceptionTest(str(root)).check()
    assert (err.value.source_file, err.value.field) == (VALID, "json")
    assert "must be an object" in err.value.reason
    (root / VALID).write_bytes(b"\xff\xfe{}")
    with pytest.raises(BadInput) as err:
        PerceptionTest(str(root)).check()
    assert err.value.source_file == VALID
    for name in (TRAIN, VALID, TEST):
        (root / name).unlink()
    with pytest.raises(BadInput, match="missing: none of all_train.json"):
        PerceptionTest(str(root)).check()
