"""Assembly101 in its released layout: every coarse segment a step and every fine-grained segment an
action, each naming its file, line and field; one view per recording; every bad input a person can
produce named by file and field, that recording only."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import pytest

from core.errors import BadInput
from pipelines.common.video_sources.assembly101 import VIEWS, Assembly101, action_clause
from pipelines.common.video_sources.demo.assembly101 import BIKES, CAR, CUT, GONE, STRAY, TEST
from tests.pipelines.common.video_sources.conftest import listed

TRAIN = "fine-grained-annotations/train.csv"
VALIDATION = "fine-grained-annotations/validation.csv"
FINE_ACTIONS = "fine-grained-annotations/actions.csv"
COARSE_ACTIONS = "coarse-annotations/actions.csv"
SPLITS = "coarse-annotations/coarse_splits"
LABELS = "coarse-annotations/coarse_labels"
BIKES_DIS = f"{LABELS}/disassembly_{BIKES}.txt"
# train.csv line 4: the bikes recording's second "ride bicycle" (frames 91-164, view C10118_rgb)
RIDE = (f"0000002,{BIKES}/C10118_rgb.mp4,000000091,000000164,0000,0000,0000,ride bicycle,ride,bicycle,"
        "d01a,bicycle,0,1")


@pytest.fixture(scope="module")
def demo(videos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pipelines.common.video_sources.demo import assembly101

    root = tmp_path_factory.mktemp("assembly101") / "assembly101"
    assembly101.write(videos, root)
    return root


def copy(demo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo, tmp_path / "assembly101"))


def replace(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1))


def the_error(root: Path, seq: str = BIKES) -> BadInput:
    """The one bad input of recording ``seq``; every other listed recording still listed."""
    videos, _filtered, bad = listed(Assembly101(str(root)))
    assert seq not in videos
    assert {BIKES, CAR, CUT} - {seq} <= set(videos)
    found = [b for b in bad if b.item_id == f"assembly101/{seq}"]
    assert len(found) == 1, bad
    return found[0]


def test_demo_layout_maps_every_segment_with_its_file_line_and_field(demo: Path) -> None:
    reader = Assembly101(str(demo))
    reader.check()
    videos, filtered, bad = listed(reader)
    assert sorted(videos) == sorted([BIKES, CAR, CUT])
    bikes = videos[BIKES]
    assert (bikes.video, bikes.split, bikes.environment, bikes.annotation_file) == \
        (f"recordings/{BIKES}/C10118_rgb.mp4", "train", "physical", TRAIN)
    # the disassembly's first segment starts before the assembly's: that order, in words
    assert (bikes.task, bikes.topic) == ("disassembling and assembling a toy bicycle",
                                         "how to disassemble and assemble a toy bicycle")
    assert bikes.annotated_duration_s is None  # Assembly101 states no duration
    steps = bikes.of_kind("step")
    assert [(s.start, s.end, s.text) for s in steps] == [
        (0.0, 1.2, "watch the road"), (1.2, 5.467, "ride through the traffic"),
        (5.467, 7.467, "view the square"), (7.467, 9.667, "walk past the bicycle")]
    watch = steps[0]
    assert (watch.label, watch.phrase, watch.field) == (
        "coarse: watch road", 'the step "watch the road" begins', f"{BIKES_DIS}:1: start_frame")
    assert (watch.get("part"), watch.get("action_id")) == ("disassembly", "0")
    actions = bikes.of_kind("action")
    ride = next(s for s in actions if s.field == f"{TRAIN}:4: start_frame")
    assert (ride.kind, ride.start, ride.end, ride.label, ride.text, ride.phrase) == (
        "action", 3.033, 5.467, "ride bicycle", "ride the bicycle", "someone starts to ride the bicycle")
    assert ride.field == f"{TRAIN}:4: start_frame"
    assert ride.extra == (("state", "the current action is to ride the bicycle"), ("action_id", "0"),
                          ("verb", "ride"), ("noun", "bicycle"), ("view", "C10118_rgb"))
    # a repeated action compares equal (R); a coarse step never equals a fine action of one name
    assert [s.label for s in actions] == ["pass car", "ride bicycle", "cross road", "ride bicycle",
                                          "walk past bicycle"]
    assert "coarse: walk past bicycle" in {s.label for s in steps}
    # only view v1 of the car recording was downloaded: read from it, its own rows
    car = videos[CAR]
    assert (car.video, car.split, car.annotation_file, car.task, car.topic) == (
        f"recordings/{CAR}/C10095_rgb.mp4", "val", VALIDATION, "assembling a toy car",
        "how to assemble a toy car")
    assert {s.field.split(":")[1] for s in car.of_kind("action")} == {"6", "7", "8", "9"}
    assert {s.get("view") for s in car.of_kind("action")} == {"C10095_rgb"}
    raising = [s for s in car.of_kind("action") if s.label == "raise hand"][0]
    assert (raising.start, raising.end, raising.text) == (2.3, 4.0, "raise hand")  # no "the hand"
    assert sorted((f.item_id, f.source_file, f.rule) for f in filtered) == [
        (f"assembly101/{BIKES}/C10095_rgb", f"recordings/{BIKES}/C10095_rgb.mp4",
         "another view of the recording"),
        (f"assembly101/{TEST}", "fine-grained-annotations/test.csv:2", "test split: labels withheld"),
    ]
    assert sorted((b.source_file, b.field, b.item_id) for b in bad) == [
        (f"{TRAIN}:12", "video", f"assembly101/{GONE}"),
        (f"recordings/{STRAY}/C10118_rgb.mp4", "path", f"assembly101/{STRAY}"),
    ]
    gone = next(b for b in bad if b.item_id == f"assembly101/{GONE}")
    assert "is not on disk" in gone.reason
    assert "unannotated input" in next(b for b in bad if b.item_id == f"assembly101/{STRAY}").reason
    assert list(reader.unrecognized()) == []
    assert reader.annotation_files()[:4] == [TRAIN, VALIDATION, "fine-grained-annotations/test.csv",
                                             FINE_ACTIONS]


def test_the_demo_layout_is_the_same_bytes_on_every_run(demo: Path, videos: Path, tmp_path: Path) -> None:
    from pipelines.common.video_sources.demo import assembly101

    assembly101.write(videos, tmp_path / "again")
    cmp = filecmp.dircmp(demo, tmp_path / "again")

    def same(c: filecmp.dircmp) -> bool:
        _, mismatch, errors = filecmp.cmpfiles(c.left, c.right, c.common_files, shallow=False)
        return not (c.left_only or c.right_only or mismatch or errors) and \
            all(same(sub) for sub in c.subdirs.values())

    assert same(cmp)


def test_a_download_shorter_than_its_annotations_is_caught_once_decoded(demo: Path) -> None:
    from core.media.probe import probe_video
    from pipelines.streamvibe.planner import native_past_end, native_record

    videos, _f, _bad = listed(Assembly101(str(demo)))
    cut = videos[CUT]  # listed: the annotations state no duration to compare with
    decoded = probe_video(demo / cut.video).duration_s
    assert decoded == pytest.approx(4.0, abs=0.1)
    err = native_past_end({"id": cut.key, "collection": "assembly101", "native": native_record(cut),
                           "annotated_duration_s": cut.annotated_duration_s}, decoded)
    assert err is not None and err.source_file.startswith("assembly101/")
    assert err.field == "start_frame" and "past the video's decoded end" in err.reason


def test_action_clauses_read_as_phrases() -> None:
    assert action_clause("pick up screw", "pick up", "screw") == "pick up the screw"
    assert action_clause("remove screw from second wheel", "remove screw from", "second wheel") == \
        "remove screw from the second wheel"
    assert action_clause("pass screw to other hand", "pass", "screw") == "pass the screw to other hand"
    assert action_clause("unscrew first wheel with screwdriver", "unscrew", "first wheel") == \
        "unscrew the first wheel with screwdriver"
    assert action_clause("clap hand", "clap", "hand") == "clap hand"
    assert action_clause("inspect", "look at", "diagram") == "inspect"


@pytest.mark.parametrize(("new", "field", "reason"), [
    (RIDE.replace("000000091,000000164", "000000164,000000091"), "end_frame",
     "end frame 91 is before start frame 164"),
    (RIDE.replace("000000091,", "NaN,"), "start_frame", "must be a frame number"),
    (RIDE.replace("000000164,", "nan,"), "end_frame", "must be a frame number"),
    (RIDE.replace("000000091,", "-91,"), "start_frame", "negative frame '-91'"),
    (RIDE.replace("000000091,", "3.5e2,"), "start_frame", "must be a frame number"),
    (RIDE.replace("000000091,", "9" * 5000 + ","), "start_frame", "must be a frame number"),
    (RIDE.replace("000000091,", ","), "start_frame", "empty"),
    (RIDE.replace(",0000,0000,0000,ride bicycle", ",0999,0000,0000,ride bicycle"), "action_id",
     f"action 999 is not in {FINE_ACTIONS}"),
    (RIDE.replace(",0000,0000,0000,ride bicycle", ",00x0,0000,0000,ride bicycle"), "action_id",
     "must be a class id"),
    (RIDE.replace(",0000,0000,0000,ride bicycle", ",0000,0003,0000,ride bicycle"), "verb_id",
     "3, but fine-grained-annotations/actions.csv gives action 0 verb_id 0"),
    (RIDE.replace("ride bicycle,ride", "ride a bicycle,ride"), "action_cls",
     "'ride a bicycle', but fine-grained-annotations/actions.csv gives action 0 action_cls 'ride bicycle'"),
    (RIDE.replace(",0,1", ",0,0"), "is_RGB", "'0', but view C10118_rgb is a fixed RGB view (1)"),
    (RIDE.replace(",0,1", ",0"), "row", "13 columns, the header has 14"),
    (RIDE.replace("d01a,bicycle", "d01a,"), "toy_name", "empty"),
    (RIDE.replace("d01a,bicycle", "d01a,truck"), "toy_name",
     f"toy 'truck', but {SPLITS}/train_coarse_assembly.txt:1: toy_name names 'bicycle': a recording "
     "shows one toy"),
])
def test_a_bad_fine_grained_row_rejects_that_recording_only(demo: Path, tmp_path: Path, new: str,
                                                          field: str, reason: str) -> None:
    root = copy(demo, tmp_path)
    replace(root, TRAIN, RIDE, new)
    err = the_error(root)
    assert (err.source_file, err.field) == (f"{TRAIN}:4", field), err
    assert reason in err.reason, err


def test_only_the_rows_of_the_view_read_are_checked(demo: Path, tmp_path: Path) -> None:
    """A row of another view (the same segment, repeated per view) is not read: the view read is
    intact."""
    root = copy(demo, tmp_path)
    other = RIDE.replace("0000002,", "0000007,").replace("C10118_rgb", "C10095_rgb")
    replace(root, TRAIN, other, other.replace("ride bicycle,ride", "ride a bicycle,ride"))
    videos, _f, bad = listed(Assembly101(str(root)))
    assert BIKES in videos and not [b for b in bad if b.item_id == f"assembly101/{BIKES}"]


@pytest.mark.parametrize(("old", "new", "field", "reason"), [
    ("000000036\t000000164", "000000164\t000000036", "end_frame", "end frame 36 is before start frame 164"),
    ("000000036\t000000164", "NaN\t000000164", "start_frame", "must be a frame number"),
    ("000000036\t000000164", "-36\t000000164", "start_frame", "negative frame '-36'"),
    ("ride through traffic", "ride past the traffic", "action_cls",
     "coarse action 'ride past the traffic' is not in coarse-annotations/actions.csv"),
    ("000000036\t000000164\tride through traffic", "000000036\t000000164", "line",
     "expected <start_frame><TAB><end_frame><TAB><action_cls>"),
])
def test_a_bad_coarse_segment_rejects_that_recording_only(demo: Path, tmp_path: Path, old: str, new: str,
                                                         field: str, reason: str) -> None:
    root = copy(demo, tmp_path)
    replace(root, BIKES_DIS, old, new)
    err = the_error(root)
    assert (err.source_file, err.field) == (f"{BIKES_DIS}:2", field), err
    assert reason in err.reason, err


def test_a_coarse_line_with_spaces_instead_of_tabs_is_read(demo: Path, tmp_path: Path) -> None:
    root = copy(demo, tmp_path)
    replace(root, BIKES_DIS, "000000036\t000000164\t", "000000036 000000164 ")
    videos, _f, _bad = listed(Assembly101(str(root)))
    assert "ride through the traffic" in {s.text for s in videos[BIKES].spans}


def test_a_byte_that_is_not_utf8_rejects_its_recording_naming_the_field(demo: Path, tmp_path: Path) -> None:
    root = copy(demo, tmp_path)
    path = root / TRAIN
    path.write_bytes(path.read_bytes().replace(RIDE.encode(), RIDE.replace(
        "cross road", "x").encode().replace(b"ride bicycle,ride", b"ride bic\xe9cle,ride"), 1))
    err = the_error(root)
    assert (err.source_file, err.field, err.reason) == (f"{TRAIN}:4", "action_cls",
                                                        "not valid UTF-8: byte 0xe9 at column 9")
    root = copy(demo, tmp_path / "coarse")
    path = root / BIKES_DIS
    path.write_bytes(path.read_bytes().replace(b"watch road", b"watch r\xf6ad"))
    err = the_error(root)
    assert (err.source_file, err.field) == (f"{BIKES_DIS}:1", "action_cls")
    assert err.reason == "not valid UTF-8: byte 0xf6 at column 8"


def test_a_bad_video_cell_rejects_its_row_by_line(demo: Path, tmp_path: Path) -> None:
    root = copy(demo, tmp_path)
    replace(root, TRAIN, RIDE, RIDE.replace("C10118_rgb.mp4", "C99999_rgb.mp4"))
    replace(root, VALIDATION, f"{CAR}/C10118_rgb.mp4", f"{CAR}\\C10118_rgb.avi")
    videos, _f, bad = listed(Assembly101(str(root)))
    assert {BIKES, CAR, CUT} <= set(videos)  # the other rows of both recordings are read
    rows = sorted((b.source_file, b.field, b.item_id, b.reason.split(" (")[0]) for b in bad
                  if b.item_id.endswith((":2", ":4")))
    assert rows == [
        (f"{TRAIN}:4", "video", f"assembly101/{TRAIN}:4", "'C99999_rgb' is not an Assembly101 view"),
        (f"{VALIDATION}:2", "video", f"assembly101/{VALIDATION}:2",
         f"expected <sequence>/<view>.mp4, got '{CAR[:40]}…'"),
    ]


def test_a_recording_in_two_split_files_is_named_in_both(demo: Path, tmp_path: Path) -> None:
    # two fine-grained split files
    root = copy(demo, tmp_path / "fine")
    (root / VALIDATION).write_text((root / VALIDATION).read_text() + RIDE + "\n")
    err = the_error(root)
    assert (err.source_file, err.field) == (f"{VALIDATION}:10", "video")
    assert f"also in {TRAIN}:2" in err.reason
    # two coarse split lists
    root = copy(demo, tmp_path / "coarse")
    val = root / SPLITS / "val_coarse_assembly.txt"
    val.write_text(val.read_text() + f"assembly_{BIKES}.txt\tnotshared\td01a\tbicycle\n")
    err = the_error(root)
    assert (err.source_file, err.field) == (f"{SPLITS}/val_coarse_assembly.txt:2", "sequence")
    assert f"also listed on {SPLITS}/train_coarse_assembly.txt:1" in err.reason
    # the coarse list and the fine-grained file disagree
    root = copy(demo, tmp_path / "both")
    replace(root, f"{SPLITS}/val_coarse_assembly.txt", f"assembly_{CAR}.txt\tshared\td02b\tcar\n", "")
    train = root / SPLITS / "train_coarse_assembly.txt"
    train.write_text(train.read_text() + f"assembly_{CAR}.txt\tshared\td02b\tcar\n")
    err = the_error(root, CAR)
    assert (err.source_file, err.field) == (f"{SPLITS}/train_coarse_assembly.txt:4", "sequence")
    assert f"puts recording {CAR} in train, but {VALIDATION}:2 puts it in val" in err.reason


def test_coarse_label_files_missing_or_listed_nowhere(demo: Path, tmp_path: Path) -> None:
    root = copy(demo, tmp_path)
    (root / BIKES_DIS).unlink()
    err = the_error(root)
    assert (err.source_file, err.field) == (f"{SPLITS}/train_coarse_disassembly.txt:1", "sequence")
    assert "is not there" in err.reason
    root = copy(demo, tmp_path / "unlisted")
    replace(root, f"{SPLITS}/train_coarse_disassembly.txt",
            f"disassembly_{BIKES}.txt\tnotshared\td01a\tbicycle\n", "")
    err = the_error(root)
    assert (err.source_file, err.field) == (BIKES_DIS, "path")
    assert "no coarse_splits list names" in err.reason


def test_a_missing_video_and_a_video_nobody_annotates(demo: Path, tmp_path: Path) -> None:
    root = copy(demo, tmp_path)
    shutil.rmtree(root / "recordings" / BIKES)
    err = the_error(root)
    assert (err.source_file, err.field) == (f"{TRAIN}:2", "video")
    assert err.reason.startswith(f"recording {BIKES} is not on disk")
    stray = root / "recordings" / "nusar-2021_action_both_9999-z99_9999_user_id_2021-01-01_000000"
    stray.mkdir()
    (stray / "HMC_21176875_mono10bit.mp4").write_bytes(b"x")
    _v, _f, bad = listed(Assembly101(str(root)))
    assert [b.source_file for b in bad if "unannotated" in b.reason] == [
        f"recordings/{STRAY}/C10118_rgb.mp4", f"recordings/{stray.name}/HMC_21176875_mono10bit.mp4"]


def test_the_views_read_can_be_chosen(demo: Path) -> None:
    videos, filtered, _bad = listed(Assembly101(str(demo), views=("C10095_rgb",)))
    assert videos[BIKES].video == f"recordings/{BIKES}/C10095_rgb.mp4"
    assert {s.get("view") for s in videos[BIKES].of_kind("action")} == {"C10095_rgb"}
    assert f"assembly101/{BIKES}/C10118_rgb" in {f.item_id for f in filtered}
    assert CUT not in videos  # its only file is a view not read
    assert VIEWS[0] == "C10118_rgb"
    with pytest.raises(ValueError, match="unknown Assembly101 views"):
        Assembly101(str(demo), views=("C1_rgb",))


def test_whole_source_problems_stop_before_the_build(demo: Path, tmp_path: Path) -> None:
    root = copy(demo, tmp_path)
    (root / TRAIN).write_text((root / TRAIN).read_text() + '0000099,"unterminated\n')
    with pytest.raises(BadInput) as err:
        Assembly101(str(root)).check()
    assert (err.value.source_file, err.value.field) == (f"{TRAIN}:19", "csv")
    (root / TRAIN).write_text("id,video,start,end\n")
    with pytest.raises(BadInput) as err:
        Assembly101(str(root)).check()
    assert (err.value.source_file, err.value.field) == (f"{TRAIN}:1", "header")
    (root / TRAIN).write_text((demo / TRAIN).read_text())
    actions = root / FINE_ACTIONS
    actions.write_text(actions.read_text() + "8,0,9,9,ride again,ride,again\n")
    with pytest.raises(BadInput) as err:
        Assembly101(str(root)).check()
    assert (err.value.source_file, err.value.field, err.value.reason) == \
        (f"{FINE_ACTIONS}:10", "action_id", "action 0 listed twice")
    actions.unlink()
    with pytest.raises(BadInput, match="missing") as err:
        Assembly101(str(root)).check()
    assert err.value.source_file == FINE_ACTIONS
    (root / COARSE_ACTIONS).write_text("id,action_id,verb_id,noun_id,action_cls,verb_cls,noun_cls\n")
    shutil.copy(demo / FINE_ACTIONS, actions)
    with pytest.raises(BadInput) as err:
        Assembly101(str(root)).check()
    assert (err.value.source_file, err.value.field) == (f"{COARSE_ACTIONS}:1", "header")
    for folder in ("fine-grained-annotations", "coarse-annotations"):
        shutil.rmtree(root / folder)
    with pytest.raises(BadInput, match="missing: no fine-grained split CSV"):
        Assembly101(str(root)).check()


def test_a_byte_order_mark_is_read_past(demo: Path, tmp_path: Path) -> None:
    root = copy(demo, tmp_path)
    (root / TRAIN).write_bytes(b"\xef\xbb\xbf" + (root / TRAIN).read_bytes())
    reader = Assembly101(str(root))
    reader.check()
    assert BIKES in listed(reader)[0]


def test_files_outside_the_layout_are_named(demo: Path, tmp_path: Path) -> None:
    root = copy(demo, tmp_path)
    (root / "notes.txt").write_text("x")
    (root / "videos").mkdir()
    (root / "videos" / "a.mp4").write_bytes(b"x")
    (root / "recordings" / BIKES / "C10118_rgb.mkv").write_bytes(b"x")
    (root / "recordings" / "loose.mp4").write_bytes(b"x")
    (root / LABELS / "notes.txt").write_text("x")
    (root / "fine-grained-annotations" / "train_copy.csv").write_text("x")
    (root / "TSM_features").mkdir()
    (root / "TSM_features" / "C10118_rgb.lmdb").write_bytes(b"x")  # part of the release, not read
    odd = sorted((r.source_file, r.reason.split(" (")[0]) for r in Assembly101(str(root)).unrecognized())
    assert [f for f, _ in odd] == [
        f"{LABELS}/notes.txt", "fine-grained-annotations/train_copy.csv", "notes.txt",
        "recordings/loose.mp4", f"recordings/{BIKES}/C10118_rgb.mkv", "videos/"]
    videos, _f, bad = listed(Assembly101(str(root)))
    assert BIKES in videos and not [b for b in bad if b.item_id == f"assembly101/{BIKES}"]


def test_a_label_file_that_cannot_be_read_rejects_its_recording(demo: Path, tmp_path: Path) -> None:
    """Found by the fuzz (a dangling link in place of a label file): the rejection names the
    recording, which is otherwise gone without a word."""
    root = copy(demo, tmp_path)
    (root / BIKES_DIS).unlink()
    (root / BIKES_DIS).symlink_to("../nowhere/x")
    err = the_error(root)
    assert (err.source_file, err.field) == (BIKES_DIS, "file")
    assert err.reason == "a symbolic link whose target does not exist"
