"""Route candidates to Label Studio (``push``) and bring decisions back, checked (``pull``).

Why these rules (StreamVibe App. B.3, design.md §Annotation rules, docs/label_studio.md):

- **One project per reviewer** for each benchmark and review round, holding the same tasks.
  Label Studio Community shows every annotation of a project to every member ("Compare All",
  the task list's counts) and has no per-user permissions, so independent first-round decisions
  (the agreement audit's population) cannot be protected inside one shared project. ``pull``
  merges the four projects and checks that each decision sits in its author's project.
- One task per candidate *version*; a corrected candidate is a new task for version n+1 —
  PATCHing task data would leave the old version's annotations attached and unflagged. A
  version's content is immutable: re-pushing it with other content is an error. Re-pushing the
  same content is idempotent.
- **What reviewers see is anchored outside Label Studio.** ``push`` writes a record per
  candidate version into the decision log (``decision_log.append_push``): the exact task data it
  created (every displayed field is derived from the content, whose sha256 the decisions carry),
  the sha256 of each review medium, the task and project ids, and the hash of each project's
  label config and instructions as push created them (an existing project's are never changed:
  a round keeps the page its reviewers started with). ``pull`` compares every task and project
  with its record, so an edited instruction, window text or video URL, a replaced media file or
  an edited label config is a violation, not a silently counted approval — and stays one: once a
  pull found a task or its project changed, no decision on that task counts, even after the
  change is undone (what its reviewer saw is unknown). A new version is the remedy.
- **Media live in the server's media store**: ``push`` copies (or hard-links) each medium into
  ``<server media root>/<benchmark>/<round>/<sha256[:16]>/<name>`` — content-addressed, so
  benchmarks and rounds coexist on one server, re-pushing restores a missing file, and a rebuild
  or a release that replaces the folder the media came from never breaks a task.
- **A failed push leaves nothing behind**: everything that can fail locally is checked before
  the first request, and the projects and tasks a failing push created are deleted again.
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

import hashlib
import json
import os
import re
import shutil
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from annotation import decision_log, webhooks
from annotation.label_config import (
    InvalidDecision,
    build_label_config,
    display_data,
    parse_result,
)
from annotation.rubrics import Rubric
from core.files import canonical_json, content_hash, file_sha256

__all__ = ["Candidate", "PullResult", "PushError", "PushResult", "content_hash", "pull", "push"]

MARKER = "benchforge-review:"  # project description prefix; identifies our projects
_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
VIOLATION_KINDS = (
    "foreign_task", "task_deleted", "task_modified", "media_modified", "project_modified",
    "cancelled", "author_not_in_panel", "wrong_project", "written_by_other", "invalid_value",
    "incomplete_approval", "moved_decision", "changed_decision", "edited_decision",
    "duplicate_decision", "deleted_decision", "missing_event", "event_gap",
)
# Label Studio stamps created_at and updated_at a few microseconds apart when an annotation is
# created (measured, docs/label_studio.md); an updated_at later than this is an edit. It was 2 s,
# and a reject edited to approve within those 2 s counted as an approval: an edit over HTTP takes
# a whole request after the create (measured ≈ 0.1 s; the two stamps of a create ≈ 30 µs).
EDIT_GRACE_S = 0.01
# Violations that void a task for good: what its reviewer was shown is no longer known.
TAINTING = ("task_modified", "media_modified", "project_modified")


@dataclass(frozen=True)
class Candidate:
    """One candidate version as reviewers see it (the complete review unit, App. B.3).

    ``media`` are local files, relative to ``push``'s ``media_dir`` or absolute; the rubric's
    displays say which index is the video / which images."""

    sample_id: str
    version: int
    task_type: str
    content: dict[str, Any]
    media: list[str] = field(default_factory=list)

    @property
    def content_hash(self) -> str:
        return content_hash(self.content)

    @property
    def key(self) -> tuple[str, int]:
        return (self.sample_id, self.version)


@dataclass
class PushResult:
    """Task ids per reviewer project, the projects, and the push record in the log."""

    tasks: dict[str, dict[tuple[str, int], int]]  # reviewer -> (sample id, version) -> task id
    projects: dict[str, int]  # reviewer -> project id
    log_file: Path
    events: str | None = None  # the webhook receiver's session that captures the round's events

    def task_id(self, reviewer: str, key: tuple[str, int]) -> int:
        return self.tasks[reviewer][key]


class PushError(RuntimeError):
    """A push that could not be completed; whatever it had created in Label Studio was removed."""


@dataclass
class PullResult:
    """Valid decisions (``schemas.review.REVIEW_DECISION`` dicts), violation records, and the
    pushed candidate versions still waiting for a reviewer's decision."""

    decisions: list[dict[str, Any]]
    violations: list[dict[str, Any]]
    awaiting: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    n_tasks: int = 0
    n_annotations: int = 0
    log_file: Path | None = None


