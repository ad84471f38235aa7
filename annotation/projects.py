"""The review round's projects in Label Studio, the tasks and media pushed into them, and the
push records they are checked against — what push (:mod:`annotation.push`) and pull
(:mod:`annotation.pull`) share.

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
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import ijson

from annotation import decision_log
from annotation.label_config import (
    build_label_config,
    display_data,
)
from annotation.rubrics import Rubric
from core.files import canonical_json, content_hash, file_sha256

__all__ = ["Candidate", "content_hash", "export_tasks", "find_projects", "iter_tasks", "scrub_emails"]

MARKER = "benchforge-review:"  # project description prefix; identifies our projects


_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


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


def create_project(client: Any, benchmark: str, review_round: str, reviewer: str,
                    rubric: Rubric) -> Any:
    """One reviewer's project: every task decided once, by that reviewer; no skip button."""
    return client.projects.create(
        title=project_title(benchmark, review_round, reviewer),
        description=_marker(benchmark, review_round, rubric, reviewer),
        label_config=build_label_config(rubric), maximum_annotations=1,
        overlap_cohort_percentage=100, show_skip_button=False, show_instruction=True,
        expert_instruction=rubric.instructions,
    )


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def store_dir(media_root: Path, benchmark: str, review_round: str) -> Path:
    """The round's folder of the server's media store (a subdirectory, as Label Studio needs)."""
    return media_root / decision_log.slug(benchmark) / decision_log.slug(review_round)


def _sha256(path: Path, cache: dict[Path, str]) -> str:
    """sha256 of a file, once per push or pull (many candidates share one long video)."""
    if path not in cache:
        cache[path] = file_sha256(path)
    return cache[path]


def store_media(path: str, media_dir: Path, media_root: Path, benchmark: str,
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


def ensure_storage(client: Any, project_id: int, folder: Path, new_project: bool = False) -> None:
    """One local-files storage on the round's store folder; without it media URLs are 404.
    Never synced: syncing would import every file as a task. ``new_project``: the caller just
    made the project, so it has no storage to look for."""
    have = set() if new_project else {
        str(Path(s.path)) for s in client.import_storage.local.list(project=project_id)}
    if str(folder) not in have:
        client.import_storage.local.create(project=project_id, path=str(folder),
                                           use_blob_urls=True, title=f"media {folder.name}")


def iter_tasks(client: Any, project_id: int) -> Iterator[dict[str, Any]]:
    """Every task with its annotations, one at a time as the export streams in (community
    edition: synchronous JSON export). Why one at a time: a round's project holds thousands of
    tasks; the whole export and its parse in memory at once were most of a pull's memory."""
    chunks = client.projects.exports.download_sync(
        project_id, export_type="JSON", download_all_tasks=True, download_resources=False)
    parsed = ijson.sendable_list()
    parser = ijson.items_coro(parsed, "item", use_float=True)
    opened = False
    try:
        for chunk in chunks:
            if not opened and chunk.strip():
                if not chunk.lstrip().startswith(b"["):
                    raise ValueError(f"the export of project {project_id} is not a JSON list of "
                                     f"tasks: it starts {chunk.lstrip()[:60]!r}")
                opened = True
            parser.send(chunk)
            yield from parsed
            del parsed[:]
        if not opened:
            raise ValueError(f"the export of project {project_id} is empty")
        parser.close()
    except ijson.JSONError as exc:
        why = " ".join(str(exc).split())  # yajl's message points at the byte over several lines
        raise ValueError(f"the export of project {project_id} is not valid JSON ({why})") from None
    yield from parsed


def export_tasks(client: Any, project_id: int) -> list[dict[str, Any]]:
    """All tasks with annotations, as one list (:func:`iter_tasks`)."""
    return list(iter_tasks(client, project_id))


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


def api_message(exc: BaseException) -> str:
    """A short, secret-free description of a failed request (the SDK keeps the body in .body)."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    text = json.dumps(body, sort_keys=True) if isinstance(body, (dict, list)) else str(body or exc)
    return (f"HTTP {status}: " if status else f"{type(exc).__name__}: ") + text[:400]


def page_hashes(project: Any) -> dict[str, str]:
    """What a project shows around every task: the hashes of its label config and instructions."""
    return {"label_config_sha256": sha256_text(project.label_config or ""),
            "instructions_sha256": sha256_text(project.expert_instruction or "")}


def project_pages(pushes: list[dict[str, Any]]) -> dict[int, dict[str, str]]:
    """project id -> its page as the push that created it recorded it."""
    out: dict[int, dict[str, str]] = {}
    for rec in pushes:
        for rv, pid in rec["projects"].items():
            out.setdefault(int(pid), rec["pages"][rv])
    return out


def first_records(pushes: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """task id -> the push record that created it (records are read oldest first)."""
    out: dict[int, dict[str, Any]] = {}
    for rec in pushes:
        for tid in rec["tasks"].values():
            out.setdefault(int(tid), rec)
    return out


def scrub_emails(text: str) -> str:
    """Released data carries no e-mail addresses — not even one typed into a comment."""
    return _EMAIL_RE.sub("[email]", text)


def bad_media(rec: dict[str, Any], cache: dict[Path, str]) -> list[str]:
    """The review media of a push record whose bytes are missing or differ from push time."""
    bad = []
    for m in rec["media"]:
        f = Path(rec["media_root"]) / m["path"]
        if not f.is_file() or _sha256(f, cache) != m["sha256"]:
            bad.append(m["path"])
    return bad
