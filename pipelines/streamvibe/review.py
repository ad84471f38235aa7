"""The review gate between candidates and the release (StreamVibe §3.3, App. B.2, B.3).

App. B.3: "The review unit is a complete candidate sample: the source video, initial
instruction, timestamped user turns, evidence windows, preferred response times, and reference
answers. […] A sample is retained only if all four reviewers approve the same final version.
[…] changing an annotation invalidates approval of its earlier version."

So a candidate carries ``version`` and ``content_hash`` — the hash of exactly what reviewers see
(:func:`review_content`), computed with :func:`annotation.projects.content_hash`, the function
``push`` stores in the Label Studio task, so a decision names the content it approved. Versions
come from a *ledger* kept with the review state: the same content keeps its version across
rebuilds (the build is deterministic), changed content gets the next version, and approvals of
an older version no longer count. Approval is the annotation package's rule
(:func:`annotation.approval.statuses`); this module adapts candidates to it (``Candidate`` for
``push``, browser-playable review media) and turns statuses into kept / filtered, keeping the
decisions as provenance (App. B.2: the normalized metadata "retains […] review record").
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from annotation.projects import Candidate
from core.files import canonical_json, content_hash
from pipelines.common.benchmark import BuildContext, PendingReview
from pipelines.common.decoded_frames import staged_root
from pipelines.streamvibe.build_facts import CANDIDATES
from pipelines.streamvibe.prepared import Prepared
from pipelines.streamvibe.training import is_train
from schemas.streamvibe import BENCHMARK, TRAIN_SPLIT

REVIEW_KEYS = ("id", "subtype", "task", "source_collection", "source_video_id", "source_file",
               "video_sha256", "duration_s", "intents", "transitions")


def review_content(c: dict[str, Any]) -> dict[str, Any]:
    """What reviewers see (the review unit), in the shape the StreamVibe rubric displays."""
    turns = [{"role": "user", "t": u["t"], "kind": u["kind"], "intent": u["intent_id"], "text": u["text"]}
             for u in c["user_turns"]]
    return {
        **{k: c[k] for k in REVIEW_KEYS},
        "instruction": c["initial_instruction"],
        "fps": c.get("fps", 1.0),  # the review video's frame rate (LS <Video frameRate>)
        "turns": turns,
        "evidence_points": [
            {"id": p["id"], "intent": p["intent_id"], "window": [p["start"], p["end"]],
             "preferred": p["preferred"], "gold_response": p["response"], "proactive": p["proactive"]}
            for p in c["evidence"]
        ],
    }


def candidate_hash(c: dict[str, Any]) -> str:
    return content_hash(review_content(c))


# -- ledger ----------------------------------------------------------------------------------


def load_ledger(path: Path) -> dict[str, list[dict[str, Any]]]:
    if not path.exists():
        return {}
    return json.loads(path.read_text())


def assign_version(c: dict[str, Any], ledger: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Same content → same version; new content → previous max + 1 (App. B.3)."""
    h = candidate_hash(c)
    history = ledger.get(c["id"], [])
    for entry in history:
        if entry["content_hash"] == h:
            return dict(c, version=int(entry["version"]), content_hash=h)
    return dict(c, version=max((int(e["version"]) for e in history), default=0) + 1, content_hash=h)


def update_ledger(ledger: dict[str, list[dict[str, Any]]], candidates: Iterable[dict[str, Any]]
                  ) -> dict[str, list[dict[str, Any]]]:
    out = {k: list(v) for k, v in ledger.items()}
    for c in candidates:
        hist = out.setdefault(c["id"], [])
        if not any(e["content_hash"] == c["content_hash"] for e in hist):
            hist.append({"version": c["version"], "content_hash": c["content_hash"]})
            hist.sort(key=lambda e: e["version"])
    return dict(sorted(out.items()))


# -- decisions and approval ------------------------------------------------------------------


