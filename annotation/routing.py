"""Route candidates to Label Studio (``push``) and bring decisions back, checked (``pull``).

Why these rules (StreamVibe App. B.3, design.md §Annotation rules, docs/label_studio.md):
- One project per benchmark and review round; one task per candidate *version*. A corrected
  candidate is a new task for version n+1 — PATCHing task data would leave the old version's
  annotations attached and unflagged, i.e. approvals of an earlier version would silently count
  for the new one. A version's content is immutable: re-pushing it with other content is an error.
- Re-pushing is idempotent (tasks are matched on ``sample_id``/``version``/``content_hash`` kept
  in task data, because Label Studio assigns its own task ids).
- Label Studio enforces nothing about who wrote what (any member's token can do anything), so
  ``pull`` checks every annotation and reports violations instead of counting them:

  ==========================  ================================================================
  ``author_not_in_panel``     ``completed_by`` is not a panel reviewer (admin, outsider)
  ``written_by_other``        ``updated_by`` differs from the author (edited by someone else, or
                              created by the admin in a reviewer's name)
  ``invalid_value``           a control/value the rubric's label config does not have
  ``incomplete_approval``     "approve" with a criterion unticked (App. B.3: approve only when
                              all criteria hold)
  ``duplicate_decision``      more than one decision by one reviewer on one version (none count)
  ``cancelled``               a skipped task (no decision)
  ``task_modified``           task data no longer matches its content hash (PATCHed after push)
  ``foreign_task``            a task not created by ``push``
  ==========================  ================================================================

  Checks run in that order; an annotation is reported once, under its first failing check.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from annotation.label_config import (
    InvalidDecision,
    build_label_config,
    display_data,
    parse_result,
)
from annotation.rubrics import Rubric
from core.files import canonical_json, content_hash

MARKER = "benchforge-review:"  # project description prefix; identifies our projects
_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
VIOLATION_KINDS = (
    "author_not_in_panel", "written_by_other", "invalid_value", "incomplete_approval",
    "duplicate_decision", "cancelled", "task_modified", "foreign_task",
)


@dataclass(frozen=True)
class Candidate:
    """One candidate version as reviewers see it (the complete review unit, App. B.3).

    ``media`` are paths relative to the media root (or absolute paths inside it, or http(s)
    URLs); the rubric's displays say which index is the video / which images."""

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
class PullResult:
    """Valid decisions (``schemas.review.REVIEW_DECISION`` dicts) and violation records."""

    decisions: list[dict[str, Any]]
    violations: list[dict[str, Any]]
    n_tasks: int = 0
    n_annotations: int = 0
    log_file: Path | None = None


# --------------------------------------------------------------------------------------------
# Projects and storages
# --------------------------------------------------------------------------------------------


def project_title(benchmark: str, review_round: str) -> str:
    return f"{benchmark} / {review_round}"


def _marker(benchmark: str, review_round: str, rubric: Rubric) -> str:
    return MARKER + canonical_json(
        {"benchmark": benchmark, "review_round": review_round, "rubric": rubric.name})


def find_project(client: Any, benchmark: str, review_round: str) -> Any | None:
    """Our project for (benchmark, round), matched on the exact title *and* our marker."""
    title = project_title(benchmark, review_round)
    found = [p for p in client.projects.list(title=title, page_size=100)
             if p.title == title and (p.description or "").startswith(MARKER)]
    if len(found) > 1:
        raise RuntimeError(f"{len(found)} Label Studio projects titled {title!r}; keep one")
    return found[0] if found else None


def ensure_project(client: Any, benchmark: str, review_round: str, rubric: Rubric,
                   panel_size: int = 4) -> Any:
    """Create the round's project once (every task overlapped by all ``panel_size`` reviewers,
    no skip button) or return it; a different rubric for an existing round is an error."""
    config = build_label_config(rubric)
    marker = _marker(benchmark, review_round, rubric)
    project = find_project(client, benchmark, review_round)
    if project is None:
        return client.projects.create(
            title=project_title(benchmark, review_round), description=marker,
            label_config=config, maximum_annotations=panel_size, overlap_cohort_percentage=100,
            show_overlap_first=True, show_skip_button=False, show_instruction=True,
            expert_instruction=rubric.instructions,
        )
    if project.description != marker:
        raise ValueError(f"project {project.title!r} was created for another rubric/round "
                         f"({project.description}); use a new review round")
    if project.label_config != config:
        client.projects.update(id=project.id, label_config=config)
    return project


