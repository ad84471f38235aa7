"""Server-free checks of the approval rule, result parsing, label config and decision log
(StreamVibe App. B.3; schemas.review.REVIEW_DECISION)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pyarrow.parquet as pq
import pytest

from annotation import decision_log
from annotation.approval import ReleaseBlocked, check_release, statuses
from annotation.label_config import InvalidDecision, build_label_config, build_result, parse_result
from annotation.projects import scrub_emails
from core.files import canonical_json, content_hash
from pipelines.registry import rubric as find_rubric
from pipelines.streamvibe.rubric import STREAMVIBE
from schemas.review import REVIEW_DECISION

ALL = list(STREAMVIBE.criterion_keys)


def _d(sid: str, ver: int, rev: str, dec: str, created: str = "2026-11-29T10:00:00Z",
       h: str | None = None, kind: str = "human") -> dict:
    return {"benchmark": "streamvibe", "review_round": "r", "sample_id": sid, "version": ver,
            "content_hash": h or f"h{sid}{ver}", "task_type": "I", "reviewer": rev,
            "rater_kind": kind, "decision": dec, "criteria": ALL if dec == "approve" else [],
            "comment": "", "lead_time": 1.0, "created_at": created, "source_task_id": 1,
            "source_annotation_id": hash((sid, ver, rev, created)) % 10**6}


def test_approval_rule():
    four = [_d("a", 1, f"r{i}", "approve") for i in range(1, 5)]
    three = [_d("b", 1, f"r{i}", "approve") for i in range(1, 4)]
    revise = three[:2] + [_d("c", 1, "r3", "revise")]
    revise = [dict(x, sample_id="c", content_hash="hc1") for x in revise]
    reject = [_d("d", 1, "r1", "reject"), _d("d", 1, "r2", "approve")]
    old = [_d("e", 1, f"r{i}", "approve") for i in range(1, 5)] + \
          [_d("e", 2, f"r{i}", "approve") for i in range(1, 4)]
    model = [_d("f", 1, f"r{i}", "approve") for i in range(1, 4)] + \
            [_d("f", 1, "gemini:flash", "approve", kind="model")]
    st = statuses(four + three + revise + reject + old + model, latest_versions={"g": 1, "a": 2})
    assert {k: (v.state, v.version) for k, v in st.items()} == {
        "a": ("pending", 2),  # a newer pushed version voids the v1 approvals
        "b": ("pending", 1),  # three approvals are insufficient
        "c": ("needs_correction", 1), "d": ("excluded", 1),
        "e": ("pending", 2),  # older approvals never count
        "f": ("pending", 1),  # a model is not a reviewer
        "g": ("pending", 1),
    }
    assert statuses(four)["a"].state == "approved"
    with pytest.raises(ValueError, match="different content hashes"):
        statuses(four + [_d("a", 1, "r5", "approve", h="other")])


def test_release_gate():
    st = statuses([_d("a", 2, f"r{i}", "approve") for i in range(1, 5)]
                  + [_d("b", 1, "r1", "revise")])
    check_release([("a", 2, "ha2")], st)
    for items, msg in (([("a", 1, "ha1")], "a v1"), ([("a", 2, "zzz")], "a v2"),
                       ([("b", 1, "hb1")], "b v1 \\(needs_correction\\)"),
                       ([("c", 1, "x")], "never reviewed")):
        with pytest.raises(ReleaseBlocked, match=msg):
            check_release(items, st)


@pytest.mark.parametrize("result,msg", [
    ([], "no decision"),
    ({"a": 1}, "not a list"),
    (build_result("maybe"), "is not one of"),
    (build_result("approve", ["nope"]), "not in rubric"),
    (build_result("approve") + build_result("reject"), "appears twice"),
    ([{"from_name": "x", "to_name": "candidate", "type": "choices", "value": {}}],
     "unknown control"),
    ([{"from_name": "decision", "to_name": "video", "type": "choices",
       "value": {"choices": ["approve"]}}], "wrong to_name"),
    ([{"from_name": "decision", "to_name": "candidate", "type": "choices",
       "value": {"choices": ["approve", "reject"]}}], "is not one of"),
])
def test_parse_result_rejects(result, msg):
    with pytest.raises(InvalidDecision, match=msg):
        parse_result(result, STREAMVIBE)


def test_parse_result_accepts_ui_shape():
    got = parse_result(build_result("revise", [ALL[2], ALL[0]], "fix t"), STREAMVIBE)
    assert (got.decision, got.criteria, got.comment) == ("revise", (ALL[0], ALL[2]), "fix t")


@pytest.mark.parametrize("name", ["proactivebench_vsod", "proready", "streamvibe"])
def test_label_config_structure(name):
    rubric = find_rubric(name)
    root = ET.fromstring(build_label_config(rubric))
    choices = {c.get("name"): c for c in root.iter("Choices")}
    assert [c.get("alias") for c in choices["decision"]] == ["approve", "revise", "reject"]
    assert [c.get("alias") for c in choices["criteria"]] == list(rubric.criterion_keys)
    assert choices["criteria"].get("choice") == "multiple"
    assert all(c.get("toName") == "candidate" for c in choices.values())
    assert [t.get("name") for t in root.iter("TextArea")] == ["comment"]
    videos = list(root.iter("Video"))
    assert all(v.get("frameRate") == "$fps" for v in videos)
    assert not list(root.iter("HyperText"))
    # the only <Paragraphs> are the evidence windows in the top row: Label Studio focuses the
    # first phrase of each, and one below the fold would scroll the decision out of view
    top = root.findall("View")[0]
    assert list(root.iter("Paragraphs")) == list(top.iter("Paragraphs"))
    assert {c.get("name") for c in top.iter("Choices")} == {"decision", "criteria"}
    # the complete candidate keeps its indentation
    json_view = next(v for v in root.iter("View") if v.find("Text") is not None
                     and v.find("Text").get("name") == "candidate")
    assert "white-space: pre-wrap" in json_view.get("style")


def test_hash_and_scrub():
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    assert content_hash({"a": 1}) == \
        "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
    assert scrub_emails("mail a.b+c@x-y.org now") == "mail [email] now"


def test_decision_log_append_and_read(tmp_path):
    a = [_d("a", 1, f"r{i}", "approve") for i in range(1, 5)]
    f1 = decision_log.append(tmp_path, a, benchmark="streamvibe", review_round="r")
    changed = a[:3] + [dict(a[3], decision="revise", criteria=[])]
    f2 = decision_log.append(tmp_path, changed, benchmark="streamvibe", review_round="r")
    decision_log.append(tmp_path, [], benchmark="streamvibe", review_round="empty")
    assert f1 < f2
    assert pq.read_table(f1).schema.remove_metadata() == \
        REVIEW_DECISION.arrow_schema().remove_metadata()
    cur = decision_log.read(tmp_path)
    assert [(r["reviewer"], r["decision"]) for r in cur] == \
        [("r1", "approve"), ("r2", "approve"), ("r3", "approve"), ("r4", "revise")]
    hist = decision_log.read(tmp_path, current=False)
    assert len(hist) == 5  # four originals + r4's changed state
    with pytest.raises(ValueError, match="e-mail"):
        decision_log.append(tmp_path, [dict(a[0], reviewer="bob@example.com")],
                            benchmark="streamvibe", review_round="r")
    with pytest.raises(ValueError, match="missing fields"):
        decision_log.append(tmp_path, [{"sample_id": "x"}], benchmark="b", review_round="r")


def test_objection_is_final_for_its_version():
    """"Revise" then "approve" by the same reviewer on the same version used to be
    approved (the latest decision per reviewer won); the rule reads the whole history."""
    four = [_d("a", 1, f"r{i}", "approve") for i in range(1, 5)]
    later = "2026-11-29T11:00:00Z"
    withdrawn = four[:3] + [_d("a", 1, "r4", "revise"), _d("a", 1, "r4", "approve", created=later)]
    st = statuses(withdrawn)["a"]
    assert (st.state, st.approvals, st.objections) == ("needs_correction", ("r1", "r2", "r3"),
                                                       (("r4", "revise"),))
    assert statuses(four + [_d("a", 1, "r2", "reject", created=later)])["a"].state == "excluded"
    # approval needs a new version reviewed by all four
    v2 = [_d("a", 2, f"r{i}", "approve") for i in range(1, 5)]
    assert statuses(withdrawn + v2)["a"].state == "approved"


def test_standing_violations_block_approval():
    four = [_d("a", 1, f"r{i}", "approve") for i in range(1, 5)]
    v = {"kind": "task_modified", "sample_id": "a", "version": 1,
         "detail": "task data changed after push: show_instruction"}
    st = statuses(four, violations=[v])["a"]
    assert (st.state, st.violations) == (
        "violation", ("task_modified: task data changed after push: show_instruction",))
    assert statuses(four, violations=[dict(v, version=2)])["a"].state == "approved"  # not v1's
    # no decision counted on a tampered task: still a violation, not "pending: no decisions"
    assert statuses([], latest_versions={"a": 1}, violations=[v])["a"].state == "violation"
    # ... also with no push record (a build without the review ledger): at the violation's version
    bare = statuses([], violations=[v])["a"]
    assert (bare.state, bare.version) == ("violation", 1)
    # an objection still decides the state; the violation is carried along
    rej = statuses(four[:3] + [_d("a", 1, "r4", "reject")], violations=[v])["a"]
    assert (rej.state, len(rej.violations)) == ("excluded", 1)
    with pytest.raises(ReleaseBlocked, match="a v1 \\(violation\\)"):
        check_release([("a", 1, "ha1")], statuses(four, violations=[v]))
