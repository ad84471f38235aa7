"""Every rubric's label config is accepted by the real server, media are served the way Label
Studio supports local files (local-files storage, ``/data/local-files/?d=``), and candidate text
stays data, never markup (docs/label_studio.md, ProactiveBench §3.2, StreamVibe App. B.3,
StreamReady App. C)."""

from __future__ import annotations

import json

import httpx
import pytest

from annotation.label_config import build_result
from annotation.routing import Candidate, find_project, pull, push
from annotation.rubrics import PROACTIVEBENCH_VSOD, PROREADY, STREAMVIBE

pytestmark = pytest.mark.label_studio


def test_media_served_with_auth_and_ranges(ls_env, panel):
    admin = panel.admin.client()
    c = Candidate("vsod-0001", 1, "speaker",
                  {"question": "Could you tell me who is talking?",
                   "options": {"A": "Rewind the video.", "E": "Ada Lovelace", "answer": "E"}},
                  ["vsod/occluded.png", "vsod/reference.png"])
    m = push(admin, "proactivebench", "vsod-round-1", [c], PROACTIVEBENCH_VSOD, ls_env.media_root)
    t = admin.tasks.get(id=str(m[("vsod-0001", 1)]))
    assert t.data["media_0"] == "/data/local-files/?d=vsod/occluded.png"
    assert t.data["media_1"] == "/data/local-files/?d=vsod/reference.png"
    pid = find_project(admin, "proactivebench", "vsod-round-1").id
    storages = admin.import_storage.local.list(project=pid)
    assert [s.path for s in storages] == [str(ls_env.media_root / "vsod")]
    with panel.reviewers[2].http() as h:
        r = h.get(t.data["media_1"])
        assert r.status_code == 200 and r.headers["content-type"] == "image/png"
        assert r.content == (ls_env.media_root / "vsod" / "reference.png").read_bytes()
    assert httpx.get(panel.url + t.data["media_1"]).status_code == 401  # needs a login/token

    sv = Candidate("sv-media", 1, "I", {"instruction": "x", "fps": 2}, ["streamvibe/clip.webm"])
    msv = push(admin, "streamvibe", "media-check", [sv], STREAMVIBE, ls_env.media_root)
    url = admin.tasks.get(id=str(msv[("sv-media", 1)])).data["media_0"]
    size = (ls_env.media_root / "streamvibe" / "clip.webm").stat().st_size
    with panel.reviewers[0].http() as h:
        r = h.get(url, headers={"Range": "bytes=0-15"})
        assert r.status_code == 206 and len(r.content) == 16
        assert r.headers["content-type"] == "video/webm"
        assert r.headers["content-range"] == f"bytes 0-15/{size}"
        assert r.content[:4] == b"\x1a\x45\xdf\xa3"  # EBML (webm) magic


def test_bad_media_paths_are_refused(ls_env, panel, tmp_path):
    admin = panel.admin.client()
    outside = tmp_path / "x.png"
    outside.write_bytes(b"x")
    (ls_env.media_root / "top.png").write_bytes(b"x")
    for media, msg in ((str(outside), "outside the media root"),
                       ("../secret.png", "outside the media root"),
                       ("top.png", "subdirectory of the media root"),
                       ("vsod/missing.png", "does not exist")):
        c = Candidate("bad", 1, "x", {"question": "q", "options": {}}, [media, media])
        with pytest.raises(ValueError, match=msg):
            push(admin, "proactivebench", "bad-media", [c], PROACTIVEBENCH_VSOD, ls_env.media_root)


def test_proready_rubric_round_trip_and_escaping(ls_env, panel):
    """ProReady-QA's three criteria (StreamReady App. C) end to end; HTML in candidate text is
    stored verbatim as data (``<Text>`` escapes it in the UI), never inside the label config."""
    admin = panel.admin.client()
    evil = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    c = Candidate("pr-1", 1, "CTD", {
        "turns": [{"role": "user", "time": 30.0, "text": f"What will the man do? {evil}"},
                  {"role": "answer", "text": "He opens the door", "t_s": 41.0, "t_e": 44.5}],
        "evidence": [{"question": 0, "t_s": 41.0, "t_e": 44.5}],
    }, ["streamvibe/clip.webm"])
    m = push(admin, "proready", "qa-round-1", [c], PROREADY, ls_env.media_root)
    project = find_project(admin, "proready", "qa-round-1")
    assert evil not in project.label_config and "<script>" not in project.label_config
    data = admin.tasks.get(id=str(m[("pr-1", 1)])).data
    assert data["show_turns"] == [
        {"speaker": "user @ 30.0s", "text": f"What will the man do? {evil}"},
        {"speaker": "answer", "text": 'He opens the door  {"t_e": 44.5, "t_s": 41.0}'},
    ]
    assert json.loads(data["candidate"])["turns"][0]["text"].endswith(evil)
    assert data["fps"] == 1.0  # rubric default when the candidate has no fps
    crit = list(PROREADY.criterion_keys)
    assert crit == ["not_inferable_before_ts", "cue_gone_at_te", "strictly_future_dependent"]
    for i, mem in enumerate(panel.reviewers):
        decision = "approve" if i < 3 else "revise"
        mem.client().annotations.create(
            id=m[("pr-1", 1)], lead_time=5.0,
            result=build_result(decision, crit if i < 3 else crit[:1], "" if i < 3 else
                                "cue still visible after t_e"))
    res = pull(admin, "proready", "qa-round-1", PROREADY, panel)
    assert res.violations == []
    assert [(d["reviewer"], d["decision"], d["criteria"]) for d in res.decisions] == [
        ("r1", "approve", crit), ("r2", "approve", crit), ("r3", "approve", crit),
        ("r4", "revise", ["not_inferable_before_ts"]),
    ]
    assert res.decisions[3]["comment"] == "cue still visible after t_e"
