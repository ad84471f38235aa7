"""ProReady-QA as a :class:`~pipelines.common.benchmark.Benchmark` (StreamReady §4, App. C).

StreamReady App. C is semi-automatic: the pipeline proposes, people refine, "only approved items
are released". Without ``--decisions`` the build stops at the pending-review state (candidates,
push units, review media); with a decision log (and optional ``--corrections``: new versions of
items, JSONL of ``sample_id``, ``version``, ``turns``) the same pipeline applies the corrections
and the approval rule of :mod:`annotation.approval` per item and releases the approved items
per task type, with the data-quality suite and the QC reports (windows, two-annotator IoU with
``--qc-windows``, VLM verifiability when a VLM is configured). The release's facts are built in
``release.py`` (:func:`~pipelines.proready.release.finalize`), the pending-review state in
``review.py`` (:func:`~pipelines.proready.review.pending_review`).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any

from core.errors import BadInput
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
from pipelines.common.sources import ReaderConfig, preflight
from pipelines.proready.demo import DEMO
from pipelines.proready.generation import ITEMS, generation_config
from pipelines.proready.lmms_eval import ADAPTER
from pipelines.proready.native import NativeReader, dataset_names, open_dataset
from pipelines.proready.native import ProReadySources as AllVideoSources  # one source of every video
from pipelines.proready.pipeline import PipelineConfig, build_pipeline
from pipelines.proready.prepared import Prepared
from pipelines.proready.release import finalize
from pipelines.proready.review import (
    correction_units,
    pending_review,
    read_corrections,
    refuse_uncorrected,
    uncorrected,
)
from pipelines.proready.rubric import RUBRICS
from pipelines.proready.sources import BENCHMARK, VIDEOS, ProReadyReader
from schemas.proready import FILTERED_ITEM, RELEASED_ITEM, TASK_NAMES

REPO = Path(__file__).resolve().parents[2]


def _suites(release: Path, counts: dict[str, dict[str, int]], manifest: dict[str, Any]) -> list[Any]:
    from pipelines.proready.quality import suites

    return suites(release, int(manifest["review"]["panel_size"]))


INFO = Info(
    name=BENCHMARK,
    title="ProReady-QA",
    citation=folder_citation(Path(__file__).parent),
    summary=(
        "Future-dependent (multi-turn) questions on long videos with answer evidence "
        "windows [t_s, t_e] for readiness-aware evaluation with ARS (StreamReady §4). Five "
        "task types: " + ", ".join(f"{k.upper()} ({v})" for k, v in TASK_NAMES.items())
        + ". Videos are referenced by path and sha256, not embedded. Only items approved "
        "by all four reviewers on the released version are included. Built by benchforge."),
    usage=("import datasets\n"
           "ds = datasets.load_dataset('/abs/path/to/this/release', '{config}', split='test')\n"
           "ds[0]['questions'][0]  # model input: ask each question at its ask_time_s\n"
           "ds[0]['gold_turns'][0]['t_s']  # gold, for scoring; configs: {configs}\n"
           "# ARS: pipelines.proready.ars.score(qs, tau=manifest['ars_tau_s'])"),
    example_config="ssr",
    source_datasets=VIDEO_SOURCES,
    unit="item",
    group_label="unit",
)


class ProReadySources(Sources[Prepared]):
    """The custom manifest (``--source PATH``), the config's video datasets (``--source
    NAME=PATH``), the question generation's settings, and the decisions, corrections and
    two-annotator windows of a release build."""

    default_config = REPO / "configs" / "proready.yaml"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--source", action="append", default=[], metavar="PATH|DATASET=PATH",
                            help="the custom manifest's directory (PATH), or a video dataset "
                                 "elsewhere, e.g. ego4d=/data/ego4d (default "
                                 "<raw-dir>/proready/<dataset>; docs/proready.md)")
        parser.add_argument("--corrections", type=Path, default=None,
                            help="JSONL of corrected versions: sample_id, version, turns")
        parser.add_argument("--qc-windows", type=Path, default=None,
                            help="JSONL of two annotators' windows for the IoU audit")
        parser.add_argument("--review-media", choices=("source", "webm", "mp4"), default=None,
                            help="media for the review tasks (default: review.media in the config)")

    def check_config(self, config: dict[str, Any], path: Path) -> dict[str, Any]:
        for key in ("source", "generation", "evidence"):
            if key not in config:
                raise SystemExit(f"{path}: missing section {key!r}")
        return config

    def prepare(self, ctx: BuildContext[Prepared], info: Info) -> Prepared:
        args, cfg = ctx.args, ctx.config
        for flag, path in (("--corrections", args.corrections), ("--qc-windows", args.qc_windows)):
            if path is not None and not path.exists():
                raise SystemExit(f"{flag}: {path} does not exist")
        if ctx.decisions is None and (args.corrections or args.qc_windows):
            raise SystemExit("--corrections / --qc-windows only apply to a release: pass --decisions too")
        src = dict(cfg["source"])
        custom, overrides = _source_args(args.source)
        root = ctx.source_root(custom or src.get("path", "proready"), info.title,
                               "set RAW_DIR, or --source /path", base=Path.cwd() if custom else None)
        reader = ProReadyReader(root, ReaderConfig(global_seed=ctx.seed, extra={
            "manifest": src.get("manifest", "manifest.yaml"),
            "end_tolerance_s": src.get("end_tolerance_s", 0.5)}))
        for err in preflight({VIDEOS: reader})[1].values():
            ctx.source_unreadable(info.name, root, err, sole=True)
        natives, roots = self._datasets(ctx, info, str(src.get("path", "proready")), overrides,
                                        float(src.get("end_tolerance_s", 0.5)))
        # without datasets the one reader is read as before (the demo release's bytes)
        sources = AllVideoSources({"": reader, **natives}) if natives else reader
        n_corrections, corrections = read_corrections(args.corrections) if args.corrections else (0, {})
        if ctx.decisions is not None:  # before any work: a correction the build lacks stops it
            from annotation.decision_log import is_log, latest_pushed

            pushed = latest_pushed(args.decisions, BENCHMARK) if is_log(args.decisions) else {}
            refuse_uncorrected(uncorrected(pushed, ctx.decisions, corrections), args.decisions,
                               args.corrections)
        decisions: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for d in ctx.decisions or []:
            decisions[str(d["sample_id"])].append(d)
        by_sample: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for v in ctx.violations or []:
            by_sample[str(v["sample_id"])].append(v)
        generation = generation_config(cfg, REPO, str(ctx.config_path))
        return Prepared(root=root, reader=reader, sources=sources, roots={"": root, **roots},
                        datasets=tuple((n, roots[n]) for n in natives),
                        generation=generation, corrections=corrections,
                        n_corrections=n_corrections, decisions=dict(decisions),
                        violations_by_sample=dict(by_sample))

    def _datasets(self, ctx: BuildContext[Prepared], info: Info, base: str, overrides: dict[str, str],
                  tolerance: float) -> tuple[dict[str, NativeReader], dict[str, str]]:
        """The config's video datasets (``datasets:`` name → options) as ProReady sources, and
        every dataset root they read: each at ``<raw-dir>/<source.path>/<name>`` unless
        ``--source <name>=PATH`` moves it (VStream-QA reads its clips' narrations from Ego4D's
        root, the same way, or ``datasets.vstream_qa.ego4d``: a folder under the raw-dir). One
        whose annotation files cannot be read stops the build, or is left out with
        ``--skip-unreadable-sources``."""
        conf = ctx.config.get("datasets") or {}
        names = ctx.dataset_names(overrides, dataset_names())

        def root_of(name: str, listed_as: str = "") -> str:
            return ctx.dataset_root(name, f"{name} ({info.title})", overrides, base, listed_as)

        roots: dict[str, str] = {}
        if "vstream_qa" in names:
            roots["ego4d"] = root_of("ego4d", str((conf.get("vstream_qa") or {}).get("ego4d", "")))
        readers: dict[str, NativeReader] = {}
        for name in names:
            opts = dict(conf.get(name) or {})
            bad = sorted(set(opts) - {"point_span_s", "ego4d"})
            if bad:
                raise SystemExit(f"datasets.{name}: unknown options {bad} (point_span_s, ego4d)")
            root = roots[name] = root_of(name)
            try:
                native = NativeReader(open_dataset(name, root, roots), ReaderConfig(
                    global_seed=ctx.seed, extra={"end_tolerance_s": tolerance, **opts}))
                native.vocabulary()
            except BadInput as err:
                ctx.source_unreadable(name, root, err)
                continue
            readers[name] = native
        return readers, roots

    def source_yield(self, ctx: BuildContext[Prepared], counts: dict[str, dict[str, int]], info: Info
                     ) -> dict[str, tuple[str, int, list[str]]]:
        reader = ctx.prepared.reader
        return {VIDEOS: (f"{reader.root}/{reader.manifest}", counts.get(VIDEOS, {}).get("kept", 0),
                         [VIDEOS])}


class ProReadyBuild(Build[Prepared]):
    """Videos to candidate items (questions with evidence windows), and with decisions the
    approved (and corrected) items, counted per unit: the videos read and the items released."""

    schema = RELEASED_ITEM
    filtered_schema = FILTERED_ITEM
    worker_modules = ("pipelines.proready.pipeline", "pipelines.proready.sources")

    def groups(self, ctx: BuildContext[Prepared]) -> list[str]:
        return [VIDEOS, ITEMS]

    def data_prefix(self, group: str) -> str | None:
        return "data" if group == ITEMS else None

    def describe(self, ctx: BuildContext[Prepared]) -> str:
        g = ctx.prepared.generation
        also = "".join(f" + {name}" for name, _ in ctx.prepared.datasets)
        return (f"from {ctx.prepared.root}{also} ({g.method} questions, "
                f"{g.evidence} windows, {'no' if ctx.pending else 'with'} review "
                "decisions)")

    def pipeline(self, p, ctx: BuildContext[Prepared]) -> None:
        st: Prepared = ctx.prepared
        build_pipeline(p, st.sources, PipelineConfig(
            staging=str(ctx.staging), generation=st.generation, review=not ctx.pending,
            decisions=st.decisions, corrections=st.corrections,
            corrections_file=ctx.args.corrections.name if ctx.args.corrections else "",
            panel_size=ctx.panel_size, violations=st.violations_by_sample))

    def finalize(self, ctx: BuildContext[Prepared], counts: dict[str, dict[str, int]],
                 files: list[dict[str, Any]]) -> Finalized:
        return finalize(ctx)


def _source_args(values: list[str]) -> tuple[str | None, dict[str, str]]:
    """``--source`` values: ``NAME=PATH`` for a video dataset (NAME one ProReady knows), any
    other value the custom manifest's directory (at most one)."""
    names = set(dataset_names())
    custom: list[str] = []
    overrides: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if sep and name in names:
            if not path:
                raise SystemExit(f"--source {value}: expected {name}=PATH")
            overrides[name] = path
        else:
            custom.append(value)
    if len(custom) > 1:
        raise SystemExit(f"--source: one custom source directory, got {custom} (a dataset is "
                         f"given as NAME=PATH, NAME one of {sorted(names)})")
    return (custom[0] if custom else None), overrides


PROREADY = Benchmark(
    info=INFO,
    sources=ProReadySources(),
    build=ProReadyBuild(),
    # the suites are imported on use: great-expectations is loaded by the gate, not by every build step
    quality=Quality(suites=_suites),
    review=Review(rubrics=RUBRICS, pending=pending_review, correction_units=correction_units),
    exports=Exports(lmms_eval=ADAPTER),
    demo=DEMO,  # demo.py: the demo corpus, and the scripted panel of a reviewed build
)


def run(argv: list[str] | None = None) -> Path:
    """Build proready (:func:`pipelines.common.driver.run`); the release or pending-review folder."""
    from pipelines.common.driver import run as build

    return build(PROREADY, argv)
