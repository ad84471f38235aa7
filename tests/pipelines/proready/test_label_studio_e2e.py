"""ProReady human refinement end to end on the real Label Studio server (StreamReady App. C,
design.md §Annotation rules), through the ``benchforge`` commands the build prints.

Candidates built offline from tree.avi get H.264 review copies by default (AVI does not play in a
browser); the printed push sends them to the four reviewers' projects; one reviewer asks for a
revision; ``benchforge review push --corrections`` pushes the corrected version 2, which
``status`` then reports pending (not "approved" from version 1's votes); all four approve it;
the release built with the same corrections file contains exactly the approved versions, and
one built without it is refused, naming the corrected item (never filtered as a hash mismatch).
Uses the annotation tests' session server fixtures.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from annotation import decision_log
from annotation.label_config import build_result
from pipelines.cli import main as benchforge
from pipelines.proready.build import run
from pipelines.proready.rubric import PROREADY
from tests.pipelines.proready.conftest import write_corpus
from tests.support.label_studio import panel_yaml

pytestmark = pytest.mark.label_studio
ALL = list(PROREADY.criterion_keys)
CTD = "tree.ctd-0"


def _run(cmd: str, capsys) -> str:
    """A printed ``benchforge …`` command, run in this process (its first word is the program)."""
    capsys.readouterr()
    assert benchforge(shlex.split(cmd)[1:]) == 0, cmd
    return capsys.readouterr().out


def _decide(panel, log: Path, version: int, objection: dict[tuple[str, str], str] | None = None) -> None:
    for rec in decision_log.read_pushes(log):
        if rec["version"] != version:
            continue
        for m in panel.reviewers:
            comment = (objection or {}).get((rec["sample_id"], m.pseudonym))
            result = build_result("revise", ALL[:1], comment) if comment else build_result("approve", ALL)
            m.client().annotations.create(id=rec["tasks"][m.pseudonym], result=result, lead_time=20.0)


def test_review_round_trip_to_release(ls_env, panel, media, demo_manifest, manifest_only_config, tmp_path,
                                      monkeypatch, capsys):
    tree = next(v for v in demo_manifest["videos"] if v["video_id"] == "tree")
    raw = tmp_path / "raw"
    write_corpus(raw, media, [tree])
    out = tmp_path / "out"
    monkeypatch.setenv("BENCHFORGE_LS_PANEL_CONFIG", str(panel_yaml(ls_env, tmp_path)))
    monkeypatch.delenv("BENCHFORGE_LS_TOKEN_FILE", raising=False)
    review = run(["--config", str(manifest_only_config), "--raw-dir", str(raw), "--out", str(out)])
    status = json.loads((review / "status.json").read_text())
    assert status["media"] == "mp4" and (review / "media" / "proready" / "tree.mp4").stat().st_size > 0
    lines = [json.loads(x) for x in (review / "review_candidates.jsonl").read_text().splitlines()]
    assert [x["sample_id"] for x in lines] == ["tree.crr-scene-1", CTD, "tree.gsd-0", "tree.ssr-chain-1"]
    start, ensure, push, pull, show, build = status["next"]
    log = out.resolve() / "proready" / "review" / "log"

    for cmd in (start, ensure, push):
        _run(cmd, capsys)
    _decide(panel, log, 1, {(CTD, "r3"): "t_e too late: the hand has lifted by 27.5 s"})
    assert "16 decisions, 0 violations" in _run(pull, capsys)
    assert f"{CTD}\tv1\tneeds_correction" in _run(show, capsys)

    # the correction: version 2 of the CTD item, pushed by the command made for it
    cands = {c["id"]: c for c in map(json.loads, (review / "candidates.jsonl").read_text().splitlines())}
    turns = [dict(cands[CTD]["turns"][0], t_e=27.5, evidence_method="human")]
    corrections = tmp_path / "corrections.jsonl"
    corrections.write_text(json.dumps({"sample_id": CTD, "version": 2, "turns": turns}) + "\n")
    pushed = _run(push + f" --corrections {corrections}", capsys)
    assert "1 candidate versions in 4 reviewer projects" in pushed
    assert f"{CTD}\tv2\tpending" in _run(show, capsys)  # not v1, not approved
    _decide(panel, log, 2)
    assert "20 decisions, 0 violations" in _run(pull, capsys)
    assert f"{CTD}\tv2\tapproved" in _run(show, capsys)

    # the release without the corrections file: refused, naming the item, nothing built
    with pytest.raises(SystemExit) as refused:
        benchforge(shlex.split(build)[1:])
    msg = str(refused.value)
    assert "\n" not in msg and msg.startswith("--decisions: ") and msg.endswith(
        "holds corrected versions this build does not make (no --corrections file was given): "
        f"{CTD} v2 (this build: v1); build with the corrections file that was pushed")
    assert not (out / "proready" / "2.1.0").exists()

    _run(build + f" --corrections {corrections}", capsys)
    final = out / "proready" / "2.1.0"
    manifest = json.loads((final / "manifest.json").read_text())
    assert manifest["counts"]["items"] == {"inputs": 4, "kept": 4, "filtered": 0, "rejected": 0}
    assert manifest["review"]["states"] == {"approved": 4}
    assert manifest["review"]["violations"] == {}
    released = {x["id"]: x for x in pq.read_table(final / "data").to_pylist()}
    assert released[CTD]["version"] == 2
    assert released[CTD]["gold_turns"][0]["t_e"] == 27.5
    assert released[CTD]["gold_turns"][0]["evidence_method"] == "human"
    assert all(x["approvals"] == ["r1", "r2", "r3", "r4"] for x in released.values())
    assert {x["review_round"] for x in released.values()} == {"proready-r1"}
    with pytest.raises(SystemExit, match="streamvibe takes no corrections file"):
        benchforge(["review", "push", "--benchmark", "streamvibe", "--candidates",
                    str(review / "review_candidates.jsonl"), "--corrections", str(corrections),
                    "--log-dir", str(log)])
