"""Every rubric's label config is accepted by the real server, media are served the way Label
Studio supports local files (local-files storage, ``/data/local-files/?d=``) from the server's
media store, where benchmarks and rounds coexist, a refused push leaves nothing behind, and
candidate text stays data, never markup (docs/label_studio.md, ProactiveBench §3.2, StreamVibe
App. B.3, StreamReady App. C)."""

from __future__ import annotations

import json

import httpx
import pytest

from annotation import cli
from annotation.label_config import build_result
from annotation.projects import Candidate, find_projects
from annotation.pull import pull
from annotation.push import PushError, push
from pipelines.proactivebench.rubric import PROACTIVEBENCH_VSOD
from pipelines.proready.rubric import PROREADY
from pipelines.registry import rubric
from pipelines.streamvibe.rubric import STREAMVIBE
from tests.support.label_studio import panel_yaml, push_round

pytestmark = pytest.mark.label_studio


def test_media_served_with_auth_and_ranges(ls_env, panel, tmp_path):
    """Media of two benchmarks and two rounds, from two source folders, are served by one server;
    each round's storage is its own folder of the store; the bytes are the source's."""
    admin = panel.admin.client()
    c = Candidate("vsod-0001", 1, "speaker",
                  {"question": "Could you tell me who is talking?",
                   "options": {"A": "Rewind the video.", "E": "Ada Lovelace", "answer": "E"}},
                  ["vsod/occluded.png", "vsod/reference.png"])
    m = push_round(ls_env, panel, "proactivebench", "vsod-round-1", [c], PROACTIVEBENCH_VSOD,
                   tmp_path / "log")
    t = admin.tasks.get(id=str(m.task_id("r3", ("vsod-0001", 1))))
    store = ls_env.server.media_root / "proactivebench" / "vsod-round-1"
    for k, name in (("media_0", "occluded.png"), ("media_1", "reference.png")):
        assert t.data[k].startswith("/data/local-files/?d=proactivebench/vsod-round-1/")
        assert t.data[k].endswith("/" + name)
    storages = admin.import_storage.local.list(project=m.projects["r3"])
    assert [s.path for s in storages] == [str(store)]
    with panel.reviewers[2].http() as h:
        r = h.get(t.data["media_1"])
        assert r.status_code == 200 and r.headers["content-type"] == "image/png"
        assert r.content == (ls_env.media_dir / "vsod" / "reference.png").read_bytes()
    assert httpx.get(panel.url + t.data["media_1"]).status_code == 401  # needs a login/token
    # a store file gone (the dead link of a re-pushed round): re-pushing restores it
    (ls_env.server.media_root / t.data["media_1"].split("?d=")[1]).unlink()
    with panel.reviewers[2].http() as h:
        assert h.get(t.data["media_1"]).status_code == 404
        again = push_round(ls_env, panel, "proactivebench", "vsod-round-1", [c], PROACTIVEBENCH_VSOD,
                           tmp_path / "log")
        assert again.tasks == m.tasks and h.get(t.data["media_1"]).status_code == 200

    elsewhere = tmp_path / "other-state" / "media"  # another benchmark's pending state
    (elsewhere / "sv").mkdir(parents=True)
    (elsewhere / "sv" / "clip.webm").write_bytes((ls_env.media_dir / "streamvibe" / "clip.webm").read_bytes())
    size = (elsewhere / "sv" / "clip.webm").stat().st_size
    for rnd in ("media-check", "media-check-2"):
        sv = Candidate("sv-media", 1, "I", {"instruction": "x", "fps": 2}, ["sv/clip.webm"])
        msv = push_round(ls_env, panel, "streamvibe", rnd, [sv], STREAMVIBE, tmp_path / "log",
                         media_dir=elsewhere)
        url = admin.tasks.get(id=str(msv.task_id("r1", ("sv-media", 1)))).data["media_0"]
        with panel.reviewers[0].http() as h:
            r = h.get(url, headers={"Range": "bytes=0-15"})
            assert r.status_code == 206 and len(r.content) == 16
            assert r.headers["content-type"] == "video/webm"
            assert r.headers["content-range"] == f"bytes 0-15/{size}"
            assert r.content[:4] == b"\x1a\x45\xdf\xa3"  # EBML (webm) magic
            # the first benchmark's media are still served
            assert h.get(t.data["media_0"]).status_code == 200