def _media_url(path: str, media_root: Path | None) -> tuple[str, Path | None]:
    """``/data/local-files/?d=<relative path>`` and the storage directory that must cover it."""
    if path.startswith(("http://", "https://")):
        return path, None
    if media_root is None:
        raise ValueError(f"media {path!r} is a local file but no media_root was given")
    p = Path(path)
    full = (p if p.is_absolute() else media_root / p).resolve()
    try:
        rel = full.relative_to(media_root)
    except ValueError:
        raise ValueError(f"media {path!r} is outside the media root {media_root}") from None
    if len(rel.parts) < 2:
        raise ValueError(f"media {path!r} must sit in a subdirectory of the media root "
                         "(Label Studio refuses a storage on the root itself)")
    if not full.is_file():
        raise ValueError(f"media file {full} does not exist")
    return "/data/local-files/?d=" + quote(rel.as_posix(), safe="/"), media_root / rel.parts[0]


def _ensure_storages(client: Any, project_id: int, dirs: set[Path]) -> None:
    """One local-files storage per top-level media directory; without it media URLs are 404.
    Never synced: syncing would import every file as a task."""
    if not dirs:
        return
    have = {str(Path(s.path)) for s in client.import_storage.local.list(project=project_id)}
    for d in sorted(dirs):
        if str(d) not in have:
            client.import_storage.local.create(project=project_id, path=str(d),
                                               use_blob_urls=True, title=f"media {d.name}")


def export_tasks(client: Any, project_id: int) -> list[dict[str, Any]]:
    """All tasks with annotations (community edition: synchronous JSON export)."""
    chunks = client.projects.exports.download_sync(
        project_id, export_type="JSON", download_all_tasks=True, download_resources=False)
    return list(json.loads(b"".join(chunks)))


# --------------------------------------------------------------------------------------------
# push
# --------------------------------------------------------------------------------------------


def push(client: Any, benchmark: str, review_round: str, candidates: list[Candidate],
         rubric: Rubric, media_root: str | Path | None, *, panel_size: int = 4,
         batch_size: int = 500) -> dict[tuple[str, int], int]:
    """Import each candidate version as one task of the round's project; return
    ``{(sample_id, version): task_id}`` for all given candidates (existing ones included)."""
    keys = [c.key for c in candidates]
    if len(set(keys)) != len(keys):
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"duplicate candidate versions in one push: {dupes[:5]}")
    for c in candidates:
        if not isinstance(c.version, int) or c.version < 1:
            raise ValueError(f"candidate {c.sample_id!r}: version must be an int >= 1")
    root = Path(media_root).expanduser().resolve() if media_root else None
    project = ensure_project(client, benchmark, review_round, rubric, panel_size)

    existing: dict[tuple[str, int], tuple[int, str]] = {}
    for t in export_tasks(client, project.id):
        d = t.get("data", {})
        if "sample_id" in d and "version" in d:
            existing[(str(d["sample_id"]), int(d["version"]))] = (int(t["id"]),
                                                                  str(d.get("content_hash")))
    out: dict[tuple[str, int], int] = {}
    new: list[tuple[Candidate, dict[str, Any]]] = []
    dirs: set[Path] = set()
    for c in candidates:
        h = c.content_hash
        if c.key in existing:
            tid, old = existing[c.key]
            if old != h:
                raise ValueError(
                    f"{c.sample_id!r} version {c.version} is already in {project.title!r} with "
                    f"other content (sha256 {old[:12]} != {h[:12]}); a correction is version "
                    f"{c.version + 1}")
            out[c.key] = tid
            continue
        urls = []
        for m in c.media:
            url, d = _media_url(m, root)
            urls.append(url)
            if d is not None:
                dirs.add(d)
        data = {
            "benchmark": benchmark, "review_round": review_round, "rubric": rubric.name,
            "sample_id": c.sample_id, "version": c.version, "content_hash": h,
            "task_type": c.task_type,
            "identity": (f"sample {c.sample_id} | version {c.version} | type {c.task_type} | "
                         f"sha256 {h[:12]}"),
            "candidate": json.dumps(c.content, indent=2, sort_keys=True, ensure_ascii=False),
            **display_data(c.content, urls, rubric),
        }
        new.append((c, data))
    _ensure_storages(client, project.id, dirs)
    for i in range(0, len(new), batch_size):
        batch = new[i:i + batch_size]
        res = client.projects.import_tasks(project.id, request=[{"data": d} for _, d in batch],
                                           return_task_ids=True)
        ids = list(getattr(res, "task_ids", None) or (res.model_extra or {}).get("task_ids", []))
        if len(ids) != len(batch):
            raise RuntimeError(f"import returned {len(ids)} task ids for {len(batch)} tasks")
        for (c, _), tid in zip(batch, ids, strict=True):
            out[c.key] = int(tid)
    return out


# --------------------------------------------------------------------------------------------
# pull
# --------------------------------------------------------------------------------------------


def _uid(v: Any) -> int | None:
    if isinstance(v, dict):
        v = v.get("id")
    return int(v) if v is not None else None


def scrub_emails(text: str) -> str:
    """Released data carries no e-mail addresses — not even one typed into a comment."""
    return _EMAIL_RE.sub("[email]", text)


