"""Shared reader for datasets we take through a *sequence manifest* (ROD, VSOD, MVP-N, ChangeIt).

Their native releases cannot be verified on these machines, so each is read from
``<root>/manifest.jsonl``: one JSON object per line with ``id``, ``frames`` (paths relative to
the root, in sequence order) or ``video`` (+ optional ``fps``, default 1), ``category`` and the
per-dataset keys documented in ``docs/sources.md``. A line that is not UTF-8 or not valid JSON,
lacks a key or has an out-of-range value becomes a :class:`Rejection` whose ``source_file`` is
``manifest.jsonl:<line>`` and whose ``field`` names the key, as does every line of an id given
twice; a frame file that is missing or undecodable at load time is a :class:`BadInput` naming
``frames[i]``, and a video sampled at an ``fps`` above its own frame rate (frames would repeat)
one naming the video and ``fps``. A manifest or ``labels.json`` that cannot be read makes the
whole source unreadable (reported before the build starts,
:func:`pipelines.common.sources.preflight`).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Iterator
from typing import Any

from core.errors import BadInput, Rejection
from core.files import sha256_hex
from core.media.probe import reject_truncated
from core.media.video import causal_frames_bytes
from core.text import json_value, utf8_lines
from pipelines.common.sources import Frame, ItemRef, SourceItem, SourceReader, safe_relative

MANIFEST = "manifest.jsonl"
LABELS_FILE = "labels.json"  # optional: full label set per question type


def require(rec: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """Return ``rec[key]`` if present and of ``kind`` (bools are not ints), else BadInput."""
    if key not in rec:
        raise BadInput(where, key, "missing key")
    value = rec[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise BadInput(where, key, f"expected {kind}, got bool")
    if not isinstance(value, kinds):
        raise BadInput(where, key, f"expected {'/'.join(k.__name__ for k in kinds)}, "
                                   f"got {type(value).__name__}")
    if isinstance(value, str) and not value.strip():
        raise BadInput(where, key, "empty string")
    return value


def index_list(rec: dict[str, Any], key: str, n: int | None, where: str,
               default: list[int] | None = None) -> list[int]:
    """A sorted, de-duplicated list of frame indices in ``[0, n)`` (``n`` unknown for videos)."""
    if key not in rec and default is not None:
        return default
    raw = require(rec, key, list, where)
    out: list[int] = []
    for i, v in enumerate(raw):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0 or (n is not None and v >= n):
            raise BadInput(where, f"{key}[{i}]", f"{v!r} is not a frame index in [0, {n})")
        out.append(v)
    if not out:
        raise BadInput(where, key, "empty list")
    return sorted(set(out))


class ManifestReader(SourceReader):
    """Enumerate/validate manifest lines; load frames; subclasses add per-dataset rules."""

    allow_video: bool = False

    # -- per-dataset hooks ----------------------------------------------------------------
    @abstractmethod
    def validate(self, rec: dict[str, Any], n_frames: int | None, where: str) -> dict[str, Any]:
        """Check per-dataset keys; return the JSON payload ``build`` needs (raise BadInput)."""

    @abstractmethod
    def build(self, ref: ItemRef, frames: list[Frame]) -> dict[str, Any]:
        """SourceItem fields beyond frames/ids: category, start/reference/goal, metadata."""

    # -- manifest -------------------------------------------------------------------------
    def _records(self) -> Iterator[tuple[int, str | BadInput]]:
        yield from utf8_lines(self.read_bytes(MANIFEST, field="manifest"), MANIFEST)

    def _parse(self, lineno: int, line: str | BadInput) -> tuple[str, dict[str, Any]]:
        where = f"{MANIFEST}:{lineno}"
        if isinstance(line, BadInput):
            raise line
        rec = json_value(line, where, one_line=True)
        if not isinstance(rec, dict):
            raise BadInput(where, "json", "line is not a JSON object")
        sid = require(rec, "id", (str, int), where)
        sid = str(sid)
        require(rec, "category", str, where)
        if "frames" in rec:
            frames = require(rec, "frames", list, where)
            if not frames:
                raise BadInput(where, "frames", "empty frame list", item_id=sid)
            paths = [safe_relative(p, where, f"frames[{i}]") for i, p in enumerate(frames)]
            payload: dict[str, Any] = {"frames": paths}
            n: int | None = len(paths)
        elif self.allow_video and "video" in rec:
            payload = {"video": safe_relative(rec["video"], where, "video")}
            fps = rec.get("fps", 1)
            if isinstance(fps, bool) or not isinstance(fps, int | float) or not 0 < fps < math.inf:
                raise BadInput(where, "fps", f"{fps!r} is not a positive, finite number", item_id=sid)
            payload["fps"] = fps
            n = None
        else:
            key = "frames" if not self.allow_video else "frames|video"
            raise BadInput(where, key, "missing key", item_id=sid)
        try:
            payload.update(self.validate(rec, n, where))
        except BadInput as err:
            err.item_id = err.item_id or sid
            raise
        payload["category"] = rec["category"]
        payload["line"] = lineno
        return sid, payload

    def group_labels(self, payload: dict[str, Any]) -> list[tuple[str, str]]:
        """(question type, label) pairs this item adds to its type's vocabulary (none here)."""
        return []

    def enumerate(self) -> Iterator[ItemRef | Rejection]:
        parsed: list[tuple[int, str, dict[str, Any]] | Rejection] = []
        lines_of: dict[str, list[int]] = {}
        for lineno, line in self._records():
            try:
                sid, payload = self._parse(lineno, line)
            except BadInput as err:
                parsed.append(self.rejection(err, item_id=f"{MANIFEST}:{lineno}"))
                continue
            parsed.append((lineno, sid, payload))
            lines_of.setdefault(sid, []).append(lineno)
        out: list[ItemRef | Rejection] = []
        groups: dict[str, set[str]] = {}
        for entry in parsed:
            if isinstance(entry, Rejection):
                out.append(entry)
                continue
            lineno, sid, payload = entry
            if len(lines_of[sid]) > 1:  # which line describes the item cannot be told: none is used
                err = BadInput(f"{MANIFEST}:{lineno}", "id", f"id {sid!r} is on lines {lines_of[sid]}: "
                                                             "every line sharing it is rejected",
                               item_id=sid)
                out.append(self.rejection(err))
                continue
            for group, label in self.group_labels(payload):
                groups.setdefault(group, set()).add(label)
            out.append(ItemRef(self.environment, sid, payload))
        for group, labels in self._label_file().items():
            groups.setdefault(group, set()).update(labels)
        for item in out:
            # Wrong options of a "count" question must be counts, not names: hand each item the
            # labels of its own question type (ProactiveBench App. 0.A.2, 0.A.6 keep separate pools).
            if isinstance(item, ItemRef) and "question_type" in item.payload and groups:
                item.payload["type_vocabulary"] = sorted(groups.get(item.payload["question_type"],
                                                                    set()))
            yield item

    def _label_file(self) -> dict[str, list[str]]:
        """Optional ``labels.json``: {question type: [labels]}, the dataset's full label set per
        question type (a manifest may list only a sample of the items, but wrong options should
        come from every label of the dataset)."""
        rel = LABELS_FILE
        if not self.exists(rel):
            return {}
        data = json_value(self.read_bytes(rel, field=rel), rel)
        if not isinstance(data, dict) or not all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in data.values()
        ):
            raise BadInput(rel, "json", "must map each question type to a list of label strings")
        return {str(k): v for k, v in data.items()}

    def vocabulary(self) -> list[str]:
        labels: set[str] = set()
        for values in self._label_file().values():
            labels.update(values)
        for _lineno, line in self._records():
            if isinstance(line, BadInput):
                continue  # rejected when enumerated
            try:
                rec = json_value(line, MANIFEST)
            except BadInput:
                continue  # rejected when enumerated
            if isinstance(rec, dict):
                labels.update(self.labels_of(rec))
        return sorted(labels)

    def labels_of(self, rec: dict[str, Any]) -> list[str]:
        """Labels a manifest line contributes to the vocabulary (override to add more)."""
        cat = rec.get("category")
        return [cat] if isinstance(cat, str) and cat.strip() else []

    # -- frames ---------------------------------------------------------------------------
    def load(self, ref: ItemRef) -> SourceItem:
        try:
            return self._load(ref)
        except BadInput as err:
            err.item_id = err.item_id or ref.source_id
            raise

    def _load(self, ref: ItemRef) -> SourceItem:
        files: list[tuple[str, str]] = []
        frames: list[Frame] = []
        notes: list[tuple[str, str]] = []
        if "video" in ref.payload:
            rel = ref.payload["video"]
            data = self.read_bytes(rel, field="video")
            files.append((rel, sha256_hex(data)))
            # the frame on screen at each t = k / fps, full size (ProactiveBench frames keep
            # the source resolution), by the project's one sampler and JPEG rule; an fps above
            # the video's own would repeat frames the video does not have (docs/sources.md)
            sampled = causal_frames_bytes(data, rel, field="video", fps=ref.payload["fps"],
                                          at_most_native=True)
            reject_truncated(sampled.info, rel, "video")
            notes.extend((rel, n) for n in [sampled.info.note] if n)
            for f in sampled.frames:
                frames.append(Frame(f.image, f"{rel}#t={f.t:g}s"))
        else:
            for i, rel in enumerate(ref.payload["frames"]):
                data = self.read_bytes(rel, field=f"frames[{i}]")
                files.append((rel, sha256_hex(data)))
                frames.append(Frame.of_source_image(data, rel, field=f"frames[{i}]"))
        fields = self.build(ref, frames)
        return SourceItem(environment=self.environment, source_id=ref.source_id, frames=frames,
                          source_files=sorted(set(files)), notes=notes, **fields)
