"""VideoCUA in its released layout (``data/<Platform>/<task_id>/`` as download_data.sh extracts
it): every logged action mapped as a timed GUI action with its provenance, the planner's T
request planned from it, every bad input a person can produce named by file and field, nothing
listed twice or dropped."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from core.errors import BadInput
from pipelines.common.video_sources.videocua import VideoCUA
from pipelines.streamvibe.planner import native_record, plan_requests
from tests.pipelines.common.video_sources.conftest import listed

NOTES, CALC, GONE, STRAY = "90011", "90012", "90013", "90014"
NOTES_LOG = f"data/Notes/{NOTES}/action_log.json"
CALC_LOG = f"data/Calculator/{CALC}/action_log.json"


def _write(videos: Path, root: Path) -> Path:
    from pipelines.common.video_sources.demo.videocua import write

    write(videos, root)
    return root


@pytest.fixture(scope="module")
def demo(videos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo layout (pipelines/common/video_sources/demo/videocua.py), made once for this module."""
    return _write(videos, tmp_path_factory.mktemp("videocua") / "videocua")


@pytest.fixture
def root(demo: Path, tmp_path: Path) -> Path:
    """A private copy of the demo layout, to break."""
    return Path(shutil.copytree(demo, tmp_path / "videocua"))


def _edit(root: Path, rel: str, edit) -> None:
    path = root / rel
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


def _only(bad: list[BadInput], task: str) -> BadInput:
    (err,) = [b for b in bad if b.item_id == f"videocua/{task}"]
    return err


# -- the demo layout, field by field ------------------------------------------------------------

def test_demo_layout_maps_every_logged_action_with_its_file_and_field(demo: Path) -> None:
    reader = VideoCUA(str(demo))
    reader.check()
    videos, filtered, bad = listed(reader)
    assert sorted(videos) == [NOTES, CALC]
    notes = videos[NOTES]
    assert (notes.dataset, notes.video, notes.split, notes.environment, notes.annotation_file) == \
        ("videocua", f"data/Notes/{NOTES}/video/video.mp4", "train", "digital", NOTES_LOG)
    assert (notes.task, notes.topic, notes.annotated_duration_s) == \
        ("type hello world into the empty note and save it with Ctrl+S", "Notes", 4.6)
    assert [(s.kind, s.start, s.end, s.label, s.text) for s in notes.spans] == [
        ("gui_action", 1.0, 1.0, "click", "click at (200, 150)"),
        ("gui_action", 1.6, 1.6, "type", 'type "hello world"'),
        ("gui_action", 3.4, 3.4, "press", "press ctrl+s")]
    click = notes.spans[0]
    assert click.phrase == "the user clicks at (200, 150)"
    assert click.field == f"{NOTES_LOG}: action_log[0].timestamp"
    assert (click.get("target"), click.get("action")) == ("at (200, 150)", "CLICK")
    assert (notes.spans[1].get("target"), notes.spans[1].get("action")) == ('"hello world"', "TYPE")
    assert notes.spans[2].get("target") == "ctrl+s"
    calc = videos[CALC]
    assert (calc.task, calc.topic, calc.annotated_duration_s) == \
        ("add 7 and 5 with the calculator's buttons", "Calculator", 3.9)
    assert [(s.start, s.text) for s in calc.spans] == [
        (0.8, "click at (106, 155)"), (1.6, "click at (532, 317)"), (2.4, "click at (248, 209)"),
        (3.2, "click at (390, 317)")]
    assert filtered == []
    assert sorted((b.source_file, b.field, b.item_id) for b in bad) == [
        (f"data/Calculator/{STRAY}/video/video.mp4", "path", f"videocua/{STRAY}"),
        (f"data/Notes/{GONE}/action_log.json", "task_id", f"videocua/{GONE}"),
    ]
    assert "not on disk" in _only(bad, GONE).reason
    assert "unannotated input" in _only(bad, STRAY).reason
    assert list(reader.unrecognized()) == []
    assert reader.annotation_files() == [CALC_LOG, NOTES_LOG, f"data/Notes/{GONE}/action_log.json"]


