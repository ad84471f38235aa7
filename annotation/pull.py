"""Bring a round's decisions back from Label Studio, checked (:func:`pull`): valid decisions
for the decision log, violations instead of silently counted approvals.

- Label Studio enforces nothing about who wrote what, so ``pull`` checks every annotation and
  reports violations instead of counting them:

  ==========================  ================================================================
  ``foreign_task``            a task no push record of this log created (or in another project)
  ``task_deleted``            a pushed task that is gone
  ``task_modified``           task data differs from what push created (fields are named)
  ``media_modified``          a review medium's bytes differ from their sha256 at push, or it
                              is missing
  ``project_modified``        the project's label config or instructions were edited after push
  ``cancelled``               a skipped task (no decision)
  ``author_not_in_panel``     ``completed_by`` is not a panel reviewer (admin, outsider)
  ``wrong_project``           a panel reviewer's decision in another reviewer's project
  ``written_by_other``        ``updated_by`` differs from the author (edited by someone else, or
                              created by the admin in a reviewer's name)
  ``invalid_value``           a control/value the rubric's label config does not have
  ``incomplete_approval``     "approve" with a criterion unticked (App. B.3: approve only when
                              all criteria hold)
  ``moved_decision``          a decision that was not made on the task it sits on: an earlier
                              pull logged it on another task, its ``task`` is another one, or
                              it was created before this version's push (a version-1 approval
                              PATCHed onto the version-2 task)
  ``changed_decision``        a decision value that differs from the one an earlier pull logged
                              for the same annotation (the logged one still counts)
  ``edited_decision``         an approval edited after it was submitted that no earlier pull saw
                              as an approval (an objection may have been withdrawn unseen) —
                              however fast the edit (``EDIT_GRACE_S`` only absorbs the
                              microseconds between the two stamps of one save)
  ``duplicate_decision``      more than one decision by one reviewer on one version (none count)
  ``deleted_decision``        a decision an earlier pull logged is gone (it still counts, and
                              the version is held: never released; a correction n+1 can be) —
                              or one only the webhook events saw, deleted before any pull
  ``missing_event``           a decision with no received ``ANNOTATION_CREATED`` event, or
                              changed since its last received event: made or edited while events
                              were not captured (it does not count)
  ``event_gap``               events of the round's projects were not captured for a while (the
                              receiver stopped or killed while Label Studio ran, a round pushed
                              without it, a webhook removed or switched off): every version pushed
                              before the hole ended is held
  ==========================  ================================================================

  **Events** (``annotation.webhooks``): ``push`` registers the receiver's webhook on each project
  and attaches the log before it imports a task, so every annotation created, updated or deleted
  is in the log the moment it happens. ``pull`` reconciles them with what it reads: the events
  make ``moved_decision``, ``changed_decision`` and ``deleted_decision`` visible however fast they
  happened and whether or not a pull came between (a reject deleted and made again as an
  approval, an annotation PATCHed onto another task before any pull).

  Task-level checks come first; an annotation is reported once, under its first failing check.
  Objections are final for their version (``annotation.approval``): the approval rule reads
  every decision ever pulled, so a deleted or edited objection keeps blocking that version.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from annotation import decision_log, webhooks
from annotation.label_config import (
    InvalidDecision,
    parse_result,
)
from annotation.projects import (
    bad_media,
    find_projects,
    iter_tasks,
    page_hashes,
    scrub_emails,
)
from annotation.pull_index import PullIndex
from annotation.rubrics import Rubric

__all__ = ["PullResult", "pull"]

VIOLATION_KINDS = (
    "foreign_task", "task_deleted", "task_modified", "media_modified", "project_modified",
    "cancelled", "author_not_in_panel", "wrong_project", "written_by_other", "invalid_value",
    "incomplete_approval", "moved_decision", "changed_decision", "edited_decision",
    "duplicate_decision", "deleted_decision", "missing_event", "event_gap",
)


# Label Studio stamps created_at and updated_at a few microseconds apart when an annotation is
# created (measured, docs/label_studio.md); for a create event that does not carry its
# updated_at, an updated_at later than this is an edit (:func:`_edited_after`). It was 2 s, and a
# reject edited to approve within those 2 s counted as an approval: an edit over HTTP takes a
# whole request after the create (measured ≈ 0.1 s; the two stamps of a create ≈ 30 µs).
EDIT_GRACE_S = 0.01


# Violations that void a task for good: what its reviewer was shown is no longer known.
TAINTING = ("task_modified", "media_modified", "project_modified")


@dataclass
class PullResult:
    """Where the pull's snapshot went, the pushed candidate versions still waiting for a
    reviewer's decision, and how much the projects held. The valid decisions
    (``schemas.review.REVIEW_DECISION`` dicts) and the violation records are read back from the
    snapshot on demand: the pull never holds them all."""

    log_file: Path
    awaiting: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    n_tasks: int = 0
    n_annotations: int = 0

    @property
    def violations_file(self) -> Path:
        return self.log_file.parent.parent / "violations" / f"{self.log_file.stem}.jsonl"

    @property
    def n_decisions(self) -> int:
        return pq.ParquetFile(self.log_file).metadata.num_rows

    @property
    def decisions(self) -> list[dict[str, Any]]:
        return pq.read_table(self.log_file).to_pylist()

    @property
    def violations(self) -> list[dict[str, Any]]:
        with open(self.violations_file, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]

    def violation_kinds(self) -> Counter[str]:
        """How many violations of each kind, read a line at a time."""
        with open(self.violations_file, encoding="utf-8") as fh:
            return Counter(json.loads(line)["kind"] for line in fh if line.strip())


def _uid(v: Any) -> int | None:
    if isinstance(v, dict):
        v = v.get("id")
    return int(v) if v is not None else None


def _when(s: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(s).replace("Z", "+00:00"))
    except ValueError:
        return None


def pull(client: Any, benchmark: str, review_round: str, rubric: Rubric, panel: Any, *,
         log_dir: str | Path) -> PullResult:
    """Export every reviewer project of the round, check each task against its push record and
    each annotation against the rules, and append the result to the decision log.

    ``panel`` is an :class:`annotation.server.Panel` (its reviewers' user ids and pseudonyms).
    What the checks look up (push records, earlier decisions, events) and what they find (valid
    decisions, violations) is kept on disk while the pull runs (:class:`PullIndex`), so its
    memory does not grow with the round."""
    projects = find_projects(client, benchmark, review_round)
    if not projects:
        raise ValueError(f"no Label Studio project for {benchmark!r} round {review_round!r}")
    with PullIndex() as index:
        pages = index.add_pushes(decision_log.iter_pushes(log_dir, benchmark, review_round))
        if index.last_push is None:
            raise ValueError(f"no push records of {benchmark!r} round {review_round!r} in {log_dir}: "
                             "pull with the --log-dir the round was pushed with")
        return _pull(client, benchmark, review_round, rubric, panel, projects, pages, index,
                     Path(log_dir))


def _pull(client: Any, benchmark: str, review_round: str, rubric: Rubric, panel: Any,
          projects: dict[str, Any], pages: dict[int, dict[str, str]], index: PullIndex,
          log_dir: Path) -> PullResult:
    ids: dict[int, str] = panel.reviewer_ids()
    owner_of = {rv: uid for uid, rv in ids.items()}
    admin_id = panel.admin.user_id
    hashes: dict[Path, str] = {}
    # every pulled decision state (the chain is verified here, and again at append)
    index.add_logged(decision_log.iter_rows(log_dir, current=False, imported=False), benchmark,
                     review_round)
    tainted = {int(v["task_id"]): v["kind"] for v in decision_log.read_violations(log_dir, current=False)
               if v["benchmark"] == benchmark and v["review_round"] == review_round
               and v["kind"] in TAINTING}
    # what the webhook receiver captured of the round's projects, and the holes in it; streamed:
    # each annotation's events go to the index, only the holes are kept here
    round_projects = set(pages)
    _, gaps = webhooks.read_capture(decision_log.iter_chain(log_dir), round_projects,
                                    on_record=index.add_event_record)
    receiver = webhooks.running_info(index.last_push["media_root"])
    gaps += [webhooks.Gap(None, None, why) for why in
             webhooks.webhook_problems(client, sorted(round_projects), receiver)]

    def who(uid: int | None) -> str:
        if uid is None:
            return "unknown"
        if uid in ids:
            return ids[uid]
        return "admin" if uid == admin_id else f"user:{uid}"

    def violation(kind: str, sid: str, ver: int, tid: int, a: dict[str, Any] | None,
                  reviewer: str, detail: str) -> None:
        index.add_violation({
            "kind": kind, "benchmark": benchmark, "review_round": review_round,
            "sample_id": sid, "version": ver, "task_id": tid,
            "annotation_id": int(a["id"]) if a else -1, "reviewer": reviewer,
            "detail": scrub_emails(detail),
        })

    n_tasks = n_ann = 0
    for rv, project in sorted(projects.items()):
        owner = owner_of.get(rv)
        want = pages.get(int(project.id), {})
        edited_project = [what for what, key in (("label config", "label_config_sha256"),
                                                 ("instructions", "instructions_sha256"))
                          if page_hashes(project)[key] != want.get(key)]
        for t in iter_tasks(client, project.id):  # streamed: one project's export is never whole
            n_tasks += 1
            tid = int(t["id"])
            d = t.get("data", {})
            anns = t.get("annotations") or []
            n_ann += len(anns)
            index.saw(tid, (int(a["id"]) for a in anns))
            found = index.task(tid)
            if found is None or found[0] != rv:
                sid = str(d.get("sample_id", ""))
                ver = int(d["version"]) if str(d.get("version", "")).isdigit() else -1
                for a in anns or [None]:
                    violation("foreign_task", sid, ver, tid, a,
                              who(_uid(a.get("completed_by"))) if a else "",
                              f"task {tid} in {rv}'s project was not created by a push recorded "
                              f"in this log")
                continue
            rec = found[1]
            sid, ver = str(rec["sample_id"]), int(rec["version"])

            def task_violation(kind: str, detail: str, _sid: str = sid, _ver: int = ver,
                               _tid: int = tid, _anns: list[dict[str, Any]] = anns) -> None:
                for a in _anns or [None]:
                    violation(kind, _sid, _ver, _tid, a, who(_uid(a.get("completed_by"))) if a
                              else "", detail)

            changed = sorted(k for k in set(d) | set(rec["data"]) if d.get(k) != rec["data"].get(k))
            if changed:
                task_violation("task_modified", f"task data changed after push: {', '.join(changed)}; "
                               "push a new version instead of editing a task")
                continue
            changed = bad_media(rec, hashes)
            if changed:
                task_violation("media_modified", f"review media changed or missing after push: "
                               f"{', '.join(changed)}")
                continue
            if edited_project:
                task_violation("project_modified", f"the project's {' and '.join(edited_project)} "
                               "changed after push")
                continue
            if tid in tainted:
                task_violation(tainted[tid], "an earlier pull found this task or its project "
                               "changed after push; what its reviewer saw is unknown, so no decision "
                               "on it counts, even after the change was undone: push a new version")
                continue
            for a in anns:
                author = _uid(a.get("completed_by"))
                editor = _uid(a.get("updated_by"))
                if a.get("was_cancelled"):
                    violation("cancelled", sid, ver, tid, a, who(author), "task skipped; no decision")
                    continue
                if author not in ids:
                    violation("author_not_in_panel", sid, ver, tid, a, who(author),
                              f"decision by {who(author)}, who is not a panel reviewer")
                    continue
                if author != owner:
                    violation("wrong_project", sid, ver, tid, a, who(author),
                              f"decision of {who(author)} in {rv}'s project")
                    continue
                aid, created = int(a["id"]), _when(a.get("created_at"))
                pushed_at = _when(rec.get("pushed_at"))
                was = index.first_pulled(aid)
                on = _uid(a.get("task"))
                if (was is not None and was[0] != tid) or (on is not None and on != tid):
                    violation("moved_decision", sid, ver, tid, a, who(author),
                              f"decision made on task {was[0] if was else on}, now on task {tid} "
                              f"({sid} v{ver}): a decision belongs to the version it was made on")
                    continue
                if created and pushed_at and created < pushed_at:
                    violation("moved_decision", sid, ver, tid, a, who(author),
                              f"decision created {created.isoformat()}, before {sid} v{ver} was "
                              f"pushed ({pushed_at.isoformat()}): made on another task and moved "
                              "here")
                    continue
                if editor is not None and editor != author:
                    violation("written_by_other", sid, ver, tid, a, who(author),
                              f"decision of {who(author)} last written by {who(editor)}")
                    continue
                try:
                    parsed = parse_result(a.get("result"), rubric)
                except InvalidDecision as exc:
                    violation("invalid_value", sid, ver, tid, a, who(author), str(exc))
                    continue
                if parsed.decision == "approve" and len(parsed.criteria) != len(rubric.criteria):
                    missing = [k for k in rubric.criterion_keys if k not in parsed.criteria]
                    violation("incomplete_approval", sid, ver, tid, a, who(author),
                              f"approved with criteria unticked: {missing}")
                    continue
                if was is not None and was[1] != parsed.decision:
                    violation("changed_decision", sid, ver, tid, a, who(author),
                              f"{who(author)}'s {was[1]} was changed to {parsed.decision} after it "
                              f"was pulled; the {was[1]} stands (a decision is final once "
                              "submitted)")
                    continue
                ev = index.events(aid)
                problem = _event_problem(ev, a, tid, parsed.decision, who(author), f"{sid} v{ver}")
                if problem:
                    violation(problem[0], sid, ver, tid, a, who(author), problem[1])
                    continue
                edited = _edited_after(ev, a, created)
                if (parsed.decision == "approve" and not index.approved_before(aid)
                        and edited is not None):
                    violation("edited_decision", sid, ver, tid, a, who(author),
                              f"approval edited {edited:.3f} s after it was submitted and never "
                              "pulled as an approval before: an objection may have been withdrawn "
                              "(objections are final for their version)")
                    continue
                index.add_valid({
                    "benchmark": benchmark, "review_round": review_round, "sample_id": sid,
                    "version": ver, "content_hash": str(rec["content_hash"]),
                    "task_type": str(rec["task_type"]), "reviewer": ids[author],
                    "rater_kind": "human", "decision": parsed.decision,
                    "criteria": list(parsed.criteria), "comment": scrub_emails(parsed.comment),
                    "lead_time": float(a.get("lead_time") or 0.0),
                    "created_at": str(a.get("created_at", "")), "source_task_id": tid,
                    "source_annotation_id": int(a["id"]),
                })

    for tid, rv, rec in index.tasks():
        if not index.task_present(tid):
            violation("task_deleted", str(rec["sample_id"]), int(rec["version"]), tid, None, rv,
                      f"task {tid} of {rv}'s project was deleted after push")
    for d in index.history():
        if not index.annotation_present(int(d["source_annotation_id"])):
            violation("deleted_decision", d["sample_id"], int(d["version"]),
                      int(d["source_task_id"]), {"id": d["source_annotation_id"]}, d["reviewer"],
                      f"{d['reviewer']}'s {d['decision']} (created {d['created_at']}) was deleted "
                      f"after it was pulled; it still counts and {d['sample_id']} v{d['version']} is "
                      "held: it is never released (reported at every pull), only a correction "
                      f"v{int(d['version']) + 1} reviewed by all four can be")

    for aid, ev in index.event_annotations():  # decisions only the events saw, gone before a pull
        if index.annotation_present(aid) or index.pulled(aid) or not ev.states:
            continue
        first, last = ev.states[0], ev.states[-1]
        t0 = int(first["task"]) if first.get("task") is not None else -1
        found = index.task(t0)
        if found is None or not index.task_present(t0):
            continue  # another round's, or its task was deleted (task_deleted)
        rec = found[1]
        sid, ver = str(rec["sample_id"]), int(rec["version"])
        seen = " then ".join(dict.fromkeys(str(st["decision"]) for st in ev.states))
        moved = "" if last.get("task") == t0 else f", moved to task {last.get('task')},"
        how = (f"was deleted at {ev.deleted_at} before any pull (events received by the webhook "
               "receiver)" if ev.deleted_at else "is gone and no deletion event was received "
               "(deleted while events were not captured)")
        violation("deleted_decision", sid, ver, t0, {"id": aid}, who(first.get("completed_by")),
                  f"{who(first.get('completed_by'))}'s {seen} (created {first.get('created_at')})"
                  f"{moved} {how}; {sid} v{ver} is held: it is never released (reported at every "
                  f"pull), only a correction v{ver + 1} reviewed by all four can be")
    for gap in gaps:  # every version whose tasks existed during a hole in the capture
        end = _when(gap.end) if gap.end else None
        done: set[tuple[str, int]] = set()
        for sid, ver, pushed, _ in index.versions():
            at = _when(pushed)
            if (sid, ver) in done or (end is not None and at is not None and at > end):
                continue
            done.add((sid, ver))
            violation("event_gap", sid, ver, -1, None, "",
                      f"{gap.describe()}: a decision made, edited or deleted then may be unseen; "
                      f"{sid} v{ver} is held, only a correction v{ver + 1} pushed with "
                      "the receiver running can be released")
    for (sid, ver, rev), recs in index.duplicates():  # one decision per reviewer and version
        ann_ids = sorted(r["source_annotation_id"] for r in recs)
        for r in recs:
            violation("duplicate_decision", sid, ver, r["source_task_id"],
                      {"id": r["source_annotation_id"]}, rev,
                      f"{len(recs)} decisions by {rev} on this version "
                      f"(annotations {ann_ids}); none counted until extras are deleted")
    awaiting: dict[tuple[str, int], list[str]] = {}
    for sid, ver, _, reviewers in index.versions():
        missing = [rv for rv in reviewers if not index.decided(sid, ver, rv)]
        if missing:
            awaiting[(sid, ver)] = sorted(set(awaiting.get((sid, ver), [])) | set(missing))
        else:
            awaiting.pop((sid, ver), None)
    log_file = decision_log.append(log_dir, index.single_decisions(), benchmark=benchmark,
                                   review_round=review_round, violations=index.violations(),
                                   in_order=True)
    return PullResult(log_file, dict(sorted(awaiting.items())), n_tasks, n_ann)


def _edited_after(ev: webhooks.AnnotationEvents, a: dict[str, Any], created: Any) -> float | None:
    """Seconds from submission to the annotation's last save, if it was saved again after it was
    created; else None. The create event carries the annotation's ``updated_at`` as the create
    left it, so a later ``updated_at`` now (or an update event) is an edit, however fast. Why not
    ``updated_at - created_at``: one create stamps the two apart by the time between two clock
    reads inside Label Studio — ≈ 30 µs on a quiet server, 44 ms once on a loaded one (a
    4,100-candidate round), more than the fastest edit. A create event without the stamp (an
    older log) falls back to :data:`EDIT_GRACE_S`."""
    updated = _when(a.get("updated_at"))
    if created is None or updated is None:
        return None
    since = (updated - created).total_seconds()
    if any(st.get("action") == "ANNOTATION_UPDATED" for st in ev.states):
        return since
    at_create = _when(ev.states[0].get("updated_at"))
    if at_create is None:
        return since if since > EDIT_GRACE_S else None
    return since if updated > at_create else None


def _event_problem(ev: webhooks.AnnotationEvents | None, a: dict[str, Any], tid: int,
                   decision: str, author: str, version: str) -> tuple[str, str] | None:
    """What the webhook events say against an otherwise valid decision: (kind, detail) or None."""
    if ev is None or not ev.created:
        return ("missing_event", f"no ANNOTATION_CREATED event was received for {author}'s "
                f"{decision}: it was made while events were not captured (receiver down, or the "
                "project's webhook removed); it does not count")
    elsewhere = [st for st in ev.states if st.get("task") != tid]
    if elsewhere:
        return ("moved_decision", f"decision made on task {elsewhere[0].get('task')} (event received "
                f"{elsewhere[0]['at']}), now on task {tid} ({version}): a decision belongs to the "
                "version it was made on")
    other = [st for st in ev.states if st.get("decision") != decision]
    if other:
        return ("changed_decision", f"{author}'s {other[0].get('decision')} (event received "
                f"{other[0]['at']}) was changed to {decision} before it was pulled: it does not "
                "count and the version is held (an objection is final for its version)")
    if ev.states[-1].get("result_sha256") != webhooks.result_sha256(a.get("result")):
        return ("missing_event", f"{author}'s decision differs from its last received event "
                f"({ev.states[-1]['at']}): edited while events were not captured")
    return None
