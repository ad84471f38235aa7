"""The one build driver: config → Beam pipeline → (pending-review state | checked release).

Every benchmark is built the same way (``benchforge build <benchmark>`` / ``python -m
pipelines.<benchmark>``); a :class:`~pipelines.common.benchmark.Benchmark` supplies only what is
its own. :func:`run` is the order of the steps; each job is a module of its own:

* :mod:`pipelines.common.command_line` — the options (``--config``, ``--raw-dir``, ``--out``,
  ``--decisions`` for reviewed benchmarks, ``--split`` for benchmarks with a training split, the
  benchmark's own; anything else goes to Beam, an unknown flag is refused) and the config file;
* :mod:`pipelines.common.options` — running the pipeline on the embedded runner or any Beam
  runner, with progress lines;
* :mod:`pipelines.common.checks` — ``inputs = kept + filtered + rejected (+ pending)`` per
  counts group, every configured source yielded a sample, the rows written equal the kept counts;
  a release that fails any is not published;
* :mod:`pipelines.common.pending` — for reviewed benchmarks without decisions, the pending-review
  state; nothing is released until four reviewers approve (StreamVibe App. B.3);
* :mod:`pipelines.common.assembly` — the manifest (every file with its sha256), the gate on the
  staged release, the summary.

One inventory of the release (:class:`exports.release.ReleaseInventory`): the staged files are
listed and hashed once after the pipeline, walked again once after the benchmark's ``finalize``
(which may write anywhere in it: only what it wrote or changed is read), and the files the driver
writes afterwards — the card, ``reports/diff-*``, the gate's ``reports/data_quality.*`` — are
added by name. ``manifest.json`` is written once, from that inventory, after the gate and before
``croissant.json`` (which records its sha256); nothing in the build reads it from disk before
(the diff against the previous version is given the manifest).

The splits of a release: the evaluation split always, and with ``--split train`` the training
split *beside* it, built in the same run from the same sources, review decisions and seeds. Why
together: "held out" is a property of a training split *and* the evaluation split it is published
with, so the gate that proves it must see both; and a deterministic build gives the evaluation
files the same bytes as an evaluation-only build. A staging folder beside the release is removed
unless published (a killed build's is swept by the next one: :func:`exports.release.staging_dir`);
the dataset card lists only configs that have rows; the version rule (a published version is
replaced only by the same records, or with ``--overwrite``), the diff against the previous version
and the bump it requires (:func:`exports.diff.bump_facts`), the atomic publish and
``<out>/<benchmark>/RELEASE_NOTES.md`` follow the gate.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from core.blobs import blob_root, decoded_digests
from exports.croissant import write_croissant
from exports.dataset_card import render_card, source_terms
from exports.diff import bump_facts, card_lines, small_bump_warning, write_build_diff
from exports.quality import import_in_background
from exports.release import (
    ReleaseError,
    ReleaseInventory,
    plot_counts,
    previous_release,
    publish,
    staging_dir,
    write_empty_shards,
    write_release_notes,
)
from pipelines.common.assembly import (
    assemble_manifest,
    gate,
    gate_summary,
    print_summary,
    release_facts,
    release_label,
    skipped_warnings,
    write_manifest,
)
from pipelines.common.benchmark import Benchmark, BuildContext
from pipelines.common.checks import (
    check_approved,
    check_balance,
    check_rows,
    check_sources_yield,
    count_groups,
    outcome_schemas,
    read_stages,
)
from pipelines.common.citations import card_citations
from pipelines.common.command_line import load_config, parse_args
from pipelines.common.options import local_workers, run_pipeline, runs_elsewhere
from pipelines.common.pending import print_pending, write_pending


def run(benchmark: Benchmark, argv: list[str] | None = None) -> Path:
    """Build ``benchmark``; return the release (or the pending-review state) folder."""
    args, beam_args = parse_args(benchmark, argv)
    sources, build = benchmark.sources, benchmark.build
    config = sources.check_config(load_config(args.config), args.config)
    asked = getattr(args, "split", build.split)
    ctx = BuildContext(config, args.config, args.raw_dir, args.out.resolve() / benchmark.name, args,
                       splits=tuple(dict.fromkeys((build.split, asked))),
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
            ctx.decision_rows = len(ctx.decisions)
            ctx.violations = read_standing_violations(args.decisions, benchmark.name)
            if provenance["log_head"] and decisions_provenance(args.decisions) != provenance:
                raise DecisionLogError(f"{args.decisions} was written to while it was read; build again")
        except DecisionLogError as exc:
            raise SystemExit(f"--decisions: {exc}") from None
    ctx.prepared = sources.prepare(ctx, benchmark.info)
    ctx.decisions = None  # prepare derived what the build needs from them (BuildContext)
    with staging_dir(ctx.out_root, ctx.version) as staging:
        ctx.staging = staging
        print(f"[benchforge] building {benchmark.name} {ctx.version} {build.describe(ctx)}", file=sys.stderr)
        if runs_elsewhere(beam_args):  # this process only waits: load what the gate needs
            import_in_background()
        run_pipeline(lambda p: build.pipeline(p, ctx), beam_args, staging / "_build" / "progress",
                     build.worker_modules)
        build.after_pipeline(ctx)
        for split in ctx.splits[1:]:  # "nothing filtered / rejected" visible, as at the root
            for folder in build.train_outcome_folders:
                write_empty_shards(staging, [f"{folder}/{split}"], outcome_schemas(benchmark)[folder], folder)
        stages = read_stages(staging)
        counts = count_groups(stages, build.groups(ctx), pending=ctx.pending and benchmark.reviewed)
        check_balance(counts)
        empty = check_sources_yield(benchmark, ctx, counts, staging)
        if benchmark.reviewed and ctx.pending:
            state = write_pending(benchmark, ctx, counts)
            print_pending(benchmark, ctx, state, counts)
            return state
        for folder, schema in outcome_schemas(benchmark).items():
            write_empty_shards(staging, [folder], schema, folder)
        inventory = ReleaseInventory(staging)  # every file the pipeline wrote, hashed this once
        files = inventory.files
        check_rows(benchmark, counts, files)
        check_approved(benchmark, counts)
        (staging / "reports").mkdir(exist_ok=True)
        fin = build.finalize(ctx, counts, files)
        if provenance is not None:  # which log head (or imported file) the review states came from
            from annotation.decision_log import provenance_lines

            fin.manifest["review"] = {**fin.manifest.get("review", {}), "decisions_source": provenance}
            fin.card_sections = [*fin.card_sections, "", "## Review decisions", "",
                                 *provenance_lines(provenance)]
        final = ctx.out_root / ctx.version
        declared = build.groups(ctx)
        card_counts = {g: c for g, c in counts.items() if not declared or g in declared}
        plot_counts(card_counts, staging / "reports" / "counts.png",
                    f"{benchmark.info.title} {ctx.version}: where every input went")
        proven = decoded_digests(blob_root(str(staging)))  # the gate need not decode these again
        shutil.rmtree(staging / "_build")
        inventory.refresh()  # finalize writes where it likes; only what it wrote or changed is read
        warnings = fin.warnings + skipped_warnings(ctx) + [f"Empty source (--allow-empty-sources): {e}"
                                                           for e in empty]
        manifest = assemble_manifest(benchmark, ctx, stages, counts, inventory.files, fin, warnings)
        previous = previous_release(ctx.out_root, ctx.version)
        info = benchmark.info
        sources, citations = source_terms(info.source_datasets), card_citations(info.citation)
        files_for_card = manifest["files"]

        def write_card(warnings: list[str]) -> None:
            (staging / "README.md").write_text(render_card(
                title=info.title, summary=info.summary,
                manifest=dict(manifest, counts=card_counts), groups=fin.configs, split=build.split,
                schema=build.schema, warnings=warnings, usage=info.usage,
                files=files_for_card, example=info.example_config,
                extra_configs=fin.extra_configs,
                sections=fin.card_sections + (card_lines(previous.name, ctx.version) if previous else []),
                sources=sources, citations=citations))
            inventory.add("README.md")

        write_card(warnings)
        manifest["files"] = inventory.files
        manifest["release"] = release_facts(ctx, final, manifest)
        if previous is not None:
            diff, written = write_build_diff(previous, staging, manifest)
            inventory.add(*written)
            print(f"[benchforge] changes since {previous.name}: bump required {diff.required} "
                  f"({diff.verdict})", file=sys.stderr)
            # a bump smaller than the changes require stops here, before the gate and the publish
            manifest["version_bump"] = bump = bump_facts(
                diff, allow_small=ctx.args.allow_small_bump, config=str(ctx.config_path))
            if "published_with" in bump:
                manifest["warnings"] = warnings = warnings + [small_bump_warning(bump, ctx.version)]
                write_card(warnings)
            manifest["files"] = inventory.files  # with reports/diff-* (and the card)
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
        inventory.add(*sorted(quality.reports.glob("data_quality.*")))  # md, json, html
        manifest["files"] = inventory.files
        write_manifest(staging, manifest)  # once: everything it lists exists, and is final
        # Croissant metadata records the manifest's and the card's sha256, so it comes last;
        # `benchforge check` derives it from the release again and compares (exports/integrity.py)
        write_croissant(staging, staging)
        publish(staging, final)
    write_release_notes(ctx.out_root, benchmark.info.title)
    print_summary(benchmark, final, manifest, fin)
    return final


def main(benchmark: Benchmark, argv: list[str] | None = None) -> None:
    try:
        run(benchmark, argv)
    except ReleaseError as exc:
        raise SystemExit(f"release not published: {exc}") from exc
