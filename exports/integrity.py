"""What the expectations cannot see: a release's bytes against its manifest, and its media decoded.

Why: great-expectations checks the *values* of a release, never its bytes. A release whose frame
JPEG bytes had been replaced with garbage passed every expectation (the frames are not in the
checked dataframe), and nothing compared the files with the sha256 the manifest promises. So
the gate (``benchforge check`` and every build before it publishes) also runs these checks:

* :func:`verify_files` — every file the manifest lists exists with its size and sha256 (and, for
  Parquet, its row count); every other file in the release is reported (a release is complete
  and immutable once published: nothing may be added to it afterwards); ``croissant.json``,
  which the manifest cannot list (it hashes the manifest), must equal the Croissant metadata
  derived from the release again (:func:`verify_croissant`);
* :func:`decode_media` — every image embedded in a Parquet file (any column whose Hugging Face
  feature is ``Image``, at any depth of lists and structs) and every image or video file of the
  release is decoded in full, as ``datasets`` or a player would (bytes that recur in a release
  are decoded once and counted at each occurrence). The one exception is the build's
  own gate: an embedded image whose sha256 is among the bytes the build already decoded in full
  where it made them (``core.blobs.decoded_digests``) is checked without decoding it a second
  time — its format is still checked against its name — and counted as *proven*. Decoding is a function
  of the bytes, so identical bytes decode again; ``benchforge check`` has no such record and
  decodes everything.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from core.errors import BadInput
from core.files import file_sha256
from core.media.images import EXTENSION_FORMATS, verify_image
from exports.croissant import croissant, croissant_text, first_difference
from exports.release_files import read_batches, read_release

MANIFEST = "manifest.json"  # the one file that cannot list itself
# Croissant metadata records the manifest's sha256, so the manifest cannot list it: it is written
# after the manifest and derived from the release again by the gate instead (verify_croissant)
CROISSANT = "croissant.json"
VIDEO_EXTENSIONS = (".mp4", ".webm", ".mkv", ".avi", ".mov")


@dataclass(frozen=True)
class Problem:
    """A file that is not what the manifest says, or media that do not decode."""

    check: str  # "listed", "missing", "bytes", "sha256", "rows", "croissant", "decode"
    path: str  # relative to the release
    detail: str


def release_files(release: Path) -> list[str]:
    """Every file of a release (relative, sorted), ``manifest.json`` and ``croissant.json``
    excepted."""
    return sorted(p.relative_to(release).as_posix() for p in release.rglob("*")
                  if p.is_file() and p.relative_to(release).as_posix() not in (MANIFEST, CROISSANT))


def verify_croissant(release: Path) -> list[Problem]:
    """``croissant.json`` (when present) must be the Croissant metadata this release gives: the
    document is a function of the manifest, the card and the Parquet schemas
    (:mod:`exports.croissant`), so it is derived again and compared byte for byte, and a
    difference is named by its first JSON path. Why all of it: checking only the sha256 it
    records for the manifest let an edited record set, ``contentUrl`` or file hash pass the gate."""
    path = release / CROISSANT
    if not path.is_file():
        # a manifest that records the build's gate verdict belongs to a finished release, and
        # the build writes croissant.json right after it: a missing one was deleted
        try:
            finished = "quality" in json.loads((release / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError, TypeError):  # the manifest's own problems are reported apart
            finished = False
        return [Problem("missing", CROISSANT, "the build writes it into every release, and it "
                                              "is not there")] if finished else []
    try:
        derived = croissant(read_release(release), release.resolve())
    except Exception as exc:  # noqa: BLE001 - a release it cannot be derived from is a finding
        return [Problem("croissant", CROISSANT, f"cannot derive the metadata it must hold from the "
                                                f"release: {type(exc).__name__}: {exc}")]
    expected = croissant_text(derived)
    data = path.read_bytes()
    if data == expected.encode("utf-8"):
        return []
    try:
        found = json.loads(data.decode("utf-8"))
    except ValueError as exc:  # not UTF-8, or not JSON
        return [Problem("croissant", CROISSANT, f"not valid JSON: {exc}")]
    diff = first_difference(found, json.loads(expected))
    return [Problem("croissant", CROISSANT,
                    f"differs from the metadata the manifest, card and Parquet schemas give at {diff}"
                    if diff else "the metadata the release gives, but not in the bytes the build "
                                 "writes (formatting or key order changed)")]


def verify_files(release: Path, listed: list[dict[str, Any]]) -> list[Problem]:
    """Compare the release with the manifest's ``files`` (path, bytes, sha256, rows for Parquet)."""
    import pyarrow.parquet as pq

    problems = []
    if not listed:
        problems.append(Problem("listed", MANIFEST, "the manifest lists no files"))
    by_path = {f["path"]: f for f in listed}
    for rel in release_files(release):
        if rel not in by_path:
            problems.append(Problem("listed", rel, "not in the manifest (added after the build?)"))
    problems += verify_croissant(release)
    for rel, f in sorted(by_path.items()):
        path = release / rel
        if not path.is_file():
            problems.append(Problem("missing", rel, "listed in the manifest, not in the release"))
            continue
        if path.stat().st_size != f.get("bytes"):
            problems.append(Problem("bytes", rel, f"{path.stat().st_size} bytes, the manifest says "
                                                  f"{f.get('bytes')}"))
        digest = file_sha256(path)
        if digest != f.get("sha256"):
            problems.append(Problem("sha256", rel, f"sha256 {digest[:12]}…, the manifest says "
                                                   f"{str(f.get('sha256'))[:12]}…"))
        if "rows" in f:
            try:
                rows = pq.ParquetFile(path).metadata.num_rows
            except Exception as exc:  # noqa: BLE001 - any unreadable file is a finding, not a crash
                problems.append(Problem("rows", rel, f"unreadable Parquet: {type(exc).__name__}: {exc}"))
                continue
            if rows != f["rows"]:
                problems.append(Problem("rows", rel, f"{rows} rows, the manifest says {f['rows']}"))
    return problems