def test_the_planner_asks_for_guidance_in_the_app_with_one_point_per_action(demo: Path) -> None:
    videos, _f, _b = listed(VideoCUA(str(demo)))
    notes = videos[NOTES]
    native = native_record(notes)
    at = f"{NOTES_LOG}: action_log"
    assert native["actions"] == [
        {"t": 1.0, "action": "click", "target": "at (200, 150)", "field": f"{at}[0].timestamp"},
        {"t": 1.6, "action": "type", "target": '"hello world"', "field": f"{at}[1].timestamp"},
        {"t": 3.4, "action": "press", "target": "ctrl+s", "field": f"{at}[2].timestamp"}]
    assert native["events"] == native["steps"] == native["states"] == []
    assert plan_requests(notes, native, seed=0) == [{"subtype": "T", "slots": {
        "app": "Notes", "task": "type hello world into the empty note and save it with Ctrl+S"}}]


def test_the_demo_layout_is_the_same_bytes_on_every_run(demo: Path, videos: Path, tmp_path: Path) -> None:
    again = _write(videos, tmp_path / "again")

    def digests(folder: Path) -> dict[str, str]:
        return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(folder.rglob("*")) if p.is_file()}

    assert digests(again) == digests(demo)


def test_the_rendered_recordings_are_screen_videos_as_logged(demo: Path) -> None:
    from core.media.probe import probe_video

    notes = probe_video(demo / f"data/Notes/{NOTES}/video/video.mp4")
    calc = probe_video(demo / f"data/Calculator/{CALC}/video/video.mp4")
    assert (notes.fps, notes.duration_s) == (30.0, 5.0)
    assert (calc.fps, calc.duration_s) == (30.0, 4.0)


# -- bad input: one task rejected, naming file and field ------------------------------------------

def _action(k: int, **change) -> object:
    return lambda d: d["action_log"][k].update(change)


@pytest.mark.parametrize(("edit", "field", "reason"), [
    # a time past the annotated end (the log's AFTER_LAST_ACTION at 4.6 s)
    (_action(2, timestamp=30.0), "action_log[2].timestamp", "past the annotated end (action_log[3], "
                                                            "AFTER_LAST_ACTION at 4.6 s)"),
    # end < start: an action logged before the one listed ahead of it
    (_action(1, timestamp=0.5), "action_log[1].timestamp", "0.5 s is before action_log[0].timestamp "
                                                           "(1.0 s)"),
    (_action(1, timestamp=float("nan")), "action_log[1].timestamp", "not finite"),
    (_action(1, timestamp=float("inf")), "action_log[1].timestamp", "not finite"),
    (_action(0, timestamp=-1.0), "action_log[0].timestamp", "negative time -1.0 s"),
    (_action(1, timestamp=10 ** 400), "action_log[1].timestamp", "too large to be a time"),
    (_action(1, timestamp=1e300), "action_log[1].timestamp", "action at 1e+300 s is past the annotated end"),
    # the end marker before the last action: that action is past the annotated end
    (_action(3, timestamp=3.0), "action_log[2].timestamp", "action at 3.4 s is past the annotated end"),
    (_action(1, timestamp="soon"), "action_log[1].timestamp", "must be a number of seconds"),
    (_action(1, action_type="WAVE"), "action_log[1].action_type", "'WAVE' is not an action type"),
    (_action(3, action_type="CLICK"), "action_log[3].action_params.x", "must be a number"),
    (lambda d: d["action_log"].insert(1, {"action_type": "TERMINATE", "timestamp": 1.2}),
     "action_log[1].action_type", "not the log's last entry"),
    (_action(0, action_params={"x": -4, "y": 150}), "action_log[0].action_params.x", "not a number in"),
    (_action(0, action_params={"x": 200, "y": True}), "action_log[0].action_params.y", "must be a number"),
    (_action(0, action_params={"x": 200, "y": 150, "numClicks": 1.5}),
     "action_log[0].action_params.numClicks", "whole number of clicks"),
    (_action(1, action_params={"text": ""}), "action_log[1].action_params.text", "missing or empty"),
    (_action(2, action_params={"keys": ["ctrl", 7]}), "action_log[2].action_params.keys[1]",
     "must be a string"),
    (_action(2, action_params=[]), "action_log[2].action_params", "must be an object"),
    (lambda d: d.update(action_log={}), "action_log", "must be a list"),
    (lambda d: d.update(task_instruction="  "), "task_instruction", "empty"),
    (lambda d: d.pop("task_instruction"), "task_instruction", "must be a string"),
    (lambda d: d.update(task_id=46551), "task_id", "46551 is not the folder it lies in (90011)"),
    (lambda d: d.update(platform="Blender"), "platform", "'Blender' is not the folder it lies in (Notes)"),
])
def test_a_bad_log_rejects_that_task_only(root: Path, edit, field: str, reason: str) -> None:
    _edit(root, NOTES_LOG, edit)
    reader = VideoCUA(str(root))
    reader.check()
    videos, _filtered, bad = listed(reader)
    assert NOTES not in videos and CALC in videos
    err = _only(bad, NOTES)
    assert (err.source_file, err.field) == (NOTES_LOG, field)
    assert reason in err.reason, err


