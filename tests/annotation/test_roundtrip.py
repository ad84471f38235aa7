"""End-to-end review round trip on the real server (StreamVibe App. B.3, design.md §Annotation rules).

Four scripted reviewers decide with their own tokens, each in their own project of the round; a
correction round pushes version 2; every integrity violation Label Studio lets through is produced
for real (admin and outsider authors, an edit by another reviewer, an admin decision in a
reviewer's name, a duplicate, off-rubric values, an incomplete approval, a PATCHed task — the
holes a review found are in ``test_integrity.py``); then statuses and the decision log are checked
value by value.
"""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from annotation import decision_log
from annotation.approval import ReleaseBlocked, check_release, statuses
from annotation.label_config import build_result
from annotation.projects import Candidate, content_hash, export_tasks
from annotation.pull import pull
from annotation.server.panel import _legacy_token_via_session
from pipelines.streamvibe.rubric import STREAMVIBE
from schemas.review import REVIEW_DECISION
from tests.support.label_studio import push_round

pytestmark = pytest.mark.label_studio

ALL = list(STREAMVIBE.criterion_keys)
BENCH = "streamvibe"


def _cand(sid: str, version: int = 1, note: str = "") -> Candidate:
    return Candidate(
        sid, version, {"s01": "I", "s02": "P", "s03": "R"}.get(sid, "RV"),
        {
            "instruction": f"Tell me when the kettle boils <b>{sid}</b>{note}",
            "turns": [{"role": "user", "time": 4.0, "text": "also tell me when it stops"}],
            "evidence_points": [{"window": [3.0, 6.0], "preferred": 4.0,
                                 "response": f"It boils now ({sid}).{note}"}],
            "fps": 2.0,
        },
        ["streamvibe/clip.webm"],
    )