def review_statuses(decisions: list[dict[str, Any]], panel_size: int = 4,
                    latest_versions: dict[str, int] | None = None,
                    violations: list[dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """sample id → plain-dict status by :func:`annotation.approval.statuses` (all ``panel_size``
    human reviewers approve the same, latest version; objections final; standing ``violations``
    of the decision log block it), plus that version's human decisions (each distinct one once:
    the log keeps every state ever pulled)."""
    from annotation.approval import statuses

    by_sample: dict[str, list[dict[str, Any]]] = {}
    for d in decisions:  # one pass: a scan per sample is quadratic at a full round's size
        by_sample.setdefault(d["sample_id"], []).append(d)
    out = {}
    for sid, st in statuses(decisions, panel_size=panel_size, latest_versions=latest_versions,
                            violations=violations or ()).items():
        mine = {canonical_json(r): r for r in (
            {k: d[k] for k in ("reviewer", "decision", "version", "review_round", "created_at")}
            for d in by_sample.get(sid, ()) if int(d["version"]) == st.version
            and d.get("rater_kind", "human") == "human")}
        out[sid] = {"state": st.state, "version": st.version, "content_hash": st.content_hash,
                    "approvals": list(st.approvals), "objections": [list(o) for o in st.objections],
                    "violations": list(st.violations),
                    "decisions": sorted(mine.values(), key=lambda d: (d["reviewer"], d["created_at"],
                                                                      d["decision"]))}
    return out


def gate(c: dict[str, Any], status: dict[str, Any] | None) -> tuple[bool, str, list[dict[str, Any]]]:
    """(approved?, reason, review record for provenance) for the candidate's *current* version."""
    if status is None:
        return False, "pending review: no decisions for this candidate", []
    record = [dict(d, version=int(d["version"])) for d in status.get("decisions", [])]
    if int(status["version"]) != c["version"]:
        return False, (f"decisions are for version {status['version']}, the candidate is version "
                       f"{c['version']} (changed content invalidates earlier approvals)"), record
    if status["content_hash"] and status["content_hash"] != c["content_hash"]:
        return False, "the reviewed content hash differs from the candidate's", record
    if status["state"] != "approved":
        violations = status.get("violations") or []
        return False, (f"review state {status['state']!r} (objections: {status['objections']})"
                       + (f"; integrity violations: {'; '.join(violations)}" if violations else "")
                       ), record
    return True, "approved by all reviewers", record


def evidence_json(status: dict[str, Any] | None) -> str:
    return canonical_json(status or {})


# -- push side -------------------------------------------------------------------------------


def media_name(c: dict[str, Any]) -> str:
    """Review copy of the video, relative to the media root (a subdirectory, as Label Studio
    needs): H.264 mp4 made with ffmpeg (installed by ``make setup``), which plays in the review
    UI; OpenCV's mp4v and AVI do not."""
    return f"streamvibe/{c['source_collection']}/{c['source_video_id']}.mp4"


def to_routing_candidate(c: dict[str, Any]) -> Candidate:
    return Candidate(c["id"], int(c["version"]), c["subtype"], review_content(c), [media_name(c)])


def video_file(cand: dict[str, Any], raw_root: str, dataset_roots: dict[str, str]) -> str:
    """Where a candidate's video lies: a video dataset's (``<dataset>/<path in its layout>``,
    under wherever ``--source`` put that dataset) or the manifest's (under its root)."""
    coll, rel = cand["source_collection"], cand["source_file"]
    if coll in dataset_roots and rel.startswith(f"{coll}/"):
        return os.path.join(dataset_roots[coll], rel[len(coll) + 1:])
    return os.path.join(raw_root, rel)


def prepare_media(cands: Iterable[dict[str, Any]], raw_root: str, media_root: Path,
                  dataset_roots: dict[str, str] | None = None, threads: int = 1) -> list[str]:
    """Browser-playable copies of each candidate's video (:func:`media_name`), ``threads`` at
    once; existing copies are kept. Returns the paths written."""
    from core.media.browser import BrowserCopy, browser_copies

    copies: dict[Path, BrowserCopy] = {}
    for c in cands:
        dst = media_root / media_name(c)
        if dst not in copies and not dst.exists():
            copies[dst] = BrowserCopy(video_file(c, raw_root, dataset_roots or {}), dst, c["source_file"])
    browser_copies(list(copies.values()), threads)
    return [str(dst) for dst in copies]


def pending_review(ctx: BuildContext[Prepared]) -> PendingReview:
    """The pending-review state's candidates, push units (with browser-playable videos unless
    ``--no-review-media``) and status facts, the training split's candidates included."""
    # the driver side only: the pipeline's workers import this module too
    from pipelines.streamvibe.release import dataset_facts, release_sources

    cands = sorted(CANDIDATES.read(ctx.staging), key=lambda c: c["id"])
    units = [to_routing_candidate(c) for c in cands]
    media = None
    if not ctx.args.no_review_media:
        media = Path(tempfile.mkdtemp(prefix="media-", dir=ctx.staging))
        prepare_media(cands, ctx.prepared.root, media,
                      {name: root for name, root, _ in ctx.prepared.datasets or ()}, ctx.workers)
    sources, videos = release_sources(ctx)
    status = {"sources": sources, "videos": videos, "rubric": "streamvibe",
              "review_round": ctx.review_round(BENCHMARK)}
    if ctx.prepared.datasets:  # per dataset: where it was read, its candidates per subtype
        status["datasets"] = {name: {k: v for k, v in facts.items() if k != "released"}
                              for name, facts in dataset_facts(ctx, ctx.staging).items()}
    if TRAIN_SPLIT in ctx.splits:  # training candidates wait for the same four approvals
        train_sources, train_videos = release_sources(ctx, TRAIN_SPLIT)
        status["train"] = {"sources": train_sources, "videos": train_videos,
                           "candidates": sum(is_train(c["id"]) for c in cands)}
    return PendingReview(
        candidates=cands,
        units=[{"sample_id": u.sample_id, "version": u.version, "task_type": u.task_type,
                "content": u.content, "media": u.media, "content_hash": u.content_hash}
               for u in units],
        status=status,
        media=media,
        frames=Path(staged_root(str(ctx.staging))))
