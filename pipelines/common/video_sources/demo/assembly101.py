"""A tiny copy of Assembly101's released layout (docs/video_sources.md §assembly101) around the real
registry videos: the annotation files and video paths exactly as the release writes them
(``fine-grained-annotations/``, ``coarse-annotations/``, ``recordings/<sequence>/<view>.mp4``), the
class lists holding only the demo's own classes, the annotations describing what the videos
really show (frames at 30 fps, as every Assembly101 frame number is).

* the bike footage (``bikes.mp4``, 10 s) as a training recording read from the default view
  ``C10118_rgb``, a second view ``C10095_rgb`` of it on disk (a filtered input), its "disassembly"
  the first three shots and its "assembly" the last two, a cyclist riding past cars twice (a
  repeated fine-grained action);
* the man in the car (``carphone_distorted.mp4``, 4 s) as a validation recording of which only
  view ``C10095_rgb`` was downloaded (the reader falls back to it);
* one training recording never downloaded, one download cut short of its annotations (4 of
  10 s: the benchmark rejects it once decoded), one test-split recording (labels withheld:
  filtered) and one recording nobody annotated.

The release's videos are all ``.mp4``, so only the registry's MP4 videos are used (stream copies,
the same bytes on every run).
"""

from __future__ import annotations

from pathlib import Path

FINE_HEADER = ("id,video,start_frame,end_frame,action_id,verb_id,noun_id,action_cls,verb_cls,noun_cls,"
               "toy_id,toy_name,is_shared,is_RGB")
TEST_HEADER = "id,video,start_frame,end_frame,is_shared,is_RGB"
BIKES = "nusar-2021_action_both_9901-d01a_9901_user_id_2021-03-01_100000"
CAR = "nusar-2021_action_both_9902-d02b_9902_user_id_2021-03-02_110000"
GONE = "nusar-2021_action_both_9903-d01a_9903_user_id_2021-03-03_120000"  # never downloaded
CUT = "nusar-2021_action_both_9904-d01a_9904_user_id_2021-03-04_130000"  # download stopped at 4 s
TEST = "nusar-2021_action_both_9905-d02b_9905_user_id_2021-03-05_140000"  # test split
STRAY = "nusar-2021_action_both_9906-d02b_9906_user_id_2021-03-06_150000"  # nobody annotates it

# fine-grained classes: (action_id, verb_id, noun_id, action_cls, verb_cls, noun_cls)
FINE_CLASSES = [(0, 0, 0, "ride bicycle", "ride", "bicycle"), (1, 1, 1, "pass car", "pass", "car"),
                (2, 2, 2, "cross road", "cross", "road"),
                (3, 3, 0, "walk past bicycle", "walk past", "bicycle"),
                (4, 4, 1, "sit in car", "sit in", "car"), (5, 5, 3, "talk to camera", "talk to", "camera"),
                (6, 6, 4, "raise hand", "raise", "hand"), (7, 7, 5, "tilt head", "tilt", "head")]
COARSE_CLASSES = [(0, 0, 0, "watch road", "watch", "road"),
                  (1, 1, 1, "ride through traffic", "ride through", "traffic"),
                  (2, 2, 2, "view square", "view", "square"),
                  (3, 3, 3, "walk past bicycle", "walk past", "bicycle"),
                  (4, 4, 4, "talk in car", "talk in", "car"), (5, 5, 5, "raise hand", "raise", "hand")]
# bikes.mp4 (its shots: demo/native.py BIKES_SHOTS), frames at 30 fps: (start, end, action_id)
BIKES_ACTIONS = [(36, 91, 0),    # 1.2-3.04 s: a cyclist rides past cars in traffic
                 (36, 91, 1),
                 (91, 164, 0),   # 3.04-5.48 s: a cyclist rides on and crosses in front of a car
                 (91, 164, 2),
                 (224, 290, 3)]  # 7.48-9.68 s: people walk past a bicycle parked against a wall
# carphone_distorted.mp4: a man in a suit talks in a car, raises a hand and tilts his head at 2.3 s
CAR_ACTIONS = [(0, 120, 4), (0, 69, 5), (69, 120, 6), (69, 120, 7)]
BIKES_COARSE = {"disassembly": [(0, 36, "watch road"), (36, 164, "ride through traffic")],
                "assembly": [(164, 224, "view square"), (224, 290, "walk past bicycle")]}
CAR_COARSE = {"assembly": [(0, 69, "talk in car"), (69, 120, "raise hand")]}