def test_review_round_trip(ls_env, panel, tmp_path):  # noqa: C901 - one scenario, read top-down
    admin = panel.admin.client()
    r = {m.pseudonym: m.client() for m in panel.reviewers}
    uid = {m.pseudonym: m.user_id for m in panel.reviewers}
    log_dir = tmp_path / "log"

    def push(round_: str, cands: list[Candidate]):
        return push_round(ls_env, panel, BENCH, round_, cands, STREAMVIBE, log_dir)

    # ---- push round 1 (idempotent; a version's content is immutable) ------------------------
    sids = [f"s0{i}" for i in range(1, 10)]
    cands = [_cand(s) for s in sids]
    m1 = push("round-1", cands)
    assert sorted(m1.projects) == ["r1", "r2", "r3", "r4"]
    assert all(sorted(t) == [(s, 1) for s in sids] for t in m1.tasks.values())
    assert len({tid for t in m1.tasks.values() for tid in t.values()}) == 36
    assert push("round-1", cands).tasks == m1.tasks
    assert [len(export_tasks(admin, p)) for p in m1.projects.values()] == [9] * 4
    with pytest.raises(ValueError, match="already in .* with other content"):
        push("round-1", [_cand("s01", 1, note=" edited")])
    t = admin.tasks.get(id=str(m1.task_id("r1", ("s01", 1))))
    assert t.data["media_0"].startswith("/data/local-files/?d=streamvibe/round-1/")
    assert t.data["fps"] == 2.0
    assert t.data["content_hash"] == cands[0].content_hash

    def decide(who: str, sid: str, decision: str, criteria=ALL, comment="", lead=10.0,
               tasks=m1, version=1):
        return r[who].annotations.create(id=tasks.task_id(who, (sid, version)),
                                         result=build_result(decision, criteria, comment),
                                         lead_time=lead)

    # s01: unanimous approval
    for who in ("r1", "r2", "r3", "r4"):
        decide(who, "s01", "approve", lead=12.5)
    # s02: one revision request -> corrected in round 2, then approved by all four
    for who in ("r1", "r2", "r3"):
        decide(who, "s02", "approve")
    decide("r4", "s02", "revise", ALL[:2] + ALL[3:],
           "preferred time 4 s is too early; ask bob@example.com")
    # s03: approved by all four as v1, but a v2 is pushed later -> the v1 approvals are void
    for who in ("r1", "r2", "r3", "r4"):
        decide(who, "s03", "approve")
    # s04: a reject excludes
    decide("r1", "s04", "reject", [], "evidence not visible at 1 FPS")
    decide("r2", "s04", "approve")
    # s05: untouched -> pending
    # s06: integrity violations around one valid decision
    decide("r1", "s06", "approve")
    decide("r2", "s06", "approve")
    dup = decide("r2", "s06", "approve")  # second decision by the same reviewer
    a3 = decide("r3", "s06", "approve")
    r["r4"].annotations.update(id=a3.id, result=build_result("reject", []))  # r4 edits r3's
    admin.annotations.create(id=m1.task_id("r4", ("s06", 1)), result=build_result("approve", ALL),
                             completed_by=uid["r4"])  # admin writes in r4's name
    admin.annotations.create(id=m1.task_id("r1", ("s06", 1)), result=build_result("approve", ALL))
    outsider_invite = admin.organizations.invites.get_invite_link().token
    outsider_token = _legacy_token_via_session(panel.url, "outsider@panel.test",
                                               "outsider-pass-123", outsider_invite)
    admin.organizations.reset_token()
    from label_studio_sdk import LabelStudio

    outsider = LabelStudio(base_url=panel.url, api_key=outsider_token, max_retries=0)
    outsider_id = outsider.users.whoami().id
    outsider.annotations.create(id=m1.task_id("r1", ("s06", 1)), result=build_result("approve", ALL))
    # s07: values outside the rubric, and an approval with unticked criteria
    r["r1"].annotations.create(id=m1.task_id("r1", ("s07", 1)), result=[
        {"from_name": "decision", "to_name": "candidate", "type": "choices",
         "value": {"choices": ["maybe"]}}])
    r["r2"].annotations.create(id=m1.task_id("r2", ("s07", 1)), result=build_result("approve", ALL) + [
        {"from_name": "rating", "to_name": "candidate", "type": "rating", "value": {"rating": 5}}])
    decide("r3", "s07", "revise", ["bogus"])
    decide("r4", "s07", "approve", ALL[:2])
    # s08: a skip (the project hides the button, but the API still accepts it) -> no decision
    r["r1"].annotations.create(id=m1.task_id("r1", ("s08", 1)), result=[], was_cancelled=True)
    # s09: r1's task is PATCHed after push (the pitfall of docs/label_studio.md), then approved
    t9 = admin.tasks.get(id=str(m1.task_id("r1", ("s09", 1))))
    admin.tasks.update(id=str(t9.id), data={**t9.data, "candidate": '{"instruction": "other"}'})
    decide("r1", "s09", "approve")

    # ---- pull round 1 -----------------------------------------------------------------------
    p1 = pull(admin, BENCH, "round-1", STREAMVIBE, panel, log_dir=log_dir)
    assert (p1.n_tasks, p1.n_annotations) == (36, 27)
    got = [(v["kind"], v["sample_id"], v["version"], v["reviewer"]) for v in p1.violations]
    assert got == [
        ("author_not_in_panel", "s06", 1, "admin"),
        ("author_not_in_panel", "s06", 1, f"user:{outsider_id}"),
        ("cancelled", "s08", 1, "r1"),
        ("duplicate_decision", "s06", 1, "r2"),
        ("duplicate_decision", "s06", 1, "r2"),
        ("incomplete_approval", "s07", 1, "r4"),
        ("invalid_value", "s07", 1, "r1"),
        ("invalid_value", "s07", 1, "r2"),
        ("invalid_value", "s07", 1, "r3"),
        ("task_modified", "s09", 1, "r1"),
        ("written_by_other", "s06", 1, "r3"),
        ("written_by_other", "s06", 1, "r4"),
    ]
    details = {(v["kind"], v["reviewer"]): v["detail"] for v in p1.violations}
    assert details[("written_by_other", "r3")] == "decision of r3 last written by r4"
    assert details[("written_by_other", "r4")] == "decision of r4 last written by admin"
    assert details[("invalid_value", "r1")] == "decision ['maybe'] is not one of " \
        "['approve', 'revise', 'reject']"
    assert details[("invalid_value", "r2")] == "unknown control 'rating'"
    assert details[("invalid_value", "r3")] == "criteria ['bogus'] not in rubric streamvibe"
    assert details[("incomplete_approval", "r4")] == \
        "approved with criteria unticked: ['timing', 'assistance_content']"
    assert {v["annotation_id"] for v in p1.violations if v["kind"] == "duplicate_decision"} \
        >= {dup.id}
    assert all(set(v) == {"kind", "benchmark", "review_round", "sample_id", "version",
                          "task_id", "annotation_id", "reviewer", "detail"} for v in p1.violations)

    got_d = [(d["sample_id"], d["version"], d["reviewer"], d["decision"]) for d in p1.decisions]
    assert got_d == [
        ("s01", 1, "r1", "approve"), ("s01", 1, "r2", "approve"),
        ("s01", 1, "r3", "approve"), ("s01", 1, "r4", "approve"),
        ("s02", 1, "r1", "approve"), ("s02", 1, "r2", "approve"),
        ("s02", 1, "r3", "approve"), ("s02", 1, "r4", "revise"),
        ("s03", 1, "r1", "approve"), ("s03", 1, "r2", "approve"),
        ("s03", 1, "r3", "approve"), ("s03", 1, "r4", "approve"),
        ("s04", 1, "r1", "reject"), ("s04", 1, "r2", "approve"),
        ("s06", 1, "r1", "approve"),
    ]
    rev = next(d for d in p1.decisions if d["decision"] == "revise")
    assert rev["criteria"] == ["request_fidelity", "visible_evidence", "assistance_content"]
    assert rev["comment"] == "preferred time 4 s is too early; ask [email]"
    assert rev["task_type"] == "P" and rev["rater_kind"] == "human"
    assert rev["content_hash"] == _cand("s02").content_hash
    assert rev["source_task_id"] == m1.task_id("r4", ("s02", 1))
    assert [d["lead_time"] for d in p1.decisions if d["sample_id"] == "s01"] == [12.5] * 4
    assert all(d["created_at"].endswith("Z") for d in p1.decisions)
    for d in p1.decisions:
        REVIEW_DECISION.validate(d)

    st1 = statuses(p1.decisions, latest_versions={s: 1 for s in sids})
    assert {s: st.state for s, st in st1.items()} == {
        "s01": "approved", "s02": "needs_correction", "s03": "approved", "s04": "excluded",
        "s05": "pending", "s06": "pending", "s07": "pending", "s08": "pending",
        "s09": "pending",
    }
    assert st1["s02"].objections == (("r4", "revise"),)
    assert st1["s06"].approvals == ("r1",)

    # ---- correction round: version 2 is a new task, reviewed again by all four --------------
    v2 = [_cand("s02", 2, note=" (fixed)"), _cand("s03", 2, note=" (clarified)")]
    m2 = push("round-2", v2)
    assert set(m2.tasks["r1"]) == {("s02", 2), ("s03", 2)}
    assert not set(m2.tasks["r1"].values()) & set(m1.tasks["r1"].values())
    for who in ("r1", "r2", "r3", "r4"):
        decide(who, "s02", "approve", tasks=m2, version=2)
    for who in ("r1", "r2", "r3"):
        decide(who, "s03", "approve", tasks=m2, version=2)
    p2 = pull(admin, BENCH, "round-2", STREAMVIBE, panel, log_dir=log_dir)
    assert p2.violations == []
    latest = {s: 1 for s in sids} | {"s02": 2, "s03": 2}
    st = statuses(p1.decisions + p2.decisions, latest_versions=latest)
    assert {s: (x.state, x.version) for s, x in st.items()} == {
        "s01": ("approved", 1), "s02": ("approved", 2), "s03": ("pending", 2),
        "s04": ("excluded", 1), "s05": ("pending", 1), "s06": ("pending", 1),
        "s07": ("pending", 1), "s08": ("pending", 1), "s09": ("pending", 1),
    }
    # s03: four approvals of v1 and three of v2 -> not approved (older approvals never count)
    assert st["s03"].approvals == ("r1", "r2", "r3")
    assert st["s02"].content_hash == v2[0].content_hash

    # ---- only approved versions may enter a release ----------------------------------------
    check_release([("s01", 1, cands[0].content_hash), ("s02", 2, v2[0].content_hash)], st)
    with pytest.raises(ReleaseBlocked, match="s02 v1"):
        check_release([("s02", 1, cands[1].content_hash)], st)
    with pytest.raises(ReleaseBlocked, match="s03 v2 \\(pending\\)"):
        check_release([("s03", 2, v2[1].content_hash)], st)

    # ---- decision log: append-only Parquet, pseudonymous, deduplicated on read ---------------
    files = sorted((log_dir / "decisions").glob("*.parquet"))
    assert len(files) == 2
    assert pq.read_schema(files[0]).remove_metadata() == \
        REVIEW_DECISION.arrow_schema().remove_metadata()
    logged = decision_log.read(log_dir)
    assert len(logged) == 15 + 7
    assert statuses(logged, latest_versions=latest) == st
    for row in logged:
        for v in row.values():
            assert "@" not in str(v)
    assert len(decision_log.read_violations(log_dir)) == 12

    # resolve the duplicate (delete r2's second decision) and re-pull: r2 now counts
    admin.annotations.delete(id=dup.id)
    p1b = pull(admin, BENCH, "round-1", STREAMVIBE, panel, log_dir=log_dir)
    assert [v["kind"] for v in p1b.violations].count("duplicate_decision") == 0
    assert ("s06", 1, "r2", "approve") in [
        (d["sample_id"], d["version"], d["reviewer"], d["decision"]) for d in p1b.decisions]
    assert len(sorted((log_dir / "decisions").glob("*.parquet"))) == 3
    current = decision_log.read(log_dir)
    assert len(current) == 16 + 7  # latest pull per round
    history = decision_log.read(log_dir, current=False)
    assert len(history) == 16 + 7  # unchanged decisions are not repeated
    assert statuses(current, latest_versions=latest)["s06"].approvals == ("r1", "r2")
    assert content_hash({"b": 1, "a": [1, 2]}) == content_hash({"a": [1, 2], "b": 1})

    # ---- agreement audit on the real pulled log: the first-round v1 decisions -----------------
    # Fleiss' κ over candidates that all four reviewers decided on v1 (binary approve / not,
    # StreamVibe App. B.3), cross-checked against statsmodels on a table built here independently.
    from statsmodels.stats.inter_rater import fleiss_kappa

    from annotation.agreement import audit
    from annotation.cli import main as cli

    first: dict[str, dict[str, str]] = {}
    for row in sorted(history, key=lambda d: (d["created_at"], d["source_annotation_id"])):
        if row["version"] == 1 and row["rater_kind"] == "human":
            first.setdefault(row["sample_id"], {}).setdefault(row["reviewer"], row["decision"])
    complete = {s: d for s, d in first.items() if set(d) == {"r1", "r2", "r3", "r4"}}
    assert len(complete) >= 3
    table = [[sum(v == "approve" for v in d.values()), sum(v != "approve" for v in d.values())]
             for _, d in sorted(complete.items())]
    result = audit(history, ["r1", "r2", "r3", "r4"], None, n_boot=200)
    assert result.overall.n_candidates == len(complete)
    assert result.overall.fleiss_kappa == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    assert cli(["audit", "--log-dir", str(log_dir), "--out", str(tmp_path / "reports")]) == 0
    assert (tmp_path / "reports" / "agreement.md").is_file()
