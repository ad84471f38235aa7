"""``python -m pipelines.proready``: candidates → (human review) → ProReady-QA release.

Seed 002 App. C is semi-automatic: the pipeline proposes, people refine, "only approved items
are released". So one command serves both halves and the state between them is explicit:

1. Always: the Beam pipeline (:mod:`pipelines.proready.pipeline`) builds the candidates and
   publishes them atomically as a **review state** ``<out>/proready/review/<version>/``:
   ``candidates/``, ``filtered/``, ``rejected/``, ``review_candidates.jsonl`` (the file
   ``python -m annotation.cli push --rubric proready`` reads) and ``STATUS.json``.
2. Without ``--decisions`` it stops there and says so: **pending review**, nothing released.
3. With ``--decisions`` (a decision-log directory from ``annotation.cli pull``, or a JSONL/Parquet
   file of ``REVIEW_DECISION`` rows) and optional ``--corrections`` (new versions), it applies the
   approval rule of :mod:`annotation.approval` and publishes ``<out>/proready/<version>/``:
   ``data/<task>/test-*.parquet`` (approved items only), ``filtered/``, ``rejected/``,
   ``manifest.json``, ``README.md`` (dataset card with HF configs) and ``reports/`` (data-quality
   suite, QC report).

Every run checks ``inputs = kept + filtered + rejected`` for videos and for items (design.md §Conventions).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

from core.errors import BadInput
from exports.dataset_card import render_card
from exports.parquet_shards import shard_name, write_group, write_shard
from exports.release import (
    SEMVER_HELP,
    ReleaseError,
    StagedBuild,
    code_version,
    config_hash,
    file_inventory,
    outcome_counts,
    publish,
    source_digest,
    staging_dir,
)
from pipelines.common.options import run_pipeline
from pipelines.proready.generation import ITEMS, GenerationConfig, load_prompts
from pipelines.proready.models import model_settings
from pipelines.proready.pipeline import CANDIDATES, FILTERED, PipelineConfig, build_pipeline
from pipelines.proready.review import (
    RUBRIC,
    apply_corrections,
    decide,
    load_decisions,
    read_rows,
    review_candidate,
)
from pipelines.proready.sources import BENCHMARK, VIDEOS, ProReadyReader
from pipelines.proready.templates import TemplateConfig
from pipelines.sources.base import ReaderConfig
from schemas.outcomes import REJECTION
from schemas.proready import FILTERED_ITEM, ITEM, TASK_NAMES, TASK_TYPES

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG = REPO / "configs" / "proready.yaml"
SPLIT = "test"
ENVS = (VIDEOS, ITEMS)


def load_config(path: Path) -> dict[str, Any]:
    try:
        cfg = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"cannot read config {path}: {exc}") from exc
    for key in ("version", "source", "generation", "evidence"):
        if key not in (cfg or {}):
            raise SystemExit(f"{path}: missing section {key!r}")
    return cfg


def generation_config(cfg: dict[str, Any], cache_root: Path, source: str = "config") -> GenerationConfig:
    gen, ev = dict(cfg["generation"]), dict(cfg["evidence"])
    try:
        return GenerationConfig(
            method=gen.get("method", "template"),
            template=TemplateConfig(**(gen.get("template") or {})),
            segment_s=float(gen.get("segment_s", 30)),
            frames_per_segment=int(gen.get("frames_per_segment", 8)),
            summary_interval_s=float(gen.get("summary_interval_s", 180)),
            max_followups=int(gen.get("max_followups", 2)),
            evidence=ev.get("method", "native_cue"),
            pad_s=float(ev.get("pad_s", 2)),
            dwell_frames=int(ev.get("dwell_frames", 2)),
            frame_max_side=int(ev.get("frame_max_side", 448)),
            models=model_settings(cfg.get("models"), source, cache_root),
            prompts=load_prompts(cache_root / cfg.get("prompts_dir", "configs/proready")),
        )
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"bad generation/evidence config: {exc}") from exc


def _check_balance(counts: dict[str, dict[str, int]]) -> None:
    broken = {e: c for e, c in counts.items() if c["inputs"] != c["kept"] + c["filtered"] + c["rejected"]}
    if broken:
        raise ReleaseError(f"inputs != kept + filtered + rejected: {broken}")


def run(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--raw-dir", type=Path, required=True, help="root of the source datasets")
    parser.add_argument("--out", type=Path, default=Path("out"))
    parser.add_argument("--source", default=None, help="override the source directory")
    parser.add_argument("--decisions", type=Path, default=None,
                        help="decision log dir (annotation.cli pull) or JSONL/Parquet of decisions")
    parser.add_argument("--corrections", type=Path, default=None,
                        help="JSONL of corrected versions: sample_id, version, turns")
    parser.add_argument("--qc-windows", type=Path, default=None,
                        help="JSONL of two annotators' windows for the IoU audit")
    parser.add_argument("--review-media", choices=("source", "webm", "mp4"), default=None,
                        help="media for the review tasks (default: review.media in the config)")
    args, beam_args = parser.parse_known_args(argv)

    for flag, path in (("--decisions", args.decisions), ("--corrections", args.corrections),
                       ("--qc-windows", args.qc_windows)):
        if path is not None and not path.exists():
            raise SystemExit(f"{flag}: {path} does not exist")
    if args.decisions is None and (args.corrections or args.qc_windows):
        raise SystemExit("--corrections / --qc-windows only apply to a release: pass --decisions too")
    cfg = load_config(args.config)
    version = str(cfg["version"])
    seed = int(cfg.get("global_seed", 0))
    src = dict(cfg["source"])
    root = args.source or str(args.raw_dir / src.get("path", "proready"))
    if "://" not in root:
        if not Path(root).exists():
            raise SystemExit(f"ProReady source directory not found: {root} (set RAW_DIR or --source)")
        root = str(Path(root).resolve())
    reader = ProReadyReader(root, ReaderConfig(global_seed=seed, extra={
        "manifest": src.get("manifest", "manifest.yaml"),
        "end_tolerance_s": src.get("end_tolerance_s", 0.5)}))
    gcfg = generation_config(cfg, REPO, str(args.config))

    out_root = args.out.resolve() / BENCHMARK
    review_dir = out_root / "review" / version
    print(f"[benchforge] building {BENCHMARK} {version} candidates from {root} "
          f"({gcfg.method} questions, {gcfg.evidence} windows) → {review_dir}", file=sys.stderr)
    with staging_dir(out_root, f"review-{version}") as staging:
        run_pipeline(lambda p: build_pipeline(p, reader, PipelineConfig(staging=str(staging),
                                                                          generation=gcfg)),
                     beam_args, staging / "_build" / "progress")
        media_kind = args.review_media or (cfg.get("review") or {}).get("media", "source")
        state = finalize_review(staging, cfg, reader, version, seed, media_kind)
        publish(staging, review_dir)
    if args.decisions is None:
        print_pending(review_dir, state, cfg)
        return review_dir
    final = release(review_dir, cfg, version, seed, args.decisions, args.corrections, args.qc_windows,
                    gcfg, Path(root))
    return final


# ------------------------------------------------------------------------------- review state


def review_media(staging: Path, candidates: list[dict[str, Any]], source_root: str, kind: str
                 ) -> tuple[dict[str, str], str]:
    """Video id → media path for the review tasks, and the media root they are relative to.

    ``source``: the source videos as they are (fine when they are H.264 mp4 / webm). ``webm`` /
    ``mp4``: a browser-playable copy per video under ``<review dir>/media/`` (docs/label_studio.md:
    browsers do not play mp4v/AVI, the review UI would spin forever), transcoded with
    :func:`pipelines.media.video.transcode_for_browser`, which keeps the real timeline so the
    reviewers' timestamps are the source's."""
    videos = {c["video_id"]: c["video_file"] for c in candidates}
    if kind == "source":
        return videos, source_root
    if kind not in ("webm", "mp4"):
        raise SystemExit(f"review media must be source, webm or mp4, got {kind!r}")
    from pipelines.media.video import transcode_for_browser

    out = {}
    for vid, rel in sorted(videos.items()):
        dst = staging / "media" / f"{vid}.{kind}"
        transcode_for_browser(Path(source_root) / rel, dst, source_file=rel)
        out[vid] = f"media/{dst.name}"
    return out, "<review dir>"


def finalize_review(staging: Path, cfg: dict[str, Any], reader: ProReadyReader, version: str,
                    seed: int, media_kind: str = "source") -> dict[str, Any]:
    """Counts check, candidate inventory, the push file and STATUS.json of the review state."""
    for group, schema, split in ((CANDIDATES, ITEM, CANDIDATES), (FILTERED, FILTERED_ITEM, FILTERED),
                                 ("rejected", REJECTION, "rejected")):
        if not any((staging / group).glob("*.parquet")):
            write_shard(str(staging / group / shard_name(split, 0, 1)), [], schema)
    staged = StagedBuild.load(staging)
    counts = {e: outcome_counts(staged.counts.get(e, {})) for e in ENVS}
    _check_balance(counts)
    candidates = pq.read_table(staging / CANDIDATES).to_pylist()
    if len(candidates) != counts[ITEMS]["kept"]:
        raise ReleaseError(f"{len(candidates)} candidate rows written but {counts[ITEMS]['kept']} kept")
    media, media_root = review_media(staging, candidates, reader.root, media_kind)
    lines = [json.dumps(review_candidate(c, [media[c["video_id"]]]), sort_keys=True)
             for c in sorted(candidates, key=lambda c: c["id"])]
    (staging / "review_candidates.jsonl").write_text("".join(line + "\n" for line in lines))
    state = {
        "benchmark": BENCHMARK,
        "state": "pending_review",
        "version": version,
        "config_sha256": config_hash(cfg),
        "code_version": code_version(),
        "global_seed": seed,
        "source_root": reader.root,
        "sources": source_digest(staged.sources.get(VIDEOS, [])),
        "manifest_sha256": hashlib.sha256(reader.read_bytes(reader.manifest)).hexdigest(),
        "stages": {e: dict(sorted(staged.counts.get(e, {}).items())) for e in ENVS},
        "counts": counts,
        "per_task": dict(sorted(Counter(c["task_type"] for c in candidates).items())),
        "multi_turn": sum(1 for c in candidates if c["num_turns"] > 1),
        "review": {"rubric": RUBRIC, "round": cfg.get("review", {}).get("round", "proready-r1"),
                   "panel_size": int(cfg.get("review", {}).get("panel_size", 4)),
                   "push_file": "review_candidates.jsonl", "media": media_kind,
                   "media_root": media_root},
        "files": file_inventory(staging),
    }
    (staging / "STATUS.json").write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    shutil.rmtree(staging / "_build")
    return state


def print_pending(review_dir: Path, state: dict[str, Any], cfg: dict[str, Any]) -> None:
    c = state["counts"]
    print(f"\nProReady-QA candidates written to {review_dir}")
    _print_counts(c)
    print(f"per task: {state['per_task']}  multi-turn chains: {state['multi_turn']}")
    r = state["review"]
    print(
        f"\nPENDING REVIEW: {c[ITEMS]['kept']} candidates await human review; NO release was "
        f"published (StreamReady App. C: only approved items are released).\n"
        f"  1. python -m annotation.cli push --benchmark {BENCHMARK} --round {r['round']} "
        f"--rubric {r['rubric']} --candidates {review_dir / r['push_file']} --media-root "
        f"{review_dir if r['media_root'] == '<review dir>' else r['media_root']}\n"
        f"  2. python -m annotation.cli pull --benchmark {BENCHMARK} --round {r['round']} "
        f"--rubric {r['rubric']} --log-dir <decision log>\n"
        f"  3. rerun this command with --decisions <decision log> [--corrections <file.jsonl>]"
    )
    if r["media"] == "source":
        print("  note: review media are the source files; AVI / mp4v do not play in the Label Studio "
              "UI — pass --review-media webm (or mp4 with ffmpeg) for browser-playable copies.")


def _print_counts(counts: dict[str, dict[str, int]]) -> None:
    print(f"{'unit':<8} {'inputs':>7} {'kept':>6} {'filtered':>9} {'rejected':>9}")
    for env in ENVS:
        c = counts[env]
        print(f"{env:<8} {c['inputs']:>7} {c['kept']:>6} {c['filtered']:>9} {c['rejected']:>9}")


# ------------------------------------------------------------------------------------ release


def _write_group(staging: Path, group: str, rows: list[dict[str, Any]], schema: Any, split: str,
                 unique: bool = True) -> None:
    write_group(str(staging), group, rows, schema, split, unique)


def release(review_dir: Path, cfg: dict[str, Any], version: str, seed: int, decisions_path: Path,
            corrections_path: Path | None, qc_windows: Path | None, gcfg: GenerationConfig,
            source_root: Path) -> Path:
    """Approved items → ``<out>/proready/<version>/``, atomically (see module doc)."""
    state = json.loads((review_dir / "STATUS.json").read_text())
    panel = int(state["review"]["panel_size"])
    candidates = {c["id"]: c for c in pq.read_table(review_dir / CANDIDATES).to_pylist()}
    filtered = pq.read_table(review_dir / FILTERED).to_pylist()
    rejected = pq.read_table(review_dir / "rejected").to_pylist()
    try:
        decisions = load_decisions(decisions_path)
        corrections = read_rows(corrections_path) if corrections_path else []
    except (OSError, BadInput) as exc:
        raise SystemExit(f"cannot read review input: {exc}") from exc
    latest, corr_rejected = apply_corrections(candidates, corrections,
                                              corrections_path.name if corrections_path else "")
    kept, review_filtered, st = decide(latest, decisions, panel)
    counts = json.loads(json.dumps(state["counts"]))
    counts[ITEMS]["kept"] = len(kept)
    counts[ITEMS]["filtered"] += len(review_filtered)
    counts[ITEMS]["rejected"] += len(corr_rejected)
    _check_balance(counts)

    out_root = review_dir.parent.parent
    final = out_root / version
    with staging_dir(out_root, version) as staging:
        by_task: dict[str, list[dict[str, Any]]] = {t: [] for t in TASK_TYPES}
        for item in kept:
            by_task[item["task_type"]].append(item)
        for task, rows in by_task.items():
            _write_group(staging, f"data/{task}", rows, ITEM, SPLIT)
        _write_group(staging, "filtered", filtered + review_filtered, FILTERED_ITEM, FILTERED)
        _write_group(staging, "rejected", rejected + [r.to_record() for r in corr_rejected],
                     REJECTION, "rejected", unique=False)
        reports = staging / "reports"
        reports.mkdir(parents=True)
        from pipelines.proready.quality import iou_report, iou_sample, run_suite, write_qc

        suite = run_suite(staging / "data", panel)
        (reports / "data_quality.json").write_text(json.dumps(suite, indent=2, sort_keys=True) + "\n")
        if not suite["success"]:
            failed = [e for e in suite["expectations"] if not e["success"]]
            raise ReleaseError(f"data-quality suite failed: {failed}")
        qc: dict[str, Any] = {}
        if qc_windows is not None:
            sample = iou_sample(kept, int(cfg.get("quality", {}).get("iou_sample_size", 100)), seed)
            qc["iou"] = iou_report(kept, read_rows(qc_windows), sample)
        if gcfg.vlm and kept:
            from pipelines.proready.generation import video_frames
            from pipelines.proready.sources import VideoSource

            client = gcfg.models.client("vlm", label="vlm-verify")
            frames = {}
            for item in kept:
                if item["video_id"] not in frames:
                    v = VideoSource(item["video_id"], item["video_file"],
                                    str(source_root / item["video_file"]), item["video_sha256"],
                                    item["video_duration_s"], item["video_fps"], item["source"], "", {},
                                    (), (), ())
                    frames[item["video_id"]] = video_frames(v, gcfg.frame_max_side)
            from pipelines.proready.quality import verifiability_report

            qc["verifiability"] = verifiability_report(kept, frames, client, gcfg.prompts["verify"])
        write_qc(reports, qc)
        from pipelines.proready.quality import window_report

        windows = window_report(kept, reports)
        review_states = dict(sorted(Counter(s.state for s in st.values()).items()))
        (reports / "review.json").write_text(json.dumps({
            "states": review_states,
            "statuses": {k: {"state": s.state, "version": s.version, "approvals": list(s.approvals),
                             "objections": [list(o) for o in s.objections]} for k, s in sorted(st.items())},
            "corrections_applied": sum(1 for v in latest.values() if v["version"] > 1),
        }, indent=2, sort_keys=True) + "\n")
        manifest = {
            "benchmark": BENCHMARK,
            "version": version,
            "versioning": SEMVER_HELP,
            "schema": {"record": ITEM.name, "version": ITEM.version},
            "code_version": code_version(),
            "config_sha256": config_hash(cfg),
            "config": cfg,
            "global_seed": seed,
            "split": SPLIT,
            "sources": {VIDEOS: {"root": state["source_root"], "manifest_sha256": state["manifest_sha256"],
                                 **state["sources"]}},
            "stages": state["stages"],
            "counts": counts,
            "per_task": {t: len(r) for t, r in by_task.items()},
            "turns": sum(len(i["turns"]) for i in kept),
            "multi_turn_items": sum(1 for i in kept if len(i["turns"]) > 1),
            "ars_tau_s": ars_tau(kept),
            "windows": windows,
            "review": {**state["review"], "states": review_states,
                       "decisions": len(decisions), "corrections": len(corrections)},
            "quality": {"data_quality_success": suite["success"],
                        "qc": {k: v for k, v in qc.items()}},
            "warnings": warnings(cfg, qc, decisions_path),
            "files": file_inventory(staging),
        }
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        card = render_card(
            title="ProReady-QA",
            summary=(
                "Future-dependent (multi-turn) questions on long videos with answer evidence "
                "windows [t_s, t_e] for readiness-aware evaluation with ARS (StreamReady §4). Five "
                "task types: " + ", ".join(f"{k.upper()} ({v})" for k, v in TASK_NAMES.items())
                + ". Videos are referenced by path and sha256, not embedded. Only items approved "
                "by all four reviewers on the released version are included. Built by benchforge."
            ),
            manifest=manifest, groups={t: f"data/{t}" for t in TASK_TYPES}, split=SPLIT,
            schema=ITEM, warnings=manifest["warnings"],
            usage=("import datasets\n"
                   "ds = datasets.load_dataset('/abs/path/to/this/release', 'ssr', split='test')\n"
                   "ds[0]['turns'][0]['t_s']  # configs: ssr, rec, crr, ctd, gsd, plus 'all'"),
        )
        (staging / "README.md").write_text(card)
        publish(staging, final)
    state.update(state="released", release=str(final), review_states=review_states)
    tmp = review_dir / ".STATUS.json.tmp"
    tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, review_dir / "STATUS.json")  # atomic: the review state names its release
    print(f"\nRelease written to {final}")
    _print_counts(counts)
    print(f"per task: {manifest['per_task']}  review states: {review_states}")
    for w in manifest["warnings"]:
        print(f"WARNING: {w}")
    return final


def ars_tau(items: list[dict[str, Any]]) -> float | None:
    """τ of ARS (StreamReady Eq. 10–11): median evidence duration over all released turns — the
    scale evaluators should use for this release (:func:`pipelines.proready.ars.score`)."""
    from pipelines.proready.ars import Question, Turn, median_evidence_duration

    qs = [Question([Turn(t["t_s"], t["t_e"], None) for t in i["turns"]], id=i["id"]) for i in items]
    return round(median_evidence_duration(qs), 4) if qs else None


def warnings(cfg: dict[str, Any], qc: dict[str, Any], decisions_path: Path) -> list[str]:
    out = []
    if cfg["generation"].get("method", "template") == "template":
        out.append("Questions come from the offline template generator over native annotations, "
                   "not from the LLM pipeline of StreamReady App. C.")
    if cfg["evidence"].get("method", "native_cue") == "native_cue":
        out.append("Evidence windows are the native annotation spans (no frame-wise VLM check).")
    if "iou" not in qc:
        out.append("Two-annotator temporal IoU was not measured for this release (App. C QC).")
    if "demo" in decisions_path.name:
        out.append("DEMO: the review decisions come from a scripted demo panel, not from people.")
    return out


def main() -> None:
    try:
        run()
    except ReleaseError as exc:
        raise SystemExit(f"release not published: {exc}") from exc


if __name__ == "__main__":
    main()
