"""Push a round's candidates into every reviewer's project (:func:`push`), with their media and
the push records pull checks against (:mod:`annotation.projects`).

- **A failed push leaves nothing behind**: everything that can fail locally is checked before
  the first request, and the projects and tasks a failing push created are deleted again.
- Before it imports a task, ``push`` registers the webhook receiver on each project and attaches
  the log (``annotation.webhooks``), so every annotation event is in the log the moment it
  happens.
- **Memory does not grow with the round** beyond per-version keys, hashes and task ids: the
  candidates are read once per pass (a file a line at a time, ``annotation.candidates``), task
  data are made a batch at a time for the import and again, one at a time, for the push records
  streamed into the log; the earlier pushes are read down to what is checked of each task
  (docs/scaling.md, "Push holds no list of the round").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotation import decision_log, webhooks
from annotation.candidates import Seen
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
    n_candidates: int = 0  # candidate versions pushed (counted as they were read)

    def task_id(self, reviewer: str, key: tuple[str, int]) -> int:
        return self.tasks[reviewer][key]


class PushError(RuntimeError):
    """A push that could not be completed; whatever it had created in Label Studio was removed."""


def push(client: Any, benchmark: str, review_round: str, candidates: Iterable[Candidate],
         rubric: Rubric, *, reviewers: Sequence[str], media_root: str | Path,
         log_dir: str | Path, media_dir: str | Path | None = None,
         batch_size: int = 500) -> PushResult:
    """Import each candidate version as one task in every reviewer's project of the round and
    record what was pushed in the decision log (``log_dir``).

    ``candidates`` is iterated several times — to check and store everything before the first
    request, to import the tasks a batch at a time, to write the push records one at a time —
    and never held whole: give a list, or a :class:`~annotation.candidates.CandidatesFile`,
    which re-reads its file on each pass, so a round of any size holds per candidate version
    only its key, hashes and task ids. A one-shot iterator (a generator) is refused
    (TypeError); candidates that differ between passes (a file edited during the push) fail the
    push like a refusal of Label Studio, undone (:class:`~annotation.candidates.CandidatesChanged`).

    ``media_root`` is the running server's document root (the media store lives there);
    candidate media paths are relative to ``media_dir`` (default: ``media_root``). Raises
    ValueError for bad input before anything is created, and :class:`PushError` when Label
    Studio refuses something — after deleting what this call had created."""
    if iter(candidates) is candidates:
        raise TypeError("push reads the candidates several times: give a list or an "
                        "annotation.candidates.CandidatesFile, not a one-shot iterator "
                        f"({type(candidates).__name__})")
    if not reviewers:
        raise ValueError("no reviewers to push to")
    root = Path(media_root).expanduser().resolve()
    src_dir = Path(media_dir).expanduser().resolve() if media_dir else root
    hashes: dict[Path, str] = {}
    placed: dict[str, dict[str, str]] = {}  # medium as given -> in the store: per file, not per pass

    def stored(c: Candidate) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """The candidate's media in the store (each file copied, hashed once a push) and its
        task data."""
        for m in c.media:
            if m not in placed:
                placed[m] = store_media(m, src_dir, root, benchmark, review_round, hashes)
        media = [placed[m] for m in c.media]
        return media, task_data(benchmark, review_round, rubric, c,
                                [media_url(m["path"]) for m in media])

    # 1. everything that can fail without a request: versions, media, task data, the log's records
    seen = Seen()
    for c in candidates:
        if not isinstance(c.version, int) or c.version < 1:
            raise ValueError(f"candidate {c.sample_id!r}: version must be an int >= 1")
        if seen.add(c):
            stored(c)  # what it stores stays; the task data is made again for the import
    if seen.dupes:
        raise ValueError(f"duplicate candidate versions in one push: {sorted(seen.dupes)[:5]}")
    recorded, pages = _earlier(log_dir, benchmark, review_round)
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
            if key not in seen.versions:
                continue
            existing[rv][key] = tid
            rec, sha = recorded.get(tid), seen.versions[key][0]
            if rec is None:
                raise ValueError(f"task {tid} ({key[0]!r} v{key[1]}) in {project.title!r} is not in "
                                 f"the push records of {log_dir}: pass the log dir of its first push")
            if rec.content_hash != sha:
                raise ValueError(
                    f"{key[0]!r} version {key[1]} is already in {project.title!r} with "
                    f"other content (sha256 {rec.content_hash[:12]} != "
                    f"{sha[:12]}); a correction is version {key[1] + 1}")
            lost = rec.lost_media(hashes)  # the given media restored the store unless they differ
            if lost:
                raise ValueError(f"{key[0]!r} version {key[1]}: its tasks show media "
                                 f"{lost}, which are gone from the media store, and the given "
                                 "media differ from them; push a new version")

    # 2. projects, storage, tasks, the push records — undone if anything fails
    created_projects: list[int] = []
    created_tasks: list[tuple[int, int]] = []  # (project id, task id)
    tasks: dict[str, dict[tuple[str, int], int]] = {rv: {} for rv in reviewers}
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
        for batch in _batches(seen.again(candidates), batch_size):
            made: dict[tuple[str, int], dict[str, Any]] = {}  # task data, made once a batch
            for rv in reviewers:
                pid, have, mine = int(projects[rv].id), existing.get(rv, {}), tasks[rv]
                new = []
                for key, c in batch:
                    if key in have:
                        mine[key] = have[key]
                        continue
                    if key not in made:
                        made[key] = stored(c)[1]
                    new.append((key, made[key]))
                if not new:
                    continue
                res = client.projects.import_tasks(pid, request=[{"data": d} for _, d in new],
                                                   return_task_ids=True)
                made_ids = _task_ids(res)
                created_tasks += [(pid, t) for t in made_ids]
                if len(made_ids) != len(new):
                    raise RuntimeError(f"import returned {len(made_ids)} task ids for {len(new)} tasks")
                mine.update(zip((key for key, _ in new), made_ids, strict=True))
        page = {rv: pages.get(int(projects[rv].id)) or page_hashes(projects[rv]) for rv in reviewers}
        project_ids = {rv: int(projects[rv].id) for rv in reviewers}
        header = {"benchmark": benchmark, "review_round": review_round, "rubric": rubric.name,
                  "media_root": str(root), "projects": project_ids, "pages": page}
        log_file = decision_log.append_push(
            log_dir, _records(header, seen.again(candidates), stored, tasks, recorded),
            benchmark=benchmark, review_round=review_round)
    except Exception as exc:  # noqa: BLE001 - whatever Label Studio, the network or the log raised
        left = _undo(client, created_tasks, created_projects)
        undone = (f"undone ({len(created_projects)} new projects and {len(created_tasks)} new "
                  "tasks removed)" if not left else f"NOT fully undone, still there: {'; '.join(left)}")
        raise PushError(f"push of {benchmark} / {review_round} failed: {api_message(exc)}; "
                        f"{undone}") from None
    return PushResult(tasks, project_ids, log_file, session, len(seen.versions))


def _batches(candidates: Iterable[Candidate], size: int
             ) -> Iterator[list[tuple[tuple[str, int], Candidate]]]:
    """The candidates ``size`` at a time (the import's request size), each with its key (one
    key object for every project's task ids)."""
    batch: list[tuple[tuple[str, int], Candidate]] = []
    for c in candidates:
        batch.append((c.key, c))
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _task_ids(res: Any) -> list[int]:
    """The task ids an import answered with (``return_task_ids``), in the order of its tasks."""
    return [int(t) for t in getattr(res, "task_ids", None) or (res.model_extra or {}).get("task_ids", [])]


def _records(header: dict[str, Any], candidates: Iterable[Candidate],
             stored: Callable[[Candidate], tuple[list[dict[str, str]], dict[str, Any]]],
             tasks: dict[str, dict[tuple[str, int], int]],
             recorded: dict[int, _Recorded]) -> Iterator[dict[str, Any]]:
    """The push record of each candidate version, one at a time, with its media and the exact
    task data (made again: the same candidate gives the same data); none for a version whose
    every task an earlier push recorded. Keys are written sorted: the order here is not the
    file's."""
    for c in candidates:
        mine = {rv: t[c.key] for rv, t in tasks.items()}
        if all(t in recorded for t in mine.values()):
            continue  # every task of this version was recorded by an earlier push
        media, data = stored(c)
        yield {**header, "sample_id": c.sample_id, "version": c.version, "task_type": c.task_type,
               "content_hash": c.content_hash, "media": media, "data": data,
               "tasks": {rv: t for rv, t in mine.items() if t not in recorded}}


@dataclass(frozen=True, slots=True)
class _Recorded:
    """What push checks of the record that created a task: its content hash and media."""

    content_hash: str
    media_root: str
    media: tuple[tuple[str, str], ...]  # (store path, sha256)

    def lost_media(self, cache: dict[Path, str]) -> list[str]:
        return bad_media({"media_root": self.media_root,
                          "media": [{"path": p, "sha256": s} for p, s in self.media]}, cache)


def _earlier(log_dir: str | Path, benchmark: str, review_round: str
             ) -> tuple[dict[int, _Recorded], dict[int, dict[str, str]]]:
    """task id -> what push checks of the record that created it, and project id -> its page as
    the push that created it recorded it (:func:`project_pages`), from the round's push records
    streamed one at a time: their task data are never held."""
    recorded: dict[int, _Recorded] = {}
    pages: dict[int, dict[str, str]] = {}
    for rec in decision_log.iter_pushes(log_dir, benchmark, review_round):
        slim = _Recorded(rec["content_hash"], rec["media_root"],
                         tuple((m["path"], m["sha256"]) for m in rec["media"]))
        for tid in rec["tasks"].values():
            recorded.setdefault(int(tid), slim)
        for pid, page in project_pages([rec]).items():
            pages.setdefault(pid, page)
    return recorded, pages


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