def write(media: Path, root: Path) -> None:
    """The demo layout of Assembly101 under ``root`` (module doc), from the registry videos in
    ``media``; the same bytes on every run."""
    from pipelines.common.video_sources.demo.files import remux
    from pipelines.common.video_sources.demo.files import write as write_text

    fine_dir, coarse_dir = root / "fine-grained-annotations", root / "coarse-annotations"
    write_text(fine_dir / "actions.csv", "id,action_id,verb_id,noun_id,action_cls,verb_cls,noun_cls\n"
               + "".join(f"{k},{a},{v},{n},{c},{vc},{nc}\n"
                         for k, (a, v, n, c, vc, nc) in enumerate(FINE_CLASSES)))
    write_text(coarse_dir / "actions.csv", "action_id,verb_id,noun_id,action_cls,verb_cls,noun_cls\n"
               + "".join(f"{a},{v},{n},{c},{vc},{nc}\n" for a, v, n, c, vc, nc in COARSE_CLASSES))

    counter = iter(range(10_000))

    def rows(seq: str, view: str, actions: list[tuple[int, int, int]], toy: tuple[str, str]) -> list[str]:
        out = []
        for start, end, aid in actions:
            a, v, n, c, vc, nc = FINE_CLASSES[aid]
            rgb = "1" if view.endswith("_rgb") else "0"
            out.append(f"{next(counter):07d},{seq}/{view}.mp4,{start:09d},{end:09d},{a:04d},{v:04d},"
                       f"{n:04d},{c},{vc},{nc},{toy[0]},{toy[1]},0,{rgb}")
        return out

    bicycle, car = ("d01a", "bicycle"), ("d02b", "car")
    # the release repeats every segment for each view of a recording
    train = (rows(BIKES, "C10118_rgb", BIKES_ACTIONS, bicycle)
             + rows(BIKES, "C10095_rgb", BIKES_ACTIONS, bicycle)
             + rows(GONE, "C10118_rgb", BIKES_ACTIONS[:2], bicycle)
             + rows(CUT, "C10118_rgb", BIKES_ACTIONS, bicycle))
    validation = rows(CAR, "C10118_rgb", CAR_ACTIONS, car) + rows(CAR, "C10095_rgb", CAR_ACTIONS, car)
    write_text(fine_dir / "train.csv", "\n".join([FINE_HEADER, *train]) + "\n")
    write_text(fine_dir / "validation.csv", "\n".join([FINE_HEADER, *validation]) + "\n")
    test = [f"{next(counter):07d},{TEST}/C10118_rgb.mp4,{s:09d},{e:09d},0,1" for s, e, _ in CAR_ACTIONS]
    write_text(fine_dir / "test.csv", "\n".join([TEST_HEADER, *test]) + "\n")

    def labels(seq: str, coarse: dict[str, list[tuple[int, int, str]]]) -> None:
        for part, segments in coarse.items():
            write_text(coarse_dir / "coarse_labels" / f"{part}_{seq}.txt",
                       "".join(f"{s:09d}\t{e:09d}\t{name}\n" for s, e, name in segments))

    for seq in (BIKES, GONE, CUT):
        labels(seq, BIKES_COARSE)
    labels(CAR, CAR_COARSE)
    splits = coarse_dir / "coarse_splits"
    for part in ("assembly", "disassembly"):
        write_text(splits / f"train_coarse_{part}.txt",
                   "".join(f"{part}_{seq}.txt\tnotshared\td01a\tbicycle\n" for seq in (BIKES, GONE, CUT)))
    write_text(splits / "val_coarse_assembly.txt", f"assembly_{CAR}.txt\tshared\td02b\tcar\n")
    write_text(splits / "val_coarse_disassembly.txt", "")
    write_text(splits / "test_coarse_assembly.txt", f"assembly_{TEST}.txt\tnotshared\n")
    write_text(splits / "test_coarse_disassembly.txt", "")

    videos = root / "recordings"
    remux(media / "bikes.mp4", videos / BIKES / "C10118_rgb.mp4")
    remux(media / "bikes.mp4", videos / BIKES / "C10095_rgb.mp4")  # a second view: filtered
    remux(media / "carphone_distorted.mp4", videos / CAR / "C10095_rgb.mp4")  # only view v1 downloaded
    remux(media / "bikes.mp4", videos / CUT / "C10118_rgb.mp4", 0, 4)
    remux(media / "carphone_distorted.mp4", videos / TEST / "C10118_rgb.mp4")
    remux(media / "carphone_distorted.mp4", videos / STRAY / "C10118_rgb.mp4")  # unannotated
