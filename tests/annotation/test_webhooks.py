"""Every Label Studio event captured as it happens (docs/annotation.md §Events): the webhook receiver
started with the real server appends each event to the round's decision log, and pull reconciles
them with what it reads. Each cheat below left no trace before events were captured: a reject
deleted and made again as an approval before any pull, an annotation PATCHed onto another task
before any pull, a decision made while nothing listened.

The receiver-down tests stop the session server's receiver and start it again: they come last in
this module, and every other test here uses a log attached after any such restart.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from annotation import cli, decision_log, webhooks
from annotation.approval import statuses
from annotation.label_config import build_result
from annotation.pull import pull
from pipelines.streamvibe.rubric import STREAMVIBE
from tests.support.label_studio import decide, kettle_candidate, push_round

ALL = list(STREAMVIBE.criterion_keys)
BENCH = "events"
KEY = ("s1", 1)
THREE = {f"r{i}": "approve" for i in range(1, 4)}



def _events(log: Path) -> list[dict]:
    return [r for r in decision_log.chain(log) if r["kind"] == "event"]


def _state(log: Path, sid: str = "s1") -> str:
    return statuses(decision_log.read(log, current=False),
                    latest_versions=decision_log.latest_pushed(log),
                    violations=decision_log.read_violations(log))[sid].state


@pytest.mark.label_studio
def test_the_receiver_records_every_event_as_it_happens(ls_env, panel, tmp_path, capsys):
    """Created, updated and deleted annotations are in the log when the request that made them
    returns; the record keeps the decision and the result's hash, never
    the comment (it may hold an e-mail address); verify covers the records."""
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "record", [kettle_candidate()], STREAMVIBE, log)
    assert pushed.events == ls_env.server.receiver().session
    recs = decision_log.chain(log)
    attach = recs[0]
    assert (attach["kind"], attach["state"], attach["session"]) == ("receiver", "attach", pushed.events)
    assert sorted(attach["projects"]) == sorted(pushed.projects.values())
    # the import sends nothing: TASKS_CREATED is not among the webhook's actions (its payload is
    # every imported task; the push record already names them)
    assert _events(log) == []
    r1 = panel.reviewer("r1").client()
    result = build_result("revise", [], "write to r1@example.org")
    a = r1.annotations.create(id=pushed.task_id("r1", KEY), lead_time=3.0, result=result)
    got = _events(log)[-1]  # no pull, no wait: the webhook is sent inside the request
    assert got["action"] == "ANNOTATION_CREATED" and got["project"] == pushed.projects["r1"]
    (ann,) = got["annotations"]
    assert {k: ann[k] for k in ("id", "task", "completed_by", "decision", "was_cancelled")} == {
        "id": int(a.id), "task": pushed.task_id("r1", KEY), "completed_by": panel.reviewer("r1").user_id,
        "decision": "revise", "was_cancelled": False}
    assert ann["result_sha256"] == webhooks.result_sha256(result)
    r1.annotations.update(id=a.id, result=build_result("approve", ALL))
    r1.annotations.delete(id=a.id)
    assert [(e["action"], e["annotations"][0]["id"], e["annotations"][0].get("decision"))
            for e in _events(log)[-2:]] == [("ANNOTATION_UPDATED", int(a.id), "approve"),
                                            ("ANNOTATIONS_DELETED", int(a.id), None)]
    assert "example.org" not in (log / decision_log.CHAIN).read_text()
    assert [e["received"] for e in _events(log)] == sorted(e["received"] for e in _events(log))
    assert cli.main(["verify", "--log-dir", str(log)]) == 0
    out = capsys.readouterr().out
    assert f"{len(decision_log.chain(log))} chain records" in out
    assert "(3 event, 1 push, 1 receiver)" in out  # created, updated, deleted
    # the pull that follows sees the deleted objection it never pulled
    res = pull(panel.admin.client(), BENCH, "record", STREAMVIBE, panel, log_dir=log)
    assert [(v["kind"], v["reviewer"], v["annotation_id"]) for v in res.violations] == [
        ("deleted_decision", "r1", int(a.id))]


@pytest.mark.label_studio
def test_the_webhook_sends_the_annotation_actions_and_an_every_action_hook_is_narrowed(ls_env, panel,
                                                                                      tmp_path):
    """push registers one webhook per project for exactly ``webhooks.ACTIONS``; a hook sending
    every action (as push registered them before) is narrowed in place, and one sending too
    little is named by the pull's check until ``ensure_webhook`` repairs it."""
    admin = panel.admin.client()
    pushed = push_round(ls_env, panel, BENCH, "actions", [kettle_candidate()], STREAMVIBE,
                        tmp_path / "log")
    info = ls_env.server.receiver()
    pid = pushed.projects["r1"]
    (hook,) = [w for w in admin.webhooks.list(project=str(pid)) if str(w.url) == info.events_url]
    assert (hook.send_for_all_actions, sorted(hook.actions)) == (False, sorted(webhooks.ACTIONS))
    assert webhooks.webhook_problems(admin, [pid], info) == []
    admin.webhooks.update(id=hook.id, send_for_all_actions=False, actions=["ANNOTATION_CREATED"])
    assert webhooks.webhook_problems(admin, [pid], info) == [
        f"project {pid}'s webhook to the receiver is switched off or sends too little"]
    admin.webhooks.update(id=hook.id, send_for_all_actions=True, actions=[])
    assert webhooks.webhook_problems(admin, [pid], info) == []  # every action covers them
    assert webhooks.ensure_webhook(admin, pid, info) == hook.id
    (again,) = [w for w in admin.webhooks.list(project=str(pid)) if str(w.url) == info.events_url]
    assert (again.send_for_all_actions, sorted(again.actions)) == (False, sorted(webhooks.ACTIONS))


