"""Push a round's candidates into every reviewer's project (:func:`push`), with their media and
the push records pull checks against (:mod:`annotation.projects`).

- **A failed push leaves nothing behind**: everything that can fail locally is checked before
  the first request, and the projects and tasks a failing push created are deleted again.
- Before it imports a task, ``push`` registers the webhook receiver on each project and attaches
  the log (``annotation.webhooks``), so every annotation event is in the log the moment it
  happens.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotation import decision_log, webhooks
from annotation.label_config import (
    build_label_config,
)
from annotation.projects import (
    Candidate,
    api_message,
    bad_media,
    create_project,
    ensure_storage,
    find_projects,
    first_records,
    iter_tasks,
    media_url,
    page_hashes,
    project_pages,
    sha256_text,
    store_dir,
    store_media,
    task_data,
)
from annotation.rubrics import Rubric

__all__ = ["PushError", "PushResult", "push"]

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
    index = {k: i for i, k in enumerate(keys)}  # a round's thousands of tasks: no list scans
    if len(index) != len(keys):
        dupes = sorted({k for k, n in Counter(keys).items() if n > 1})
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
        media = [store_media(m, src_dir, root, benchmark, review_round, hashes) for m in c.media]
        prepared.append((c, media, task_data(benchmark, review_round, rubric, c,
                                             [media_url(m["path"]) for m in media])))
    earlier = decision_log.read_pushes(log_dir, benchmark, review_round)
    recorded, pages = first_records(earlier), project_pages(earlier)
    generated = {"label_config_sha256": sha256_text(build_label_config(rubric)),
                 "instructions_sha256": sha256_text(rubric.instructions)}
    projects = find_projects(client, benchmark, review_round)
    existing: dict[str, dict[tuple[str, int], int]] = {}
    for rv, project in projects.items():
        if page_hashes(project) != pages.get(int(project.id), generated):
            raise ValueError(f"the label config or instructions of {project.title!r} are not the "
                             f"ones its push recorded in {log_dir} (edited after push, or made by "
                             "another tool); decisions there are void — push to a new round")
        existing[rv] = {}
        for t in iter_tasks(client, project.id):
            d = t.get("data", {})
            if "sample_id" not in d or "version" not in d:
                continue
            key, tid = (str(d["sample_id"]), int(d["version"])), int(t["id"])
            existing[rv][key] = tid
            rec = recorded.get(tid)
            if rec is None and key in index:
                raise ValueError(f"task {tid} ({key[0]!r} v{key[1]}) in {project.title!r} is not in "
                                 f"the push records of {log_dir}: pass the log dir of its first push")
            if rec is not None and key in index:
                c = candidates[index[key]]
                if rec["content_hash"] != c.content_hash:
                    raise ValueError(
                        f"{c.sample_id!r} version {c.version} is already in {project.title!r} with "
                        f"other content (sha256 {rec['content_hash'][:12]} != "
                        f"{c.content_hash[:12]}); a correction is version {c.version + 1}")
                lost = bad_media(rec, hashes)  # the given media restored the store unless they differ
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
            new_project = project is None
            if project is None:
                project = create_project(client, benchmark, review_round, rv, rubric)
                created_projects.append(project.id)
                projects[rv] = project
            store = store_dir(root, benchmark, review_round)
            store.mkdir(parents=True, exist_ok=True)
            ensure_storage(client, project.id, store, new_project)
            if receiver is not None:
                webhooks.ensure_webhook(client, int(project.id), receiver, new_project)
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
        raise PushError(f"push of {benchmark} / {review_round} failed: {api_message(exc)}; "
                        f"{undone}") from None

    page = {rv: pages.get(int(projects[rv].id)) or page_hashes(projects[rv]) for rv in reviewers}
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


def _undo(client: Any, tasks: list[tuple[int, int]], project_ids: list[int]) -> list[str]:
    """Remove what a failed push created — whole projects it made, its tasks in projects that
    existed before; returns what could not be removed (named in the PushError)."""
    left = []
    for pid in project_ids:
        try:
            client.projects.delete(id=pid)
        except Exception as exc:  # noqa: BLE001 - any failure is reported, none is fatal here
            left.append(f"project {pid} ({api_message(exc)})")
    for pid, tid in tasks:
        if pid not in project_ids:
            try:
                client.tasks.delete(id=str(tid))
            except Exception as exc:  # noqa: BLE001 - as above
                left.append(f"task {tid} ({api_message(exc)})")
    return left
