"""Human refinement of ProReady candidates (StreamReady App. C "Human Refinement";
design.md §Annotation rules).

App. C: "annotators review each QA pair and its proposed evidence window. They verify that the
answer is not inferable before t_s, that the supporting cue truly disappears at t_e, and that the
QA instance is strictly future-dependent … corrected or removed". That is the ``proready`` rubric
of :mod:`annotation.rubrics`; routing, the integrity checks of pulled decisions, the decision log
and the approval rule are :mod:`annotation.routing`, :mod:`annotation.decision_log` and
:mod:`annotation.approval` — this module only adapts ProReady items to them:

* :func:`review_content` — the complete review unit shown to reviewers (turns as paragraphs with
  their ask time, the evidence windows as JSON); its hash is the item's ``content_hash``.
* :func:`review_candidate` — one line of the JSONL ``python -m annotation.cli push`` reads.
* :func:`apply_corrections` — a correction (JSONL: ``sample_id``, ``version``, ``turns``) is a new
  version n+1 of the item, re-validated like a generated candidate; its earlier approvals no
  longer count (the approval rule looks at the latest version only).
* :func:`decide` — approved items (all four reviewers on the exact latest version and content
  hash) are kept, every other item is filtered with the review state as evidence.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from annotation.approval import Status, check_release, statuses
from annotation.routing import content_hash as _routing_hash
from core.errors import BadInput, Rejection
from pipelines.proready.evidence import validate_item
from pipelines.proready.sources import BENCHMARK
from schemas.proready import TURN

RUBRIC = "proready"
TURN_FIELDS = tuple(f.name for f in TURN.fields)


def review_content(item: dict[str, Any]) -> dict[str, Any]:
    """What reviewers see (rubric ``proready`` displays: video, ``turns``, ``evidence``); ``fps``
    tells the ``<Video>`` player the real frame rate (it assumes 24 fps otherwise)."""
    paragraphs = []
    for t in item["turns"]:
        ref = "" if t["refers_to"] < 0 else f" (follow-up on turn {t['refers_to']}, {t['dependency']})"
        paragraphs.append({"role": f"Q{t['turn_index']} [{t['task_type'].upper()}]{ref}",
                           "time": t["ask_time_s"], "text": t["question"]})
        paragraphs.append({"role": f"A{t['turn_index']} (reference)", "time": t["t_s"],
                           "text": t["answer"]})
    evidence = [{k: t[k] for k in TURN_FIELDS if k not in ("question", "answer")}
                for t in item["turns"]]
    return {"id": item["id"], "video_id": item["video_id"], "video_sha256": item["video_sha256"],
            "fps": item["video_fps"], "turns": paragraphs, "evidence": evidence,
            "full_turns": [{k: t[k] for k in TURN_FIELDS} for t in item["turns"]]}


def content_hash(item: dict[str, Any]) -> str:
    """sha256 of :func:`review_content` exactly as :mod:`annotation.routing` hashes it, so the
    decision log's ``content_hash`` compares with the item's."""
    return _routing_hash(review_content(item))


def review_candidate(item: dict[str, Any], media: list[str]) -> dict[str, Any]:
    return {"sample_id": item["id"], "version": int(item["version"]), "task_type": item["task_type"],
            "content": review_content(item), "media": media}


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSONL or Parquet file, or of every Parquet file under a directory."""
    if path.is_dir():
        rows: list[dict[str, Any]] = []
        for f in sorted(path.rglob("*.parquet")):
            rows += pq.read_table(f).to_pylist()
        return rows
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise BadInput(path.name, f"line {n}", f"invalid JSON: {exc.msg}") from exc
    return out


def load_decisions(path: Path) -> list[dict[str, Any]]:
    """Decisions of the ``proready`` benchmark from a decision-log directory
    (:func:`annotation.decision_log.read`, latest pull per round) or a JSONL/Parquet file."""
    if path.is_dir() and (path / "decisions").is_dir():
        from annotation import decision_log

        rows = decision_log.read(path)
    else:
        rows = read_rows(path)
    return [r for r in rows if r.get("benchmark", BENCHMARK) == BENCHMARK]