@pytest.mark.label_studio
def test_a_reject_deleted_and_made_again_as_an_approval_is_reported(ls_env, panel, tmp_path):
    """r4 rejects, deletes the reject and approves in a new annotation, all before any pull
    (was: four approvals, the candidate approved). The events show the deleted reject: the
    version is held, and stays so at every later pull."""
    admin = panel.admin.client()
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "remade", [kettle_candidate()], STREAMVIBE, log)
    decide(panel, pushed, KEY, THREE, ALL)
    r4 = panel.reviewer("r4").client()
    first = r4.annotations.create(id=pushed.task_id("r4", KEY), lead_time=4.0,
                                  result=build_result("reject", [], "no evidence"))
    r4.annotations.delete(id=first.id)
    again = r4.annotations.create(id=pushed.task_id("r4", KEY), lead_time=4.0,
                                  result=build_result("approve", ALL))
    for _ in range(2):
        res = pull(admin, BENCH, "remade", STREAMVIBE, panel, log_dir=log)
        assert [(v["kind"], v["reviewer"], v["annotation_id"]) for v in res.violations] == [
            ("deleted_decision", "r4", int(first.id))]
        assert res.violations[0]["detail"].startswith("r4's reject (created ")
        assert "was deleted at " in res.violations[0]["detail"]
        assert "before any pull (events received by the webhook receiver)" in res.violations[0]["detail"]
        assert [(d["reviewer"], d["source_annotation_id"]) for d in res.decisions][-1] == (
            "r4", int(again.id))
        assert _state(log) == "violation"


@pytest.mark.label_studio
def test_an_approval_edited_before_any_pull_is_reported_and_an_unedited_one_is_not(ls_env, panel, tmp_path):
    """r4 approves, then edits the approval's comment at once (an update event, the same
    decision): ``edited_decision``. The three untouched approvals count — however far apart
    Label Studio stamped their created_at and updated_at inside the create (44 ms once, on a
    loaded server, in a 4,100-candidate round: that was counted as an edit)."""
    admin = panel.admin.client()
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "edited", [kettle_candidate()], STREAMVIBE, log)
    ids = decide(panel, pushed, KEY, {**THREE, "r4": "approve"}, ALL)
    panel.reviewer("r4").client().annotations.update(
        id=ids["r4"], result=build_result("approve", ALL, "second thoughts"))
    res = pull(admin, BENCH, "edited", STREAMVIBE, panel, log_dir=log)
    assert [(v["kind"], v["reviewer"], v["annotation_id"]) for v in res.violations] == [
        ("edited_decision", "r4", ids["r4"])]
    assert sorted(d["reviewer"] for d in res.decisions) == ["r1", "r2", "r3"]


