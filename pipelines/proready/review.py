"""Human refinement of ProReady candidates (StreamReady App. C "Human Refinement";
design.md §Annotation rules).

App. C: "annotators review each QA pair and its proposed evidence window. They verify that the
answer is not inferable before t_s, that the supporting cue truly disappears at t_e, and that the
QA instance is strictly future-dependent … corrected or removed". That is the ``proready`` rubric
of :mod:`annotation.rubrics`; push, pull with the integrity checks of pulled decisions, the decision log
and the approval rule are :mod:`annotation.push` / :mod:`annotation.pull`, :mod:`annotation.decision_log` and
:mod:`annotation.approval` — this module only adapts ProReady items to them:

* :func:`review_content` — the complete review unit shown to reviewers (questions and reference
  answers with their times, the evidence windows); its hash is the item's ``content_hash``.
* :func:`review_candidate` — one line of the JSONL ``python -m annotation.cli push`` reads.
* :func:`apply_corrections` — a correction (JSONL: ``sample_id``, ``version``, ``turns``) is a new
  version n+1 of the item, re-validated like a generated candidate; its earlier approvals no
  longer count (the approval rule looks at the latest version only).
* :func:`decide` — an approved item (all four reviewers on the exact latest version and content
  hash) is kept, every other item is filtered with its review state as evidence.

Both work on one item, so the pipeline applies them per item (:mod:`pipelines.proready.pipeline`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from annotation.approval import Status, check_release, statuses
from core.errors import BadInput, Rejection
from pipelines.common.benchmark import BuildContext, PendingReview
from pipelines.proready.build_facts import CANDIDATES
from pipelines.proready.content import TURN_FIELDS, content_hash, review_content
from pipelines.proready.evidence import validate_item
from pipelines.proready.native import video_path
from pipelines.proready.prepared import Prepared
from pipelines.proready.sources import BENCHMARK

RUBRIC = "proready"
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


def number_corrections(corrections: Iterable[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """Corrections in application order (sample id, version), each with its index there — the
    ``n`` of ``corrections[n]`` in a rejection's field."""
    ordered = sorted(corrections, key=lambda c: (str(c.get("sample_id")), int(c.get("version", 0))))
    return list(enumerate(ordered))


def read_corrections(path: Path) -> tuple[int, dict[str, list[tuple[int, dict[str, Any]]]]]:
    """A ``--corrections`` file: its number of rows, and per item its corrections numbered in
    application order (:func:`number_corrections`); SystemExit naming the flag when unreadable."""
    try:
        rows = read_rows(path)
    except (OSError, BadInput) as exc:
        raise SystemExit(f"--corrections: {exc}") from exc
    by_item: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for n, c in number_corrections(rows):
        by_item.setdefault(str(c.get("sample_id", "")), []).append((n, c))
    return len(rows), by_item


def apply_corrections(
    item: dict[str, Any] | None, corrections: Iterable[tuple[int, dict[str, Any]]], source_file: str
) -> tuple[dict[str, Any] | None, list[Rejection]]:
    """One item's latest version after its corrections (each must be version n+1), and the
    rejections: a correction of an unknown item, or a bad correction (the item is then dropped:
    its content is in dispute)."""
    latest = dict(item) if item is not None else None
    rejected: list[Rejection] = []
    for n, c in sorted(corrections, key=lambda nc: nc[0]):
        sid = str(c.get("sample_id", ""))
        try:
            if latest is None:  # never generated, or dropped by an earlier bad correction
                raise BadInput(source_file, f"corrections[{n}].sample_id", f"unknown item {sid!r}", sid)
            base = latest
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
            new = dict(base, version=ver, turns=new_turns, num_turns=len(new_turns),
                       task_type=new_turns[0]["task_type"], generator=new_turns[0]["generator"])
            validate_item(new, source_file)
            new["content_hash"] = content_hash(new)
            latest = new
        except BadInput as err:
            rejected.append(Rejection.from_bad_input(err, benchmark=BENCHMARK, environment="items",
                                                     stage="review_correction", item_id=sid))
            latest = None  # a bad correction: the item's content is in dispute
    return latest, rejected