def _image_paths(feature: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Where ``Image`` features sit in a HF feature tree: field names, and ``0`` for "each list
    item"."""
    if isinstance(feature, dict) and feature.get("_type") == "Image":
        yield prefix
    elif isinstance(feature, dict) and feature.get("_type") in ("List", "Sequence", "LargeList"):
        yield from _image_paths(feature.get("feature"), (*prefix, 0))
    elif isinstance(feature, list) and feature:  # the short form of a list feature
        yield from _image_paths(feature[0], (*prefix, 0))
    elif isinstance(feature, dict) and "_type" not in feature:  # a struct
        for name, sub in feature.items():
            yield from _image_paths(sub, (*prefix, name))


def _values(value: Any, path: tuple[str | int, ...], where: str) -> Iterator[tuple[str, Any]]:
    if not path:
        yield where, value
    elif value is None:
        return
    elif path[0] == 0:
        for i, item in enumerate(value):
            yield from _values(item, path[1:], f"{where}[{i}]")
    else:
        yield from _values(value.get(path[0]), path[1:], f"{where}.{path[0]}")


def _parquet_images(path: Path) -> Iterator[tuple[str, Any]]:
    """(``row <id or index>: column[i]``, image struct) for every embedded image of a file."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    meta = (pf.schema_arrow.metadata or {}).get(b"huggingface")
    features = json.loads(meta)["info"]["features"] if meta else {}
    images = {col: list(_image_paths(feat)) for col, feat in features.items()}
    columns = [c for c, paths in images.items() if paths]
    if not columns:
        return
    key = "id" if "id" in pf.schema_arrow.names else None
    row = 0
    for batch in read_batches(path, columns + ([key] if key else [])):
        for rec in batch.to_pylist():
            name = f"row {rec[key]!r}" if key else f"row {row}"
            for col in columns:
                for sub in images[col]:
                    yield from _values(rec[col], sub, f"{name}: {col}")
            row += 1


@dataclass
class MediaCheck:
    """What :func:`decode_media` found: ``decoded`` media decode (``proven`` of them are embedded
    images identical to bytes the build decoded in full where it made them, not decoded again)."""

    decoded: int = 0
    proven: int = 0
    problems: list[Problem] = field(default_factory=list)


PROVEN = "proven"  # _decode_embedded's answer for bytes checked by header against a proof


# (sha256 digest, the stored name's extension) → the first check's answer: None (decoded),
# PROVEN, or (the reason,). Shared by the files of one gate run (module doc of decode_media).
Outcomes = dict[tuple[bytes, str], "str | tuple[str] | None"]


def _decode_embedded(item: tuple[str, Any], proven: Collection[str] = (),
                     outcomes: Outcomes | None = None) -> str | None:
    """None when the embedded image decodes (with its stored ``path``), :data:`PROVEN` when its
    bytes are among ``proven`` and its header and format check out, else the reason.

    Bytes already checked under a name with the same extension (``outcomes``) get the same answer
    without a second decode: the answer is a function of the bytes and of the extension they are
    checked against, and nothing else."""
    where, image = item
    image = image or {}
    data = image.get("bytes") or b""
    name = image.get("path") or where
    digest = hashlib.sha256(data)
    key = (digest.digest(), posixpath.splitext(name)[1].lower())
    outcome = outcomes.get(key, False) if outcomes is not None else False
    if outcome is False:
        known = bool(proven) and digest.hexdigest() in proven
        try:
            verify_image(data, name, field=where, full=not known)
            outcome = PROVEN if known else None
        except BadInput as err:
            outcome = (err.reason,)
        if outcomes is not None:
            outcomes[key] = outcome
    return f"{where}: {outcome[0]}" if isinstance(outcome, tuple) else outcome


def _check_file(release: Path, rel: str, proven: Collection[str],
                outcomes: Outcomes | None = None) -> MediaCheck:
    """The media check of one listed file (a Parquet file's embedded images, or an image or
    video file); a file that cannot be read is a finding, not a crash."""
    from core.media.probe import probe_video

    found = MediaCheck()
    path = release / rel
    ext = posixpath.splitext(rel)[1].lower()
    try:
        if ext == ".parquet":
            for item in _parquet_images(path):
                reason = _decode_embedded(item, proven, outcomes)
                if reason not in (None, PROVEN):
                    found.problems.append(Problem("decode", rel, reason))
                    continue
                found.decoded += 1
                found.proven += reason == PROVEN
        elif ext in EXTENSION_FORMATS:
            verify_image(path.read_bytes(), rel)
            found.decoded += 1
        elif ext in VIDEO_EXTENSIONS:
            probe_video(path, source_file=rel)
            found.decoded += 1
    except BadInput as err:
        found.problems.append(Problem("decode", rel, err.reason))
    except Exception as exc:  # noqa: BLE001 - an unreadable file is a finding, not a crash
        found.problems.append(Problem("decode", rel, f"unreadable: {type(exc).__name__}: {exc}"))
    return found


def decode_media(release: Path, listed: list[dict[str, Any]], threads: int = 1,
                 proven: Collection[str] = frozenset()) -> MediaCheck:
    """Decode every embedded image and every image / video file the manifest lists. An embedded
    image is decoded with its stored ``path``, so bytes of another format than its name says
    fail too; one whose sha256 is in ``proven`` (bytes the build decoded in full where it made them)
    has its header and format checked and is not decoded again. Bytes that recur — a video's
    stream frames are embedded in every sample of that video, and in every subtype's file — are
    decoded once per run and counted at every occurrence (:func:`_decode_embedded`).

    ``threads`` > 1 checks that many files at once, the largest first (reading Parquet, hashing
    and decoding release the GIL; the gate runs after the pipeline, so a build with two workers
    would otherwise check on one core). One task per file, not per image: with one future per
    image, two threads were slower than one, all of it the pool's own bookkeeping
    (docs/scaling.md). Findings keep the files' order, so the report does not depend on
    ``threads``."""
    rels = [f["path"] for f in listed if (release / f["path"]).is_file()]  # missing: verify_files
    check = partial(_check_file, release, proven=proven, outcomes={})
    if threads > 1 and len(rels) > 1:
        size = {f["path"]: int(f.get("bytes") or 0) for f in listed}
        with ThreadPoolExecutor(threads) as pool:
            futures = {rel: pool.submit(check, rel) for rel in sorted(rels, key=lambda r: -size[r])}
            results = [futures[rel].result() for rel in rels]
    else:
        results = [check(rel) for rel in rels]
    found = MediaCheck()
    for one in results:
        found.decoded += one.decoded
        found.proven += one.proven
        found.problems += one.problems
    return found
