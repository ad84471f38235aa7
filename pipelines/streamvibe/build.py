"""StreamVibe-Bench as a :class:`~pipelines.common.benchmark.Benchmark` (StreamVibe §3.3,
App. B.2–B.3).

Without ``--decisions`` the build stops at the pending-review state (validated, versioned
candidates, push units, H.264 review media); with a decision log only candidates approved by all
four reviewers on their current version are kept, allocated to the per-subtype targets and
serialized. The candidate *ledger* (``<out>/streamvibe/review/ledger.json``) remembers every
(id, version, content hash), so unchanged candidates keep their version and corrected ones get
the next (App. B.3: changing an annotation invalidates earlier approvals).

``--split train`` adds the training split (§3.4, App. B.4, Table 18) beside the evaluation split,
from the training manifest, through the same construction and the same review: its candidates
need the same four approvals (§3.3: the validated annotations become "causal interaction
sequences for training and evaluation"), a training video the evaluation split holds is filtered
(``heldout.py``), and the approved samples become SFT streams and RL seed rows (``training.py``),
allocated to ``configs/streamvibe/train.yaml``'s targets (Table 18 by default). The release's
facts are built in ``release.py`` (and ``train_release.py``), the pending-review state in
``review.py`` (:func:`~pipelines.streamvibe.review.pending_review`).
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.errors import BadInput
from core.files import write_json_atomic
from pipelines.common.benchmark import (
    VIDEO_SOURCES,
    Benchmark,
    Build,
    BuildContext,
    Exports,
    Finalized,
    Info,
    Quality,
    Review,
    Sources,
)
from pipelines.common.citations import folder_citation
from pipelines.common.decoded_frames import kept_root
from pipelines.common.video_sources import DATASETS
from pipelines.streamvibe.build_facts import CANDIDATES
from pipelines.streamvibe.demo import DEMO
from pipelines.streamvibe.gemini import gemini_settings
from pipelines.streamvibe.lmms_eval import ADAPTER
from pipelines.streamvibe.negatives import supported_tolerances
from pipelines.streamvibe.pipeline import PipelineConfig, build_pipeline, write_statuses
from pipelines.streamvibe.prepared import Prepared, TrainConfig
from pipelines.streamvibe.release import finalize
from pipelines.streamvibe.review import load_ledger, pending_review, review_statuses, update_ledger
from pipelines.streamvibe.rubric import RUBRICS
from pipelines.streamvibe.sources import (
    UNASSIGNED,
    load_intent_specs,
    read_manifest,
)
from pipelines.streamvibe.train_release import load_train_config
from pipelines.streamvibe.training import is_train
from schemas.streamvibe import (
    BENCHMARK,
    FILTERED,
    SAMPLE,
    SUBTYPES,
    TABLE15_TARGETS,
    TRAIN_PREFIX,
    TRAIN_SPLIT,
    config_name,
)

REPO = Path(__file__).resolve().parents[2]


def _path(p: str, base: Path) -> str:
    return p if os.path.isabs(p) or "://" in p else str(base / p)


def _suites(release: Path, counts: dict[str, dict[str, int]], manifest: dict[str, Any]) -> list[Any]:
    from pipelines.streamvibe.quality import suites

    return suites(release, {st: a["target"] for st, a in manifest["allocation"].items()}, counts,
                  max(manifest["fpr_near"]["tolerances_s"]))


def _training_suites(release: Path, train: dict[str, Any], counts: dict[str, dict[str, int]]) -> list[Any]:
    from pipelines.streamvibe.quality import training_suites

    return training_suites(release, train, counts)


def _no_corrections(state: Path, corrections: Path) -> list[dict[str, Any]]:
    """Why a StreamVibe candidate takes no corrections file, and what is pushed instead."""
    raise SystemExit(
        "streamvibe takes no corrections file: a StreamVibe candidate is corrected where it "
        "comes from (its task record or the generator); the rebuild gives every changed "
        f"candidate version n+1 (ledger {state.parent / 'ledger.json'}) in the new state's "
        "review_candidates.jsonl — push that file")


INFO = Info(
    name=BENCHMARK,
    title="StreamVibe-Bench",
    citation=folder_citation(Path(__file__).parent),
    summary=(
        "Causal 1 FPS video streams with timestamped user intents (Explicit I/P/R, Implicit "
        "G/L/M/T, Dynamic RV/CP/IT) and evidence points (window, preferred time, gold "
        "response), for Pointwise and Trajectory evaluation (StreamVibe §3). Every sample was "
        "approved by four reviewers on the same version (App. B.3). Built by benchforge."),
    usage=(
        "import datasets\n"
        "traj = datasets.load_dataset('/abs/path/to/this/release', '{config}', split='test')\n"
        "traj[0]['frames'][0]  # PIL image of second 0; steps[t] says what is visible at t\n"
        "pw = datasets.load_dataset('/abs/path/to/this/release', 'pointwise', split='test')"
    ),
    example_config="rv",
    source_datasets=VIDEO_SOURCES,
    unit="candidate",
    group_label="subtype",
)


class StreamVibeSources(Sources[Prepared]):
    """The candidate manifest (``source.path``), the config's video datasets (``--source``), the
    generator's settings, the review ledger and decisions, and the training split's settings."""

    default_config = REPO / "configs" / "streamvibe.yaml"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--source", action="append", default=[], metavar="DATASET=PATH",
                            help="a video dataset of the config's datasets: elsewhere, e.g. "
                                 "youcook2=/data/YouCookII (default <raw-dir>/streamvibe/<dataset>)")
        parser.add_argument("--generator", choices=["rule", "gemini"], default=None,
                            help="candidates from native annotations (rule) or from Gemini")
        parser.add_argument("--no-review-media", action="store_true",
                            help="pending state without transcoded review videos")
        parser.add_argument("--train-config", type=Path,
                            default=REPO / "configs" / "streamvibe" / "train.yaml",
                            help="the training split's settings (read with --split train)")

    def check_config(self, config: dict[str, Any], path: Path) -> dict[str, Any]:
        targets = config.get("targets") or TABLE15_TARGETS
        unknown = sorted(set(targets) - set(SUBTYPES))
        if unknown:
            raise SystemExit(f"{path}: targets: unknown subtypes {unknown}; known {list(SUBTYPES)}")
        config["targets"] = {k: int(targets.get(k, 0)) for k in SUBTYPES}
        if config.get("generator", "rule") not in ("rule", "gemini"):
            raise SystemExit(f"{path}: generator must be rule or gemini")
        try:
            config["tolerances_s"] = supported_tolerances(config)
        except ValueError as exc:
            raise SystemExit(f"{path}: {exc}") from exc
        return config

    def prepare(self, ctx: BuildContext[Prepared], info: Info) -> Prepared:
        cfg = ctx.config
        if ctx.args.generator:
            cfg["generator"] = ctx.args.generator
        try:  # the model settings first: a config error is the first thing to fix
            gemini = gemini_settings(cfg, ctx.config_path, REPO)
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
        src = cfg.get("source") or {}
        root = ctx.source_root(str(src.get("path", "streamvibe")), info.title,
                               "set RAW_DIR, or source.path in the config")
        manifest = str(src.get("manifest", "manifest.jsonl"))
        try:  # an unreadable manifest stops the build here, in one line, not inside Beam
            read_manifest(root, manifest)
        except BadInput as err:
            ctx.source_unreadable(info.name, root, err, sole=True)
        datasets = self._datasets(ctx, info, str(src.get("path", "streamvibe")))
        intents = _path(str(cfg.get("intents", "configs/streamvibe/intents.yaml")), REPO)
        ledger_path = ctx.out_root / "review" / "ledger.json"
        ledger = load_ledger(ledger_path)
        statuses = None
        if ctx.decisions is not None:
            latest = {k: max(int(e["version"]) for e in v) for k, v in ledger.items()}
            statuses = review_statuses(ctx.decisions, ctx.panel_size, latest, ctx.violations)
        prepared = Prepared(root=root, manifest=manifest, datasets=datasets,
                            intents=intents, specs_version=load_intent_specs(intents)[0],
                            gemini=gemini, ledger=ledger, ledger_path=ledger_path, statuses=statuses)
        if TRAIN_SPLIT in ctx.splits:
            # recorded in this release's manifest (config.train), so its config sha256 covers it
            ctx.config["train"] = train = load_train_config(ctx.args.train_config, REPO)
            rl = train["rl_seed"]
            prepared.train = TrainConfig(
                manifest=train["source"]["manifest"], sft_targets=train["sft_targets"],
                rl_targets=rl["targets"], before_s=rl["before_s"], after_s=rl["after_s"])
        return prepared

    def _datasets(self, ctx: BuildContext[Prepared], info: Info, base: str
                  ) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        """The config's video datasets (``datasets:``) as (name, root, subtypes to plan): each at
        ``<raw-dir>/<source.path>/<name>`` unless ``--source <name>=PATH`` moves it; one whose
        annotation files cannot be read stops the build, or is left out with
        ``--skip-unreadable-sources``."""
        conf = ctx.config.get("datasets") or {}
        overrides = {}
        for arg in ctx.args.source:
            name, sep, path = arg.partition("=")
            if not sep or not path:
                raise SystemExit(f"--source {arg}: expected DATASET=PATH")
            overrides[name] = path
        out = []
        for name in ctx.dataset_names(overrides, list(DATASETS)):
            opts = conf.get(name) or {}
            allowed = tuple(opts.get("subtypes") or SUBTYPES)
            if set(allowed) - set(SUBTYPES):
                raise SystemExit(f"datasets.{name}.subtypes: unknown {sorted(set(allowed) - set(SUBTYPES))}")
            root = ctx.dataset_root(name, f"{DATASETS[name].title} ({info.title})", overrides, base)
            try:
                DATASETS[name](root).check()
            except BadInput as err:
                ctx.source_unreadable(name, root, err)
                continue
            out.append((name, root, allowed))
        return tuple(out)

    def source_yield(self, ctx: BuildContext[Prepared], counts: dict[str, dict[str, int]], info: Info
                     ) -> dict[str, tuple[str, int, list[str]]]:
        """Candidates the manifest yielded (kept, pending review, or filtered by review or
        allocation): none means the path or the manifest is wrong, not that reviewers said no."""
        n = sum(counts.get(st, {}).get(k, 0) for st in SUBTYPES for k in ("kept", "pending", "filtered"))
        return {info.name: (f"{ctx.prepared.root}/{ctx.prepared.manifest}", n, [*SUBTYPES, UNASSIGNED])}


class StreamVibeBuild(Build[Prepared]):
    """Candidates from the manifest through review and allocation to samples (and, with ``--split
    train``, SFT streams and RL seed rows), per subtype; the ledger of candidate versions."""

    schema = SAMPLE
    filtered_schema = FILTERED
    splits = ("test", TRAIN_SPLIT)
    train_prefix = TRAIN_PREFIX
    train_outcome_folders = ("filtered", "rejected")
    worker_modules = ("pipelines.streamvibe.pipeline",)

    def groups(self, ctx: BuildContext[Prepared]) -> list[str]:
        return list(SUBTYPES) + ([TRAIN_PREFIX + st for st in SUBTYPES] if TRAIN_SPLIT in ctx.splits else [])

    def data_prefix(self, group: str) -> str | None:
        # training rows are per pool (SFT streams, RL seed rows per help point): the training
        # suite checks them against the kept counts (quality.training_frames)
        return f"data/{config_name(group)}" if group in SUBTYPES else None

    def describe(self, ctx: BuildContext[Prepared]) -> str:
        return (f"({' + '.join(ctx.splits)}) from {ctx.prepared.root} "
                f"(generator {ctx.config.get('generator', 'rule')}, "
                f"{'no' if ctx.pending else 'with'} review decisions)")

    def pipeline(self, p, ctx: BuildContext[Prepared]) -> None:
        cfg, st = ctx.config, ctx.prepared
        build_pipeline(p, PipelineConfig(
            root=st.root, manifest=st.manifest, staging=str(ctx.staging), split=self.split,
            seed=ctx.seed, intents_path=st.intents, generator=str(cfg.get("generator", "rule")),
            gemini=st.gemini, frames=dict(cfg.get("frames") or {}),
            negatives=dict(cfg.get("negatives") or {}, tau_s=max(cfg["tolerances_s"])),
            targets=cfg["targets"],
            statuses_file=write_statuses(ctx.staging, st.statuses) if st.statuses is not None else "",
            train=st.train,
            datasets=st.datasets,
            reuse_frames=self._kept_frames(ctx),
        ), st.ledger)

    @staticmethod
    def _kept_frames(ctx: BuildContext[Prepared]) -> str:
        """The frames this version's pending-review state kept, for the release to reuse ("":
        a pending build, or a state without them)."""
        kept = kept_root(ctx.out_root / "review" / ctx.version)
        return str(kept) if not ctx.pending and kept.is_dir() else ""

    def after_pipeline(self, ctx: BuildContext[Prepared]) -> None:
        """The ledger and the per-dataset counts, over the candidates streamed from their build
        facts: a release never holds the candidates themselves (docs/scaling.md)."""
        counts = ctx.prepared.candidate_counts

        def counted(candidates: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
            for c in candidates:
                if not is_train(c["id"]):
                    counts.setdefault(c["source_collection"], Counter())[c["subtype"]] += 1
                yield c

        write_json_atomic(ctx.prepared.ledger_path,
                          update_ledger(ctx.prepared.ledger, counted(CANDIDATES.iter(ctx.staging))))

    def finalize(self, ctx: BuildContext[Prepared], counts: dict[str, dict[str, int]],
                 files: list[dict[str, Any]]) -> Finalized:
        return finalize(ctx, counts, files)


STREAMVIBE = Benchmark(
    info=INFO,
    sources=StreamVibeSources(),
    build=StreamVibeBuild(),
    # the suites are imported on use: great-expectations is loaded by the gate, not by every build step
    quality=Quality(suites=_suites, training_suites=_training_suites),
    review=Review(rubrics=RUBRICS, pending=pending_review, correction_units=_no_corrections),
    exports=Exports(lmms_eval=ADAPTER),
    demo=DEMO,  # demo.py: the demo corpus, and the scripted panel of a reviewed build
)


def run(argv: list[str] | None = None) -> Path:
    """Build streamvibe (:func:`pipelines.common.driver.run`); the release or pending-review folder."""
    from pipelines.common.driver import run as build

    return build(STREAMVIBE, argv)