# --------------------------------------------------------------------------------------------
# Projects, storages, media
# --------------------------------------------------------------------------------------------


def project_title(benchmark: str, review_round: str, reviewer: str) -> str:
    return f"{benchmark} / {review_round} / {reviewer}"


def _marker(benchmark: str, review_round: str, rubric: Rubric, reviewer: str) -> str:
    return MARKER + canonical_json({"benchmark": benchmark, "review_round": review_round,
                                    "reviewer": reviewer, "rubric": rubric.name})


def _marked(project: Any) -> dict[str, Any] | None:
    desc = project.description or ""
    if not desc.startswith(MARKER):
        return None
    try:
        return dict(json.loads(desc[len(MARKER):]))
    except (ValueError, TypeError):
        return None


def find_projects(client: Any, benchmark: str, review_round: str) -> dict[str, Any]:
    """reviewer -> our project of (benchmark, round), matched on the exact title *and* marker."""
    out: dict[str, Any] = {}
    for p in client.projects.list(page_size=1000):
        m = _marked(p)
        if (m and m.get("benchmark") == benchmark and m.get("review_round") == review_round
                and p.title == project_title(benchmark, review_round, str(m.get("reviewer")))):
            rv = str(m["reviewer"])
            if rv in out:
                raise RuntimeError(f"two Label Studio projects titled {p.title!r}; keep one")
            out[rv] = p
    return out


def _create_project(client: Any, benchmark: str, review_round: str, reviewer: str,
                    rubric: Rubric) -> Any:
    """One reviewer's project: every task decided once, by that reviewer; no skip button."""
    return client.projects.create(
        title=project_title(benchmark, review_round, reviewer),
        description=_marker(benchmark, review_round, rubric, reviewer),
        label_config=build_label_config(rubric), maximum_annotations=1,
        overlap_cohort_percentage=100, show_skip_button=False, show_instruction=True,
        expert_instruction=rubric.instructions,
    )


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def store_dir(media_root: Path, benchmark: str, review_round: str) -> Path:
    """The round's folder of the server's media store (a subdirectory, as Label Studio needs)."""
    return media_root / decision_log.slug(benchmark) / decision_log.slug(review_round)


def _sha256(path: Path, cache: dict[Path, str]) -> str:
    """sha256 of a file, once per push or pull (many candidates share one long video)."""
    if path not in cache:
        cache[path] = file_sha256(path)
    return cache[path]


def _store_media(path: str, media_dir: Path, media_root: Path, benchmark: str,
                 review_round: str, cache: dict[Path, str]) -> dict[str, str]:
    """Copy (hard-link when possible) one medium into the media store; its store path and sha256."""
    if path.startswith(("http://", "https://")):
        raise ValueError(f"media {path!r}: review media must be local files (their bytes are "
                         "hashed at push and checked at pull)")
    p = Path(path)
    src = (p if p.is_absolute() else media_dir / p).resolve()
    if not src.is_file():
        raise ValueError(f"media file {src} does not exist")
    sha = _sha256(src, cache)
    rel = f"{decision_log.slug(benchmark)}/{decision_log.slug(review_round)}/{sha[:16]}/{src.name}"
    dst = media_root / rel
    if not (dst.is_file() and _sha256(dst, cache) == sha):
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(f".{dst.name}.tmp-{os.getpid()}")
        tmp.unlink(missing_ok=True)
        try:
            os.link(src, tmp)
        except OSError:  # another file system: copy
            shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
        cache[dst] = sha
    return {"path": rel, "sha256": sha}


def media_url(rel: str) -> str:
    return "/data/local-files/?d=" + quote(rel, safe="/")


