"""ProactiveBench as a :class:`~pipelines.common.benchmark.Benchmark`: seven source datasets in
their native layouts → multi-turn MCQA episodes (ProactiveBench §3, App. 0.A).

``python -m pipelines.proactivebench --raw-dir …`` (or ``make build-proactivebench``); the shared
driver does the rest (:mod:`pipelines.common.driver`).

``--split train`` adds the training split beside the evaluation split (ProactiveBench §5):
single-turn GRPO rows from COCO train2014 and a QuickDraw subset, held out from the evaluation
split it is published with (``train_pipeline.py``, ``train_release.py``, ``train_quality.py``),
set by ``configs/proactivebench/train.yaml``. The release's facts are built in ``release.py``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from pipelines.common.benchmark import (
    Benchmark,
    Build,
    BuildContext,
    ExportCommand,
    Exports,
    Finalized,
    Info,
    Quality,
    Review,
    Sources,
)
from pipelines.common.citations import folder_citation
from pipelines.common.sources import preflight
from pipelines.proactivebench.compat.cli import build_parser as compat_parser
from pipelines.proactivebench.compat.cli import main as compat_main
from pipelines.proactivebench.demo import DEMO
from pipelines.proactivebench.episodes import BuildConfig
from pipelines.proactivebench.lmms_eval import ADAPTER
from pipelines.proactivebench.pipeline import PipelineConfig, build_pipeline
from pipelines.proactivebench.prepared import Prepared
from pipelines.proactivebench.release import finalize
from pipelines.proactivebench.rubric import RUBRICS
from pipelines.proactivebench.sources import make_readers
from pipelines.proactivebench.train_config import load_train_config, make_train_readers
from pipelines.proactivebench.train_pipeline import BuildTrainingSplit, TrainPipelineConfig
from pipelines.proactivebench.training import RowsConfig
from pipelines.proactivebench.vlmevalkit import export as vlmevalkit_export
from schemas.proactivebench import (
    ENVIRONMENTS,
    EPISODE,
    FILTERED_EPISODE,
    TRAIN_PREFIX,
    TRAIN_SPLIT,
)

REPO = Path(__file__).resolve().parents[2]


def _suites(release: Path, counts: dict[str, dict[str, int]], manifest: dict[str, Any]) -> list[Any]:
    from pipelines.proactivebench.quality import suites

    return suites(release, counts)


def _training_suites(release: Path, train: dict[str, Any], counts: dict[str, dict[str, int]]) -> list[Any]:
    from pipelines.proactivebench.train_quality import training_suites

    return training_suites(release, train, counts)


INFO = Info(
    name="proactivebench",
    title="ProactiveBench",
    citation=folder_citation(Path(__file__).parent),
    summary=(
        "Multi-turn MCQA episodes over ordered frame sequences in which a model must ask for "
        "help (a proactive suggestion) before it can answer (ProactiveBench §3). Built by "
        "benchforge. `reports/counts.png` shows where every input went (kept / filtered / "
        "rejected)."
    ),
    usage=(
        "import datasets\n"
        "ds = datasets.load_dataset('/abs/path/to/this/release', '{config}', split='test')\n"
        "ds[0]['frames'][0]  # a PIL image; configs: one per environment, plus 'all'"
    ),
    example_config="coco",
    # the seven datasets of ProactiveBench App. 0.A, the training split's COCO and QuickDraw among them
    source_datasets=("rod", "vsod", "mvpn", "imagenet_c", "quickdraw", "changeit", "coco"),
    unit="episode",
)


class ProactiveBenchSources(Sources[Prepared]):
    """One reader per environment of the config (``--source``, ``--only``), the leak filter's
    probe pool, and with ``--split train`` the training sources (``--train-source``), each held
    out from the evaluation source of its name."""

    default_config = REPO / "configs" / "proactivebench.yaml"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--source", action="append", default=[], metavar="ENV=PATH",
                            help="one dataset elsewhere, e.g. coco=/data/coco (make: COCO_DIR=…)")
        parser.add_argument("--probes", default=None, metavar="PATH",
                            help="leak-filter probe pool YAML")
        parser.add_argument("--only", default=None, help="comma-separated environments to build")
        parser.add_argument("--train-config", type=Path,
                            default=REPO / "configs" / "proactivebench" / "train.yaml",
                            help="the training split's settings (read with --split train)")
        parser.add_argument("--train-source", action="append", default=[], metavar="ENV=PATH",
                            help="a training source elsewhere, e.g. quickdraw=/data/qd "
                                 "(make: QUICKDRAW_TRAIN_DIR=…)")

    def check_config(self, config: dict[str, Any], path: Path) -> dict[str, Any]:
        unknown = sorted(set(config.get("environments") or {}) - set(ENVIRONMENTS))
        if unknown:
            raise SystemExit(f"{path}: environments: unknown {unknown}; known: {list(ENVIRONMENTS)}")
        return config

    def prepare(self, ctx: BuildContext[Prepared], info: Info) -> Prepared:
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
        # the config's probe pool is read by the workers, in working directories of their own
        probes = ctx.args.probes or ctx.config.get("probes")
        prepared = Prepared(readers=readers, vocab=vocab,
                            probes=probes if not probes or "://" in probes else os.path.abspath(probes),
                            clip=(ctx.config.get("negatives") or {}).get("clip"))
        if TRAIN_SPLIT in ctx.splits:
            prepared.train_readers, prepared.train_vocab = self._prepare_train(ctx, overrides, readers)
        return prepared

    def _prepare_train(self, ctx: BuildContext[Prepared], overrides: dict[str, str],
                       evaluation: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The training sources, read like the evaluation's (preflight, unreadable → stop or
        skip); each must be held out from an evaluation source this build reads."""
        # recorded in this release's manifest (config.train), so its config sha256 covers it
        ctx.config["train"] = train = load_train_config(ctx.args.train_config)
        readers = make_train_readers(train, ctx.config["environments"], ctx.raw_dir, ctx.seed,
                                     overrides, dict(s.split("=", 1) for s in ctx.args.train_source))
        unheld = sorted(set(readers) - set(evaluation))
        if unheld:
            raise SystemExit(f"error: training sources {unheld} are held out from the evaluation "
                             "sources of the same name, which this build does not read (--only, "
                             "an unreadable source): build them too, or the evaluation split only")
        vocab, broken = preflight(readers)
        for env, err in broken.items():
            ctx.source_unreadable(TRAIN_PREFIX + env, readers.pop(env).root, err,
                                  flag=f"--train-source {env}")
        if not readers:
            raise SystemExit("error: no readable training source left to build")
        return readers, vocab

    def source_yield(self, ctx: BuildContext[Prepared], counts: dict[str, dict[str, int]], info: Info
                     ) -> dict[str, tuple[str, int, list[str]]]:
        out = {env: (r.root, counts.get(env, {}).get("kept", 0), [env])
               for env, r in ctx.prepared.readers.items()}
        for env, r in ctx.prepared.train_readers.items():
            group = TRAIN_PREFIX + env
            out[group] = (r.root, counts.get(group, {}).get("kept", 0), [group])
        return out


