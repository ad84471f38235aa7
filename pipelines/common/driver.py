"""The one build driver: config → Beam pipeline → (pending-review state | checked release).

Every benchmark is built the same way (``benchforge build <benchmark>`` / ``python -m
pipelines.<benchmark>``); a :class:`~pipelines.common.benchmark.Benchmark` supplies only what is
its own. The driver owns:

* the command line (``--config``, ``--raw-dir``, ``--out``, ``--decisions`` for reviewed
  benchmarks, ``--split`` for benchmarks with a training split, ``--skip-unreadable-sources``,
  ``--allow-empty-sources``, ``--overwrite``, ``--allow-small-bump``, plus the benchmark's own
  options; anything else goes to Beam) and the config file;
* the splits of a release: the evaluation split always, and with ``--split train`` the training
  split *beside* it, built in the same run from the same sources, review decisions and seeds.
  Why together: "held out" is a property of a training split *and* the evaluation split it is
  published with, so the gate that proves it must see both; and a deterministic build gives the
  evaluation files the same bytes as an evaluation-only build. The manifest counts each split
  apart (``splits``), the card lists each config with its split;
* a staging folder beside the release, removed unless published (a killed build's is swept by
  the next one: :func:`exports.release.staging_dir`);
* running the pipeline on the embedded runner or any Beam runner, with progress lines;
* the balance check ``inputs = kept + filtered + rejected (+ pending)`` per counts group, the
  check that every configured source yielded samples (else the build stops naming the path it
  read) and the check that the rows written equal the kept counts — a release that fails any is
  not published;
* for reviewed benchmarks without decisions, the *pending review* state
  (``<out>/<benchmark>/review/<version>/``: candidates, push units, review media, rejected/,
  ``status.json``) — nothing is released until four reviewers approve (StreamVibe App. B.3);
* the manifest (listing every file of the release with its sha256), the dataset card (only
  configs that have rows), ``reports/counts.png``; the gate (:func:`gate`: files against the
  manifest, every medium decoded, the expectations) on the staged release, its reports written
  into it and listed before publication; the version rule (a published version is replaced
  only by the same records, or with ``--overwrite``), the diff against the previous version in
  the same folder and the bump it requires (a smaller bump is refused unless
  ``--allow-small-bump``: :func:`exports.diff.bump_facts`), the atomic publish,
  ``<out>/<benchmark>/RELEASE_NOTES.md`` and the summary.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from collections import Counter
from collections.abc import Collection
from pathlib import Path
from typing import Any

import yaml

from core.blobs import blob_root, decoded_digests
from exports.croissant import write_croissant
from exports.dataset_card import render_card, source_terms
from exports.diff import ALLOW_SMALL_BUMP, bump_facts, card_lines, small_bump_warning, write_build_diff
from exports.quality import QualityReport, check_release, import_in_background
from exports.release import (
    SEMVER_HELP,
    ReleaseError,
    code_version,
    config_hash,
    file_inventory,
    iso_date,
    outcome_counts,
    plot_counts,
    previous_release,
    publish,
    release_entry,
    release_status,
    staging_dir,
    write_empty_shards,
    write_release_notes,
)
from pipelines.common.benchmark import Benchmark, BuildContext, Finalized
from pipelines.common.citations import card_citations
from pipelines.common.options import import_runner, local_workers, run_pipeline, runs_elsewhere
from pipelines.common.transforms import FILTERED_INPUTS
from schemas.outcomes import FILTERED_INPUT, REJECTION

PENDING = "pending_review"


def load_config(path: Path) -> dict[str, Any]:
    try:
        config = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"cannot read config {path}: {exc}") from exc
    if not isinstance(config, dict) or "version" not in config:
        raise SystemExit(f"{path}: needs a mapping with at least `version:`")
    if "release_date" in config:  # checked now, not after the pipeline; YAML may read a date
        try:
            config["release_date"] = iso_date(config["release_date"])
        except ValueError as exc:
            raise SystemExit(f"{path}: {exc}") from exc
    return config


def build_parser(benchmark: Benchmark) -> argparse.ArgumentParser:
    """The options of ``benchforge build <benchmark>`` (the driver's and the benchmark's own)."""
    parser = argparse.ArgumentParser(
        prog=f"benchforge build {benchmark.name}",
        description=f"Build a {benchmark.title} release (unknown options go to Apache Beam, "
                    "e.g. --runner=DataflowRunner, --direct_num_workers=2).")
    parser.add_argument("--config", type=Path, default=benchmark.default_config,
                        help="the build config YAML: version, seed, sources, filters (default: "
                             f"{shown(benchmark.default_config)})")
    parser.add_argument("--raw-dir", type=Path, required=True, help="root of the source datasets")
    parser.add_argument("--out", type=Path, default=Path("out"),
                        help=f"output root: the release goes to <out>/{benchmark.name}/<version>/ "
                             "beside the earlier versions (default: out)")
    parser.add_argument("--skip-unreadable-sources", action="store_true",
                        help="build the other sources when one cannot be read as a whole (its "
                             "annotation file, manifest or label list); the manifest records it")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a published version that holds other records (default: "
                             "refuse; bump `version:` in the config instead)")
    parser.add_argument("--allow-empty-sources", action="store_true",
                        help="publish even when a configured source yields no sample (default: "
                             "stop, naming the path it was read from)")
    parser.add_argument(ALLOW_SMALL_BUMP, action="store_true",
                        help="publish even when the version bump over the previous version in "
                             "--out is smaller than its changes require (TFDS semantics; default: "
                             "refuse, naming the required bump); the card and manifest say so")
    if benchmark.reviewed:
        parser.add_argument(
            "--decisions", type=Path, default=None,
            help="review decisions: a decision-log folder (`benchforge review pull`; its chain is "
                 "verified and its head recorded), or a JSONL / Parquet file of REVIEW_DECISION rows "
                 "(recorded as an import: the card names it and its sha256); without it the build "
                 "stops at the pending-review state")
    if len(benchmark.splits) > 1:
        parser.add_argument(
            "--split", choices=benchmark.splits, default=benchmark.split,
            help=f"{benchmark.split} (default): the evaluation release; another split is published "
                 f"together with the {benchmark.split} split it is held out from")
    benchmark.add_arguments(parser)
    return parser


def parse_args(benchmark: Benchmark, argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = build_parser(benchmark)
    args, beam_args = parser.parse_known_args(argv)
    if unknown := unknown_flags(beam_args):
        parser.error(f"unrecognized arguments: {' '.join(unknown)} (neither a benchforge option "
                     "nor an Apache Beam pipeline option; see --help)")
    return absolute_paths(parser, args), beam_args


def absolute_paths(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """Every path option made absolute against this (the driver's) working directory, once,
    before anything reaches the pipeline; a URL (``gs://…``) stays as it is.

    Why: a Flink, Spark or Dataflow worker — or Beam's external worker pool — runs in a working
    directory of its own, so a relative ``--raw-dir demo_corpus`` handed to a step would be read
    there, not where the user typed it. A path option is one of type :class:`~pathlib.Path`, or
    one whose metavar names a ``PATH`` (``--source ENV=PATH``: the part after ``NAME=``). Paths
    are made absolute without resolving symlinks (:func:`os.path.abspath`), so a dataset linked
    into the raw-dir is still recorded by its place there (:meth:`BuildContext.recorded_root`);
    releases keep naming roots relative to the raw-dir."""
    for action in parser._actions:  # noqa: SLF001 - argparse offers no public list of options
        value = getattr(args, action.dest, None)
        metavar = action.metavar if isinstance(action.metavar, str) else ""
        if value is None or not (action.type is Path or "PATH" in metavar):
            continue
        named = "=PATH" in metavar  # NAME=PATH (or, for ProReady, a plain PATH)
        if isinstance(value, list):
            setattr(args, action.dest, [absolute(v, named) for v in value])
        else:
            setattr(args, action.dest, absolute(value, named))
    return args


NAME = re.compile(r"[A-Za-z0-9_.-]+")


def absolute(value: str | Path, named: bool = False) -> str | Path:
    """``value`` as an absolute path of the same type; a URL as it is; with ``named``, a
    ``NAME=PATH`` value keeps its name and makes its path absolute."""
    if isinstance(value, Path):
        return Path(os.path.abspath(value))
    if "://" in value:
        return value
    name, sep, path = value.partition("=")
    if named and sep and NAME.fullmatch(name):
        return f"{name}={absolute(path)}"
    return os.path.abspath(value)


def unknown_flags(beam_args: list[str]) -> list[str]:
    """Flags that no Beam pipeline option knows either. Why: Beam only logs "Discarding
    unparseable args" and drops them, so a misspelled or retired flag (``--reviews``) built a
    release without what it asked for, and exited 0."""
    if not any(a.startswith("-") for a in beam_args):
        return []
    import logging

    from apache_beam.options.pipeline_options import PipelineOptions

    import_runner(beam_args)  # the runner's own options are known once its module is imported
    options = PipelineOptions(beam_args)
    beam_log = logging.getLogger("apache_beam.options.pipeline_options")
    level = beam_log.level
    beam_log.setLevel(logging.ERROR)  # its warning would repeat what the error says
    try:
        known = set(options.get_all_options())
    finally:
        beam_log.setLevel(level)
    unknown = set(options.get_all_options(retain_unknown_options=True)) - known
    flags = (a.split("=", 1)[0] for a in beam_args if a.startswith("-"))
    return list(dict.fromkeys(f for f in flags if f.lstrip("-").replace("-", "_") in unknown))


def read_stages(staging: Path) -> dict[str, dict[str, int]]:
    """Counts per group and stage from every ``_build/counts*.json`` (a pipeline part that
    counts its own groups apart, e.g. a training split, writes its own file; a group and stage
    counted in two files is summed)."""
    stages: dict[str, dict[str, int]] = {}
    for path in sorted((staging / "_build").glob("counts*.json")):
        for row in json.loads(path.read_text()):
            group = stages.setdefault(row["environment"], {})
            group[row["stage"]] = group.get(row["stage"], 0) + row["n"]
    return {g: dict(sorted(s.items())) for g, s in sorted(stages.items())}


def count_groups(stages: dict[str, dict[str, int]], declared: list[str], pending: bool
                 ) -> dict[str, dict[str, int]]:
    """inputs / kept / filtered / rejected (/ pending) per group: every declared group, and any
    other group that had inputs (e.g. items whose group could not even be read)."""
    out = {}
    for group in sorted(set(stages) | set(declared)):
        c = outcome_counts(stages.get(group, {}))
        if pending:
            c["pending"] = stages.get(group, {}).get("pending", 0)
        if group in declared or c["inputs"]:
            out[group] = c
    return out


def check_balance(counts: dict[str, dict[str, int]]) -> None:
    broken = {g: c for g, c in counts.items()
              if c["inputs"] != c["kept"] + c["filtered"] + c["rejected"] + c.get("pending", 0)}
    if broken:
        raise ReleaseError(f"inputs != kept + filtered + rejected (+ pending): {broken}")


def check_sources_yield(benchmark: Benchmark, ctx: BuildContext, counts: dict[str, dict[str, int]],
                        staging: Path) -> list[str]:
    """Sources that yielded no sample: a ReleaseError naming the path each was read from (a root
    one folder too high lists nothing, and a published empty release hides that), or — with
    ``--allow-empty-sources`` — warnings for the manifest and the card."""
    empty = []
    for name, (path, samples, groups) in sorted(benchmark.source_yield(ctx, counts).items()):
        if samples:
            continue
        c = {k: sum(counts.get(g, {}).get(k, 0) for g in groups) for k in ("inputs", "filtered", "rejected")}
        why = outcome_reasons(staging, groups)
        empty.append(f"{name}: 0 samples from {path} (inputs {c['inputs']}, filtered {c['filtered']}, "
                     f"rejected {c['rejected']}{'; e.g. ' + '; '.join(why) if why else ''})")
    if empty and not ctx.args.allow_empty_sources:
        raise ReleaseError("a configured source yields no sample — check the path, or pass "
                           "--allow-empty-sources: " + " | ".join(empty))
    return empty


def outcome_reasons(staging: Path, groups: list[str], limit: int = 3) -> list[str]:
    """The first distinct reasons (file: reason) of the groups' rejections and filtered inputs
    (a second split's are in subfolders, e.g. ``rejected/train/``)."""
    import pyarrow.parquet as pq

    out: list[str] = []
    for folder in ("rejected", FILTERED_INPUTS):
        for path in sorted((staging / folder).rglob("*.parquet")):
            for row in pq.read_table(path, columns=["environment", "source_file", "reason"]).to_pylist():
                text = f"{row['source_file']}: {row['reason']}"
                if row["environment"] in groups and text not in out:
                    out.append(text)
    return sorted(out)[:limit]


def check_rows(benchmark: Benchmark, counts: dict[str, dict[str, int]], files: list[dict[str, Any]]
               ) -> None:
    mismatch = {}
    for group, c in counts.items():
        prefix = benchmark.data_prefix(group)
        if prefix is None:
            continue
        rows = sum(f["rows"] for f in files if f["path"].startswith(prefix.rstrip("/") + "/"))
        if rows != c["kept"]:
            mismatch[group] = (rows, c["kept"])
    if mismatch:
        raise ReleaseError(f"rows written differ from kept counts (rows, kept): {mismatch}")


def check_approved(benchmark: Benchmark, counts: dict[str, dict[str, int]]) -> None:
    """A reviewed release needs at least one approved row in its evaluation split."""
    if not benchmark.reviewed:
        return
    released = sum(c["kept"] for g, c in counts.items()
                   if benchmark.split_of(g) == benchmark.split and benchmark.data_prefix(g) is not None)
    if not released:
        raise ReleaseError(f"no {benchmark.unit} is approved by all reviewers on its current version: "
                           "nothing to release (see the review states in the decision log)")


def outcome_schemas(benchmark: Benchmark) -> dict[str, Any]:
    """Each outcome folder of a release and the record its rows hold."""
    return {"filtered": benchmark.filtered_schema, "rejected": REJECTION, FILTERED_INPUTS: FILTERED_INPUT}


def run(benchmark: Benchmark, argv: list[str] | None = None) -> Path:
    """Build ``benchmark``; return the release (or the pending-review state) folder."""
    args, beam_args = parse_args(benchmark, argv)
    config = benchmark.check_config(load_config(args.config), args.config)
    asked = getattr(args, "split", benchmark.split)
    ctx = BuildContext(config, args.config, args.raw_dir, args.out.resolve() / benchmark.name, args,
                       splits=tuple(dict.fromkeys((benchmark.split, asked))),
                       workers=local_workers(beam_args))
    provenance: dict[str, Any] | None = None  # the decisions' log head / imported file, for the manifest
    if benchmark.reviewed and args.decisions is not None:
        from annotation.decision_log import (
            DecisionLogError,
            read_decisions,
            read_standing_violations,
        )
        from annotation.decision_log import provenance as decisions_provenance

        try:  # the head first: a log that changes while it is read no longer matches it
            provenance = decisions_provenance(args.decisions)
            ctx.decisions = read_decisions(args.decisions, benchmark.name)
            ctx.violations = read_standing_violations(args.decisions, benchmark.name)
            if provenance["log_head"] and decisions_provenance(args.decisions) != provenance:
                raise DecisionLogError(f"{args.decisions} was written to while it was read; build again")
        except DecisionLogError as exc:
            raise SystemExit(f"--decisions: {exc}") from None
    benchmark.prepare(ctx)
    with staging_dir(ctx.out_root, ctx.version) as staging:
        ctx.staging = staging
        print(f"[benchforge] {benchmark.describe(ctx)}", file=sys.stderr)
        if runs_elsewhere(beam_args):  # this process only waits: load what the gate needs
            import_in_background()
        run_pipeline(lambda p: benchmark.pipeline(p, ctx), beam_args, staging / "_build" / "progress",
                     benchmark.worker_modules)
        benchmark.after_pipeline(ctx)
        for split in ctx.splits[1:]:  # "nothing filtered / rejected" visible, as at the root
            for folder in benchmark.train_outcome_folders:
                write_empty_shards(staging, [f"{folder}/{split}"], outcome_schemas(benchmark)[folder], folder)
        stages = read_stages(staging)
        counts = count_groups(stages, benchmark.groups(ctx), pending=ctx.pending and benchmark.reviewed)
        check_balance(counts)
        empty = check_sources_yield(benchmark, ctx, counts, staging)
        if benchmark.reviewed and ctx.pending:
            state = write_pending(benchmark, ctx, counts)
            print_pending(benchmark, ctx, state, counts)
            return state
        for folder, schema in outcome_schemas(benchmark).items():
            write_empty_shards(staging, [folder], schema, folder)
        hashes: dict[tuple[Any, ...], str] = {}  # file_inventory: each unchanged file hashed once
        files = file_inventory(staging, hashes)
        check_rows(benchmark, counts, files)
        check_approved(benchmark, counts)
        (staging / "reports").mkdir(exist_ok=True)
        fin = benchmark.finalize(ctx, counts, files)
        if provenance is not None:  # which log head (or imported file) the review states came from
            from annotation.decision_log import provenance_lines

            fin.manifest["review"] = {**fin.manifest.get("review", {}), "decisions_source": provenance}
            fin.card_sections = [*fin.card_sections, "", "## Review decisions", "",
                                 *provenance_lines(provenance)]
        final = ctx.out_root / ctx.version
        declared = benchmark.groups(ctx)
        card_counts = {g: c for g, c in counts.items() if not declared or g in declared}
        plot_counts(card_counts, staging / "reports" / "counts.png",
                    f"{benchmark.title} {ctx.version}: where every input went")
        proven = decoded_digests(blob_root(str(staging)))  # the gate need not decode these again
        shutil.rmtree(staging / "_build")
        warnings = fin.warnings + skipped_warnings(ctx) + [f"Empty source (--allow-empty-sources): {e}"
                                                           for e in empty]
        manifest = assemble_manifest(benchmark, ctx, stages, counts, file_inventory(staging, hashes), fin,
                                     warnings)
        previous = previous_release(ctx.out_root, ctx.version)
        sources, citations = source_terms(benchmark.source_datasets), card_citations(benchmark.citation)
        files_for_card = manifest["files"]

        def write_card(warnings: list[str]) -> None:
            (staging / "README.md").write_text(render_card(
                title=benchmark.title, summary=benchmark.summary,
                manifest=dict(manifest, counts=card_counts), groups=fin.configs, split=benchmark.split,
                schema=benchmark.schema, warnings=warnings, usage=benchmark.usage,
                files=files_for_card, example=benchmark.example_config,
                extra_configs=fin.extra_configs,
                sections=fin.card_sections + (card_lines(previous.name, ctx.version) if previous else []),
                sources=sources, citations=citations))

        write_card(warnings)
        manifest["files"] = file_inventory(staging, hashes)
        manifest["release"] = release_facts(ctx, final, manifest)
        write_manifest(staging, manifest)
        if previous is not None:
            diff = write_build_diff(previous, staging)
            print(f"[benchforge] changes since {previous.name}: bump required {diff.required} "
                  f"({diff.verdict})", file=sys.stderr)
            # a bump smaller than the changes require stops here, before the gate and the publish
            manifest["version_bump"] = bump = bump_facts(
                diff, allow_small=ctx.args.allow_small_bump, config=str(ctx.config_path))
            if "published_with" in bump:
                manifest["warnings"] = warnings = warnings + [small_bump_warning(bump, ctx.version)]
                write_card(warnings)
            manifest["files"] = file_inventory(staging, hashes)  # with reports/diff-* (and the card)
            write_manifest(staging, manifest)
        quality = gate(benchmark, staging, manifest, label=release_label(manifest),
                       reports=staging / "reports",
                       threads=ctx.workers, proven=proven)
        if not quality.success:
            raise ReleaseError(f"the gate failed: {gate_summary(quality)}")
        manifest["quality"] = {"success": True, "expectations": len(quality.checks),
                               "files_checked": quality.files_checked,
                               "media_decoded": quality.media_decoded,
                               "media_proven": quality.media_proven,
                               "report": "reports/data_quality.html"}
        manifest["files"] = file_inventory(staging, hashes)  # now with the gate's reports
        write_manifest(staging, manifest)
        # Croissant metadata records the manifest's and the card's sha256, so it comes last;
        # `benchforge check` derives it from the release again and compares (exports/integrity.py)
        write_croissant(staging, staging)
        publish(staging, final)
    write_release_notes(ctx.out_root, benchmark.title)
    print_summary(benchmark, final, manifest, fin)
    return final


def write_manifest(staging: Path, manifest: dict[str, Any]) -> None:
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def skipped_warnings(ctx: BuildContext) -> list[str]:
    return [f"Source {name} was NOT built: it cannot be read ({s['file']}: {s['field']}: {s['reason']}); "
            "built with --skip-unreadable-sources (manifest: skipped_sources)."
            for name, s in sorted(ctx.skipped.items())]


def release_facts(ctx: BuildContext, final: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """The version rule (TFDS): a published version is replaced only by the same records —
    or, with ``--overwrite``, by others, which its entry then says; ReleaseError otherwise."""
    kind, facts = release_status(final, manifest["files"], overwrite=ctx.args.overwrite,
                                 config=ctx.config_path)
    if kind == "same" and facts is not None:
        return facts  # the published entry stands: a rebuild of the same records is no new release
    return release_entry(ctx.out_root, ctx.version, manifest, ctx.config.get("release_notes"),
                         facts if kind == "overwrite" else None)


def assemble_manifest(benchmark: Benchmark, ctx: BuildContext, stages: dict[str, dict[str, int]],
                      counts: dict[str, dict[str, int]], files: list[dict[str, Any]], fin: Finalized,
                      warnings: list[str]) -> dict[str, Any]:
    return {
        "benchmark": benchmark.name,
        "version": ctx.version,
        "versioning": SEMVER_HELP,
        "schema": {"record": benchmark.schema.name, "version": benchmark.schema.version},
        "code_version": code_version(),
        "citation": benchmark.citation,  # what croissant.json cites (exports/croissant.py)
        "config_sha256": config_hash(ctx.config),
        "config": ctx.config,
        "global_seed": ctx.seed,
        **split_facts(benchmark, ctx, counts),
        "stages": stages,
        "counts": counts,
        "warnings": warnings,
        "files": files,
        **({"skipped_sources": ctx.skipped} if ctx.skipped else {}),
        **fin.manifest,
    }


def split_facts(benchmark: Benchmark, ctx: BuildContext, counts: dict[str, dict[str, int]]
                ) -> dict[str, Any]:
    """``split`` of a one-split release; a release with several splits lists them and counts
    each apart (its groups, and inputs / kept / filtered / rejected summed over them)."""
    if len(ctx.splits) == 1:
        return {"split": benchmark.split}
    per: dict[str, Any] = {}
    for split in ctx.splits:
        groups = {g: c for g, c in counts.items() if benchmark.split_of(g) == split}
        per[split] = {"groups": sorted(groups),
                      **{k: sum(c[k] for c in groups.values())
                         for k in ("inputs", "kept", "filtered", "rejected")}}
    return {"split": list(ctx.splits), "splits": per}


def release_label(manifest: dict[str, Any]) -> str:
    """What the gate's reports call a release: its benchmark and version, never its folder."""
    return f"{manifest.get('benchmark', '?')} {manifest.get('version', '?')}"


def gate(benchmark: Benchmark, release: Path, manifest: dict[str, Any], label: str, reports: Path,
         threads: int = 1, proven: Collection[str] = frozenset()) -> QualityReport:
    """The gate of a (staged or published) release: every file against the manifest's sha256,
    size and row count, every embedded image and media file decoded (but for bytes in
    ``proven``, which the build decoded in full where it made them: :mod:`exports.integrity`), and
    the benchmark's great-expectations suites; the report goes to ``reports`` (md, json,
    offline html)."""
    def suites() -> list[Any]:
        counts = manifest["counts"]
        test = {g: c for g, c in counts.items() if benchmark.split_of(g) == benchmark.split}
        out = benchmark.suites(release, test, manifest)
        return out + (benchmark.training_suites(release, manifest["train"], counts)
                      if "train" in manifest else [])

    return check_release(release, manifest.get("files") or [], suites, reports, label=label,
                         threads=threads, proven=proven)


def gate_summary(report: QualityReport, limit: int = 5) -> str:
    found = [f"{p.path}: {p.check}: {p.detail}" for p in report.problems[:limit]]
    found += [f"{c.check} [{c.column}]: {c.examples[:3]}" for c in report.failed[:limit]]
    return "; ".join(found)


# -- the pending-review state -----------------------------------------------------------------


def write_pending(benchmark: Benchmark, ctx: BuildContext, counts: dict[str, dict[str, int]]) -> Path:
    """``<out>/<benchmark>/review/<version>/``: what reviewers get, published atomically; no
    release is written (StreamVibe App. B.3: nothing is released before four approvals)."""
    review = benchmark.pending(ctx)
    state_dir = ctx.out_root / "review" / ctx.version
    with staging_dir(state_dir.parent, f"pending-{ctx.version}") as tmp:
        cands = sorted(review.candidates, key=lambda c: c["id"])
        (tmp / "candidates.jsonl").write_text(
            "".join(json.dumps(c, sort_keys=True, ensure_ascii=False) + "\n" for c in cands))
        (tmp / "review_candidates.jsonl").write_text("".join(
            json.dumps(u, sort_keys=True, ensure_ascii=False) + "\n"
            for u in sorted(review.units, key=lambda u: (u["sample_id"], u["version"]))))
        if review.media is not None:
            shutil.move(review.media, tmp / "media")
        for group in ("filtered", FILTERED_INPUTS, "rejected"):  # what did not become a candidate
            if (ctx.staging / group).exists():
                shutil.copytree(ctx.staging / group, tmp / group)
        status = {
            "state": PENDING, "benchmark": benchmark.name, "version": ctx.version,
            "candidates": len(cands), "counts": counts,
            "per_task_type": dict(sorted(Counter(u["task_type"] for u in review.units).items())),
            "config_sha256": config_hash(ctx.config), "code_version": code_version(),
            "review_media": "media/" if review.media else None,
            **({"skipped_sources": ctx.skipped} if ctx.skipped else {}),
            **review.status,
        }
        status["next"] = next_commands(benchmark, ctx, state_dir, status)
        (tmp / "status.json").write_text(json.dumps(status, indent=1, sort_keys=True) + "\n")
        publish(tmp, state_dir)
    return state_dir


def print_counts(benchmark: Benchmark, counts: dict[str, dict[str, int]], pending: bool) -> None:
    w = max([12, *map(len, counts)])  # a second split's groups are longer (train/unassigned)
    head = f"{benchmark.group_label:<{w}} {'inputs':>7} {'kept':>6} {'filtered':>9} {'rejected':>9}"
    print(head + (f" {'pending':>8}" if pending else ""))
    for group, c in counts.items():
        line = f"{group:<{w}} {c['inputs']:>7} {c['kept']:>6} {c['filtered']:>9} {c['rejected']:>9}"
        print(line + (f" {c.get('pending', 0):>8}" if pending else ""))


def next_commands(benchmark: Benchmark, ctx: BuildContext, state: Path, status: dict[str, Any]
                  ) -> list[str]:
    """The review loop's commands for this pending state, complete enough to paste: the server's
    data dir (``configs/review_panel.yaml``), the media folder and the decision log are named in
    each. The decision log sits beside the versioned states (``<out>/<benchmark>/review/log``),
    which a rebuild replaces; the server serves copies of the media (``annotation.routing``), so
    neither a rebuild nor a release breaks a task under review."""
    from annotation.server import load_panel_config

    exe = Path(sys.executable).with_name("benchforge")
    bf = shown(exe) if exe.exists() else f"{shown(Path(sys.executable))} -m pipelines.cli"
    data_dir = shown(load_panel_config().data_dir)
    log = shown(ctx.out_root / "review" / "log")
    media = shown(Path(status.get("media_root") or state / "media"))
    round_ = f"--benchmark {benchmark.name} --round {status['review_round']} --rubric {status['rubric']}"
    build = (f"{bf} build {benchmark.name} --config {shown(ctx.config_path)} "
             f"--raw-dir {shown(ctx.raw_dir)} --out {shown(ctx.out_root.parent)}")
    return [
        f"{bf} review server start --data-dir {data_dir}",
        f"{bf} review panel ensure --data-dir {data_dir}",
        f"{bf} review push --data-dir {data_dir} {round_} "
        f"--candidates {shown(state / 'review_candidates.jsonl')} "
        f"--media-dir {media} --log-dir {log}",
        f"{bf} review pull --data-dir {data_dir} {round_} --log-dir {log}",
        f"{bf} review status --log-dir {log} --benchmark {benchmark.name}",
        f"{build} --decisions {log}",
    ]


def shown(path: Path) -> str:
    """A path as the commands a build prints give it: relative to the working directory when it
    lies inside it (``.venv/bin/benchforge``, ``out/streamvibe/review/log``), else absolute —
    so the state a build writes names no folder the user did not type, and pastes as it is."""
    absolute = Path(os.path.abspath(path))
    cwd = Path.cwd()
    return absolute.relative_to(cwd).as_posix() if absolute.is_relative_to(cwd) else str(absolute)


def print_pending(benchmark: Benchmark, ctx: BuildContext, state: Path,
                  counts: dict[str, dict[str, int]]) -> None:
    st = json.loads((state / "status.json").read_text())
    print(f"\nPENDING REVIEW — no release written. {st['candidates']} candidates wait for four "
          f"approvals each (StreamVibe App. B.3).\n  state: {state}")
    print_counts(benchmark, counts, pending=True)
    steps = ("start the review server and its panel (once; it serves every benchmark's and "
             "round's media)", None, "push the candidates (their media are copied to the server)",
             "when the reviewers are done: pull the decisions, see the states",
             None, "build the release from the decision log")
    print("  next (paste as they are):")
    for step, cmd in zip(steps, st["next"], strict=True):
        if step:
            print(f"  # {step}")
        print(f"    {cmd}")


def print_summary(benchmark: Benchmark, final: Path, manifest: dict[str, Any], fin: Finalized) -> None:
    print(f"\nRelease written to {final}")
    print_counts(benchmark, {g: c for g, c in manifest["counts"].items()}, pending=False)
    for line in fin.summary_lines:
        print(line)
    for w in manifest["warnings"]:
        print(f"WARNING: {w}")


def main(benchmark: Benchmark, argv: list[str] | None = None) -> None:
    try:
        run(benchmark, argv)
    except ReleaseError as exc:
        raise SystemExit(f"release not published: {exc}") from exc