def test_refused_pushes_leave_nothing_behind(ls_env, panel, tmp_path, capsys):
    admin = panel.admin.client()
    reviewers = [m.pseudonym for m in panel.reviewers]
    for media, msg in (("vsod/missing.png", "does not exist"),
                       ("http://example.org/x.png", "must be local files")):
        c = Candidate("bad", 1, "x", {"question": "q", "options": {}}, [media, media])
        with pytest.raises(ValueError, match=msg):
            push(admin, "proactivebench", "bad-media", [c], PROACTIVEBENCH_VSOD, reviewers=reviewers,
                 media_root=ls_env.server.media_root, media_dir=ls_env.media_dir,
                 log_dir=tmp_path / "log")
    # Label Studio refuses the storage (400: not inside the server's document root) after the
    # first project was created: the push is undone, no half-made project stays
    c = Candidate("ok", 1, "x", {"question": "q", "options": {}}, ["vsod/occluded.png"] * 2)
    wrong_root = tmp_path / "not-the-server-root"
    with pytest.raises(PushError, match="HTTP 400.*undone \\(1 new projects"):
        push(admin, "proactivebench", "refused", [c], PROACTIVEBENCH_VSOD, reviewers=reviewers,
             media_root=wrong_root, media_dir=ls_env.media_dir, log_dir=tmp_path / "log")
    assert find_projects(admin, "proactivebench", "refused") == {}
    # the same from the command line: an error line, no traceback, nothing created
    lines = tmp_path / "c.jsonl"
    lines.write_text(json.dumps({"sample_id": "ok", "version": 1, "task_type": "x",
                                 "content": c.content, "media": c.media}) + "\n")
    code = cli.main(["--config", str(panel_yaml(ls_env, tmp_path)), "push", "--url", panel.url,
                     "--media-root", str(wrong_root), "--benchmark", "proactivebench",
                     "--round", "refused-cli", "--rubric", PROACTIVEBENCH_VSOD.name,
                     "--candidates", str(lines), "--media-dir", str(ls_env.media_dir),
                     "--log-dir", str(tmp_path / "log")], rubrics=rubric)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: push of proactivebench / refused-cli failed: HTTP 400")
    assert "Traceback" not in err
    assert find_projects(admin, "proactivebench", "refused-cli") == {}
    assert not (tmp_path / "log" / "pushes").exists()  # nothing recorded either


def test_proready_rubric_round_trip_and_escaping(ls_env, panel, tmp_path):
    """ProReady-QA's three criteria (StreamReady App. C) end to end; HTML in candidate text is
    stored verbatim as data (``<Text>`` escapes it in the UI), never inside the label config."""
    admin = panel.admin.client()
    evil = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    c = Candidate("pr-1", 1, "CTD", {
        "turns": [{"role": "user", "time": 30.0, "text": f"What will the man do? {evil}"},
                  {"role": "answer", "text": "He opens the door", "t_s": 41.0, "t_e": 44.5}],
        "evidence": [{"question": 0, "t_s": 41.0, "t_e": 44.5}],
    }, ["streamvibe/clip.webm"])
    m = push_round(ls_env, panel, "proready", "qa-round-1", [c], PROREADY, tmp_path / "log")
    project = find_projects(admin, "proready", "qa-round-1")["r1"]
    assert evil not in project.label_config and "<script>" not in project.label_config
    data = admin.tasks.get(id=str(m.task_id("r1", ("pr-1", 1)))).data
    assert data["show_turns"] == (f"user @ 30.0 s: What will the man do? {evil}\n"
                                  "answer: He opens the door  (t_e: 44.5 · t_s: 41.0)")
    assert json.loads(data["candidate"])["turns"][0]["text"].endswith(evil)
    assert data["fps"] == 1.0  # rubric default when the candidate has no fps
    crit = list(PROREADY.criterion_keys)
    assert crit == ["not_inferable_before_ts", "cue_gone_at_te", "strictly_future_dependent"]
    for i, mem in enumerate(panel.reviewers):
        decision = "approve" if i < 3 else "revise"
        mem.client().annotations.create(
            id=m.task_id(mem.pseudonym, ("pr-1", 1)), lead_time=5.0,
            result=build_result(decision, crit if i < 3 else crit[:1], "" if i < 3 else
                                "cue still visible after t_e"))
    res = pull(admin, "proready", "qa-round-1", PROREADY, panel, log_dir=tmp_path / "log")
    assert res.violations == []
    assert [(d["reviewer"], d["decision"], d["criteria"]) for d in res.decisions] == [
        ("r1", "approve", crit), ("r2", "approve", crit), ("r3", "approve", crit),
        ("r4", "revise", ["not_inferable_before_ts"]),
    ]
    assert res.decisions[3]["comment"] == "cue still visible after t_e"