def _ensure_storage(client: Any, project_id: int, folder: Path) -> None:
    """One local-files storage on the round's store folder; without it media URLs are 404.
    Never synced: syncing would import every file as a task."""
    have = {str(Path(s.path)) for s in client.import_storage.local.list(project=project_id)}
    if str(folder) not in have:
        client.import_storage.local.create(project=project_id, path=str(folder),
                                           use_blob_urls=True, title=f"media {folder.name}")


def export_tasks(client: Any, project_id: int) -> list[dict[str, Any]]:
    """All tasks with annotations (community edition: synchronous JSON export)."""
    chunks = client.projects.exports.download_sync(
        project_id, export_type="JSON", download_all_tasks=True, download_resources=False)
    return list(json.loads(b"".join(chunks)))


def task_data(benchmark: str, review_round: str, rubric: Rubric, c: Candidate,
              urls: list[str]) -> dict[str, Any]:
    """The task data push creates for a candidate: ids, the identity line, the complete candidate
    as indented JSON, and every display field derived from the content (``display_data``)."""
    h = c.content_hash
    return {
        "benchmark": benchmark, "review_round": review_round, "rubric": rubric.name,
        "sample_id": c.sample_id, "version": c.version, "content_hash": h,
        "task_type": c.task_type,
        "identity": (f"sample {c.sample_id} | version {c.version} | type {c.task_type} | "
                     f"sha256 {h[:12]}"),
        "candidate": json.dumps(c.content, indent=2, sort_keys=True, ensure_ascii=False),
        **display_data(c.content, urls, rubric),
    }


