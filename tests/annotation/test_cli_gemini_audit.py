"""From the shell: the Gemini reviewer as its own rater, then the agreement audit against the
human panel (StreamVibe App. B.3) — real google-genai client, local Gemini-protocol server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from annotation import decision_log
from annotation.cli import main as cli
from pipelines.registry import rubric
from pipelines.streamvibe.rubric import STREAMVIBE
from tests.support.protocol_server import Call, ProtocolServer

KEYS = [c.key for c in STREAMVIBE.criteria]
# the model approves candidates whose content says "good", asks for revision otherwise
MODEL_SAYS = {f"c{i}": ("approve" if i % 3 else "revise") for i in range(12)}
# four humans: r1 agrees with the model except on c1, r2..r4 approve everything but c0 / c5
HUMANS = {
    "r1": {s: (d if s != "c1" else "reject") for s, d in MODEL_SAYS.items()},
    **{r: {s: ("revise" if s in ("c0", "c5") else "approve") for s in MODEL_SAYS}
       for r in ("r2", "r3", "r4")},
}


def responder(call: Call) -> dict:
    text = call.prompt
    sid = next(s for s in MODEL_SAYS if f'"sid":"{s}"' in text)
    decision = MODEL_SAYS[sid]
    verdicts = {k: "met" for k in KEYS}
    if decision != "approve":
        verdicts[KEYS[0]] = "not_met"
    return {"decision": decision, "rationale": "scripted",
            "criteria": [{"criterion": k, "verdict": v} for k, v in verdicts.items()]}


def human_row(sid: str, reviewer: str, decision: str) -> dict:
    return {"benchmark": "streamvibe", "review_round": "r1", "sample_id": sid, "version": 1,
            "content_hash": "0" * 64, "task_type": "I", "reviewer": reviewer, "rater_kind": "human",
            "decision": decision, "criteria": KEYS if decision == "approve" else [], "comment": "",
            "lead_time": 10.0, "created_at": f"2026-11-29T10:00:{int(sid[1:]):02d}+00:00",
            "source_task_id": int(sid[1:]), "source_annotation_id": 100 * int(sid[1:]) + int(reviewer[1])}


def test_gemini_review_then_audit_from_the_cli(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k-never-logged")
    cands = tmp_path / "review_candidates.jsonl"
    cands.write_text("".join(json.dumps({"sample_id": s, "version": 1, "task_type": "I",
                                         "content": {"sid": s, "instruction": "Tell me when."},
                                         "media": []}) + "\n" for s in MODEL_SAYS))
    with ProtocolServer(responder) as stub:
        rc = cli(["gemini-review", "--rubric", "streamvibe", "--candidates", str(cands),
                  "--model", "gemini-test", "--log-dir", str(tmp_path / "model-log"),
                  "--cache-dir", str(tmp_path / "cache"), "--base-url", stub.base_url],
                 rubrics=rubric)
        assert rc == 0 and len(stub.requests) == 12
    model_rows = decision_log.read(tmp_path / "model-log")
    assert {r["rater_kind"] for r in model_rows} == {"model"}
    assert {r["sample_id"]: r["decision"] for r in model_rows} == MODEL_SAYS

    decision_log.append(tmp_path / "human-log",
                        [human_row(s, r, d) for r, ds in HUMANS.items() for s, d in ds.items()],
                        benchmark="streamvibe", review_round="r1")
    out = tmp_path / "reports"
    assert cli(["audit", "--log-dir", str(tmp_path / "human-log"), "--model-log",
                str(tmp_path / "model-log"), "--out", str(out)]) == 0
    audit = json.loads((out / "agreement.json").read_text())
    # Cohen's κ of the model against each human on approve / not-approve, as sklearn computes it
    sids = sorted(MODEL_SAYS)
    model_bin = [MODEL_SAYS[s] == "approve" for s in sids]
    pairs = {p["reviewer"]: p["kappa"] for p in audit["overall"]["cohen"]}
    for reviewer, ds in HUMANS.items():
        expected = cohen_kappa_score(model_bin, [ds[s] == "approve" for s in sids])
        assert pairs[reviewer] == pytest.approx(expected, abs=1e-12)


def test_audit_counts_the_first_decision_of_the_full_history(tmp_path: Path) -> None:
    """r1 said "revise", a later pull shows "approve" on the same annotation; the audit
    takes the first (independent) decision, so r1 counts as a non-approval."""
    import json as _json

    from annotation import decision_log
    from annotation.cli import main as cli

    def row(sid: str, rev: str, dec: str) -> dict:
        return {"benchmark": "b", "review_round": "r", "sample_id": sid, "version": 1,
                "content_hash": "h" + sid, "task_type": "I", "reviewer": rev, "rater_kind": "human",
                "decision": dec, "criteria": [], "comment": "", "lead_time": 1.0,
                "created_at": "2026-11-29T10:00:00Z", "source_task_id": 1,
                "source_annotation_id": int(rev[1:]) + 10 * int(sid[1:])}

    first = [row(s, f"r{i}", "revise" if (s, i) == ("s1", 1) else "approve")
             for s in ("s1", "s2") for i in range(1, 5)]
    second = [dict(r, decision="approve") for r in first]
    log = tmp_path / "log"
    decision_log.append(log, first, benchmark="b", review_round="r")
    decision_log.append(log, second, benchmark="b", review_round="r")
    assert cli(["audit", "--log-dir", str(log), "--out", str(tmp_path / "rep")]) == 0
    result = _json.loads((tmp_path / "rep" / "agreement.json").read_text())
    assert result["overall"]["decision_distribution"] == {"approve": 7, "revise": 1, "reject": 0}


def test_audit_lists_candidates_nobody_reviewed(tmp_path: Path) -> None:
    """The frozen candidate set comes from the push records, so a candidate without any
    decision is listed (it was simply absent before)."""
    import json as _json

    from annotation import decision_log
    from annotation.cli import main as cli

    log = tmp_path / "log"
    decision_log.append_push(log, [{"benchmark": "b", "review_round": "r", "sample_id": s,
                                    "version": 1, "task_type": "I", "tasks": {}, "projects": {}}
                                   for s in ("s1", "s2", "s3")], benchmark="b", review_round="r")
    rows = [{"benchmark": "b", "review_round": "r", "sample_id": "s1", "version": 1,
             "content_hash": "h", "task_type": "I", "reviewer": f"r{i}", "rater_kind": "human",
             "decision": "approve", "criteria": [], "comment": "", "lead_time": 1.0,
             "created_at": "2026-11-29T10:00:00Z", "source_task_id": 1, "source_annotation_id": i}
            for i in range(1, 5)] + [
            {"benchmark": "b", "review_round": "r", "sample_id": "s2", "version": 1,
             "content_hash": "h2", "task_type": "I", "reviewer": "r1", "rater_kind": "human",
             "decision": "revise", "criteria": [], "comment": "", "lead_time": 1.0,
             "created_at": "2026-11-29T10:00:00Z", "source_task_id": 2, "source_annotation_id": 9}]
    decision_log.append(log, rows, benchmark="b", review_round="r")
    assert cli(["audit", "--log-dir", str(log), "--out", str(tmp_path / "rep")]) == 0
    result = _json.loads((tmp_path / "rep" / "agreement.json").read_text())
    assert (result["unreviewed_ids"], result["incomplete_ids"]) == (["s3"], ["s2"])
    assert result["overall"]["n_candidates"] == 1 and result["overall"]["n_incomplete"] == 2
    md = (tmp_path / "rep" / "agreement.md").read_text()
    assert "nobody decided on version 1 (excluded from the statistics): 1 — s3" in md