def test_an_edit_is_a_save_after_the_create_event_not_a_gap_between_the_create_stamps():
    """pull._edited_after: the create event carries updated_at as the create left it."""
    from annotation.pull import _edited_after, _when

    created = "2026-12-06T03:00:00.000000Z"
    late = "2026-12-06T03:00:00.044000Z"  # the stamps of one create, 44 ms apart under load
    edit = "2026-12-06T03:00:01.500000Z"

    def events(*states):
        return webhooks.AnnotationEvents([dict(st) for st in states], created=True)

    create = {"action": "ANNOTATION_CREATED", "updated_at": late}
    ann = {"created_at": created, "updated_at": late}
    assert _edited_after(events(create), ann, _when(created)) is None
    assert _edited_after(events(create), {**ann, "updated_at": edit}, _when(created)) == 1.5
    update = {"action": "ANNOTATION_UPDATED", "updated_at": late}
    assert _edited_after(events(create, update), ann, _when(created)) == pytest.approx(0.044)
    # a create event without the stamp (an older log): the 10 ms rule
    bare = {"action": "ANNOTATION_CREATED"}
    assert _edited_after(events(bare), ann, _when(created)) == pytest.approx(0.044)
    assert _edited_after(events(bare), {**ann, "updated_at": "2026-12-06T03:00:00.000030Z"},
                         _when(created)) is None


@pytest.mark.label_studio
def test_an_annotation_patched_onto_another_task_before_any_pull_is_reported(ls_env, panel, tmp_path):
    """s1 and s2 pushed together, r1's approval of s1 PATCHed onto s2 before any pull: created
    after s2's push and never pulled, so only the events can tell (was: counted for s2)."""
    admin = panel.admin.client()
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "patched",
                        [kettle_candidate("s1"), kettle_candidate("s2")], STREAMVIBE, log)
    ids = decide(panel, pushed, KEY, {"r1": "approve"}, ALL)
    decide(panel, pushed, ("s2", 1), {"r2": "approve", "r3": "approve", "r4": "approve"}, ALL)
    s1_task, s2_task = pushed.task_id("r1", KEY), pushed.task_id("r1", ("s2", 1))
    panel.reviewer("r1").client().annotations.update(id=ids["r1"], task=s2_task)
    res = pull(admin, BENCH, "patched", STREAMVIBE, panel, log_dir=log)
    assert [(v["kind"], v["sample_id"], v["reviewer"], v["annotation_id"]) for v in res.violations] == [
        ("moved_decision", "s2", "r1", ids["r1"])]
    assert res.violations[0]["detail"].startswith(f"decision made on task {s1_task} (event received ")
    assert res.violations[0]["detail"].endswith(f"now on task {s2_task} (s2 v1): a decision belongs "
                                                "to the version it was made on")
    st = statuses(decision_log.read(log, current=False), violations=decision_log.read_violations(log))
    assert st["s2"].state == "violation" and st["s2"].approvals == ("r2", "r3", "r4")


@pytest.mark.label_studio
def test_a_log_with_events_edited_by_hand_is_refused_naming_the_record(ls_env, panel, tmp_path):
    """An event record rewritten (a reject made an approve), or dropped: every reader refuses the
    log, naming the record."""
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, BENCH, "tamper", [kettle_candidate()], STREAMVIBE, log)
    decide(panel, pushed, KEY, {"r4": "reject", "r3": "approve"}, ALL)  # r4's is not the last
    lines = (log / decision_log.CHAIN).read_text().splitlines()
    n = next(i for i, line in enumerate(lines, 1) if '"ANNOTATION_CREATED"' in line)
    flipped = lines[:n - 1] + [lines[n - 1].replace('"reject"', '"approve"')] + lines[n:]
    assert flipped != lines
    (log / decision_log.CHAIN).write_text("\n".join(flipped) + "\n")
    with pytest.raises(decision_log.BrokenChain,
                       match=rf"chain record {n} \(event ANNOTATION_CREATED, written .* was edited "
                             r"after it was written"):
        decision_log.verify(log)
    assert cli.main(["status", "--log-dir", str(log)]) == 2
    dropped = lines[:n - 1] + lines[n:]
    (log / decision_log.CHAIN).write_text("\n".join(dropped) + "\n")
    with pytest.raises(decision_log.BrokenChain, match=rf"chain record {n} \(.*does not follow "
                                                       rf"record {n - 1}"):
        decision_log.read(log)


