"""Source manifest of task videos, their task records and the intent specifications (StreamVibe §3.3).

§3.3 builds candidates "for each video-request pair" from "the source video and task record"
(App. B.2). The source root holds::

    manifest.jsonl          one task video per line:
                            {"collection", "video_id", "video": <path>, "environment":
                             "physical"|"digital", "task_record": <path>}
    <task_record>.json      {"task": str, "native": {events|states|steps|actions ...},
                             "requests": [{"subtype": "R", "slots": {...}, ...}, ...]}

Each request of a task record is one *video-request pair*, the unit that ends kept, filtered or
rejected (design.md §Conventions). Pairs are enumerated cheaply here (JSON only); videos are decoded once per
video later. A manifest line that cannot be read, or whose task record is missing, is rejected
under the pseudo-subtype ``unassigned`` (its subtypes are unknown), naming file and field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from apache_beam.io.filesystems import FileSystems

from core.errors import BadInput, Rejection
from core.files import sha256_hex
from core.text import utf8_lines
from pipelines.common.sources import safe_relative
from schemas.streamvibe import BENCHMARK, DYNAMIC, ENVIRONMENTS, SUBTYPES

UNASSIGNED = "unassigned"
RULES = ("events", "states", "steps", "actions")
POINT_RULES = ("exactly_one", "at_least_one", "at_least_two")


@dataclass(frozen=True)
class IntentSpec:
    """One subtype's intent specification (``configs/streamvibe/intents.yaml``)."""

    subtype: str
    definition: str
    rule: str
    points: str
    before: float
    after: float
    templates: tuple[str, ...]
    update_templates: tuple[str, ...]
    response: str
    immediate_window: float = 3.0


def load_intent_specs(path: str) -> tuple[str, dict[str, IntentSpec]]:
    """Read and check the intent specs; returns (specs version, subtype → spec)."""
    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh)
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"cannot read intent specs {path}: {exc}") from exc
    specs: dict[str, IntentSpec] = {}
    for code, d in (raw.get("subtypes") or {}).items():
        where = f"{path}: subtypes.{code}"
        if code not in SUBTYPES:
            raise SystemExit(f"{where}: unknown subtype; known {list(SUBTYPES)}")
        if d.get("rule") not in RULES or d.get("points") not in POINT_RULES:
            raise SystemExit(f"{where}: rule must be one of {RULES}, points one of {POINT_RULES}")
        if not d.get("templates"):
            raise SystemExit(f"{where}: needs at least one request template")
        if code in DYNAMIC and not d.get("update_templates"):
            raise SystemExit(f"{where}: Dynamic subtypes need update_templates")
        win = d.get("window") or {}
        specs[code] = IntentSpec(
            subtype=code, definition=str(d.get("definition", "")), rule=d["rule"],
            points=d["points"], before=float(win.get("before", 0)), after=float(win.get("after", 3)),
            templates=tuple(d["templates"]), update_templates=tuple(d.get("update_templates") or ()),
            response=str(d.get("response", "{text}")),
            immediate_window=float(d.get("immediate_window", 3)),
        )
    return str(raw.get("version", "")), specs


def _read(root: str, rel: str, field: str) -> bytes:
    try:
        with FileSystems.open(FileSystems.join(root, rel)) as fh:
            return fh.read()
    except Exception as exc:  # noqa: BLE001 - any I/O failure is bad input for this item
        raise BadInput(rel, field, f"cannot read ({type(exc).__name__})") from exc


def read_manifest(root: str, manifest: str) -> bytes:
    """The manifest's bytes, or BadInput: the build reads it before it starts, so an unreadable
    manifest is one clear error there (and, should it vanish later, one rejection here)."""
    return _read(root, manifest, "manifest")


def _rejection(err: BadInput, subtype: str = UNASSIGNED, stage: str = "listing") -> Rejection:
    return Rejection.from_bad_input(err, benchmark=BENCHMARK, environment=subtype, stage=stage)


def pair_id(subtype: str, collection: str, video_id: str, index: int) -> str:
    return f"{subtype.lower()}/{collection}/{video_id}/{index}"


def video_key(pair: dict[str, Any]) -> str:
    return f"{pair['collection']}/{pair['video_id']}"


