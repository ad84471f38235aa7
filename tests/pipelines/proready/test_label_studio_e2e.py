"""ProReady human refinement end to end on the real Label Studio server (StreamReady App. C,
design.md §Annotation rules).

Candidates built offline from tree.avi are pushed with browser-playable review media (VP9/VP8
webm), four reviewers decide with their own tokens, one asks for a revision, the corrected
version 2 is pushed and approved, decisions are pulled into the decision log, and the release
contains exactly the approved versions. Uses the annotation tests' session server fixtures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from annotation.label_config import build_result
from annotation.routing import Candidate, pull, push
from annotation.rubrics import PROREADY
from pipelines.proready.build import run
from pipelines.proready.review import content_hash, review_candidate
from tests.pipelines.proready.conftest import write_corpus

pytestmark = pytest.mark.label_studio
ALL = list(PROREADY.criterion_keys)


def _cands(review: Path, lines: list[dict[str, Any]]) -> list[Candidate]:
    return [Candidate(x["sample_id"], x["version"], x["task_type"], x["content"],
                      [str(review / "media" / m) for m in x["media"]]) for x in lines]


def test_review_round_trip_to_release(ls_env, panel, media, demo_manifest, tmp_path):
    tree = next(v for v in demo_manifest["videos"] if v["video_id"] == "tree")
    raw = tmp_path / "raw"
    write_corpus(raw, media, [tree])
    out = ls_env.media_root / "proready-e2e"  # review media must sit under the server's root
    review = run(["--raw-dir", str(raw), "--out", str(out), "--review-media", "webm"])
    assert (review / "media" / "proready" / "tree.webm").stat().st_size > 0
    lines = [json.loads(x) for x in (review / "review_candidates.jsonl").read_text().splitlines()]
    assert [x["sample_id"] for x in lines] == ["tree.crr-scene-1", "tree.ctd-0", "tree.gsd-0",
                                               "tree.ssr-chain-1"]

    admin = panel.admin.client()
    r = {m.pseudonym: m.client() for m in panel.reviewers}
    tasks = push(admin, "proready", "e2e-r1", _cands(review, lines), PROREADY, ls_env.media_root)
    t = admin.tasks.get(id=str(tasks[("tree.ctd-0", 1)]))
    assert t.data["media_0"] == ("/data/local-files/?d=proready-e2e/proready/review/2.0.0/media/"
                                 "proready/tree.webm")
    for (sid, _), tid in sorted(tasks.items()):
        for who in ("r1", "r2", "r3", "r4"):
            if sid == "tree.ctd-0" and who == "r3":
                r[who].annotations.create(id=tid, result=build_result(
                    "revise", ALL[:1], "t_e too late: the hand has lifted by 27.5 s"), lead_time=30.0)
            else:
                r[who].annotations.create(id=tid, result=build_result("approve", ALL), lead_time=20.0)
    log = tmp_path / "decision-log"
    first = pull(admin, "proready", "e2e-r1", PROREADY, panel, log_dir=log)
    assert first.violations == [] and len(first.decisions) == 16

    # the correction: version 2 of the CTD item, pushed as a new task and re-reviewed by all four
    cands = {c["id"]: c for c in map(json.loads, (review / "candidates.jsonl").read_text().splitlines())}
    ctd = cands["tree.ctd-0"]
    turns = [dict(ctd["turns"][0], t_e=27.5, evidence_method="human")]
    v2 = dict(ctd, version=2, turns=turns)
    v2["content_hash"] = content_hash(v2)
    corrections = tmp_path / "corrections.jsonl"
    corrections.write_text(json.dumps({"sample_id": "tree.ctd-0", "version": 2, "turns": turns}) + "\n")
    line = review_candidate(v2, lines[1]["media"])
    t2 = push(admin, "proready", "e2e-r1", _cands(review, [line]), PROREADY, ls_env.media_root)
    for who in ("r1", "r2", "r3", "r4"):
        r[who].annotations.create(id=t2[("tree.ctd-0", 2)], result=build_result("approve", ALL))
    second = pull(admin, "proready", "e2e-r1", PROREADY, panel, log_dir=log)
    assert second.violations == [] and len(second.decisions) == 20

    final = run(["--raw-dir", str(raw), "--out", str(out), "--decisions", str(log),
                 "--corrections", str(corrections)])
    manifest = json.loads((final / "manifest.json").read_text())
    assert manifest["counts"]["items"] == {"inputs": 4, "kept": 4, "filtered": 0, "rejected": 0}
    assert manifest["review"]["states"] == {"approved": 4}
    released = {x["id"]: x for x in pq.read_table(final / "data").to_pylist()}
    assert released["tree.ctd-0"]["version"] == 2
    assert released["tree.ctd-0"]["gold_turns"][0]["t_e"] == 27.5
    assert released["tree.ctd-0"]["gold_turns"][0]["evidence_method"] == "human"
    assert all(x["approvals"] == ["r1", "r2", "r3", "r4"] for x in released.values())
    assert {x["review_round"] for x in released.values()} == {"e2e-r1"}