def uncorrected(pushed: Mapping[str, int], decisions: Iterable[Mapping[str, Any]],
                corrections: Mapping[str, list[tuple[int, dict[str, Any]]]]) -> list[tuple[str, int, int]]:
    """(item id, newest version pushed or decided, this build's version) for every item the
    decision log knows at a later version than the build makes of it.

    Why a build refuses these instead of filtering them: a correction push (version n+1) is
    reviewed against exactly what the corrections file makes; a release built without that file
    (or with another one) makes version n, and :func:`decide` would quietly filter each such item
    as ``review_hash_mismatch`` / ``review_pending`` — an approved correction lost without a word.
    Generated items are version 1 and each correction adds one (:func:`apply_corrections`)."""
    newest = dict(pushed)
    for d in decisions:
        if d.get("rater_kind", "human") == "human":
            sid = str(d["sample_id"])
            newest[sid] = max(newest.get(sid, 0), int(d["version"]))
    return [(sid, ver, 1 + len(corrections.get(sid, ())))
            for sid, ver in sorted(newest.items()) if ver > 1 + len(corrections.get(sid, ()))]


def refuse_uncorrected(stale: list[tuple[str, int, int]], decisions_path: Path,
                       corrections_path: Path | None) -> None:
    """One line, naming every item, for :func:`uncorrected`'s findings (SystemExit)."""
    if not stale:
        return
    given = (f"--corrections {corrections_path} does not make them" if corrections_path
             else "no --corrections file was given")
    items = ", ".join(f"{sid} v{ver} (this build: v{mine})" for sid, ver, mine in stale)
    raise SystemExit(f"--decisions: {decisions_path} holds corrected versions this build does not "
                     f"make ({given}): {items}; build with the corrections file that was pushed")


def decide(item: dict[str, Any], decisions: list[dict[str, Any]], panel_size: int = 4,
           violations: Iterable[dict[str, Any]] = ()) -> tuple[bool, dict[str, Any], Status]:
    """(approved?, the kept item with its approvals — or the filtered item with the review state
    and any standing integrity ``violations`` as evidence —, status) for one item's latest
    version. Only all ``panel_size`` reviewers on the exact latest version and content hash
    release it (:mod:`annotation.approval`)."""
    sid = item["id"]
    s = statuses(decisions, panel_size=panel_size, latest_versions={sid: int(item["version"])},
                 violations=violations)[sid]
    if s.releasable and s.version == item["version"] and s.content_hash == item["content_hash"]:
        rounds = {int(d["version"]): str(d["review_round"]) for d in decisions
                  if d.get("decision") == "approve" and d.get("rater_kind", "human") == "human"}
        check_release([(sid, int(item["version"]), item["content_hash"])], {sid: s})
        return True, dict(item, approvals=list(s.approvals),
                          review_round=rounds.get(int(item["version"]), "")), s
    if s.releasable:  # approved content differs from ours: never release it
        state, why = "review_hash_mismatch", (
            f"approved v{s.version} sha256 {s.content_hash[:12]} is not this build's "
            f"v{item['version']} sha256 {item['content_hash'][:12]}")
    else:
        state = f"review_{s.state}"
        why = (f"v{item['version']}: {len(s.approvals)}/{panel_size} approvals"
               + (f", objections {list(s.objections)}" if s.objections else "")
               + (f"; integrity violations: {'; '.join(s.violations)}" if s.violations else ""))
    evidence = {"state": s.state, "version": s.version, "approvals": list(s.approvals),
                "objections": [list(o) for o in s.objections],
                **({"violations": list(s.violations)} if s.violations else {})}
    return False, dict(item, filter_name=state, filter_reason=why,
                       filter_evidence=json.dumps(evidence, sort_keys=True)), s


