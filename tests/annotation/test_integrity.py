"""The integrity holes a review of the loop found, each produced for real on the server (all accepted by Label
Studio with 200/201/204) and each caught by ``pull`` (StreamVibe App. B.3, docs/annotation.md).

Each scenario first ran against the code before the fix (63bd6ed, one shared project, the task
checked only on its candidate JSON, the latest decision per reviewer counted) and failed there:
the edited fields, the deleted reject and the withdrawn objections went unreported and the
candidate counted as approved (or pending).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from annotation import decision_log
from annotation.approval import statuses
from annotation.label_config import build_result
from annotation.projects import Candidate
from annotation.pull import pull
from pipelines.streamvibe.rubric import STREAMVIBE
from tests.support.label_studio import decide, kettle_candidate, push_round

pytestmark = pytest.mark.label_studio
ALL = list(STREAMVIBE.criterion_keys)
BENCH = "integrity"
KEY = ("s1", 1)
FOUR = {f"r{i}": "approve" for i in range(1, 5)}



def _state(log: Path) -> str:
    """The approval rule on the full log, as ``status`` and the release read it."""
    return statuses(decision_log.read(log, current=False),
                    latest_versions=decision_log.latest_pushed(log),
                    violations=decision_log.read_violations(log))["s1"].state


def _kinds(res) -> set[str]:
    return {v["kind"] for v in res.violations}


@pytest.mark.parametrize("field", ["show_instruction", "win_evidence_points", "media_0"])
def test_editing_what_reviewers_see_is_reported(ls_env, panel, tmp_path, field):
    """PATCH one displayed field, leave the candidate JSON and its hash alone: reported as
    ``task_modified`` naming the field, and the four approvals do not make it approved."""
    admin = panel.admin.client()
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, f"patch-{field}", [kettle_candidate()], STREAMVIBE, log)
    decide(panel, pushed, KEY, FOUR, ALL)
    tid = pushed.task_id("r3", KEY)
    data = dict(admin.tasks.get(id=str(tid)).data)
    if field == "show_instruction":
        data[field] = "Tell me when the kettle is cold"
    elif field == "win_evidence_points":
        data[field] = [dict(data[field][0], text="It never boils.")]
    else:  # another file the server serves, in the same store folder
        other = ls_env.server.media_root / data[field].split("?d=")[1]
        swapped = other.with_name("other.webm")
        swapped.write_bytes(other.read_bytes() + b"\0")
        data[field] = data[field].replace(other.name, swapped.name)
    original = dict(admin.tasks.get(id=str(tid)).data)
    admin.tasks.update(id=str(tid), data=data)
    res = pull(admin, BENCH, f"patch-{field}", STREAMVIBE, panel, log_dir=log)
    bad = [v for v in res.violations if v["kind"] == "task_modified"]
    assert [(v["reviewer"], v["task_id"]) for v in bad] == [("r3", tid)]
    assert bad[0]["detail"].startswith(f"task data changed after push: {field}")
    assert [d["reviewer"] for d in res.decisions] == ["r1", "r2", "r4"]
    assert _state(log) == "violation"
    # undoing the edit does not make r3's decision count: what r3 saw is unknown
    admin.tasks.update(id=str(tid), data=original)
    res = pull(admin, BENCH, f"patch-{field}", STREAMVIBE, panel, log_dir=log)
    assert [(v["kind"], v["task_id"]) for v in res.violations] == [("task_modified", tid)]
    assert "even after the change was undone" in res.violations[0]["detail"]
    assert _state(log) == "violation"


def test_replaced_media_file_is_reported_and_stays_void(ls_env, panel, tmp_path):
    admin = panel.admin.client()
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "media", [kettle_candidate()], STREAMVIBE, log)
    decide(panel, pushed, KEY, FOUR, ALL)
    rec = decision_log.read_pushes(log)[0]
    stored = Path(rec["media_root"]) / rec["media"][0]["path"]
    original = stored.read_bytes()
    stored.write_bytes(original[:-1] + b"\0")  # the file the server serves, replaced in place
    res = pull(admin, BENCH, "media", STREAMVIBE, panel, log_dir=log)
    assert {v["kind"] for v in res.violations} == {"media_modified"} and res.decisions == []
    stored.write_bytes(original)
    res = pull(admin, BENCH, "media", STREAMVIBE, panel, log_dir=log)
    assert {v["kind"] for v in res.violations} == {"media_modified"} and res.decisions == []
    assert _state(log) == "violation"


def test_edited_label_config_is_reported_and_push_refuses_the_project(ls_env, panel, tmp_path):
    """An edited page (here: the criteria made optional-looking in r2's project) voids r2's
    decisions there for good, and a re-push to that round is refused."""
    admin = panel.admin.client()
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "config", [kettle_candidate()], STREAMVIBE, log)
    decide(panel, pushed, KEY, FOUR, ALL)
    project = pushed.projects["r2"]
    config = admin.projects.get(id=project).label_config
    admin.projects.update(id=project, label_config=config.replace(
        '<Header value="Criteria that hold', '<Header value="Criteria (optional)'))
    res = pull(admin, BENCH, "config", STREAMVIBE, panel, log_dir=log)
    assert [(v["kind"], v["reviewer"]) for v in res.violations] == [("project_modified", "r2")]
    assert _state(log) == "violation"
    with pytest.raises(ValueError, match="edited after push"):
        push_round(ls_env, panel, BENCH, "config", [kettle_candidate()], STREAMVIBE, log)
    admin.projects.update(id=project, label_config=config)
    res = pull(admin, BENCH, "config", STREAMVIBE, panel, log_dir=log)
    assert [(v["kind"], v["reviewer"]) for v in res.violations] == [("project_modified", "r2")]


def test_deleting_another_reviewers_reject_is_reported_and_it_still_counts(ls_env, panel, tmp_path):
    admin = panel.admin.client()
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "delete", [kettle_candidate()], STREAMVIBE, log)
    ids = decide(panel, pushed, KEY, {**FOUR, "r2": "reject"}, ALL, comment="not visible")
    pull(admin, BENCH, "delete", STREAMVIBE, panel, log_dir=log)
    assert _state(log) == "excluded"
    panel.reviewer("r1").client().annotations.delete(id=ids["r2"])  # any token can delete
    res = pull(admin, BENCH, "delete", STREAMVIBE, panel, log_dir=log)
    deleted = [v for v in res.violations if v["kind"] == "deleted_decision"]
    assert [(v["reviewer"], v["annotation_id"]) for v in deleted] == [("r2", ids["r2"])]
    assert deleted[0]["detail"].startswith("r2's reject (created ")
    assert deleted[0]["detail"].endswith(
        f"was deleted after it was pulled; it still counts and {KEY[0]} v{KEY[1]} is held: it is "
        f"never released (reported at every pull), only a correction v{KEY[1] + 1} reviewed by "
        "all four can be")
    assert _state(log) == "excluded"
    # and the next pull still reports it: the log is the memory Label Studio does not have
    again = pull(admin, BENCH, "delete", STREAMVIBE, panel, log_dir=log)
    assert "deleted_decision" in _kinds(again)


def test_an_objection_cannot_be_withdrawn(ls_env, panel, tmp_path):
    """r4 asks for a revision, a pull logs it, r4 turns it into an approval: the change is a
    ``changed_decision`` violation and the version stays needs_correction (a correction makes
    version 2, which all four review)."""
    admin = panel.admin.client()
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "withdraw", [kettle_candidate()], STREAMVIBE, log)
    ids = decide(panel, pushed, KEY, {**FOUR, "r4": "revise"}, ALL, comment="t_e too late")
    pull(admin, BENCH, "withdraw", STREAMVIBE, panel, log_dir=log)
    panel.reviewer("r4").client().annotations.update(id=ids["r4"], result=build_result("approve", ALL))
    res = pull(admin, BENCH, "withdraw", STREAMVIBE, panel, log_dir=log)
    assert [(v["kind"], v["reviewer"], v["annotation_id"]) for v in res.violations] == [
        ("changed_decision", "r4", ids["r4"])]
    assert res.violations[0]["detail"].startswith("r4's revise was changed to approve")
    assert [d["reviewer"] for d in res.decisions] == ["r1", "r2", "r3"]
    assert _state(log) == "needs_correction"


def test_an_objection_withdrawn_before_any_pull_is_reported(ls_env, panel, tmp_path):
    """The same, with no pull between "revise" and "approve": Label Studio keeps no history, but
    the webhook receiver logged the "revise" as it was made (``annotation.webhooks``), so the
    change is named; without its events the edited approval itself would be the violation."""
    admin = panel.admin.client()
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "withdraw-early", [kettle_candidate()], STREAMVIBE, log)
    ids = decide(panel, pushed, KEY, {**FOUR, "r4": "revise"}, ALL)
    time.sleep(2.5)
    panel.reviewer("r4").client().annotations.update(id=ids["r4"], result=build_result("approve", ALL))
    res = pull(admin, BENCH, "withdraw-early", STREAMVIBE, panel, log_dir=log)
    assert [(v["kind"], v["reviewer"]) for v in res.violations] == [("changed_decision", "r4")]
    assert res.violations[0]["detail"].startswith("r4's revise (event received ")
    assert res.violations[0]["detail"].endswith("was changed to approve before it was pulled: it "
                                                "does not count and the version is held (an "
                                                "objection is final for its version)")
    assert _state(log) == "violation"


def test_a_reject_edited_to_approve_at_once_is_reported(ls_env, panel, tmp_path):
    """The same edit made straight after the reject (was: within ``EDIT_GRACE_S`` = 2 s it counted
    as an approval and the candidate was approved): reported however fast it is — the webhook
    event of the reject names it."""
    admin = panel.admin.client()
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "withdraw-fast", [kettle_candidate()], STREAMVIBE, log)
    r4 = panel.reviewer("r4").client()
    decide(panel, pushed, KEY, {k: v for k, v in FOUR.items() if k != "r4"}, ALL)
    a = r4.annotations.create(id=pushed.task_id("r4", KEY), lead_time=5.0,
                              result=build_result("reject", [], "no evidence"))
    r4.annotations.update(id=a.id, result=build_result("approve", ALL))
    res = pull(admin, BENCH, "withdraw-fast", STREAMVIBE, panel, log_dir=log)
    assert [(v["kind"], v["reviewer"], v["annotation_id"]) for v in res.violations] == [
        ("changed_decision", "r4", int(a.id))]
    assert res.violations[0]["detail"].startswith("r4's reject (event received ")
    assert [d["reviewer"] for d in res.decisions] == ["r1", "r2", "r3"]
    assert _state(log) == "violation"


def _cand_v2() -> Candidate:
    c = kettle_candidate()
    return Candidate(c.sample_id, 2, c.task_type, {**c.content, "instruction": "Say when it boils"},
                     c.media)


@pytest.mark.parametrize("pulled_before", [False, True], ids=["unpulled", "pulled"])
def test_version_1_approvals_moved_to_version_2_are_reported(ls_env, panel, tmp_path, pulled_before):
    """Each reviewer PATCHes their own version-1 approval's ``task`` to their version-2 task
    (Label Studio accepts it and exports it under the v2 task): was counted as four approvals of
    v2. Now each is ``moved_decision`` — by the log's memory of the task it was pulled on, or by
    its creation before v2 was pushed — and v2 is not approved."""
    admin = panel.admin.client()
    rnd = f"move-{pulled_before}"
    log = tmp_path / "log"
    v1 = push_round(ls_env, panel, BENCH, rnd, [kettle_candidate()], STREAMVIBE, log)
    ids = decide(panel, v1, KEY, FOUR, ALL)
    if pulled_before:
        pull(admin, BENCH, rnd, STREAMVIBE, panel, log_dir=log)
        assert _state(log) == "approved"
    v2 = push_round(ls_env, panel, BENCH, rnd, [_cand_v2()], STREAMVIBE, log)
    for rv, aid in ids.items():
        panel.reviewer(rv).client().annotations.update(id=aid, task=v2.task_id(rv, ("s1", 2)))
    res = pull(admin, BENCH, rnd, STREAMVIBE, panel, log_dir=log)
    moved = [v for v in res.violations if v["kind"] == "moved_decision"]
    assert sorted((v["reviewer"], v["version"], v["annotation_id"]) for v in moved) == sorted(
        (rv, 2, aid) for rv, aid in ids.items())
    first = "decision made on task" if pulled_before else "before s1 v2 was pushed"
    assert all(first in v["detail"] for v in moved)
    assert [d for d in res.decisions if d["version"] == 2] == []
    assert _state(log) == "violation"


def test_a_decision_moved_to_another_sample_of_the_same_push_is_reported(ls_env, panel, tmp_path):
    """s1 and s2 pushed together, r1's pulled approval of s1 moved onto s2: created after s2's
    push, so only the log's memory of where it was pulled can tell."""
    admin = panel.admin.client()
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "move-sample",
                        [kettle_candidate("s1"), kettle_candidate("s2")], STREAMVIBE, log)
    ids = decide(panel, pushed, KEY, FOUR, ALL)
    decide(panel, pushed, ("s2", 1), {k: v for k, v in FOUR.items() if k != "r1"}, ALL)
    pull(admin, BENCH, "move-sample", STREAMVIBE, panel, log_dir=log)
    s1_task, s2_task = pushed.task_id("r1", KEY), pushed.task_id("r1", ("s2", 1))
    panel.reviewer("r1").client().annotations.update(id=ids["r1"], task=s2_task)
    res = pull(admin, BENCH, "move-sample", STREAMVIBE, panel, log_dir=log)
    assert [(v["kind"], v["sample_id"], v["reviewer"]) for v in res.violations] == [
        ("moved_decision", "s2", "r1")]
    assert res.violations[0]["detail"].startswith(f"decision made on task {s1_task}, now on task {s2_task}")
    st = statuses(decision_log.read(log, current=False), violations=decision_log.read_violations(log))
    assert st["s2"].state == "violation" and st["s2"].approvals == ("r2", "r3", "r4")


def test_decisions_in_another_reviewers_project_deleted_and_foreign_tasks(ls_env, panel, tmp_path):
    admin = panel.admin.client()
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "projects",
                        [kettle_candidate("s1"), kettle_candidate("s2")], STREAMVIBE, log)
    # r2 decides in r1's project as well (Community lets every member open every project)
    panel.reviewer("r2").client().annotations.create(
        id=pushed.task_id("r1", KEY), result=build_result("approve", ALL), lead_time=1.0)
    admin.tasks.delete(id=str(pushed.task_id("r3", ("s2", 1))))
    forged = dict(admin.tasks.get(id=str(pushed.task_id("r4", KEY))).data, version=2)
    admin.projects.import_tasks(pushed.projects["r4"], request=[{"data": forged}])
    res = pull(admin, BENCH, "projects", STREAMVIBE, panel, log_dir=log)
    got = sorted((v["kind"], v["sample_id"], v["reviewer"]) for v in res.violations)
    assert got == [("foreign_task", "s1", ""), ("task_deleted", "s2", "r3"),
                   ("wrong_project", "s1", "r2")]
    assert res.awaiting[("s2", 1)] == ["r1", "r2", "r3", "r4"]
