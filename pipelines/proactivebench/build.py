"""``python -m pipelines.proactivebench``: build a ProactiveBench release.

Reads a YAML config (default ``configs/proactivebench.yaml``), runs the Beam pipeline on the
embedded FnApiRunner unless Beam options say otherwise, then writes the manifest and dataset
card, checks ``inputs = kept + filtered + rejected`` per environment and publishes atomically.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

from exports.dataset_card import render_card
from exports.release import (
    SEMVER_HELP,
    ReleaseError,
    StagedBuild,
    code_version,
    config_hash,
    file_inventory,
    outcome_counts,
    plot_counts,
    publish,
    source_digest,
    staging_dir,
    write_empty_shards,
)
from pipelines.common.options import run_pipeline
from pipelines.proactivebench.episodes import BuildConfig
from pipelines.proactivebench.pipeline import BENCHMARK, PipelineConfig, build_pipeline, make_miner
from pipelines.sources import READERS
from pipelines.sources.base import ReaderConfig
from schemas.outcomes import REJECTION
from schemas.proactivebench import ENVIRONMENTS, EPISODE, FILTERED_EPISODE

DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "proactivebench.yaml"
SPLIT = "test"


def load_config(path: Path) -> dict[str, Any]:
    try:
        cfg = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"cannot read config {path}: {exc}") from exc
    unknown = sorted(set(cfg.get("environments", {})) - set(ENVIRONMENTS))
    if unknown:
        raise SystemExit(f"{path}: environments: unknown {unknown}; known: {list(ENVIRONMENTS)}")
    return cfg


def make_readers(cfg: dict[str, Any], raw_dir: Path, overrides: dict[str, str]):
    readers = {}
    for env, spec in sorted(cfg["environments"].items()):
        spec = dict(spec or {})
        spec_path = spec.pop("path", env)
        root = overrides.get(env) or str(raw_dir / spec_path)
        per_class = spec.pop("per_class", None)
        if not Path(root).exists() and "://" not in root:
            raise SystemExit(
                f"source directory for {env} not found: {root} — point RAW_DIR at the folder holding "
                f"{spec_path}/, or this dataset elsewhere with {env.upper()}_DIR=/path (make) or "
                f"--source {env}=/path (python -m pipelines.proactivebench)")
        config = ReaderConfig(per_class=per_class, global_seed=int(cfg.get("global_seed", 0)), extra=spec)
        readers[env] = READERS[env](root, config)
    return readers



def run(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--raw-dir", type=Path, required=True, help="root of the source datasets")
    parser.add_argument("--out", type=Path, default=Path("out"))
    parser.add_argument("--source", action="append", default=[], metavar="ENV=PATH",
                        help="per-dataset directory override, e.g. coco=/data/coco")
    parser.add_argument("--probes", default=None, help="leak-filter probe pool YAML")
    parser.add_argument("--only", default=None, help="comma-separated environments to build")
    args, beam_args = parser.parse_known_args(argv)

    cfg = load_config(args.config)
    if args.only:
        keep = set(args.only.split(","))
        cfg["environments"] = {k: v for k, v in cfg["environments"].items() if k in keep}
    overrides = dict(s.split("=", 1) for s in args.source)
    readers = make_readers(cfg, args.raw_dir, overrides)
    version = str(cfg["version"])
    seed = int(cfg.get("global_seed", 0))
    probes = args.probes or cfg.get("probes")
    clip = (cfg.get("negatives") or {}).get("clip")
    strategies = dict((cfg.get("negatives") or {}).get("strategy") or {})

    out_root = args.out.resolve() / BENCHMARK
    final = out_root / version
    with staging_dir(out_root, version) as staging:
        pcfg = PipelineConfig(
            staging=str(staging),
            split=SPLIT,
            build=BuildConfig(global_seed=seed, negative_strategy=strategies),
            open_ended_per_environment=int(cfg.get("open_ended_per_environment", 100)),
            clip=clip,
            probes_config=probes,
            run_id=staging.name,
        )
        print(f"[benchforge] building {BENCHMARK} {version} from {args.raw_dir} "
              f"({', '.join(readers)}) → {final}", file=sys.stderr)
        run_pipeline(lambda p: build_pipeline(p, readers, pcfg), beam_args,
                     staging / "_build" / "progress")
        manifest = finalize(staging, cfg, readers, version, seed, probes, clip)
        publish(staging, final)
    print_summary(final, manifest)
    return final


def finalize(staging: Path, cfg, readers, version: str, seed: int, probes, clip) -> dict[str, Any]:
    envs = sorted(readers)
    # filtered/ and rejected/ always exist, so "nothing filtered" is visible, not ambiguous
    write_empty_shards(staging, ["filtered"], FILTERED_EPISODE, "filtered")
    write_empty_shards(staging, ["rejected"], REJECTION, "rejected")
    staged = StagedBuild.load(staging)
    counts = {e: outcome_counts(staged.counts.get(e, {})) for e in envs}
    broken = {e: c for e, c in counts.items() if c["inputs"] != c["kept"] + c["filtered"] + c["rejected"]}
    if broken:
        raise ReleaseError(f"inputs != kept + filtered + rejected: {broken}")
    files = file_inventory(staging)
    kept_rows = {e: sum(f["rows"] for f in files if f["path"].startswith(f"data/{e}/")) for e in envs}
    mismatch = {e: (kept_rows[e], counts[e]["kept"]) for e in envs if kept_rows[e] != counts[e]["kept"]}
    if mismatch:
        raise ReleaseError(f"rows written differ from kept counts (rows, kept): {mismatch}")
    warnings = []
    leak = leak_filter_summary(staging, probes, cfg)
    if not leak["applied"]:
        warnings.append(
            "The 25% leak filter (ProactiveBench App. 0.A.8) was NOT applied to this release: no probe "
            "pool was configured, so samples a model answers on the first turn are still included."
        )
    strategies = staged.extra.get("negatives", [])
    if any(s["environment"] == "coco" and s["strategy"] != "clip_text" for s in strategies):
        warnings.append(
            "COCO wrong options are random categories, not CLIP hard negatives "
            "(no CLIP model was configured; see negatives.strategies in manifest.json)."
        )
    miner = make_miner(clip).describe() if clip else None
    if miner and miner["random_weights"]:
        warnings.append(
            f"CLIP hard negatives were mined with RANDOM open_clip weights ({miner['model']}): they "
            "are not semantically similar categories (test / smoke configuration only)."
        )
    manifest = {
        "benchmark": BENCHMARK,
        "version": version,
        "versioning": SEMVER_HELP,
        "schema": {"record": EPISODE.name, "version": EPISODE.version},
        "code_version": code_version(),
        "config_sha256": config_hash(cfg),
        "config": cfg,
        "global_seed": seed,
        "split": SPLIT,
        "sources": {e: {"root": readers[e].root, **source_digest(staged.sources.get(e, []))}
                    for e in envs},
        "stages": {e: dict(sorted(staged.counts.get(e, {}).items())) for e in envs},
        "counts": counts,
        "negatives": {"strategies": strategies, "clip": miner},
        "leak_filter": leak,
        "warnings": warnings,
        "files": files,
    }
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    usage = (
        "import datasets\n"
        "ds = datasets.load_dataset('/abs/path/to/this/release', 'coco', split='test')\n"
        "ds[0]['frames'][0]  # a PIL image; configs: one per environment, plus 'all'"
    )
    card = render_card(
        title="ProactiveBench",
        summary=(
            "Multi-turn MCQA episodes over ordered frame sequences in which a model must ask for "
            "help (a proactive suggestion) before it can answer (ProactiveBench §3). Built by benchforge. "
            "`reports/counts.png` shows where every input went (kept / filtered / rejected)."
        ),
        manifest=manifest,
        # datasets 5.2 cannot read a zero-row Parquet file ("BatchSize must be greater than 0"),
        # so an environment with no kept episode has no data file and no config; the counts
        # table of the card still lists it with kept = 0.
        groups={e: f"data/{e}" for e in envs if counts[e]["kept"]},
        split=SPLIT,
        schema=EPISODE,
        warnings=warnings,
        usage=usage,
    )
    (staging / "README.md").write_text(card)
    plot_counts(counts, staging / "reports" / "counts.png",
                f"ProactiveBench {version}: where every input went")
    shutil.rmtree(staging / "_build")
    return manifest


def leak_filter_summary(staging: Path, probes: str | None, cfg: dict[str, Any]) -> dict[str, Any]:
    """Manifest entry of the leak filter, and its report in ``reports/`` (ProactiveBench App. 0.A.8:
    kept/filtered per environment, first-turn accuracy before/after, the threshold's recall)."""
    from filtering.leak import LeakFilter
    from filtering.report import env_rows, per_model_accuracy, write_leak_report

    if not probes:
        return {"applied": False, "probes_config": None}
    lf = LeakFilter(probes, run_id=staging.name)
    samples = []
    for folder in ("data", "filtered"):
        for shard in sorted((staging / folder).rglob("*.parquet")):
            table = pq.read_table(shard, columns=["environment", "probe_results"]).to_pylist()
            for row in table:
                decision = lf.decide(row["probe_results"])[0]
                samples.append({**row, "decision": decision, "route": lf.route(decision)})
    rejected = pq.read_table(staging / "rejected").to_pylist()
    samples += [{"environment": r["environment"], "route": "rejected", "decision": "unresolved",
                 "probe_results": []} for r in rejected if r["stage"] == "leak_filter"]
    report_p = float((cfg.get("leak_report") or {}).get("assumed_success_rate", 0.4))
    paths = write_leak_report(
        str(staging / "reports"), env_rows(samples), lf.pool, n=len(lf.pool), p=report_p,
        threshold=lf.config.threshold,
        per_model=per_model_accuracy(s["probe_results"] for s in samples), usage=lf.usage(),
        applied=True,
    )
    return {**lf.describe(), "probes_config": probes,
            "report": [Path(p).relative_to(staging).as_posix() for p in paths]}


def print_summary(final: Path, manifest: dict[str, Any]) -> None:
    print(f"\nRelease written to {final}")
    print(f"{'environment':<12} {'inputs':>7} {'kept':>6} {'filtered':>9} {'rejected':>9}")
    for env, c in sorted(manifest["counts"].items()):
        print(f"{env:<12} {c['inputs']:>7} {c['kept']:>6} {c['filtered']:>9} {c['rejected']:>9}")
    for w in manifest["warnings"]:
        print(f"WARNING: {w}")


def main() -> None:
    try:
        run()
    except ReleaseError as exc:
        raise SystemExit(f"release not published: {exc}") from exc


if __name__ == "__main__":
    main()
