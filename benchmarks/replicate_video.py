"""Replicate the StreamVibe-Bench or ProReady-QA demo corpus N times, in the native layouts.

Why: the video demos build in seconds from a few clips, which says nothing about a build of the
papers' hours of video. ``scale_video.py`` builds these replicas; this module makes them. Each
of N replicas is every video of the demo under a new id (``<id>r<k>``; the original is replica
0), so a build at N× reads N× the videos, plans N× the requests and writes N× the samples —
through the same readers and layouts a real download has:

* the custom manifest of the benchmark (StreamVibe's ``manifest.jsonl`` + ``tasks/*.json``, its
  training split's ``train_manifest.jsonl`` + ``tasks/train/``; ProReady-QA's ``manifest.yaml``);
* the video datasets replicated in their released layouts (:data:`REPLICATED`): YouCook2
  (``database`` keys, the split lists, ``raw_videos/<subset>/<recipe>/<id>.*``), Ego4D
  (``narration.json`` keys, ``ego4d.json`` ``videos``, ``full_scale/<uid>.mp4`` and
  ``manifest.csv``), Charades (the CSV rows, ``Charades_v1_480/<id>.mp4``) and, for StreamVibe's
  T subtype, VideoCUA (``data/<Platform>/<task_id>/action_log.json`` and ``video/``). The scale build's
  config lists only these (``scale_video.py`` writes it): a dataset read at 1× beside N× of the
  others would blur the ratios.

Bad inputs of the demo (a download cut short, a corrupt file, a listed video never downloaded,
a video nobody annotated) are replicated with their videos, so every rejection path is paid N
times too. Lines of a manifest that are not JSON are kept once.

Videos are hard links (no disk, the same bytes: a build that recognised equal bytes would be
measured too kindly) or, with ``unique_bytes``, stream copies (ffmpeg ``-c copy``, bit-exact)
carrying the replica number in their metadata: distinct bytes, the same frames to decode.

    .venv/bin/python benchmarks/replicate_video.py streamvibe demo_corpus /tmp/raw-10x --factor 10
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
REPLICATED = {"streamvibe": ("youcook2", "ego4d", "charades", "videocua"), "proready": ("youcook2", "ego4d")}
MARKER = "replication.json"


def new_id(video_id: str, k: int) -> str:
    """Replica ``k``'s id: the original for 0, else ``<id>r<k>`` (letters and digits only, so
    every layout's ids stay valid: YouTube ids, Ego4D uids, Charades ids)."""
    return video_id if k == 0 else f"{video_id}r{k}"


def renamed(rel: str, old: str, new: str) -> str:
    """``rel`` with its file stem ``old`` replaced by ``new`` (folders kept)."""
    head, _, name = rel.rpartition("/")
    stem, dot, ext = name.partition(".")
    name = (new if stem == old else stem) + dot + ext
    return f"{head}/{name}" if head else name


class Copier:
    """Puts a video into a replica: a hard link, or a byte-distinct stream copy (module doc)."""

    def __init__(self, unique_bytes: bool) -> None:
        self.unique_bytes = unique_bytes
        self.ffmpeg = shutil.which("ffmpeg")
        if unique_bytes and self.ffmpeg is None:
            raise SystemExit("--unique-bytes needs ffmpeg: run `make setup`")

    def __call__(self, src: Path, dst: Path, k: int) -> None:
        if not src.is_file() or dst.exists():
            return  # a listed video never downloaded stays missing in every replica
        dst.parent.mkdir(parents=True, exist_ok=True)
        if k == 0 or not self.unique_bytes:
            os.link(src, dst)
            return
        done = subprocess.run(
            [self.ffmpeg, "-v", "error", "-y", "-fflags", "+bitexact", "-i", str(src), "-map", "0",
             "-c", "copy", "-metadata", f"comment=benchforge replica {k}", "-fflags", "+bitexact",
             str(dst)], capture_output=True)
        if done.returncode != 0:  # a corrupt demo file: its bytes as they are (it must stay bad)
            dst.unlink(missing_ok=True)
            shutil.copyfile(src, dst)