def _release(folder: Path, head: str, records: int | None = None) -> Path:
    src = {"log_head": head, "imports": [], **({"log_records": records} if records else {})}
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"review": {"decisions_source": src}}))
    return folder


def test_the_log_must_still_hold_a_releases_head(tmp_path, capsys):
    """``verify --release``: a log that grew since the release passes and says by how much; one
    cut back or rewritten is refused, naming the record where the two part."""
    log = tmp_path / "log"
    for i in range(3):
        decision_log.append_record(log, "event", action="TASKS_CREATED", project=1, tasks=[i])
    head = decision_log.verify(log)
    rel = _release(tmp_path / "release", head)
    decision_log.append_record(log, "event", action="TASKS_DELETED", project=1, tasks=[0])
    assert cli.main(["verify", "--log-dir", str(log), "--release", str(rel)]) == 0
    assert f"holds the head of release {rel} ({head}) as chain record 3; 1 records written since" in (
        capsys.readouterr().out)
    # rewritten from record 3 on (the release's head is gone): refused
    lines = (log / decision_log.CHAIN).read_text().splitlines()
    (log / decision_log.CHAIN).write_text("\n".join(lines[:2]) + "\n")
    decision_log.append_record(log, "event", action="TASKS_CREATED", project=1, tasks=[7])
    assert cli.main(["verify", "--log-dir", str(log), "--release", str(rel)]) == 2
    assert f"no chain record of the log has the release's head {head[:12]}" in capsys.readouterr().err
    # with the record count in the manifest, the place is named
    with pytest.raises(decision_log.HeadMismatch,
                       match=r"chain record 3 \(event TASKS_CREATED, written .*\) has head .* the "
                             r"log was rewritten; they diverge at or before chain record 3"):
        decision_log.compare_head(log, head, 3)
    (log / decision_log.CHAIN).write_text("\n".join(lines[:2]) + "\n")
    with pytest.raises(decision_log.HeadMismatch, match=r"it was cut back; they diverge at chain "
                                                        r"record 3 \(missing\)"):
        decision_log.compare_head(log, head, 3)
    assert decision_log.compare_head(log, json.loads(lines[1])["head"], 2) == {
        "seq": 2, "added": 0}
    with pytest.raises(decision_log.DecisionLogError, match="records no decision-log head"):
        decision_log.release_head(_release(tmp_path / "rows-release", ""))


def _rec(kind: str, at: str, session: str, **facts) -> dict:
    return {"kind": kind, "at": at, "session": session, **facts}


def test_capture_gaps_from_the_receivers_records():
    """The holes a pull reports, from the receiver's records alone: a clean server restart is
    none (Label Studio was down too); a stop while Label Studio ran, a session killed without a
    stop record, a session not answering now, and a round attached to no receiver are."""
    attach = _rec("receiver", "t1", "a", state="attach", url="http://a", projects=[5])
    ev = _rec("event", "t2", "a", action="ANNOTATION_CREATED", annotations=[])
    alive = {"http://a": "a", "http://b": "b"}.get
    assert webhooks.capture_gaps([attach, ev], {5}, alive) == []
    restart = [attach, ev, _rec("receiver", "t3", "a", state="stop", server_stopped=True),
               _rec("receiver", "t4", "b", state="start", url="http://b")]
    assert webhooks.capture_gaps(restart, {5}, alive) == []
    stopped = [attach, _rec("receiver", "t3", "a", state="stop", server_stopped=False),
               _rec("receiver", "t4", "b", state="start", url="http://b")]
    assert webhooks.capture_gaps(stopped, {5}, alive) == [
        webhooks.Gap("t3", "t4", "the receiver was stopped while Label Studio ran")]
    killed = [attach, ev, _rec("receiver", "t4", "b", state="start", url="http://b")]
    (gap,) = webhooks.capture_gaps(killed, {5}, alive)
    assert (gap.start, gap.end) == ("t2", "t4") and "ended without a stop record" in gap.why
    (gap,) = webhooks.capture_gaps([attach, ev], {5}, {}.get)
    assert (gap.start, gap.end) == ("t2", None) and "is not running" in gap.why
    (gap,) = webhooks.capture_gaps([attach], {6}, alive)
    assert gap.start is None and "no webhook receiver was attached" in gap.why