def review_media(folder: Path, candidates: list[dict[str, Any]], source_root: str, kind: str,
                 roots: dict[str, str] | None = None, threads: int = 1
                 ) -> tuple[dict[str, str], str | None]:
    """Video id → media path for the review tasks, and the media root they are relative to
    (None: the state's ``media/`` folder, where ``folder`` goes).

    ``mp4`` (the default, ``review.media`` in configs/proready.yaml) / ``webm``: a
    browser-playable copy per video under ``media/proready/`` (H.264 / VP9; docs/label_studio.md:
    browsers do not play mp4v or AVI — Label Studio shows "error rendering your video" or spins
    forever), transcoded with :func:`core.media.browser.transcode_for_browser`, which keeps the
    real timeline so the reviewers' timestamps are the source's. ``source``: the source videos as
    they are, only for sources that are already H.264 mp4 / webm. ``roots``: where a video
    dataset's ``<dataset>/<path>`` lies (:func:`pipelines.proready.native.video_path`), when a
    dataset is read from elsewhere than ``<source_root>/<dataset>``. ``threads`` copies are made
    at once (the build's workers)."""
    videos = {c["video_id"]: c["video_file"] for c in candidates}
    if kind == "source":
        return videos, source_root
    if kind not in ("webm", "mp4"):
        raise SystemExit(f"review media must be source, webm or mp4, got {kind!r}")
    from core.media.browser import BrowserCopy, browser_copies

    folder.mkdir(parents=True, exist_ok=True)  # the state's media/, even with no candidate
    out = {vid: f"{BENCHMARK}/{vid}.{kind}" for vid in sorted(videos)}
    browser_copies([BrowserCopy(video_path(roots, videos[vid]) if roots else Path(source_root) / videos[vid],
                                folder / out[vid], videos[vid]) for vid in out], threads)
    return out, None


def pending_review(ctx: BuildContext[Prepared]) -> PendingReview:
    """The pending-review state's candidates, push units (one review medium per video) and
    status facts."""
    from pipelines.proready.facts import dataset_facts, release_sources

    cands = sorted(CANDIDATES.read(ctx.staging),
                   key=lambda c: c["id"])
    kind = ctx.args.review_media or (ctx.config.get("review") or {}).get("media", "mp4")
    media_dir = ctx.staging / "_build" / "media"
    media, media_root = review_media(media_dir, cands, ctx.prepared.root, kind, ctx.prepared.roots,
                                     threads=ctx.workers)
    return PendingReview(
        candidates=cands,
        units=[review_candidate(c, [media[c["video_id"]]]) for c in cands],
        status={"rubric": RUBRIC, "review_round": ctx.review_round(BENCHMARK),
                "panel_size": ctx.panel_size, "media": kind,
                "media_root": media_root,
                "sources": release_sources(ctx),
                **({"datasets": dataset_facts(ctx)} if ctx.prepared.datasets else {}),
                "per_task": dict(sorted(Counter(c["task_type"] for c in cands).items())),
                "multi_turn": sum(1 for c in cands if c["num_turns"] > 1)},
        media=media_dir if media_root is None else None)


def correction_units(state: Path, corrections: Path) -> list[dict[str, Any]]:
    """Each corrected item's latest version, checked like the release build checks it
    (:func:`pipelines.proready.review.apply_corrections`), with its candidate's media."""
    items = {c["id"]: c for c in map(json.loads, (state / "candidates.jsonl").read_text().splitlines())}
    media = {u["sample_id"]: u["media"] for u in map(
        json.loads, (state / "review_candidates.jsonl").read_text().splitlines())}
    units = []
    for sid, mine in sorted(read_corrections(corrections)[1].items()):
        latest, rejected = apply_corrections(items.get(sid), mine, corrections.name)
        if rejected or latest is None:
            raise SystemExit("--corrections: " + "; ".join(
                f"{r.source_file}: {r.field}: {r.reason}" for r in rejected))
        units.append(review_candidate(latest, media[sid]))
    return units
