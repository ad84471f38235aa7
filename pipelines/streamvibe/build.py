"""``python -m pipelines.streamvibe``: build StreamVibe-Bench candidates, then a reviewed release.

Two states, because a release needs four human approvals of the same version (App. B.3):

1. **No decisions yet** (no ``--reviews``): the pipeline runs up to validated, versioned
   candidates and stops with a clear *pending review* state under
   ``<out>/streamvibe/review/<version>/``: ``candidates.jsonl`` (full candidates),
   ``review_candidates.jsonl`` (the review units in ``annotation.cli push`` format), browser-
   playable review media, ``rejected/`` and ``status.json``. Nothing is approved by default and
   no release is written. ``--push`` sends the candidates to the Label Studio panel right away.
2. **With a decision log** (``--reviews DIR|FILE``: a ``annotation.decision_log`` directory as
   ``pull`` writes it, or REVIEW_DECISION rows as JSONL/Parquet): only candidates approved by all
   four reviewers on their current version are kept, allocated to the per-subtype targets, and
   serialized; the release gets its manifest, dataset card and great-expectations report, is
   checked (``inputs = kept + filtered + rejected`` per subtype, suite passes) and published
   atomically to ``<out>/streamvibe/<version>/``.

The candidate *ledger* (``<out>/streamvibe/review/ledger.json``) remembers every (id, version,
content hash) so unchanged candidates keep their version and corrected ones get the next.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from exports.dataset_card import render_card
from exports.release import (
    SEMVER_HELP,
    ReleaseError,
    code_version,
    config_hash,
    file_inventory,
    outcome_counts,
    publish,
    source_digest,
    staging_dir,
)
from pipelines.common.options import run_pipeline
from pipelines.streamvibe.gemini import gemini_settings
from pipelines.streamvibe.pipeline import PipelineConfig, build_pipeline
from pipelines.streamvibe.review import (
    load_ledger,
    prepare_media,
    read_decisions,
    review_statuses,
    to_routing_candidate,
    update_ledger,
    write_json_atomic,
)
from pipelines.streamvibe.sources import enumerate_pairs, load_intent_specs, source_files
from schemas.streamvibe import BENCHMARK, POINTWISE, SAMPLE, SUBTYPES, TABLE15_TARGETS, config_name

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG = REPO / "configs" / "streamvibe.yaml"
SPLIT = "test"
PENDING = "pending_review"


def load_config(path: Path) -> dict[str, Any]:
    try:
        cfg = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"cannot read config {path}: {exc}") from exc
    targets = cfg.get("targets") or TABLE15_TARGETS
    unknown = sorted(set(targets) - set(SUBTYPES))
    if unknown:
        raise SystemExit(f"{path}: targets: unknown subtypes {unknown}; known {list(SUBTYPES)}")
    cfg["targets"] = {k: int(targets.get(k, 0)) for k in SUBTYPES}
    if cfg.get("generator", "rule") not in ("rule", "gemini"):
        raise SystemExit(f"{path}: generator must be rule or gemini")
    return cfg


def _path(p: str, base: Path) -> str:
    return p if os.path.isabs(p) or "://" in p else str(base / p)



def run(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--raw-dir", type=Path, required=True, help="root of the source datasets")
    parser.add_argument("--out", type=Path, default=Path("out"))
    parser.add_argument("--reviews", default=None,
                        help="decision log (annotation.decision_log dir, or JSONL/Parquet rows)")
    parser.add_argument("--generator", choices=["rule", "gemini"], default=None)
    parser.add_argument("--no-review-media", action="store_true",
                        help="pending state without transcoded review videos")
    parser.add_argument("--push", action="store_true",
                        help="push pending candidates to the Label Studio panel (annotation.server)")
    args, beam_args = parser.parse_known_args(argv)

    cfg = load_config(args.config)
    if args.generator:
        cfg["generator"] = args.generator
    version = str(cfg["version"])
    src = cfg.get("source") or {}
    root = _path(str(src.get("path", "streamvibe")), args.raw_dir.resolve())
    manifest = str(src.get("manifest", "manifest.jsonl"))
    intents_path = _path(str(cfg.get("intents", "configs/streamvibe/intents.yaml")), REPO)
    specs_version, _ = load_intent_specs(intents_path)
    try:
        gemini = gemini_settings(cfg, args.config, REPO)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    if not Path(root).exists() and "://" not in root:
        raise SystemExit(f"StreamVibe source directory not found: {root} (set RAW_DIR)")

    bench_root = args.out.resolve() / BENCHMARK
    review_root = bench_root / "review"
    bench_root.mkdir(parents=True, exist_ok=True)
    ledger_path = review_root / "ledger.json"
    ledger = load_ledger(ledger_path)
    statuses = None
    if args.reviews:
        panel = int((cfg.get("review") or {}).get("panel_size", 4))
        latest = {k: max(int(e["version"]) for e in v) for k, v in ledger.items()}
        statuses = review_statuses(read_decisions(args.reviews), panel, latest)
    with staging_dir(bench_root, version) as staging:
        return _build(args, cfg, beam_args, staging, root, manifest, intents_path, specs_version,
                      gemini, statuses, ledger, ledger_path, review_root, bench_root)


def _build(args, cfg, beam_args, staging, root, manifest, intents_path, specs_version, gemini,
           statuses, ledger, ledger_path, review_root, bench_root) -> Path:
    version, seed = str(cfg["version"]), int(cfg.get("global_seed", 0))
    pcfg = PipelineConfig(
        root=root, manifest=manifest, staging=str(staging), split=SPLIT, seed=seed,
        intents_path=intents_path, generator=str(cfg.get("generator", "rule")), gemini=gemini,
        frames=dict(cfg.get("frames") or {}), negatives=dict(cfg.get("negatives") or {}),
        targets=cfg["targets"], review=statuses is not None,
    )
    print(f"[benchforge] building {BENCHMARK} {version} from {root} (generator "
          f"{pcfg.generator}, {'with' if statuses is not None else 'no'} review decisions)",
          file=sys.stderr)
    run_pipeline(lambda p: build_pipeline(p, pcfg, statuses, ledger), beam_args,
                 staging / "_build" / "progress")
    candidates = json.loads((staging / "_build" / "candidates.json").read_text())
    write_json_atomic(ledger_path, update_ledger(ledger, candidates))
    facts = _facts(staging, root, manifest, cfg, specs_version)
    if statuses is None:
        state = write_pending(staging, review_root / version, facts, candidates, root,
                              media=not args.no_review_media)
        print_pending(state, facts)
        if args.push:
            push_pending(state, cfg)
        return state
    manifest_ = finalize(staging, facts, cfg, version, seed, statuses)
    final = bench_root / version
    publish(staging, final)
    print_summary(final, manifest_)
    return final


def _facts(staging: Path, root: str, manifest: str, cfg: dict[str, Any], specs_version: str
           ) -> dict[str, Any]:
    """Counts per subtype and source checksums from the staged build facts."""
    raw = json.loads((staging / "_build" / "counts.json").read_text())
    stages: dict[str, dict[str, int]] = {}
    for row in raw:
        stages.setdefault(row["environment"], {})[row["stage"]] = row["n"]
    pairs = [x for x in enumerate_pairs(root, manifest) if isinstance(x, dict)]
    videos = json.loads((staging / "_build" / "videos.json").read_text())
    return {
        "stages": {k: dict(sorted(v.items())) for k, v in sorted(stages.items())},
        "sources": {"task_records": source_digest(source_files(root, manifest, pairs)),
                    "videos": source_digest([{"file": v["file"], "sha256": v["sha256"]} for v in videos])},
        "videos": sorted(videos, key=lambda v: v["file"]),
        "intent_specs": specs_version,
        "root": root,
    }


def _outcomes(stages: dict[str, dict[str, int]], pending: bool) -> dict[str, dict[str, int]]:
    groups = sorted(set(stages) | set(SUBTYPES))
    out = {}
    for g in groups:
        c = outcome_counts(stages.get(g, {}))
        if pending:
            c["pending"] = stages.get(g, {}).get("pending", 0)
        out[g] = c
    return out


def _check_balance(counts: dict[str, dict[str, int]]) -> None:
    broken = {g: c for g, c in counts.items()
              if c["inputs"] != c["kept"] + c["filtered"] + c["rejected"] + c.get("pending", 0)}
    if broken:
        raise ReleaseError(f"inputs != kept + filtered + rejected (+ pending): {broken}")


def write_pending(staging: Path, state: Path, facts: dict[str, Any], candidates: list[dict[str, Any]],
                  root: str, media: bool = True) -> Path:
    """The *pending review* state: candidates ready to push, no release (App. B.3)."""
    counts = _outcomes(facts["stages"], pending=True)
    _check_balance(counts)
    with staging_dir(state.parent, f"pending-{state.name}") as tmp:
        cands = sorted(candidates, key=lambda c: c["id"])
        (tmp / "candidates.jsonl").write_text(
            "".join(json.dumps(c, sort_keys=True, ensure_ascii=False) + "\n" for c in cands))
        units = [to_routing_candidate(c) for c in cands]
        (tmp / "review_candidates.jsonl").write_text("".join(
            json.dumps({"sample_id": u.sample_id, "version": u.version, "task_type": u.task_type,
                        "content": u.content, "media": u.media, "content_hash": u.content_hash},
                       sort_keys=True, ensure_ascii=False) + "\n" for u in units))
        if (staging / "rejected").exists():
            shutil.copytree(staging / "rejected", tmp / "rejected")
        if media:
            prepare_media(cands, root, tmp / "media")
        status = {"state": PENDING, "benchmark": BENCHMARK, "candidates": len(cands),
                  "per_subtype": dict(sorted(Counter(c["subtype"] for c in cands).items())),
                  "counts": counts, "sources": facts["sources"], "videos": facts["videos"],
                  "review_media": "media/" if media else None,
                  "next": "push review_candidates.jsonl to Label Studio, pull the decisions, then "
                          "rebuild with --reviews <decision log>"}
        (tmp / "status.json").write_text(json.dumps(status, indent=1, sort_keys=True) + "\n")
        publish(tmp, state)
    return state


def print_pending(state: Path, facts: dict[str, Any]) -> None:
    st = json.loads((state / "status.json").read_text())
    print(f"\nPENDING REVIEW — no release written. {st['candidates']} candidates wait for four "
          f"approvals each (StreamVibe App. B.3).")
    print(f"  state: {state}")
    _print_counts(st["counts"], pending=True)
    print("  next: python -m annotation.cli push --benchmark streamvibe --round streamvibe-r1 "
          f"--rubric streamvibe --candidates {state}/review_candidates.jsonl --media-root {state}/media")
    print("        python -m annotation.cli pull --benchmark streamvibe --round streamvibe-r1 "
          "--rubric streamvibe --log-dir <decision log>")
    print("        make build-streamvibe REVIEWS=<decision log>")


def push_pending(state: Path, cfg: dict[str, Any]) -> dict[tuple[str, int], int]:
    """Push the pending candidates to the configured Label Studio panel (annotation.server)."""
    from annotation.routing import Candidate, push
    from annotation.rubrics import get_rubric
    from annotation.server import LabelStudioServer, ensure_panel, load_panel_config

    pc = load_panel_config(None, media_root=state / "media")
    srv = LabelStudioServer(pc.data_dir, port=pc.port, venv=pc.venv, media_root=pc.media_root,
                            token_file=pc.token_file, admin_email=pc.admin_email)
    if not srv.running_pid():
        raise SystemExit("no Label Studio server running: python -m annotation.cli server start "
                         f"--media-root {state / 'media'}")
    panel = ensure_panel(srv.url, pc)
    units = [json.loads(line) for line in (state / "review_candidates.jsonl").read_text().splitlines()]
    cands = [Candidate(u["sample_id"], u["version"], u["task_type"], u["content"], u["media"])
             for u in units]
    review = cfg.get("review") or {}
    out = push(panel.admin.client(), BENCHMARK, str(review.get("review_round", "streamvibe-r1")), cands,
               get_rubric("streamvibe"), state / "media", panel_size=panel.size)
    print(f"pushed {len(out)} candidate versions to {srv.url}")
    return out


def _allocation(staged_rows: dict[str, int], targets: dict[str, int]) -> dict[str, dict[str, int]]:
    return {st: {"target": targets[st], "released": staged_rows.get(st, 0),
                 "shortfall": max(0, targets[st] - staged_rows.get(st, 0))} for st in SUBTYPES}


def finalize(staging: Path, facts: dict[str, Any], cfg: dict[str, Any], version: str, seed: int,
             statuses: dict[str, Any]) -> dict[str, Any]:
    from pipelines.streamvibe.quality import run_suite

    # A subtype with no released sample gets no config and no zero-row shard: datasets 5.2 fails
    # on a zero-row Parquet file ("BatchSize must be greater than 0"), also inside a glob like
    # `all`. Its shortfall is in the allocation report instead.
    counts = _outcomes(facts["stages"], pending=False)
    _check_balance(counts)
    files = file_inventory(staging)
    rows = {st: sum(f["rows"] for f in files if f["path"].startswith(f"data/{config_name(st)}/"))
            for st in SUBTYPES}
    mismatch = {st: (rows[st], counts[st]["kept"]) for st in SUBTYPES if rows[st] != counts[st]["kept"]}
    if mismatch:
        raise ReleaseError(f"rows written differ from kept counts (rows, kept): {mismatch}")
    if not sum(rows.values()):
        raise ReleaseError("no candidate is approved by all reviewers on its current version: "
                           "nothing to release (see the review states in the decision log)")
    targets = cfg["targets"]
    reports = staging / "reports"
    quality = run_suite(staging, targets, counts, reports, label=staging.parent / version)
    if not quality.success:
        failed = [f"{c.check} [{c.column}]: {c.examples[:3]}" for c in quality.failed]
        raise ReleaseError(f"data-quality suite failed: {failed}")
    allocation = _allocation(rows, targets)
    (reports / "allocation.json").write_text(json.dumps(allocation, indent=1, sort_keys=True) + "\n")
    review_states = Counter(s["state"] for s in statuses.values())
    warnings = []
    short = {st: a["shortfall"] for st, a in allocation.items() if a["shortfall"]}
    if short:
        warnings.append("Allocation shortfall against the per-subtype targets (Table 15 unless "
                        f"configured): {short}. Missing samples were NOT padded.")
    if cfg.get("generator", "rule") == "rule":
        warnings.append("Candidates came from the rule-based generator (native annotations), not "
                        "from Gemini (§3.3); all released samples were still approved by four reviewers.")
    pointwise_rows = sum(f["rows"] for f in files if f["path"].startswith("pointwise/"))
    manifest = {
        "benchmark": BENCHMARK,
        "version": version,
        "versioning": SEMVER_HELP,
        "schema": {"sample": {"record": SAMPLE.name, "version": SAMPLE.version},
                   "pointwise": {"record": POINTWISE.name, "version": POINTWISE.version}},
        "code_version": code_version(),
        "config_sha256": config_hash(cfg),
        "config": cfg,
        "global_seed": seed,
        "split": SPLIT,
        "generator": cfg.get("generator", "rule"),
        "intent_specs": facts["intent_specs"],
        "sources": facts["sources"],
        "videos": facts["videos"],
        "stages": facts["stages"],
        "counts": {g: c for g, c in counts.items() if g in SUBTYPES or c["inputs"]},
        "allocation": allocation,
        "review": {"panel_size": int((cfg.get("review") or {}).get("panel_size", 4)),
                   "states": dict(sorted(review_states.items()))},
        "pointwise_rows": pointwise_rows,
        "quality": {"success": quality.success, "expectations": len(quality.checks),
                    "report": "reports/data_quality.md"},
        "warnings": warnings,
        "files": files,
    }
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    (staging / "README.md").write_text(_card(manifest, warnings))
    shutil.rmtree(staging / "_build")
    return manifest


def _card(manifest: dict[str, Any], warnings: list[str]) -> str:
    usage = (
        "import datasets\n"
        "traj = datasets.load_dataset('/abs/path/to/this/release', 'rv', split='test')\n"
        "traj[0]['frames'][0]  # PIL image of second 0; steps[t] says what is visible at t\n"
        "pw = datasets.load_dataset('/abs/path/to/this/release', 'pointwise', split='test')"
    )
    groups = {config_name(st): f"data/{config_name(st)}" for st in SUBTYPES
              if manifest["allocation"][st]["released"]}
    card_manifest = dict(manifest, counts={k: v for k, v in manifest["counts"].items() if k in SUBTYPES})
    card = render_card(
        title="StreamVibe-Bench",
        summary=("Causal 1 FPS video streams with timestamped user intents (Explicit I/P/R, Implicit "
                 "G/L/M/T, Dynamic RV/CP/IT) and evidence points (window, preferred time, gold "
                 "response), for Pointwise and Trajectory evaluation (StreamVibe §3). Every sample was "
                 "approved by four reviewers on the same version (App. B.3). Built by benchforge."),
        manifest=card_manifest, groups=groups, split=SPLIT, schema=SAMPLE, warnings=warnings, usage=usage,
    )
    # Pointwise samples are a second record type: their own configs (the card helper's `all`
    # globs data/* only, which keeps it to trajectory samples).
    head, body = card.split("---\n", 2)[1:]
    meta = yaml.safe_load(head)
    meta["configs"].append({"config_name": "pointwise", "data_files": [
        {"split": SPLIT, "path": f"pointwise/*/{SPLIT}-*.parquet"}]})
    alloc = ["", "## Allocation (Table 15 targets)", "", "| subtype | target | released | shortfall |",
             "|---|---:|---:|---:|"]
    alloc += [f"| {st} | {a['target']} | {a['released']} | {a['shortfall']} |"
              for st, a in manifest["allocation"].items()]
    pw = ["", f"## Pointwise records (`{POINTWISE.name}`, schema {POINTWISE.version})", "",
          "| field | description |", "|---|---|"] + [f"| `{f.name}` | {f.doc} |" for f in POINTWISE.fields]
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n" + body + "\n".join(alloc + pw) + "\n"


def _print_counts(counts: dict[str, dict[str, int]], pending: bool) -> None:
    head = f"  {'subtype':<11} {'inputs':>6} {'kept':>5} {'filtered':>8} {'rejected':>8}"
    print(head + (f" {'pending':>7}" if pending else ""))
    for g, c in counts.items():
        if not c["inputs"] and g not in SUBTYPES:
            continue
        line = f"  {g:<11} {c['inputs']:>6} {c['kept']:>5} {c['filtered']:>8} {c['rejected']:>8}"
        print(line + (f" {c.get('pending', 0):>7}" if pending else ""))


def print_summary(final: Path, manifest: dict[str, Any]) -> None:
    print(f"\nRelease written to {final}")
    _print_counts(manifest["counts"], pending=False)
    print(f"  pointwise rows: {manifest['pointwise_rows']}; quality suite: "
          f"{'PASS' if manifest['quality']['success'] else 'FAIL'}")
    for w in manifest["warnings"]:
        print(f"WARNING: {w}")


def main() -> None:
    try:
        run()
    except ReleaseError as exc:
        raise SystemExit(f"release not published: {exc}") from exc


if __name__ == "__main__":
    main()