# -- the custom manifests ---------------------------------------------------------------------
def replicate_jsonl_manifest(src: Path, dst: Path, name: str, n: int, copy: Copier) -> int:
    """StreamVibe's ``manifest.jsonl`` (or ``train_manifest.jsonl``): each record N times, its
    task record and video renamed with it. Returns the records written."""
    if not (src / name).is_file():
        return 0
    out: list[str] = []
    lines = (src / name).read_text(encoding="utf-8").splitlines()
    for k in range(n):
        for line in lines:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                if k == 0:
                    out.append(line)
                continue
            if not isinstance(rec, dict) or not isinstance(rec.get("video_id"), str):
                if k == 0:
                    out.append(line)
                continue
            old = rec["video_id"]
            rec["video_id"] = new_id(old, k)
            for field in ("task_record", "video"):
                value = rec.get(field)
                if isinstance(value, str) and "/" in value:
                    stem = value.rsplit("/", 1)[1].partition(".")[0]
                    rec[field] = renamed(value, stem, new_id(stem, k))
                    target = dst / rec[field]
                    if field == "task_record" and (src / value).is_file() and not target.exists():
                        target.parent.mkdir(parents=True, exist_ok=True)
                        os.link(src / value, target)
                    elif field == "video":
                        copy(src / value, target, k)
            out.append(json.dumps(rec, sort_keys=True))
    (dst / name).write_text("".join(x + "\n" for x in out), encoding="utf-8")
    return len(out)


def replicate_yaml_manifest(src: Path, dst: Path, n: int, copy: Copier) -> int:
    """ProReady-QA's ``manifest.yaml``: each video entry N times, its file renamed with it."""
    doc = yaml.safe_load((src / "manifest.yaml").read_text(encoding="utf-8"))
    videos: list[Any] = []
    for k in range(n):
        for entry in doc.get("videos", []):
            if not isinstance(entry, dict) or not isinstance(entry.get("video_id"), str):
                if k == 0:
                    videos.append(entry)
                continue
            rec = json.loads(json.dumps(entry))
            rec["video_id"] = new_id(entry["video_id"], k)
            path = entry.get("path")
            if isinstance(path, str):
                stem = path.rsplit("/", 1)[-1].partition(".")[0]
                # two entries may share a file (the demo's "twice"): one copy per replica
                rec["path"] = renamed(path, stem, new_id(stem, k))
                copy(src / path, dst / rec["path"], k)
            videos.append(rec)
    (dst / "manifest.yaml").write_text(yaml.safe_dump({**doc, "videos": videos}, sort_keys=False),
                                       encoding="utf-8")
    return len(videos)


TIME_KEYS = ("start", "end", "ask_time", "t")


def shifted(value: Any, dt: float) -> Any:
    """``value`` (an annotation: dicts and lists) with every time key moved ``dt`` seconds later."""
    if isinstance(value, dict):
        return {k: round(v + dt, 3) if k in TIME_KEYS and isinstance(v, int | float) else shifted(v, dt)
                for k, v in value.items()}
    if isinstance(value, list):
        return [shifted(v, dt) for v in value]
    return value