def apply_corrections(
    items: dict[str, dict[str, Any]], corrections: Iterable[dict[str, Any]], source_file: str
) -> tuple[dict[str, dict[str, Any]], list[Rejection]]:
    """Latest version per item id after applying corrections (each must be version n+1)."""
    latest = {k: dict(v) for k, v in items.items()}
    rejected: list[Rejection] = []
    bad: set[str] = set()
    for n, c in enumerate(sorted(corrections, key=lambda c: (str(c.get("sample_id")),
                                                             int(c.get("version", 0))))):
        sid = str(c.get("sample_id", ""))
        try:
            if sid not in latest:
                raise BadInput(source_file, f"corrections[{n}].sample_id", f"unknown item {sid!r}", sid)
            if sid in bad:
                continue
            base = latest[sid]
            ver = int(c.get("version", 0))
            if ver != base["version"] + 1:
                raise BadInput(source_file, f"corrections[{n}].version",
                               f"a correction of v{base['version']} must be v{base['version'] + 1}, "
                               f"got v{ver}", sid)
            turns = c.get("turns")
            if not isinstance(turns, list) or not turns:
                raise BadInput(source_file, f"corrections[{n}].turns", "missing or empty", sid)
            new_turns = []
            for k, t in enumerate(turns):
                missing = [f for f in TURN_FIELDS if f not in t]
                if missing:
                    raise BadInput(source_file, f"corrections[{n}].turns[{k}]",
                                   f"missing fields {missing}", sid)
                new_turns.append({f: t[f] for f in TURN_FIELDS})
            item = dict(base, version=ver, turns=new_turns, num_turns=len(new_turns),
                        task_type=new_turns[0]["task_type"], generator=new_turns[0]["generator"])
            validate_item(item, source_file)
            item["content_hash"] = content_hash(item)
            latest[sid] = item
        except BadInput as err:
            bad.add(sid)
            latest.pop(sid, None)
            rejected.append(Rejection.from_bad_input(err, benchmark=BENCHMARK, environment="items",
                                                     stage="review_correction", item_id=sid))
    return latest, rejected


def decide(
    latest: dict[str, dict[str, Any]], decisions: list[dict[str, Any]], panel_size: int = 4
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Status]]:
    """(approved items with their approvals, filtered items, statuses) — nothing else."""
    st = statuses(decisions, panel_size=panel_size,
                  latest_versions={k: int(v["version"]) for k, v in latest.items()})
    rounds = {(str(d["sample_id"]), int(d["version"])): str(d["review_round"]) for d in decisions
              if d.get("decision") == "approve" and d.get("rater_kind", "human") == "human"}
    kept, filtered = [], []
    for sid in sorted(latest):
        item = latest[sid]
        s = st[sid]
        ok = s.releasable and s.version == item["version"] and s.content_hash == item["content_hash"]
        if ok:
            kept.append(dict(item, approvals=list(s.approvals),
                             review_round=rounds.get((sid, int(item["version"])), "")))
            continue
        if s.releasable:  # approved content differs from ours: never release it
            state, why = "review_hash_mismatch", (
                f"approved v{s.version} sha256 {s.content_hash[:12]} is not this build's "
                f"v{item['version']} sha256 {item['content_hash'][:12]}")
        else:
            state = f"review_{s.state}"
            why = (f"v{item['version']}: {len(s.approvals)}/{panel_size} approvals"
                   + (f", objections {list(s.objections)}" if s.objections else ""))
        evidence = {"state": s.state, "version": s.version, "approvals": list(s.approvals),
                    "objections": [list(o) for o in s.objections]}
        filtered.append(dict(item, filter_name=state, filter_reason=why,
                             filter_evidence=json.dumps(evidence, sort_keys=True)))
    check_release([(i["id"], int(i["version"]), i["content_hash"]) for i in kept], st)
    return kept, filtered, st