def test_a_byte_that_is_not_utf8_rejects_its_task_naming_the_field(root: Path) -> None:
    path = root / NOTES_LOG
    path.write_bytes(path.read_bytes().replace(b"empty note", b"empty n\xf6te"))
    videos, _f, bad = listed(VideoCUA(str(root)))
    assert NOTES not in videos and CALC in videos
    err = _only(bad, NOTES)
    assert (err.field, err.reason) == ("task_instruction", "not valid UTF-8: byte 0xf6 at column 34")
    data = path.read_bytes().replace(b"n\xf6te", b"note")
    path.write_bytes(data.replace(b'"text": "hello world"', b'"text": "h\xe9llo"'))
    err = _only(listed(VideoCUA(str(root)))[2], NOTES)
    assert (err.field, err.reason) == ("action_log[1].action_params.text",
                                       "not valid UTF-8: byte 0xe9 at column 2")


def test_a_key_held_twice_rejects_its_task(root: Path) -> None:
    path = root / NOTES_LOG
    text = path.read_text()
    # JSON allows a key twice; json.loads would keep the last without a word
    path.write_text(text.replace('"platform": "Notes"', '"platform": "Notes", "platform": "Notes"', 1))
    err = _only(listed(VideoCUA(str(root)))[2], NOTES)
    assert (err.source_file, err.field) == (NOTES_LOG, "platform")
    assert "twice" in err.reason
    path.write_text(text.replace('"timestamp": 1.6', '"timestamp": 1.6, "timestamp": 1.7', 1))
    err = _only(listed(VideoCUA(str(root)))[2], NOTES)
    assert err.field == "action_log[1].timestamp" and "twice" in err.reason


def test_the_same_task_id_under_two_platforms_rejects_both(root: Path) -> None:
    shutil.copytree(root / f"data/Notes/{NOTES}", root / f"data/Calculator/{NOTES}")
    videos, _f, bad = listed(VideoCUA(str(root)))
    assert NOTES not in videos and CALC in videos
    twice = sorted((b.source_file, b.field) for b in bad if b.item_id == f"videocua/{NOTES}")
    assert twice == [(f"data/Calculator/{NOTES}/action_log.json", "path"),
                     (f"data/Calculator/{NOTES}/video/video.mp4", "path"),
                     (NOTES_LOG, "path"), (f"data/Notes/{NOTES}/video/video.mp4", "path")]
    assert all("also under" in b.reason for b in bad if b.item_id == f"videocua/{NOTES}")


def test_a_video_listed_but_not_on_disk_or_there_twice(root: Path) -> None:
    shutil.rmtree(root / f"data/Notes/{NOTES}/video")
    err = _only(listed(VideoCUA(str(root)))[2], NOTES)
    assert (err.source_file, err.field) == (NOTES_LOG, "task_id")
    assert f"not on disk (looked for data/Notes/{NOTES}/video/video.mp4" in err.reason
    (root / f"data/Calculator/{CALC}/video/video.mov").write_bytes(b"x")
    err = _only(listed(VideoCUA(str(root)))[2], CALC)
    assert (err.source_file, err.field) == (f"data/Calculator/{CALC}/video/video.mp4", "path")
    assert "on disk more than once" in err.reason