class ProactiveBenchBuild(Build[Prepared]):
    """Items to multi-turn episodes per environment (and, with ``--split train``, training
    sequences and their rows), counted per environment."""

    schema = EPISODE
    filtered_schema = FILTERED_EPISODE
    splits = ("test", TRAIN_SPLIT)
    train_prefix = TRAIN_PREFIX
    train_outcome_folders = ("filtered_inputs", "rejected")
    worker_modules = ("pipelines.proactivebench.pipeline", "pipelines.proactivebench.sources")

    def groups(self, ctx: BuildContext[Prepared]) -> list[str]:
        return sorted(ctx.prepared.readers) + [TRAIN_PREFIX + e for e in sorted(ctx.prepared.train_readers)]

    def data_prefix(self, group: str) -> str | None:
        # a training group keeps sequences, each giving several rows: the training suite checks
        # its kept count against the sequences in grpo/ (train_quality.count_frame)
        return None if group.startswith(TRAIN_PREFIX) else f"data/{group}"

    def describe(self, ctx: BuildContext[Prepared]) -> str:
        train = (f"; {TRAIN_SPLIT}: {', '.join(ctx.prepared.train_readers)}"
                 if ctx.prepared.train_readers else "")
        return (f"({' + '.join(ctx.splits)}) from {ctx.raw_dir} "
                f"({', '.join(ctx.prepared.readers)}{train}) → {ctx.out_root / ctx.version}")

    def pipeline(self, p, ctx: BuildContext[Prepared]) -> None:
        negatives = ctx.config.get("negatives") or {}
        build = BuildConfig(global_seed=ctx.seed, negative_strategy=dict(negatives.get("strategy") or {}))
        items = build_pipeline(p, ctx.prepared.readers, ctx.prepared.vocab, PipelineConfig(
            staging=str(ctx.staging),
            split=self.split,
            build=build,
            open_ended_per_environment=int(ctx.config.get("open_ended_per_environment", 100)),
            clip=ctx.prepared.clip,
            probes_config=ctx.prepared.probes,
            run_id=ctx.staging.name,
        ))
        if ctx.prepared.train_readers:
            train = ctx.config["train"]
            rows = RowsConfig(hint=train["hint"], global_seed=ctx.seed, **train["rows_per_sequence"])
            _ = items | "TrainingSplit" >> BuildTrainingSplit(
                ctx.prepared.train_readers, ctx.prepared.train_vocab,
                TrainPipelineConfig(staging=str(ctx.staging), build=build, rows=rows,
                                    clip=ctx.prepared.clip))

    def finalize(self, ctx: BuildContext[Prepared], counts: dict[str, dict[str, int]],
                 files: list[dict[str, Any]]) -> Finalized:
        return finalize(ctx, counts)


PROACTIVEBENCH = Benchmark(
    info=INFO,
    sources=ProactiveBenchSources(),
    build=ProactiveBenchBuild(),
    # the suites are imported on use: great-expectations is loaded by the gate, not by every build step
    quality=Quality(suites=_suites, training_suites=_training_suites),
    # the VSOD episodes' hand-chosen frames and answers are reviewed in rounds beside the build
    # (``benchforge review``), which a release does not wait for
    review=Review(rubrics=RUBRICS, pending=None),
    exports=Exports(
        lmms_eval=ADAPTER,
        vlmevalkit=vlmevalkit_export,
        commands=(ExportCommand("compat-proactivebench", compat_main, compat_parser),),
    ),
    demo=DEMO,  # demo.py: the demo corpus
)


def run(argv: list[str] | None = None) -> Path:
    """Build proactivebench (:func:`pipelines.common.driver.run`); the release or pending-review folder."""
    from pipelines.common.driver import run as build

    return build(PROACTIVEBENCH, argv)
