"""ProactiveBench as a :class:`~pipelines.common.benchmark.Benchmark`: seven source datasets in
their native layouts → multi-turn MCQA episodes (ProactiveBench §3, App. 0.A).

``python -m pipelines.proactivebench --raw-dir …`` (or ``make build-proactivebench``); the shared
driver does the rest (:mod:`pipelines.common.driver`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from exports.release import source_digest
from filtering.report import release_leak_summary
from pipelines.common import driver
from pipelines.common.benchmark import Benchmark, BuildContext, Finalized
from pipelines.common.sources import preflight
from pipelines.proactivebench.episodes import BuildConfig
from pipelines.proactivebench.pipeline import PipelineConfig, build_pipeline, make_miner
from pipelines.proactivebench.sources import make_readers
from schemas.proactivebench import ENVIRONMENTS, EPISODE, FILTERED_EPISODE

REPO = Path(__file__).resolve().parents[2]


class ProactiveBench(Benchmark):
    name = "proactivebench"
    title = "ProactiveBench"
    citation_key = "proactivebench"
    summary = (
        "Multi-turn MCQA episodes over ordered frame sequences in which a model must ask for help "
        "(a proactive suggestion) before it can answer (ProactiveBench §3). Built by benchforge. "
        "`reports/counts.png` shows where every input went (kept / filtered / rejected)."
    )
    usage = (
        "import datasets\n"
        "ds = datasets.load_dataset('/abs/path/to/this/release', '{config}', split='test')\n"
        "ds[0]['frames'][0]  # a PIL image; configs: one per environment, plus 'all'"
    )
    example_config = "coco"
    schema = EPISODE
    filtered_schema = FILTERED_EPISODE
    default_config = REPO / "configs" / "proactivebench.yaml"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--source", action="append", default=[], metavar="ENV=PATH",
                            help="one dataset elsewhere, e.g. coco=/data/coco (make: COCO_DIR=…)")
        parser.add_argument("--probes", default=None, help="leak-filter probe pool YAML")
        parser.add_argument("--only", default=None, help="comma-separated environments to build")

    def check_config(self, config: dict[str, Any], path: Path) -> dict[str, Any]:
        unknown = sorted(set(config.get("environments") or {}) - set(ENVIRONMENTS))
        if unknown:
            raise SystemExit(f"{path}: environments: unknown {unknown}; known: {list(ENVIRONMENTS)}")
        return config

    def prepare(self, ctx: BuildContext) -> None:
        if ctx.args.only:
            keep = set(ctx.args.only.split(","))
            ctx.config["environments"] = {k: v for k, v in ctx.config["environments"].items()
                                          if k in keep}
        overrides = dict(s.split("=", 1) for s in ctx.args.source)
        readers = make_readers(ctx.config, ctx.raw_dir, overrides)
        vocab, broken = preflight(readers)
        for env, err in broken.items():
            ctx.source_unreadable(env, readers.pop(env).root, err)
        if not readers:
            raise SystemExit("error: no readable source left to build")
        ctx.state["readers"], ctx.state["vocab"] = readers, vocab
        ctx.state["probes"] = ctx.args.probes or ctx.config.get("probes")
        ctx.state["clip"] = (ctx.config.get("negatives") or {}).get("clip")

    def groups(self, ctx: BuildContext) -> list[str]:
        return sorted(ctx.state["readers"])

    def source_yield(self, ctx: BuildContext, counts: dict[str, dict[str, int]]
                     ) -> dict[str, tuple[str, int, list[str]]]:
        return {env: (r.root, counts.get(env, {}).get("kept", 0), [env])
                for env, r in ctx.state["readers"].items()}

    def describe(self, ctx: BuildContext) -> str:
        return (f"building {self.name} {ctx.version} from {ctx.raw_dir} "
                f"({', '.join(ctx.state['readers'])}) → {ctx.out_root / ctx.version}")

    def pipeline(self, p, ctx: BuildContext) -> None:
        negatives = ctx.config.get("negatives") or {}
        build_pipeline(p, ctx.state["readers"], ctx.state["vocab"], PipelineConfig(
            staging=str(ctx.staging),
            split=self.split,
            build=BuildConfig(global_seed=ctx.seed, negative_strategy=dict(negatives.get("strategy") or {})),
            open_ended_per_environment=int(ctx.config.get("open_ended_per_environment", 100)),
            clip=ctx.state["clip"],
            probes_config=ctx.state["probes"],
            run_id=ctx.staging.name,
        ))

    def suites(self, release: Path, counts: dict[str, dict[str, int]],
               manifest: dict[str, Any]) -> list[Any]:
        from pipelines.proactivebench.quality import suites

        return suites(release, counts)

    def finalize(self, ctx: BuildContext, counts: dict[str, dict[str, int]],
                 files: list[dict[str, Any]]) -> Finalized:
        build = ctx.staging / "_build"
        sources: dict[str, list[dict[str, str]]] = {}
        for row in json.loads((build / "sources.json").read_text()):
            sources.setdefault(row["environment"], []).append({"file": row["file"], "sha256": row["sha256"]})
        notes: dict[str, list[dict[str, str]]] = {}
        for row in json.loads((build / "notes.json").read_text()):
            notes.setdefault(row["environment"], []).append({"file": row["file"], "note": row["note"]})
        strategies = json.loads((build / "negatives.json").read_text())
        clip, probes = ctx.state["clip"], ctx.state["probes"]
        leak = release_leak_summary(ctx.staging, probes, ctx.config)
        miner = make_miner(clip).describe() if clip else None
        readers = ctx.state["readers"]
        return Finalized(
            manifest={
                "sources": {e: {"root": readers[e].root, **source_digest(sources.get(e, [])),
                                **({"notes": notes[e]} if e in notes else {})}
                            for e in sorted(readers)},
                "negatives": {"strategies": strategies, "clip": miner},
                "leak_filter": leak,
            },
            warnings=warnings(leak, strategies, miner),
            # datasets cannot read a zero-row Parquet file: an environment without kept episodes
            # has no config (the counts table still lists it with kept = 0)
            configs={e: f"data/{e}" for e in sorted(readers) if counts[e]["kept"]},
        )


def warnings(leak: dict[str, Any], strategies: list[dict[str, Any]], miner: dict[str, Any] | None
             ) -> list[str]:
    out = []
    if not leak["applied"]:
        out.append(
            "The 25% leak filter (ProactiveBench App. 0.A.8) was NOT applied to this release: no probe "
            "pool was configured, so samples a model answers on the first turn are still included.")
    if any(s["environment"] == "coco" and s["strategy"] != "clip_text" for s in strategies):
        out.append(
            "COCO wrong options are random categories, not CLIP hard negatives "
            "(no CLIP model was configured; see negatives.strategies in manifest.json).")
    if miner and miner["random_weights"]:
        out.append(
            f"CLIP hard negatives were mined with RANDOM open_clip weights ({miner['model']}): they "
            "are not semantically similar categories (test / smoke configuration only).")
    return out


PROACTIVEBENCH = ProactiveBench()


def run(argv: list[str] | None = None) -> Path:
    return driver.run(PROACTIVEBENCH, argv)


def main() -> None:
    driver.main(PROACTIVEBENCH)