def _api_message(exc: BaseException) -> str:
    """A short, secret-free description of a failed request (the SDK keeps the body in .body)."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    text = json.dumps(body, sort_keys=True) if isinstance(body, (dict, list)) else str(body or exc)
    return (f"HTTP {status}: " if status else f"{type(exc).__name__}: ") + text[:400]


# --------------------------------------------------------------------------------------------
# push
# --------------------------------------------------------------------------------------------


def push(client: Any, benchmark: str, review_round: str, candidates: list[Candidate],
         rubric: Rubric, *, reviewers: Sequence[str], media_root: str | Path,
         log_dir: str | Path, media_dir: str | Path | None = None,
         batch_size: int = 500) -> PushResult:
    """Import each candidate version as one task in every reviewer's project of the round and
    record what was pushed in the decision log (``log_dir``).

    ``media_root`` is the running server's document root (the media store lives there);
    candidate media paths are relative to ``media_dir`` (default: ``media_root``). Raises
    ValueError for bad input before anything is created, and :class:`PushError` when Label
    Studio refuses something — after deleting what this call had created."""
    keys = [c.key for c in candidates]
    if len(set(keys)) != len(keys):
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"duplicate candidate versions in one push: {dupes[:5]}")
    for c in candidates:
        if not isinstance(c.version, int) or c.version < 1:
            raise ValueError(f"candidate {c.sample_id!r}: version must be an int >= 1")
    if not reviewers:
        raise ValueError("no reviewers to push to")
    root = Path(media_root).expanduser().resolve()
    src_dir = Path(media_dir).expanduser().resolve() if media_dir else root

    # 1. everything that can fail without a request: media, task data, the log's records
    prepared = []
    hashes: dict[Path, str] = {}
    for c in candidates:
        media = [_store_media(m, src_dir, root, benchmark, review_round, hashes) for m in c.media]
        prepared.append((c, media, task_data(benchmark, review_round, rubric, c,
                                             [media_url(m["path"]) for m in media])))
    earlier = decision_log.read_pushes(log_dir, benchmark, review_round)
    recorded, pages = _first_records(earlier), _project_pages(earlier)
    generated = {"label_config_sha256": _sha(build_label_config(rubric)),
                 "instructions_sha256": _sha(rubric.instructions)}
    projects = find_projects(client, benchmark, review_round)
    existing: dict[str, dict[tuple[str, int], int]] = {}
    for rv, project in projects.items():
        if _page(project) != pages.get(int(project.id), generated):
            raise ValueError(f"the label config or instructions of {project.title!r} are not the "
                             f"ones its push recorded in {log_dir} (edited after push, or made by "
                             "another tool); decisions there are void — push to a new round")
        existing[rv] = {}
        for t in export_tasks(client, project.id):
            d = t.get("data", {})
            if "sample_id" not in d or "version" not in d:
                continue
            key, tid = (str(d["sample_id"]), int(d["version"])), int(t["id"])
            existing[rv][key] = tid
            rec = recorded.get(tid)
            if rec is None and key in keys:
                raise ValueError(f"task {tid} ({key[0]!r} v{key[1]}) in {project.title!r} is not in "
                                 f"the push records of {log_dir}: pass the log dir of its first push")
            if rec is not None and key in keys:
                c = candidates[keys.index(key)]
                if rec["content_hash"] != c.content_hash:
                    raise ValueError(
                        f"{c.sample_id!r} version {c.version} is already in {project.title!r} with "
                        f"other content (sha256 {rec['content_hash'][:12]} != "
                        f"{c.content_hash[:12]}); a correction is version {c.version + 1}")
                lost = _bad_media(rec, hashes)  # the given media restored the store unless they differ
                if lost:
                    raise ValueError(f"{c.sample_id!r} version {c.version}: its tasks show media "
                                     f"{lost}, which are gone from the media store, and the given "
                                     "media differ from them; push a new version")

    # 2. projects, storage, tasks — undone if Label Studio refuses any of it
    created_projects: list[int] = []
    created_tasks: list[tuple[int, int]] = []  # (project id, task id)
    tasks: dict[str, dict[tuple[str, int], int]] = {}
    receiver = webhooks.running_info(root)  # None: not our server, or its receiver is down
    session: str | None = None
    try:
        for rv in reviewers:
            project = projects.get(rv)
            if project is None:
                project = _create_project(client, benchmark, review_round, rv, rubric)
                created_projects.append(project.id)
                projects[rv] = project
            store = store_dir(root, benchmark, review_round)
            store.mkdir(parents=True, exist_ok=True)
            _ensure_storage(client, project.id, store)
            if receiver is not None:
                webhooks.ensure_webhook(client, int(project.id), receiver)
        if receiver is not None:  # before the first task: every event of the round is captured
            session = webhooks.attach(receiver, log_dir, [int(projects[rv].id) for rv in reviewers],
                                      benchmark, review_round)
        for rv in reviewers:
            project = projects[rv]
            have = existing.get(rv, {})
            tasks[rv] = {c.key: have[c.key] for c, _, _ in prepared if c.key in have}
            new = [(c, data) for c, _, data in prepared if c.key not in have]
            for i in range(0, len(new), batch_size):
                batch = new[i:i + batch_size]
                res = client.projects.import_tasks(project.id, request=[{"data": d} for _, d in batch],
                                                   return_task_ids=True)
                ids = list(getattr(res, "task_ids", None) or (res.model_extra or {}).get("task_ids", []))
                created_tasks += [(int(project.id), int(t)) for t in ids]
                if len(ids) != len(batch):
                    raise RuntimeError(f"import returned {len(ids)} task ids for {len(batch)} tasks")
                for (c, _), tid in zip(batch, ids, strict=True):
                    tasks[rv][c.key] = int(tid)
    except Exception as exc:  # noqa: BLE001 - whatever Label Studio or the network raised
        left = _undo(client, created_tasks, created_projects)
        undone = (f"undone ({len(created_projects)} new projects and {len(created_tasks)} new "
                  "tasks removed)" if not left else f"NOT fully undone, still there: {'; '.join(left)}")
        raise PushError(f"push of {benchmark} / {review_round} failed: {_api_message(exc)}; "
                        f"{undone}") from None

    page = {rv: pages.get(int(projects[rv].id)) or _page(projects[rv]) for rv in reviewers}
    records = []
    for c, media, data in prepared:
        mine = {rv: tasks[rv][c.key] for rv in reviewers}
        first = [recorded[t] for t in mine.values() if t in recorded]
        if first and len(first) == len(mine):
            continue  # every task of this version was recorded by an earlier push
        records.append({
            "benchmark": benchmark, "review_round": review_round, "rubric": rubric.name,
            "sample_id": c.sample_id, "version": c.version, "task_type": c.task_type,
            "content_hash": c.content_hash, "media_root": str(root), "media": media,
            "data": data,
            "tasks": {rv: t for rv, t in mine.items() if t not in recorded},
            "projects": {rv: int(projects[rv].id) for rv in reviewers},
            "pages": page,
        })
    log_file = decision_log.append_push(log_dir, records, benchmark=benchmark,
                                        review_round=review_round)
    return PushResult(tasks, {rv: int(projects[rv].id) for rv in reviewers}, log_file, session)


def _page(project: Any) -> dict[str, str]:
    """What a project shows around every task: the hashes of its label config and instructions."""
    return {"label_config_sha256": _sha(project.label_config or ""),
            "instructions_sha256": _sha(project.expert_instruction or "")}


def _project_pages(pushes: list[dict[str, Any]]) -> dict[int, dict[str, str]]:
    """project id -> its page as the push that created it recorded it."""
    out: dict[int, dict[str, str]] = {}
    for rec in pushes:
        for rv, pid in rec["projects"].items():
            out.setdefault(int(pid), rec["pages"][rv])
    return out


def _first_records(pushes: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """task id -> the push record that created it (records are read oldest first)."""
    out: dict[int, dict[str, Any]] = {}
    for rec in pushes:
        for tid in rec["tasks"].values():
            out.setdefault(int(tid), rec)
    return out


def _undo(client: Any, tasks: list[tuple[int, int]], project_ids: list[int]) -> list[str]:
    """Remove what a failed push created — whole projects it made, its tasks in projects that
    existed before; returns what could not be removed (named in the PushError)."""
    left = []
    for pid in project_ids:
        try:
            client.projects.delete(id=pid)
        except Exception as exc:  # noqa: BLE001 - any failure is reported, none is fatal here
            left.append(f"project {pid} ({_api_message(exc)})")
    for pid, tid in tasks:
        if pid not in project_ids:
            try:
                client.tasks.delete(id=str(tid))
            except Exception as exc:  # noqa: BLE001 - as above
                left.append(f"task {tid} ({_api_message(exc)})")
    return left


# --------------------------------------------------------------------------------------------
# pull
# --------------------------------------------------------------------------------------------


def _uid(v: Any) -> int | None:
    if isinstance(v, dict):
        v = v.get("id")
    return int(v) if v is not None else None


def _when(s: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(s).replace("Z", "+00:00"))
    except ValueError:
        return None


def scrub_emails(text: str) -> str:
    """Released data carries no e-mail addresses — not even one typed into a comment."""
    return _EMAIL_RE.sub("[email]", text)


def _bad_media(rec: dict[str, Any], cache: dict[Path, str]) -> list[str]:
    """The review media of a push record whose bytes are missing or differ from push time."""
    bad = []
    for m in rec["media"]:
        f = Path(rec["media_root"]) / m["path"]
        if not f.is_file() or _sha256(f, cache) != m["sha256"]:
            bad.append(m["path"])
    return bad


def pull(client: Any, benchmark: str, review_round: str, rubric: Rubric, panel: Any, *,
         log_dir: str | Path) -> PullResult:
    """Export every reviewer project of the round, check each task against its push record and
    each annotation against the rules, and append the result to the decision log.

    ``panel`` is an :class:`annotation.server.Panel` (its reviewers' user ids and pseudonyms)."""
    ids: dict[int, str] = panel.reviewer_ids()
    owner_of = {rv: uid for uid, rv in ids.items()}
    admin_id = panel.admin.user_id
    projects = find_projects(client, benchmark, review_round)
    if not projects:
        raise ValueError(f"no Label Studio project for {benchmark!r} round {review_round!r}")
    pushes = decision_log.read_pushes(log_dir, benchmark, review_round)
    if not pushes:
        raise ValueError(f"no push records of {benchmark!r} round {review_round!r} in {log_dir}: "
                         "pull with the --log-dir the round was pushed with")
    hashes: dict[Path, str] = {}
    by_task = {tid: (next(rv for rv, t in rec["tasks"].items() if int(t) == tid), rec)
               for tid, rec in _first_records(pushes).items()}  # the record that created it
    # every pulled decision state (the chain is verified here, and again at append)
    logged = decision_log.read(log_dir, current=False, imported=False)
    history = [d for d in logged
               if d["benchmark"] == benchmark and d["review_round"] == review_round
               and d["rater_kind"] == "human"]
    approved_before = {int(d["source_annotation_id"]) for d in history if d["decision"] == "approve"}
    # annotation id -> (task, decision) of its first pulled state, over the whole log: annotation
    # ids are unique on a server, so a decision moved across rounds is found too
    first_pulled: dict[int, tuple[int, str]] = {}
    for d in logged:
        if d["rater_kind"] == "human":
            first_pulled.setdefault(int(d["source_annotation_id"]),
                                    (int(d["source_task_id"]), str(d["decision"])))
    pages = _project_pages(pushes)
    tainted = {int(v["task_id"]): v["kind"] for v in decision_log.read_violations(log_dir, current=False)
               if v["benchmark"] == benchmark and v["review_round"] == review_round
               and v["kind"] in TAINTING}
    # what the webhook receiver captured of the round's projects, and the holes in it
    round_projects = {int(pid) for rec in pushes for pid in rec["projects"].values()}
    records = decision_log.chain(log_dir)
    events = webhooks.annotation_events(records)
    gaps = webhooks.capture_gaps(records, round_projects)
    receiver = webhooks.running_info(pushes[-1]["media_root"])
    gaps += [webhooks.Gap(None, None, why) for why in
             webhooks.webhook_problems(client, sorted(round_projects), receiver)]

    def who(uid: int | None) -> str:
        if uid is None:
            return "unknown"
        if uid in ids:
            return ids[uid]
        return "admin" if uid == admin_id else f"user:{uid}"

    violations: list[dict[str, Any]] = []

    def violation(kind: str, sid: str, ver: int, tid: int, a: dict[str, Any] | None,
                  reviewer: str, detail: str) -> None:
        violations.append({
            "kind": kind, "benchmark": benchmark, "review_round": review_round,
            "sample_id": sid, "version": ver, "task_id": tid,
            "annotation_id": int(a["id"]) if a else -1, "reviewer": reviewer,
            "detail": scrub_emails(detail),
        })

    valid: list[dict[str, Any]] = []
    present_tasks: set[int] = set()
    present_annotations: set[int] = set()
    n_tasks = n_ann = 0
    for rv, project in sorted(projects.items()):
        tasks = export_tasks(client, project.id)
        n_tasks += len(tasks)
        owner = owner_of.get(rv)
        want = pages.get(int(project.id), {})
        edited_project = [what for what, key in (("label config", "label_config_sha256"),
                                                 ("instructions", "instructions_sha256"))
                          if _page(project)[key] != want.get(key)]
        for t in tasks:
            tid = int(t["id"])
            d = t.get("data", {})
            anns = t.get("annotations") or []
            n_ann += len(anns)
            present_tasks.add(tid)
            present_annotations.update(int(a["id"]) for a in anns)
            found = by_task.get(tid)
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
            bad_media = _bad_media(rec, hashes)
            if bad_media:
                task_violation("media_modified", f"review media changed or missing after push: "
                               f"{', '.join(bad_media)}")
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
                was = first_pulled.get(aid)
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
                problem = _event_problem(events.get(aid), a, tid, parsed.decision, who(author),
                                         f"{sid} v{ver}")
                if problem:
                    violation(problem[0], sid, ver, tid, a, who(author), problem[1])
                    continue
                updated = _when(a.get("updated_at"))
                if (parsed.decision == "approve" and int(a["id"]) not in approved_before
                        and created and updated and (updated - created).total_seconds() > EDIT_GRACE_S):
                    violation("edited_decision", sid, ver, tid, a, who(author),
                              f"approval edited {(updated - created).total_seconds():.3f} s after it "
                              "was submitted and never pulled as an approval before: an objection "
                              "may have been withdrawn (objections are final for their version)")
                    continue
                valid.append({
                    "benchmark": benchmark, "review_round": review_round, "sample_id": sid,
                    "version": ver, "content_hash": str(rec["content_hash"]),
                    "task_type": str(rec["task_type"]), "reviewer": ids[author],
                    "rater_kind": "human", "decision": parsed.decision,
                    "criteria": list(parsed.criteria), "comment": scrub_emails(parsed.comment),
                    "lead_time": float(a.get("lead_time") or 0.0),
                    "created_at": str(a.get("created_at", "")), "source_task_id": tid,
                    "source_annotation_id": int(a["id"]),
                })

    for tid, (rv, rec) in sorted(by_task.items()):
        if tid not in present_tasks:
            violation("task_deleted", str(rec["sample_id"]), int(rec["version"]), tid, None, rv,
                      f"task {tid} of {rv}'s project was deleted after push")
    for d in history:
        if int(d["source_annotation_id"]) not in present_annotations:
            violation("deleted_decision", d["sample_id"], int(d["version"]),
                      int(d["source_task_id"]), {"id": d["source_annotation_id"]}, d["reviewer"],
                      f"{d['reviewer']}'s {d['decision']} (created {d['created_at']}) was deleted "
                      f"after it was pulled; it still counts and {d['sample_id']} v{d['version']} is "
                      "held: it is never released (reported at every pull), only a correction "
                      f"v{int(d['version']) + 1} reviewed by all four can be")

    pulled = {int(d["source_annotation_id"]) for d in history}
    for aid, ev in sorted(events.items()):  # decisions only the events saw, gone before a pull
        if aid in present_annotations or aid in pulled or not ev.states:
            continue
        first, last = ev.states[0], ev.states[-1]
        t0 = int(first["task"]) if first.get("task") is not None else -1
        if t0 not in by_task or t0 not in present_tasks:
            continue  # another round's, or its task was deleted (task_deleted)
        rec = by_task[t0][1]
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
        for rec in pushes:
            key = (str(rec["sample_id"]), int(rec["version"]))
            at = _when(rec.get("pushed_at"))
            if key in done or (end is not None and at is not None and at > end):
                continue
            done.add(key)
            violation("event_gap", key[0], key[1], -1, None, "",
                      f"{gap.describe()}: a decision made, edited or deleted then may be unseen; "
                      f"{key[0]} v{key[1]} is held, only a correction v{key[1] + 1} pushed with "
                      "the receiver running can be released")
    decisions = _single_decisions(valid, violations, benchmark, review_round)
    violations = _unique(violations)
    decided = {(d["sample_id"], d["version"], d["reviewer"]) for d in decisions}
    awaiting: dict[tuple[str, int], list[str]] = {}
    for rec in pushes:
        key = (str(rec["sample_id"]), int(rec["version"]))
        missing = sorted(rv for rv in rec["projects"] if (*key, rv) not in decided)
        if missing:
            awaiting[key] = sorted(set(awaiting.get(key, [])) | set(missing))
        else:
            awaiting.pop(key, None)
    result = PullResult(decisions, violations, dict(sorted(awaiting.items())), n_tasks, n_ann)
    result.log_file = decision_log.append(log_dir, decisions, benchmark=benchmark,
                                          review_round=review_round, violations=violations)
    return result


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


def _single_decisions(valid: list[dict[str, Any]], violations: list[dict[str, Any]],
                      benchmark: str, review_round: str) -> list[dict[str, Any]]:
    """One decision per (sample, version, reviewer); duplicates are violations, none counted."""
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
    for rec in valid:
        groups[(rec["sample_id"], rec["version"], rec["reviewer"])].append(rec)
    decisions: list[dict[str, Any]] = []
    for (sid, ver, rev), recs in groups.items():
        if len(recs) == 1:
            decisions.append(recs[0])
            continue
        ann_ids = sorted(r["source_annotation_id"] for r in recs)
        for r in recs:
            violations.append({
                "kind": "duplicate_decision", "benchmark": benchmark,
                "review_round": review_round, "sample_id": sid, "version": ver,
                "task_id": r["source_task_id"], "annotation_id": r["source_annotation_id"],
                "reviewer": rev,
                "detail": f"{len(recs)} decisions by {rev} on this version "
                          f"(annotations {ann_ids}); none counted until extras are deleted",
            })
    return sorted(decisions, key=lambda r: (r["sample_id"], r["version"], r["reviewer"]))


def _unique(violations: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for v in violations:
        seen.setdefault(canonical_json(v), v)
    return sorted(seen.values(), key=lambda v: (v["kind"], v["sample_id"], v["version"],
                                                v["task_id"], v["annotation_id"], v["reviewer"]))