def test_a_video_nobody_annotates_is_an_unannotated_input(root: Path) -> None:
    (root / NOTES_LOG).unlink()
    videos, _f, bad = listed(VideoCUA(str(root)))
    assert NOTES not in videos
    err = _only(bad, NOTES)
    assert (err.source_file, err.field) == (f"data/Notes/{NOTES}/video/video.mp4", "path")
    assert "unannotated input" in err.reason


def test_a_log_without_actions_is_filtered_and_a_file_for_a_task_folder_is_named(root: Path) -> None:
    _edit(root, NOTES_LOG, lambda d: d.update(action_log=d["action_log"][-1:]))
    videos, filtered, _bad = listed(VideoCUA(str(root)))
    assert NOTES not in videos
    assert [(f.item_id, f.source_file, f.rule) for f in filtered] == \
        [(f"videocua/{NOTES}", NOTES_LOG, "no actions logged")]
    shutil.rmtree(root / f"data/Calculator/{CALC}")
    (root / f"data/Calculator/{CALC}").write_text("not a folder\n")
    err = _only(listed(VideoCUA(str(root)))[2], CALC)
    assert (err.source_file, err.field) == (f"data/Calculator/{CALC}", "path")
    assert "a file where a task folder belongs" in err.reason


def test_files_outside_the_layout_are_named(root: Path) -> None:
    (root / "raw_data").mkdir()
    (root / "raw_data/Notes.zip").write_bytes(b"PK")  # the release's archives: part of the layout
    (root / "notes.txt").write_text("x")
    (root / f"data/Notes/{NOTES}/opencua_trace.jsonl").write_text("{}\n")
    (root / f"data/Notes/{NOTES}/video/frame.png").write_bytes(b"x")
    (root / f"data/Notes/{NOTES}/processed_images").mkdir()
    (root / f"data/Notes/{NOTES}/processed_images/0.png").write_bytes(b"x")
    (root / "raw_data/Notes").mkdir()
    (root / "raw_data/Notes/46551.json").write_text("{}")
    reader = VideoCUA(str(root))
    assert sorted((r.source_file, r.reason.split(" (")[0]) for r in reader.unrecognized()) == [
        (f"data/Notes/{NOTES}/opencua_trace.jsonl", "not part of a task folder"),
        (f"data/Notes/{NOTES}/processed_images/", "not part of a task folder"),
        (f"data/Notes/{NOTES}/video/frame.png", "not a video the official converter reads"),
        ("notes.txt", "not part of the VideoCUA layout"),
        ("raw_data/Notes/46551.json", "not a platform archive at raw_data/<Platform>.zip"),
    ]
    videos, _f, _b = listed(reader)  # a stray file beside a task's files leaves the task readable
    assert NOTES in videos


# -- whole-source problems: the build stops before it starts ----------------------------------------

def test_whole_source_problems_stop_before_the_build(root: Path) -> None:
    (root / NOTES_LOG).write_text('{"action_log": [')
    with pytest.raises(BadInput) as err:
        VideoCUA(str(root)).check()
    assert (err.value.source_file, err.value.field) == (NOTES_LOG, "json")
    # the listing does not stop: that task is rejected, the others are listed
    videos, _f, bad = listed(VideoCUA(str(root)))
    assert CALC in videos and (_only(bad, NOTES).source_file, _only(bad, NOTES).field) == (NOTES_LOG, "json")
    (root / NOTES_LOG).write_text("{}")
    (root / "data/Notes.zip").write_bytes(b"PK")
    with pytest.raises(BadInput) as err:
        VideoCUA(str(root)).check()
    assert (err.value.source_file, err.value.field) == ("data/Notes.zip", "path")
    assert "a file where a platform folder belongs" in err.value.reason
    shutil.rmtree(root / "data")
    with pytest.raises(BadInput, match="missing: no task folder holds an action_log.json"):
        VideoCUA(str(root)).check()