def enumerate_pairs(root: str, manifest: str = "manifest.jsonl") -> Iterator[dict[str, Any] | Rejection]:
    """Yield one dict per video-request pair, or a Rejection naming file and field.

    Every yielded item is one input (design.md §Conventions "nothing lost"): a manifest line whose task record
    is missing is a single input rejected as ``unassigned``; a request with an unknown subtype is
    one rejected input too.
    """
    try:
        data = read_manifest(root, manifest)
    except BadInput as err:
        yield _rejection(BadInput(manifest, "manifest", err.reason, item_id="*"))
        return
    rows: list[tuple[int, dict[str, Any] | BadInput]] = []
    for n, line in utf8_lines(data, manifest):
        if isinstance(line, BadInput):
            rows.append((n, BadInput(manifest, f"line {n}", line.reason, item_id=f"{manifest}:{n}")))
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("not a JSON object")
        except (ValueError, RecursionError) as exc:  # ValueError: also a 5000-digit integer
            rows.append((n, BadInput(manifest, f"line {n}", f"invalid JSON ({exc})",
                                     item_id=f"{manifest}:{n}")))
            continue
        rows.append((n, row))
    lines_of: dict[tuple[str, str], list[int]] = {}
    for n, row in rows:
        if isinstance(row, dict):
            lines_of.setdefault((str(row.get("collection")), str(row.get("video_id"))), []).append(n)
    for n, row in rows:
        where = f"{manifest}:{n}"
        if isinstance(row, BadInput):
            yield _rejection(row)
            continue
        missing = [k for k in ("collection", "video_id", "video", "task_record") if not row.get(k)]
        if missing:
            yield _rejection(BadInput(manifest, f"line {n}: {missing[0]}", "missing field",
                                      item_id=where))
            continue
        coll, vid = str(row["collection"]), str(row["video_id"])
        item = f"{coll}/{vid}"
        env = row.get("environment", "physical")
        if env not in ENVIRONMENTS:
            yield _rejection(BadInput(manifest, f"line {n}: environment",
                                      f"{env!r} is not one of {ENVIRONMENTS}", item_id=item))
            continue
        if len(lines_of[(coll, vid)]) > 1:  # which line describes the video cannot be told
            yield _rejection(BadInput(manifest, f"line {n}: video_id",
                                      f"video id {item} is on lines {lines_of[(coll, vid)]}: every "
                                      "line sharing it is rejected", item_id=item))
            continue
        try:  # an absolute or ../ path would read a file that is no part of the source
            video = safe_relative(row["video"], manifest, f"line {n}: video")
            rec_path = safe_relative(row["task_record"], manifest, f"line {n}: task_record")
        except BadInput as err:
            yield _rejection(BadInput(err.source_file, err.field, err.reason, item_id=item))
            continue
        try:
            record = json.loads(_read(root, rec_path, "task_record"))
        except BadInput as err:
            yield _rejection(BadInput(rec_path, "task_record", f"missing task record for {item}: "
                                      f"{err.reason}", item_id=item))
            continue
        except (ValueError, RecursionError) as exc:
            yield _rejection(BadInput(rec_path, "task_record", f"invalid JSON ({exc})", item_id=item))
            continue
        requests = record.get("requests") if isinstance(record, dict) else None
        if not isinstance(requests, list) or not requests:
            yield _rejection(BadInput(rec_path, "requests", "task record has no requests",
                                      item_id=item))
            continue
        native = record.get("native") or {}
        if not isinstance(native, dict):  # the generators look annotations up by kind
            yield _rejection(BadInput(rec_path, "native", "must be an object mapping each kind of "
                                      f"native annotation to a list, got {type(native).__name__}",
                                      item_id=item))
            continue
        for k, req in enumerate(requests):
            subtype = req.get("subtype") if isinstance(req, dict) else None
            if not isinstance(subtype, str) or subtype not in SUBTYPES:
                yield _rejection(BadInput(rec_path, f"requests[{k}].subtype",
                                          f"unknown subtype {subtype!r}", item_id=f"{item}/{k}"))
                continue
            yield {
                "id": pair_id(subtype, coll, vid, k),
                "subtype": subtype,
                "collection": coll,
                "video_id": vid,
                "video": video,
                "environment": env,
                "task_record": rec_path,
                "task": str(record.get("task", "")),
                "native": native,
                "request": req,
                "request_index": k,
            }


def source_files(root: str, manifest: str, pairs: list[dict[str, Any]]) -> list[dict[str, str]]:
    """(file, sha256) of the manifest and every task record referenced by listed pairs."""
    out = {manifest: sha256_hex(_read(root, manifest, "manifest"))}
    for p in pairs:
        if p["task_record"] not in out:
            out[p["task_record"]] = sha256_hex(_read(root, p["task_record"], "task_record"))
    return [{"file": f, "sha256": s} for f, s in sorted(out.items())]