def concatenate(src: Path, dst: Path, times: int) -> None:
    """``src`` played ``times`` times in a row, stream-copied (ffmpeg's concat demuxer, bit-exact):
    a long video of real frames whose content repeats every clip."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise SystemExit("long videos need ffmpeg: run `make setup`")
    dst.parent.mkdir(parents=True, exist_ok=True)
    listing = dst.with_suffix(".txt")
    listing.write_text("".join(f"file '{src.resolve()}'\n" for _ in range(times)))
    subprocess.run([ffmpeg, "-v", "error", "-y", "-fflags", "+bitexact", "-f", "concat", "-safe", "0",
                    "-i", str(listing), "-map", "0:v", "-c", "copy", "-fflags", "+bitexact", str(dst)],
                   check=True)
    listing.unlink()


def lengthen_manifest(root: Path, minutes: float) -> dict[str, float]:
    """ProReady-QA's papers' videos are 30-60 minutes long (StreamReady §4.2); the demo's are
    seconds. Each video of ``root/manifest.yaml`` whose decoded length matches its header (so
    concatenated copies keep the timeline) becomes the clip played ``ceil(minutes·60 / clip)``
    times, and each list of its annotations is repeated once per play, shifted by the clip's
    length (what the long video really shows). Returns video id → new length in seconds."""
    import math

    from core.media.probe import probe_video

    doc = yaml.safe_load((root / "manifest.yaml").read_text(encoding="utf-8"))
    lengths: dict[str, float] = {}
    for entry in doc.get("videos", []):
        path = root / str(entry.get("path", ""))
        if not isinstance(entry, dict) or not path.is_file():
            continue
        try:
            info = probe_video(path)
        except Exception:  # noqa: BLE001 - a corrupt demo file stays as it is (it must stay bad)
            continue
        if info.header_mismatch or info.duration_s <= 0:
            continue
        clip = info.duration_s
        times = max(1, math.ceil(minutes * 60 / clip))
        long = path.with_name(f"{path.stem}-long{path.suffix}")
        if not long.exists():
            concatenate(path, long, times)
        path.unlink()
        long.rename(path)
        ann = entry.get("annotations") or {}
        entry["annotations"] = {
            k: [shifted(x, n * clip) for n in range(times) for x in v] if isinstance(v, list) else v
            for k, v in ann.items()}
        lengths[str(entry["video_id"])] = round(times * clip, 3)
    (root / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return lengths


# -- the video datasets in their released layouts -----------------------------------------------
def _videos_by_stem(root: Path, folder: str) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for path in sorted((root / folder).rglob("*")):
        if path.is_file() and path.suffix.lower() in (".mp4", ".mkv", ".webm", ".avi", ".mov"):
            out.setdefault(path.name.partition(".")[0], []).append(path)
    return out


def _copy_videos(src: Path, dst: Path, folder: str, n: int, copy: Copier) -> None:
    """Every video under ``folder`` N times, renamed by replica, in the same sub-folder."""
    for stem, paths in _videos_by_stem(src, folder).items():
        for path in paths:
            rel = path.relative_to(src).as_posix()
            for k in range(n):
                copy(path, dst / renamed(rel, stem, new_id(stem, k)), k)


def replicate_youcook2(src: Path, dst: Path, n: int, copy: Copier) -> int:
    ann = "annotations/youcookii_annotations_trainval.json"
    doc = json.loads((src / ann).read_text(encoding="utf-8"))
    db = doc["database"]
    doc["database"] = {new_id(vid, k): entry for k in range(n) for vid, entry in db.items()}
    _write_json(dst / ann, doc)
    test = "annotations/youcookii_annotations_test_segments_only.json"
    if (src / test).is_file():
        tdoc = json.loads((src / test).read_text(encoding="utf-8"))
        tdoc["database"] = {new_id(v, k): e for k in range(n) for v, e in tdoc["database"].items()}
        _write_json(dst / test, tdoc)
    for lst in sorted((src / "splits").glob("*.txt")):
        lines = [x for x in lst.read_text(encoding="utf-8").splitlines() if x.strip()]
        out = [f"{x.rpartition('/')[0]}/{new_id(x.rpartition('/')[2], k)}" for k in range(n) for x in lines]
        _write_lines(dst / "splits" / lst.name, out)
    _link_rest(src, dst, ("label_foodtype.csv",))
    _copy_videos(src, dst, "raw_videos", n, copy)
    return len(doc["database"])


def replicate_ego4d(src: Path, dst: Path, n: int, copy: Copier) -> int:
    nar = "v2/annotations/narration.json"
    doc = json.loads((src / nar).read_text(encoding="utf-8"))
    _write_json(dst / nar, {new_id(uid, k): v for k in range(n) for uid, v in doc.items()})
    meta = json.loads((src / "v2/ego4d.json").read_text(encoding="utf-8"))
    videos = []
    for k in range(n):
        for v in meta["videos"]:
            rec = json.loads(json.dumps(v))
            rec["video_uid"] = new_id(v["video_uid"], k)
            if isinstance(rec.get("s3_path"), str):
                rec["s3_path"] = rec["s3_path"].replace(v["video_uid"], rec["video_uid"])
            videos.append(rec)
    _write_json(dst / "v2/ego4d.json", {**meta, "videos": videos})
    def renamed_row(row: list[str], k: int) -> list[str]:  # the uid, also inside the S3 path
        return [new_id(row[0], k), *(c.replace(row[0], new_id(row[0], k)) for c in row[1:])]

    replicate_csv(src / "v2/full_scale/manifest.csv", dst / "v2/full_scale/manifest.csv", n, renamed_row)
    _copy_videos(src, dst, "v2/full_scale", n, copy)
    return len(videos)


def replicate_csv(src: Path, dst: Path, n: int, row_for: Callable[[list[str], int], list[str]]) -> int:
    """A CSV file with a header row: its rows N times, ``row_for(row, k)`` giving replica k's;
    returns the rows written (0 when ``src`` is not there)."""
    if not src.is_file():
        return 0
    rows = list(csv.reader(io.StringIO(src.read_text(encoding="utf-8"), newline="")))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(rows[0])
    body = [row_for(row, k) if row else row for k in range(n) for row in rows[1:]]
    writer.writerows(body)
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(out.getvalue(), encoding="utf-8")
    return len(body)


def replicate_charades(src: Path, dst: Path, n: int, copy: Copier) -> int:
    rows_written = sum(
        replicate_csv(src / "Charades" / name, dst / "Charades" / name, n,
                      lambda row, k: [new_id(row[0], k), *row[1:]])
        for name in ("Charades_v1_train.csv", "Charades_v1_test.csv"))
    _link_rest(src, dst, ("Charades/Charades_v1_classes.txt",))
    _copy_videos(src, dst, "Charades_v1_480", n, copy)
    return rows_written


def replicate_videocua(src: Path, dst: Path, n: int, copy: Copier) -> int:
    """Every ``data/<Platform>/<task_id>/`` N times, as ``<task_id>r<k>``: its ``action_log.json``
    with the new ``task_id`` (the reader checks it names its folder), its ``video/`` files copied.
    A log without its video and a video without a log stay so in every replica; a log that is not
    a JSON object is linked as it is (it must stay bad). Returns the logs written."""
    logs = 0
    for task in sorted(p for p in (src / "data").glob("*/*") if p.is_dir()):
        for k in range(n):
            out = dst / task.relative_to(src).parent / new_id(task.name, k)
            log = task / "action_log.json"
            if log.is_file():
                try:
                    doc = json.loads(log.read_text(encoding="utf-8"))
                except ValueError:
                    doc = None
                if isinstance(doc, dict):
                    if str(doc.get("task_id")) == task.name:
                        doc["task_id"] = new_id(task.name, k)
                    _write_json(out / "action_log.json", doc)
                else:
                    out.mkdir(parents=True, exist_ok=True)
                    os.link(log, out / "action_log.json")
                logs += 1
            for video in sorted(p for p in (task / "video").glob("*") if p.is_file()):
                copy(video, out / "video" / video.name, k)
    _link_rest(src, dst, ("README.md",))
    return logs


DATASET_REPLICATORS: dict[str, Callable[[Path, Path, int, Copier], int]] = {
    "youcook2": replicate_youcook2, "ego4d": replicate_ego4d, "charades": replicate_charades,
    "videocua": replicate_videocua}


def _write_json(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")


def _link_rest(src: Path, dst: Path, files: tuple[str, ...]) -> None:
    for rel in files:
        if (src / rel).is_file() and not (dst / rel).exists():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            os.link(src / rel, dst / rel)


# -- one benchmark's corpus ---------------------------------------------------------------------
def replicate(raw: Path, out: Path, benchmark: str, n: int, *, unique_bytes: bool = False,
              long_minutes: float | None = None) -> dict[str, Any]:
    """``out/<benchmark>/`` = N replicas of ``raw/<benchmark>/`` (module doc); with
    ``long_minutes`` (ProReady-QA) the custom manifest's videos made that long
    (:func:`lengthen_manifest`); returns what was written, also saved as
    ``out/<benchmark>/replication.json``."""
    if benchmark not in REPLICATED:
        raise SystemExit(f"benchmark must be one of {sorted(REPLICATED)}, got {benchmark!r}")
    if n < 1:
        raise SystemExit("--factor must be at least 1")
    src, dst = raw / benchmark, out / benchmark
    if not src.is_dir():
        raise SystemExit(f"{src}: no demo corpus (make build-{benchmark} writes it)")
    if dst.exists():
        raise SystemExit(f"{dst} exists: replicate into a new folder")
    dst.mkdir(parents=True)
    copy = Copier(unique_bytes)
    summary: dict[str, Any] = {"benchmark": benchmark, "factor": n, "unique_bytes": unique_bytes}
    if long_minutes and benchmark != "proready":
        raise SystemExit("--long-minutes: ProReady-QA only (its papers' videos are long)")
    if benchmark == "streamvibe":
        summary["manifest_records"] = replicate_jsonl_manifest(src, dst, "manifest.jsonl", n, copy)
        summary["train_manifest_records"] = replicate_jsonl_manifest(src, dst, "train_manifest.jsonl",
                                                                     n, copy)
    else:
        summary["manifest_videos"] = replicate_yaml_manifest(src, dst, n, copy)
        if long_minutes:  # a hard-linked video is unlinked, not changed: the demo's stays as it is
            summary["long_videos_s"] = lengthen_manifest(dst, long_minutes)
    summary["datasets"] = {name: DATASET_REPLICATORS[name](src / name, dst / name, n, copy)
                           for name in REPLICATED[benchmark] if (src / name).is_dir()}
    summary["video_bytes"] = sum(p.stat().st_size for p in dst.rglob("*")
                                 if p.is_file() and p.suffix.lower() in (".mp4", ".mkv", ".avi", ".webm"))
    (dst / MARKER).write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("benchmark", choices=sorted(REPLICATED))
    ap.add_argument("raw_dir", type=Path, help="the demo raw-dir (holding <benchmark>/)")
    ap.add_argument("out", type=Path, help="the new raw-dir to write")
    ap.add_argument("--factor", type=int, default=10)
    ap.add_argument("--unique-bytes", action="store_true", help="byte-distinct video copies")
    ap.add_argument("--long-minutes", type=float, default=None,
                    help="ProReady-QA: make the manifest's videos this long (concatenated clips)")
    args = ap.parse_args(argv)
    print(json.dumps(replicate(args.raw_dir, args.out, args.benchmark, args.factor,
                               unique_bytes=args.unique_bytes, long_minutes=args.long_minutes), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
