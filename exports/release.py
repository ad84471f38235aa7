"""Turn a pipeline's staged output into a versioned release, published atomically (design.md §Conventions).

Layout: ``<out>/<benchmark>/<semver>/`` with ``README.md`` (dataset card), ``data/``,
``manifest.json``, ``filtered/``, ``filtered_inputs/``, ``rejected/``, ``reports/``. The staging
directory is a sibling of the final one; publishing is a rename, so an interrupted run never
leaves a half-written release and the previous release stays intact until the new one is
complete.

Versions follow TFDS: a published version is never silently replaced by different records
(:func:`release_status` refuses unless the version is bumped or ``--overwrite`` is given; the
same records may be rebuilt in place), and ``<out>/<benchmark>/RELEASE_NOTES.md`` has one entry
per published version (:func:`write_release_notes`), beside the releases so that no release
changes after it is published.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.files import file_sha256
from exports.parquet_shards import shard_name, write_shard
from schemas.core import RecordSchema

SEMVER_HELP = (
    "MAJOR when records change incompatibly (or ordering/hashing changes), MINOR when records or "
    "fields are added, PATCH for metadata only (design.md §Conventions, as TFDS uses it)."
)


class ReleaseError(RuntimeError):
    """The staged output does not make a consistent release; nothing is published."""


def _git(*args: str) -> str:
    """The output of a git command in the checkout the code runs from (OSError /
    CalledProcessError outside one)."""
    root = Path(__file__).resolve().parent.parent
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def code_version() -> str:
    """Package version plus the git commit the code was built from (``.dirty`` if modified)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        base = version("benchforge")
    except PackageNotFoundError:
        base = "0+unknown"
    try:
        commit = _git("rev-parse", "--short=12", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
        return f"{base}+g{commit}{'.dirty' if dirty else ''}"
    except (OSError, subprocess.CalledProcessError):
        return base


def code_date() -> str | None:
    """The commit date (``YYYY-MM-DD``, as the committer recorded it) of the code, beside
    :func:`code_version`: a fact of the commit, so every build of it agrees; None outside a git
    checkout (then a release names no date unless its config does)."""
    try:
        return _git("log", "-1", "--format=%cs") or None
    except (OSError, subprocess.CalledProcessError):
        return None


def iso_date(value: Any) -> str:
    """A config's ``release_date:`` as ``YYYY-MM-DD``. YAML reads an unquoted ``2025-06-01`` as a
    ``date`` (which JSON, and so the manifest and the config hash, cannot hold) and a quoted one
    as text; both are accepted. A time of day or any other form is refused (ValueError): a
    release is published on a day."""
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        with contextlib.suppress(ValueError):  # 2025-02-30: refused below, like any non-date
            return datetime.date.fromisoformat(value).isoformat()
    raise ValueError(f"release_date: {value!r} is not a date (YYYY-MM-DD)")


def release_date(config: dict[str, Any]) -> str | None:
    """The date a new release is published under: the config's ``release_date:`` if it sets one,
    else the commit date of the code (:func:`code_date`). Never the clock, nor
    ``SOURCE_DATE_EPOCH``: a release's bytes are a function of its inputs, the config and the
    code, so two builds of one commit on different days (or hosts) give the same bytes."""
    if config.get("release_date") is not None:
        return iso_date(config["release_date"])
    return code_date()


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()


def outcome_counts(stages: dict[str, int]) -> dict[str, int]:
    """Collapse stage counts to inputs / kept / filtered / rejected for one environment.

    Inputs are the listed candidates (``enumerated``) plus what was left out while listing
    (``listing_rejected``, ``listing_filtered``: those never became item references)."""
    rejected = sum(n for stage, n in stages.items() if stage.endswith("_rejected"))
    filtered = sum(n for stage, n in stages.items() if stage == "filtered" or stage.endswith("_filtered"))
    inputs = sum(stages.get(s, 0) for s in ("enumerated", "listing_rejected", "listing_filtered"))
    return {
        "inputs": inputs,
        "kept": stages.get("kept", 0),
        "filtered": filtered,
        "rejected": rejected,
    }


def write_empty_shards(staging: Path, groups: list[str], schema: RecordSchema, split: str) -> None:
    """A group the pipeline wrote nothing into still gets a zero-row shard, so "nothing filtered"
    or "nothing rejected" is visible in the release rather than ambiguous."""
    for group in groups:
        if not any((staging / group).glob("*.parquet")):
            write_shard(str(staging / group / shard_name(split, 0, 1)), [], schema)


def _unlisted(rel: str) -> bool:
    """A release lists all of itself but ``manifest.json`` (which holds the listing) and the
    build's scratch folder ``_build/``: the card and the reports are part of what is published,
    and the gate checks them like the data."""
    return rel.startswith("_build/") or rel == "manifest.json"


def _listed(root: Path) -> dict[str, Path]:
    """Relative path → path of every file a release lists, in the order a folder walk sorts them
    (by their parts)."""
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if not _unlisted(rel):
            out[rel] = path
    return out


def _parts(rel: str) -> list[str]:
    """How :func:`_listed` orders paths (``data/a/x`` before ``data/a-b/x``), for files added
    later."""
    return rel.split("/")


def _stamp(st: os.stat_result) -> tuple[int, ...]:
    """What tells an unchanged file from a rewritten one without reading it: size, inode and the
    nanosecond modification and change times."""
    return st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns


class ReleaseInventory:
    """The manifest's ``files`` of a release being assembled: sha256 and size of every file
    actually present (not as reported), and the row count of every Parquet file.

    Why one inventory the build extends: the driver lists the staged release once after the
    pipeline (every data file read and hashed once, the cost of a large build), then names each
    file it writes afterwards (:meth:`add`: the card, the diff, the gate's reports), so the
    manifest can be written once, at the end, from this listing; re-listing and re-hashing the
    folder at each step is what a large build cannot afford. The gate's own byte check
    (:func:`exports.integrity.verify_files`) never trusts it: it reads every file again."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._entries: dict[str, dict[str, Any]] = {}
        self._stamps: dict[str, tuple[int, ...]] = {}
        self.refresh()

    @property
    def files(self) -> list[dict[str, Any]]:
        """The listing now, sorted as :func:`_listed` sorts; copies, so a listing handed out (to
        ``finalize``, to the card) stays as it was when the inventory grows, and the inventory
        as it is whatever its holder does with it."""
        return [dict(self._entries[rel]) for rel in sorted(self._entries, key=_parts)]

    def refresh(self) -> None:
        """Walk the folder again after steps that may write anywhere in it (a benchmark's
        ``finalize``: its reports, StreamVibe's ``sft/general_mixture.json``, even a data file):
        a new file, or one whose :func:`_stamp` changed, is read; an unchanged one keeps its
        digest; a removed one leaves the listing."""
        present = _listed(self.root)
        for rel in self._entries.keys() - present.keys():
            del self._entries[rel], self._stamps[rel]
        for rel, path in present.items():
            st = path.stat()
            if self._stamps.get(rel) != _stamp(st):
                self._read(rel, path, st)

    def add(self, *paths: Path | str) -> None:
        """Files just written or rewritten (relative to the release, or paths under it): each is
        read again whatever its times say, since a rewrite within the file system's time
        resolution can leave them equal."""
        for name in paths:
            path = self.root / name
            rel = path.relative_to(self.root).as_posix()
            if _unlisted(rel):
                raise ValueError(f"{rel} is not part of the release's file listing")
            self._read(rel, path, path.stat())

    def _read(self, rel: str, path: Path, st: os.stat_result) -> None:
        import pyarrow.parquet as pq

        entry: dict[str, Any] = {"path": rel, "bytes": st.st_size, "sha256": file_sha256(path)}
        if path.suffix == ".parquet":
            entry["rows"] = pq.ParquetFile(path).metadata.num_rows
        self._entries[rel], self._stamps[rel] = entry, _stamp(st)


def source_digest(files: list[dict[str, str]]) -> dict[str, Any]:
    """One checksum over the sorted (file, sha256) listing of a source, plus the file count."""
    listing = "\n".join(f"{f['file']}\t{f['sha256']}" for f in sorted(files, key=lambda f: f["file"]))
    return {"files": len(files), "sha256": hashlib.sha256(listing.encode()).hexdigest()}


STAGING_PREFIX = ".staging-"


@contextmanager
def staging_dir(parent: Path, name: str) -> Iterator[Path]:
    """A fresh ``<parent>/.staging-<name>-<random>/`` for one build, removed unless published.

    Why a lock file beside it: a build killed with ``kill -9`` cannot clean up after itself.
    Each staging directory has a sibling ``.lock`` that its build holds (``flock``) while it
    runs; the kernel releases the lock when the process dies, so the next build in the same
    folder can tell stale directories (lock free) from a concurrent build's (lock held) and
    removes only the stale ones. On exit the directory is removed if it still exists (a build
    that published has renamed it away).
    """
    parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(parent)
    path = parent / f"{STAGING_PREFIX}{name}-{uuid.uuid4().hex[:8]}"
    lock_path = path.with_name(path.name + ".lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path.mkdir()
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)
            lock_path.unlink(missing_ok=True)


def remove_stale_staging(parent: Path) -> list[Path]:
    """Remove staging directories (and their locks) left behind by builds that died."""
    removed = []
    for lock_path in sorted(parent.glob(f"{STAGING_PREFIX}*.lock")):
        with open(lock_path, "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a running build holds it
            stale = lock_path.with_name(lock_path.name[: -len(".lock")])
            shutil.rmtree(stale, ignore_errors=True)
            lock_path.unlink(missing_ok=True)
            removed.append(stale)
    # directories without a lock file come from an interrupted build of an older version
    for path in sorted(parent.glob(f"{STAGING_PREFIX}*")):
        if path.is_dir() and not path.with_name(path.name + ".lock").exists():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def publish(staging: Path, final: Path) -> None:
    """Atomically replace ``final`` with ``staging`` (rename; the old release is kept until the
    new one is in place, then removed)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    backup = final.with_name(f".{final.name}.previous")
    if backup.exists():  # left by a publish killed between its two renames
        if final.exists():
            shutil.rmtree(backup)
        else:
            os.rename(backup, final)
    if final.exists():
        os.rename(final, backup)
    else:
        backup = None
    os.rename(staging, final)
    if backup is not None:
        shutil.rmtree(backup)


# -- versions ---------------------------------------------------------------------------------


def semver_key(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in version.split("."))
    except ValueError:
        return ()


def record_files(files: list[dict[str, Any]]) -> dict[str, str]:
    """path → sha256 of a release's records (its Parquet files): what "the same content" means.
    The card, the reports and the manifest also carry the code version, so they may differ
    between two builds of the same records."""
    return {f["path"]: f["sha256"] for f in files if f["path"].endswith(".parquet")}


def record_changes(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """Folders whose records differ (``data/coco``, ``rejected``), sorted."""
    def folders(files: dict[str, str]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for path, sha in files.items():
            out.setdefault(path.rsplit("/", 1)[0], set()).add(f"{path}:{sha}")
        return out
    a, b = folders(old), folders(new)
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def read_manifest(release: Path) -> dict[str, Any] | None:
    try:
        return json.loads((release / "manifest.json").read_text())
    except (OSError, ValueError):
        return None


def release_status(final: Path, files: list[dict[str, Any]], *, overwrite: bool, config: Path
                   ) -> tuple[str, Any]:
    """May ``final`` be published over, and how: ``("new", None)`` when the version is not
    published yet; ``("same", <its release entry or None>)`` when it holds the same records (a
    rebuild replaces it, keeping its entry); ``("overwrite", [changed folders])`` with
    ``overwrite``; else ReleaseError.

    Why: a version names one set of records (TFDS); a rebuild with other inputs silently
    replaced the release people had cited."""
    if not final.exists():
        return "new", None
    old = read_manifest(final) or {}
    changed = record_changes(record_files(old.get("files") or []), record_files(files))
    if not changed:
        return "same", old.get("release")
    if not overwrite:
        raise ReleaseError(
            f"{final} is already published with other records ({', '.join(changed[:6])} differ): "
            f"bump `version:` in {config} ({SEMVER_HELP}) or pass --overwrite to replace it")
    return "overwrite", changed


def previous_release(out_root: Path, version: str) -> Path | None:
    """The newest version published in ``out_root`` below ``version`` (what a new version is
    compared with), or None."""
    earlier = [p for p in out_root.iterdir() if p.is_dir() and semver_key(p.name)
               and semver_key(p.name) < semver_key(version) and (p / "manifest.json").exists()] \
        if out_root.is_dir() else []
    return max(earlier, key=lambda p: semver_key(p.name)) if earlier else None


def release_entry(out_root: Path, version: str, manifest: dict[str, Any], notes: str | None,
                  overwrote: list[str] | None) -> dict[str, Any]:
    """This version's release-notes facts (kept in the manifest, rendered into RELEASE_NOTES.md):
    the config's ``release_notes`` text, the previous published version and which record
    folders and kept counts changed since it, and the ``date`` it is published under
    (:func:`release_date` of the manifest's config; the Croissant ``datePublished``). A rebuild
    of the same records keeps its published entry, date included (:func:`release_status`)."""
    entry: dict[str, Any] = {"notes": notes or "", "previous": None, "changes": [], "kept_changes": {},
                             "date": release_date(manifest.get("config") or {})}
    prev_dir = previous_release(out_root, version)
    if prev_dir is not None:
        prev = read_manifest(prev_dir) or {}
        entry["previous"] = prev_dir.name
        entry["changes"] = record_changes(record_files(prev.get("files") or []),
                                          record_files(manifest["files"]))
        before = {g: c.get("kept", 0) for g, c in (prev.get("counts") or {}).items()}
        after = {g: c["kept"] for g, c in manifest["counts"].items()}
        entry["kept_changes"] = {g: [before.get(g, 0), after.get(g, 0)]
                                 for g in sorted(set(before) | set(after))
                                 if before.get(g, 0) != after.get(g, 0)}
    if overwrote:
        entry["overwrote"] = overwrote
    return entry


def write_release_notes(out_root: Path, title: str) -> Path:
    """``<out>/<benchmark>/RELEASE_NOTES.md``, regenerated from every published version's
    manifest (newest first): what each version holds and what changed since the one before."""
    entries = sorted(((p.name, m) for p in out_root.iterdir()
                      if p.is_dir() and semver_key(p.name) and (m := read_manifest(p))),
                     key=lambda e: semver_key(e[0]), reverse=True)
    lines = [f"# {title} — release notes", "",
             "One entry per published version, newest first (written by the build; the facts are "
             "each version's `manifest.json` → `release`). " + SEMVER_HELP, ""]
    for version, m in entries:
        rel = m.get("release") or {}
        kept = ", ".join(f"{g} {c['kept']}" for g, c in sorted((m.get("counts") or {}).items()))
        lines += [f"## {version}", ""]
        if rel.get("notes"):
            lines += [rel["notes"].strip(), ""]
        lines.append(f"- kept: {kept or 'nothing'}; config sha256 `{str(m.get('config_sha256', ''))[:12]}`, "
                     f"code `{m.get('code_version', '?')}`")
        if rel.get("previous"):
            changes = ", ".join(rel.get("changes") or []) or "none"
            lines.append(f"- since {rel['previous']}: records changed in {changes}")
            for g, (a, b) in (rel.get("kept_changes") or {}).items():
                lines.append(f"  - {g}: kept {a} → {b}")
            diff = f"{version}/reports/diff-{rel['previous']}-{version}.md"
            if (out_root / diff).is_file():
                lines.append(f"  - sample by sample: [{diff}]({diff})")
        else:
            lines.append("- first version in this folder")
        if rel.get("overwrote"):
            lines.append(f"- rebuilt over an earlier {version} with other records (--overwrite): "
                         f"{', '.join(rel['overwrote'])}")
        lines.append("")
    path = out_root / "RELEASE_NOTES.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def plot_counts(counts: dict[str, dict[str, int]], path: Path, title: str) -> Path:
    """Stacked bars of kept / filtered / rejected per environment: where the inputs went, at a
    glance (the manifest has the numbers). Written without timestamps, so rebuilds match."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    envs = sorted(counts)
    fig, ax = plt.subplots(figsize=(1.2 * max(len(envs), 3) + 2, 3.6))
    bottom = [0] * len(envs)
    for outcome, color in (("kept", "#2e7d32"), ("filtered", "#f9a825"), ("rejected", "#c62828")):
        values = [counts[e][outcome] for e in envs]
        ax.bar(envs, values, bottom=bottom, color=color, label=outcome)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_ylabel("input items")
    ax.set_title(title)
    ax.legend(frameon=False, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path