def test_one_pass_over_a_stream_gives_the_events_and_the_gaps():
    """``read_capture`` (pull's one pass over the streamed chain) finds what the two readers find
    over the whole list, from a stream that can be read only once."""
    attach = _rec("receiver", "t1", "a", state="attach", url="http://a", projects=[5])
    made = _rec("event", "t2", "a", action="ANNOTATION_CREATED", seq=2,
                annotations=[{"id": 7, "task": 3, "decision": "approve"}])
    edited = _rec("event", "t3", "a", action="ANNOTATION_UPDATED", seq=3,
                  annotations=[{"id": 7, "task": 3, "decision": "reject"}])
    gone = _rec("event", "t4", "a", action=webhooks.DELETED, seq=4, annotations=[{"id": 8}])
    killed = _rec("receiver", "t5", "b", state="start", url="http://b")
    records = [attach, made, edited, gone, killed]
    alive = {"http://b": "b"}.get
    events, gaps = webhooks.read_capture(iter(records), {5}, alive)
    assert events == webhooks.annotation_events(records)
    assert gaps == webhooks.capture_gaps(records, {5}, alive)
    assert [st["decision"] for st in events[7].states] == ["approve", "reject"]
    assert events[7].created and events[8].deleted_at == "t4"
    (gap,) = gaps
    assert (gap.start, gap.end) == ("t4", "t5")

def _receiver_down(ls_env, how: str) -> None:
    info = ls_env.server.receiver()
    if how == "stopped":
        webhooks.stop(info.pid)
    else:  # killed: no stop record at all
        os.killpg(info.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while webhooks.health(info.url, 0.5) and time.monotonic() < deadline:
            time.sleep(0.1)
    assert ls_env.server.receiver() is None


@pytest.mark.label_studio
@pytest.mark.parametrize("how", ["stopped", "killed"])
def test_a_decision_made_while_the_receiver_was_down_is_a_gap(ls_env, panel, tmp_path, how):
    """The receiver goes down while Label Studio runs, r2 decides, ``server start`` (adopting the
    running server) brings a new receiver: the pull reports the hole as ``event_gap`` on the
    version and r2's decision, whose creation no event shows, as ``missing_event``."""
    admin = panel.admin.client()
    log = tmp_path / "log"
    rnd = f"down-{how}"
    pushed = push_round(ls_env, panel, BENCH, rnd, [kettle_candidate()], STREAMVIBE, log)
    decide(panel, pushed, KEY, {"r1": "approve", "r3": "approve", "r4": "approve"}, ALL)
    _receiver_down(ls_env, how)
    try:
        res = pull(admin, BENCH, rnd, STREAMVIBE, panel, log_dir=log)  # while it is down
        assert [v["kind"] for v in res.violations] == ["event_gap"]
        ids = decide(panel, pushed, KEY, {"r2": "approve"}, ALL)
    finally:
        assert ls_env.server.start().receiver() is not None  # adopts the server, new receiver
    res = pull(admin, BENCH, rnd, STREAMVIBE, panel, log_dir=log)
    got = {(v["kind"], v["reviewer"], v["annotation_id"]) for v in res.violations}
    assert got == {("event_gap", "", -1), ("missing_event", "r2", ids["r2"])}
    gap = next(v for v in res.violations if v["kind"] == "event_gap")
    why = ("the receiver was stopped while Label Studio ran" if how == "stopped"
           else "ended without a stop record")
    assert why in gap["detail"] and gap["detail"].startswith("events were not captured from 20")
    assert [d["reviewer"] for d in res.decisions] == ["r1", "r3", "r4"]
    assert _state(log) == "violation"
    recs = decision_log.chain(log)
    starts = [r for r in recs if r["kind"] == "receiver" and r.get("state") == "start"]
    assert len(starts) == 1 and starts[0]["session"] != pushed.events
    stops = [r for r in recs if r.get("state") == "stop"]
    assert [(r["session"], r["server_stopped"]) for r in stops] == (
        [(pushed.events, False)] if how == "stopped" else [])
