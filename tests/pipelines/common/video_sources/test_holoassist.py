"""HoloAssist in its released layout (pipelines/common/video_sources/demo/holoassist.py): coarse-grained
actions as steps and fine-grained actions as actions, each with its file and field, mistakes and the
instructor's interventions kept, the split from the split lists, and every bad input a person can produce
named by file and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.errors import BadInput
from pipelines.common.video_sources.holoassist import HoloAssist
from tests.pipelines.common.video_sources.conftest import ROOT, listed

ANN = "data-annotation-trainval-v1_1.json"
BIKES, CAR, CUT = "R901-5Dec-Bicycle", "R902-5Dec-Car", "R903-5Dec-Bicycle"
GONE, QUIET, TEST, STRAY = "R904-5Dec-Car", "R905-5Dec-Car", "R906-5Dec-Bicycle", "R907-5Dec-Car"
VIDEO = "Export_py/Video_pitchshift.mp4"


@pytest.fixture(scope="module")
def demo(videos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pipelines.common.video_sources.demo.holoassist import write

    root = tmp_path_factory.mktemp("holoassist") / "holoassist"
    write(videos, root)
    return root


def _copy(demo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo, tmp_path / "holoassist"))


def _edit(root: Path, edit, rel: str = ANN) -> None:
    path = root / rel
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


def _rejected(root: Path, vid: str) -> BadInput:
    videos, _filtered, bad = listed(HoloAssist(str(root)))
    assert vid not in videos
    found = [b for b in bad if b.item_id == f"holoassist/{vid}"]
    assert len(found) == 1, bad
    return found[0]


def test_demo_layout_maps_every_field_with_its_file_and_field(demo: Path) -> None:
    reader = HoloAssist(str(demo))
    reader.check()
    assert reader.annotation_files() == [ANN, "train-v1_2.txt", "val-v1_2.txt", "test-v1_2.txt"]
    videos, filtered, bad = listed(reader)
    assert sorted(videos) == [BIKES, CAR, CUT]
    bikes = videos[BIKES]
    assert (bikes.dataset, bikes.video, bikes.split, bikes.environment, bikes.annotation_file) == \
        ("holoassist", f"{BIKES}/{VIDEO}", "val", "physical", ANN)
    assert (bikes.task, bikes.topic, bikes.annotated_duration_s) == \
        ("ride bicycle in traffic", "how to ride bicycle in traffic", 10.0)
    assert [(s.kind, s.start, s.end) for s in bikes.spans] == [
        ("step", 1.2, 5.48), ("action", 1.3, 3.0), ("action", 3.1, 5.4), ("step", 7.48, 9.68),
        ("action", 7.5, 9.6)]
    step = bikes.spans[0]
    assert (step.label, step.text, step.phrase) == (
        "the cyclist rides through the traffic", "The cyclist rides through the traffic.",
        "the cyclist rides through the traffic")
    assert step.field == f"{ANN}: [0].events[2].start"
    # the instructor's correction (a Conversation inside the step) is kept with the step
    assert (step.get("verb"), step.get("noun"), step.get("interventions")) == \
        ("ride", "bicycle", 'correct the wrong action at 4 s: "*unintelligible*"')
    mistake = bikes.spans[2]
    assert (mistake.label, mistake.text, mistake.phrase) == \
        ("cross road", "cross the road", "the task performer starts to cross the road")
    assert mistake.field == f"{ANN}: [0].events[4].start"
    assert dict(mistake.extra) == {
        "verb": "cross", "noun": "road", "state": "the task performer has started to cross the road",
        "correctness": "Wrong Action, corrected by instructor verbally", "mistake": "yes",
        "mistake_explanation": "The cyclist crosses in front of a stopped car.",
        "corrected_by": "instructor"}
    assert (bikes.spans[1].get("mistake"), bikes.spans[1].get("mistake_explanation")) == ("no", "")
    # underscores in the vocabulary read as words; "none" is no noun
    assert bikes.spans[4].label == "walk past bicycle"
    car = videos[CAR]
    assert (car.split, car.task, car.annotated_duration_s) == ("train", "talk in a car", 4.0)
    assert (car.spans[1].label, car.spans[1].text, car.spans[1].get("noun")) == ("talk", "talk", "")
    assert "interventions" not in dict(car.spans[0].extra)  # a student's remark is no intervention
    assert videos[CUT].annotated_duration_s == 10.0  # the download is 4 s: the benchmark checks that
    assert sorted((f.item_id, f.source_file, f.rule) for f in filtered) == [
        (f"holoassist/{QUIET}", ANN, "no actions annotated"),
        (f"holoassist/{TEST}", f"{TEST}/{VIDEO}", "not annotated")]
    assert "test-v1_2.txt:1 lists it in the test split" in \
        next(f.reason for f in filtered if f.rule == "not annotated")
    assert sorted((b.source_file, b.field, b.item_id) for b in bad) == [
        (f"{STRAY}/{VIDEO}", "path", f"holoassist/{STRAY}"),
        (ANN, "[3].video_name", f"holoassist/{GONE}"),
    ]
    assert "not on disk" in next(b.reason for b in bad if b.item_id.endswith(GONE))
    assert "unannotated" in next(b.reason for b in bad if b.item_id.endswith(STRAY))
    assert list(reader.unrecognized()) == []


def test_the_planner_reads_steps_actions_and_states(demo: Path) -> None:
    from pipelines.streamvibe.planner import native_record, plan_requests

    videos, _f, _b = listed(HoloAssist(str(demo)))
    native = native_record(videos[BIKES])
    assert [s["label"] for s in native["steps"]] == ["The cyclist rides through the traffic",
                                                     "People walk past a bicycle parked against a wall"]
    assert native["states"][0]["to"] == "the task performer has started to ride the bicycle"
    assert {"G", "L", "I", "P", "M"} <= {r["subtype"] for r in plan_requests(videos[BIKES], native, 0)}


def _event(k: int, j: int, **change):
    return lambda doc: doc[k]["events"][j].update(change)


def _attribute(k: int, j: int, **change):
    return lambda doc: doc[k]["events"][j]["attributes"].update(change)


@pytest.mark.parametrize(("edit", "field", "reason"), [
    # a span past the annotated duration (10 s)
    (_event(0, 4, end=30.0), "[0].events[4].end", "ends past the annotated duration (10.0 s)"),
    # end before start: never swapped
    (_event(0, 4, start=5.0, end=3.5), "[0].events[4].end", "end 3.5 s is before start 5.0 s"),
    (_event(0, 4, start=float("nan")), "[0].events[4].start", "not finite"),
    (_event(0, 2, end=float("inf")), "[0].events[2].end", "not finite"),
    (_event(0, 4, start=-1.0), "[0].events[4].start", "negative time -1.0 s"),
    (_event(0, 4, start="soon"), "[0].events[4].start", "must be a number of seconds, got 'soon'"),
    (_event(0, 4, start=True), "[0].events[4].start", "must be a number of seconds"),
    (_event(0, 4, end=None), "[0].events[4].end", "must be a number of seconds, got None"),
    # a conversation's times are checked too (an intervention is read from it)
    (_event(0, 5, end=12.0), "[0].events[5].end", "past the annotated duration"),
    (_event(0, 4, label=7), "[0].events[4].label", "must be a string"),
    (_event(0, 4, attributes=[]), "[0].events[4].attributes", "must be an object"),
    (_attribute(0, 2, **{"Action sentence": ""}), "[0].events[2].attributes.Action sentence", "empty"),
    (_attribute(0, 4, Verb="none"), "[0].events[4].attributes.Verb", "no verb"),
    (_attribute(0, 4, Verb=[]), "[0].events[4].attributes.Verb", "an empty list"),
    (_attribute(0, 4, Noun=3), "[0].events[4].attributes.Noun", "must be a string"),
    (_attribute(0, 5, **{"Conversation Purpose": None}), "[0].events[5].attributes.Conversation Purpose",
     "must be a string"),
    (lambda doc: doc[0].update(events={}), "[0].events", "must be a list"),
    (lambda doc: doc[0].update(taskType=["ride"]), "[0].taskType", "must be a string"),
    (lambda doc: doc[0]["videoMetadata"]["duration"].update(seconds=50),
     "[0].videoMetadata.duration.seconds", "raw says 00:00:10.00 (10 s)"),
    (lambda doc: doc[0]["videoMetadata"]["duration"].update(raw="ten seconds"),
     "[0].videoMetadata.duration.raw", "must be a duration HH:MM:SS.ss"),
    (lambda doc: doc[0]["videoMetadata"]["duration"].update(seconds=float("nan"), raw=None),
     "[0].videoMetadata.duration.seconds", "not finite"),
])
def test_a_bad_field_rejects_that_video_only(demo: Path, tmp_path: Path, edit, field: str,
                                             reason: str) -> None:
    root = _copy(demo, tmp_path)
    _edit(root, edit)
    err = _rejected(root, BIKES)
    assert (err.source_file, err.field) == (ANN, field), err
    assert reason in err.reason, err
    videos, _f, _b = listed(HoloAssist(str(root)))
    assert CAR in videos and CUT in videos


def test_a_duration_from_seconds_alone_and_a_verb_given_as_a_list(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)

    def edit(doc):
        doc[0]["videoMetadata"]["duration"].pop("raw")
        doc[0]["events"][4]["attributes"]["Verb"] = ["Cross", "walk"]  # the first, as the authors read it
        doc[1].pop("videoMetadata")
        doc[1].pop("taskType")
    _edit(root, edit)
    videos, _f, _b = listed(HoloAssist(str(root)))
    assert (videos[BIKES].annotated_duration_s, videos[BIKES].spans[2].label) == (10.0, "cross road")
    car = videos[CAR]
    assert (car.annotated_duration_s, car.task, car.topic) == \
        (None, "a physical task guided by an instructor", "the task in the video")


def test_a_byte_that_is_not_utf8_rejects_its_video_naming_the_field(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    path = root / ANN
    data = path.read_bytes()
    # the first occurrence: the bike video's entry, [0] (the cut download repeats the text)
    data = data.replace(b"The cyclist rides through", b"The cyclist r\xffdes through", 1)
    path.write_bytes(data.replace(b'"label": "Fine grained action"', b'"label": "Fine gr\xe9ined action"', 1))
    err = _rejected(root, BIKES)
    assert (err.field, err.reason) == ("[0].events[2].attributes.Action sentence",
                                       "not valid UTF-8: byte 0xff at column 14")
    # the event label's byte rejects that entry, naming the label
    path.write_bytes(path.read_bytes().replace(b"r\xffdes", b"rides"))
    err = _rejected(root, BIKES)
    assert (err.field, err.reason) == ("[0].events[3].label", "not valid UTF-8: byte 0xe9 at column 8")
    assert CAR in listed(HoloAssist(str(root)))[0]


def test_a_video_name_that_is_not_utf8_is_shown_with_the_byte(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    path = root / ANN
    path.write_bytes(path.read_bytes().replace(b'"video_name": "R902-5Dec-Car"',
                                               b'"video_name": "R902-5D\xe9c-Car"'))
    videos, filtered, bad = listed(HoloAssist(str(root)))
    err = next(b for b in bad if b.field == "[1].video_name")
    assert (err.item_id, err.reason) == ("holoassist/R902-5D\\xe9c-Car",
                                         "the video id is not valid UTF-8: byte 0xe9 at column 8")
    # its recording is listed in train-v1_2.txt but no entry can be read for it
    assert (f"holoassist/{CAR}", f"{CAR}/{VIDEO}", "not annotated") in \
        {(f.item_id, f.source_file, f.rule) for f in filtered}


def test_the_same_video_in_two_split_lists_is_named_with_both_lines(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    with (root / "train-v1_2.txt").open("a") as fh:
        fh.write(f"{BIKES}\n{TEST}\n")
    videos, filtered, bad = listed(HoloAssist(str(root)))
    by_item = {b.item_id: b for b in bad}
    assert BIKES not in videos
    err = by_item[f"holoassist/{BIKES}"]
    assert (err.source_file, err.field) == ("val-v1_2.txt:1", "video_name")
    assert err.reason == f"{BIKES} is also on train-v1_2.txt:5: a video belongs to one split"
    # a listed recording without annotations, on two lists, is bad input too (not filtered)
    assert by_item[f"holoassist/{TEST}"].source_file == "test-v1_2.txt:1"
    assert TEST not in {f.item_id.split("/")[1] for f in filtered}


def test_a_repeated_key_or_a_video_annotated_twice_is_rejected(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    path = root / ANN
    doc = json.loads(path.read_text())
    doc.append(dict(doc[1]))  # the man in the car annotated twice: [1] and [5]
    text = json.dumps(doc, indent=1)
    # JSON allows a key twice; json.loads would keep the last without a word
    text = text.replace('"taskType": "ride bicycle in traffic"',
                        '"taskType": "ride bicycle in traffic", "taskType": "talk in a car"', 1)
    path.write_text(text)
    videos, _f, bad = listed(HoloAssist(str(root)))
    assert BIKES not in videos and CAR not in videos and CUT in videos
    by_item = {b.item_id: b for b in bad}
    assert (by_item[f"holoassist/{BIKES}"].field, by_item[f"holoassist/{CAR}"].field) == \
        ("[0].taskType", "[5].video_name")
    assert "key appears twice" in by_item[f"holoassist/{BIKES}"].reason
    assert "also [1]" in by_item[f"holoassist/{CAR}"].reason
    assert not any(b.source_file == f"{CAR}/{VIDEO}" for b in bad)  # annotated: not an unannotated file


def test_listed_but_not_on_disk_and_on_disk_but_unannotated(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    (root / BIKES / VIDEO).unlink()
    shutil.copytree(root / CAR, root / "R999-5Dec-Copy")
    videos, _f, bad = listed(HoloAssist(str(root)))
    assert BIKES not in videos
    by_item = {b.item_id: b for b in bad}
    gone = by_item[f"holoassist/{BIKES}"]
    assert (gone.source_file, gone.field) == (ANN, "[0].video_name")
    assert gone.reason == (f"video {BIKES} is not on disk (looked for {BIKES}/Export_py/"
                           "Video_pitchshift.mp4 or Video_compress.mp4)")
    stray = by_item["holoassist/R999-5Dec-Copy"]
    assert (stray.source_file, stray.field) == ("R999-5Dec-Copy/" + VIDEO, "path")
    assert "no annotation file lists" in stray.reason


def test_the_compressed_video_is_read_when_the_pitch_shifted_one_is_not_there(demo: Path,
                                                                              tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    (root / CAR / VIDEO).rename(root / CAR / "Export_py" / "Video_compress.mp4")
    shutil.copy(root / BIKES / VIDEO, root / BIKES / "Export_py" / "Video_compress.mp4")
    reader = HoloAssist(str(root))
    videos, _f, bad = listed(reader)
    assert videos[CAR].video == f"{CAR}/Export_py/Video_compress.mp4"
    assert videos[BIKES].video == f"{BIKES}/{VIDEO}"  # both there: the pitch-shifted one
    assert sorted(b.item_id for b in bad) == [f"holoassist/{GONE}", f"holoassist/{STRAY}"]
    assert list(reader.unrecognized()) == []


def test_a_video_on_no_split_list_is_filtered(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    (root / "train-v1_2.txt").write_text(f"\ufeff{CUT}\r\n{GONE}\r\n{QUIET}\r\n")  # BOM, CRLF
    videos, filtered, bad = listed(HoloAssist(str(root)))
    assert CAR not in videos and CUT in videos
    (out,) = [f for f in filtered if f.item_id == f"holoassist/{CAR}"]
    assert (out.source_file, out.rule) == (ANN, "in no split list")
    assert not any(b.item_id == f"holoassist/{CAR}" for b in bad)


def test_the_older_split_lists_and_the_other_spelling_of_the_annotation_file(demo: Path,
                                                                           tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    (root / "data-splits-v1").mkdir()
    for split in ("train", "val", "test"):
        (root / f"{split}-v1_2.txt").rename(root / "data-splits-v1" / f"{split}-v1.txt")
    other = "data-annnotation-trainval-v1_1.json"
    (root / ANN).rename(root / other)
    reader = HoloAssist(str(root))
    reader.check()
    videos, _f, _b = listed(reader)
    assert (videos[BIKES].split, videos[CAR].split) == ("val", "train")
    assert videos[BIKES].spans[0].field == f"{other}: [0].events[2].start"
    assert reader.annotation_files() == [other, "data-splits-v1/train-v1.txt", "data-splits-v1/val-v1.txt",
                                         "data-splits-v1/test-v1.txt"]
    assert list(reader.unrecognized()) == []


def test_a_name_with_percent_20_is_the_folder_with_a_space(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    _edit(root, lambda doc: doc[1].update(video_name="R902-5Dec%20Car"))
    (root / CAR).rename(root / "R902-5Dec Car")
    (root / "train-v1_2.txt").write_text(f"R902-5Dec Car\n{CUT}\n{GONE}\n{QUIET}\n")
    videos, _f, bad = listed(HoloAssist(str(root)))
    assert videos["R902-5Dec Car"].video == f"R902-5Dec Car/{VIDEO}"
    assert not any("R902" in b.item_id for b in bad)


def test_a_video_with_no_usable_events_is_filtered_by_its_rule(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    _edit(root, lambda doc: doc[0].update(events=[e for e in doc[0]["events"]
                                                  if e["label"] in ("Narration", "Conversation")]))
    videos, filtered, _b = listed(HoloAssist(str(root)))
    assert BIKES not in videos
    (out,) = [f for f in filtered if f.item_id == f"holoassist/{BIKES}"]
    assert (out.rule, out.reason) == ("no actions annotated",
                                      "[0].events holds no coarse- or fine-grained action")


@pytest.mark.parametrize(("change", "source_file", "field", "reason"), [
    (lambda root: (root / ANN).write_text('[{"video_name": '), ANN, "json", "malformed JSON"),
    (lambda root: (root / ANN).write_text('{"videos": []}'), ANN, "json", "must be a list of videos"),
    (lambda root: (root / ANN).unlink(), ANN, "file", "missing"),
    (lambda root: shutil.copy(root / ANN, root / "data-annnotation-trainval-v1_1.json"),
     "data-annnotation-trainval-v1_1.json", "file", "two annotation files"),
    (lambda root: (root / "val-v1_2.txt").write_bytes(b"R901-5D\xe9c-Bicycle\n"), "val-v1_2.txt", "utf-8",
     "not valid UTF-8: byte 0xe9 on line 1"),
    (lambda root: [(root / f"{s}-v1_2.txt").unlink() for s in ("train", "val", "test")],
     "train-v1_2.txt", "file", "missing: the split lists"),
    (lambda root: ((root / "data-splits-v1_2").mkdir(),
                   shutil.copy(root / "val-v1_2.txt", root / "data-splits-v1_2" / "val-v1_2.txt")),
     "data-splits-v1_2/val-v1_2.txt", "file", "also at val-v1_2.txt"),
])
def test_whole_source_problems_stop_before_the_build(demo: Path, tmp_path: Path, change, source_file: str,
                                                     field: str, reason: str) -> None:
    root = _copy(demo, tmp_path)
    change(root)
    with pytest.raises(BadInput) as err:
        HoloAssist(str(root)).check()
    assert (err.value.source_file, err.value.field) == (source_file, field)
    assert reason in err.value.reason, err.value


def test_files_outside_the_layout_are_named(demo: Path, tmp_path: Path) -> None:
    root = _copy(demo, tmp_path)
    for rel in ("notes.txt", f"{BIKES}/notes.txt", f"{BIKES}/Video/x.mp4", "data-splits-v1_2/extra.txt",
                # part of the release, not read
                f"{BIKES}/Export_py/Video/VideoMp4Timing.txt", f"{BIKES}/Export_py/Eyes/Eyes_sync.txt",
                "data-splits-v1_2.zip", "video_compress.tar", "data-splits-v1/val-v1.txt",
                f"video_pitch_shifted/{BIKES}/{VIDEO}", f"video_pitch_shifted/{CAR}/{VIDEO}"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    (root / STRAY / "Export_py" / "Video_pitchshift.mp4").unlink()
    (root / STRAY / "Export_py").rmdir()
    (root / STRAY / "Export_py").write_text("x")  # a file where the folder belongs
    odd = sorted((r.source_file, r.reason) for r in HoloAssist(str(root)).unrecognized())
    assert [f for f, _ in odd] == [f"{BIKES}/Video/", f"{BIKES}/notes.txt", f"{STRAY}/Export_py",
                                   "data-splits-v1_2/extra.txt", "notes.txt", "video_pitch_shifted/"]
    assert odd[-1][1].endswith("belong at the dataset root (2 files)")
    assert "a file where the folder Export_py/ of a recording belongs" in odd[2][1]
    assert "not a split list of data-splits-v1_2/" in odd[3][1]


def test_the_demo_layout_is_written_identically_on_every_run(demo: Path, videos: Path,
                                                             tmp_path: Path) -> None:
    from pipelines.common.video_sources.demo.holoassist import write

    again = tmp_path / "again"
    write(videos, again)
    files = sorted(p.relative_to(demo).as_posix() for p in demo.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again).as_posix() for p in again.rglob("*") if p.is_file())
    assert all((demo / f).read_bytes() == (again / f).read_bytes() for f in files)
    assert (ROOT / "pipelines" / "common" / "video_sources" / "demo" / "holoassist.py").is_file()