def pull(client: Any, benchmark: str, review_round: str, rubric: Rubric,
         reviewers: dict[int, str] | Any, *, admin_id: int | None = None,
         log_dir: str | Path | None = None) -> PullResult:
    """Export the round's project and return checked decisions and violations.

    ``reviewers`` maps Label Studio user id -> pseudonym (``r1``..), or is a
    :class:`annotation.server.Panel`. With ``log_dir`` the result is appended to the decision
    log (one Parquet file per pull, ``annotation.decision_log``)."""
    if hasattr(reviewers, "reviewer_ids"):
        admin_id = reviewers.admin.user_id if admin_id is None else admin_id
        reviewers = reviewers.reviewer_ids()
    ids: dict[int, str] = dict(reviewers)
    project = find_project(client, benchmark, review_round)
    if project is None:
        raise ValueError(f"no Label Studio project for {benchmark!r} round {review_round!r}")

    def who(uid: int | None) -> str:
        if uid is None:
            return "unknown"
        if uid in ids:
            return ids[uid]
        return "admin" if uid == admin_id else f"user:{uid}"

    violations: list[dict[str, Any]] = []
    valid: list[tuple[dict[str, Any], int]] = []
    tasks = export_tasks(client, project.id)
    n_ann = 0
    for t in tasks:
        d = t.get("data", {})
        anns = t.get("annotations") or []
        n_ann += len(anns)
        sid = str(d.get("sample_id", ""))
        ver = int(d.get("version", -1)) if str(d.get("version", "")).lstrip("-").isdigit() else -1

        def violation(kind: str, a: dict[str, Any] | None, reviewer: str, detail: str,
                      _sid: str = sid, _ver: int = ver, _tid: int = int(t["id"])) -> None:
            violations.append({
                "kind": kind, "benchmark": benchmark, "review_round": review_round,
                "sample_id": _sid, "version": _ver, "task_id": _tid,
                "annotation_id": int(a["id"]) if a else -1, "reviewer": reviewer,
                "detail": scrub_emails(detail),
            })

        if not sid or ver < 1 or "content_hash" not in d:
            for a in anns or [None]:
                violation("foreign_task", a, who(_uid(a.get("completed_by"))) if a else "",
                          "task has no sample_id/version/content_hash (not created by push)")
            continue
        try:
            ok = content_hash(json.loads(d.get("candidate", ""))) == d["content_hash"]
        except (ValueError, TypeError):
            ok = False
        if not ok:
            for a in anns or [None]:
                violation("task_modified", a, who(_uid(a.get("completed_by"))) if a else "",
                          "task data changed after push (content hash mismatch); push a new "
                          "version instead of editing a task")
            continue
        for a in anns:
            author = _uid(a.get("completed_by"))
            editor = _uid(a.get("updated_by"))
            if a.get("was_cancelled"):
                violation("cancelled", a, who(author), "task skipped; no decision")
                continue
            if author not in ids:
                violation("author_not_in_panel", a, who(author),
                          f"decision by {who(author)}, who is not a panel reviewer")
                continue
            if editor is not None and editor != author:
                violation("written_by_other", a, who(author),
                          f"decision of {who(author)} last written by {who(editor)}")
                continue
            try:
                parsed = parse_result(a.get("result"), rubric)
            except InvalidDecision as exc:
                violation("invalid_value", a, who(author), str(exc))
                continue
            if parsed.decision == "approve" and len(parsed.criteria) != len(rubric.criteria):
                missing = [k for k in rubric.criterion_keys if k not in parsed.criteria]
                violation("incomplete_approval", a, who(author),
                          f"approved with criteria unticked: {missing}")
                continue
            rec = {
                "benchmark": benchmark, "review_round": review_round, "sample_id": sid,
                "version": ver, "content_hash": str(d["content_hash"]),
                "task_type": str(d.get("task_type", "")), "reviewer": ids[author],
                "rater_kind": "human", "decision": parsed.decision,
                "criteria": list(parsed.criteria), "comment": scrub_emails(parsed.comment),
                "lead_time": float(a.get("lead_time") or 0.0),
                "created_at": str(a.get("created_at", "")), "source_task_id": int(t["id"]),
                "source_annotation_id": int(a["id"]),
            }
            valid.append((rec, int(t["id"])))

    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
    for rec, _ in valid:
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
    decisions.sort(key=lambda r: (r["sample_id"], r["version"], r["reviewer"]))
    violations.sort(key=lambda v: (v["kind"], v["sample_id"], v["version"], v["task_id"],
                                   v["annotation_id"]))
    result = PullResult(decisions, violations, n_tasks=len(tasks), n_annotations=n_ann)
    if log_dir is not None:
        from annotation import decision_log

        result.log_file = decision_log.append(log_dir, decisions, benchmark=benchmark,
                                              review_round=review_round, violations=violations)
    return result
