"""The one build driver: config → Beam pipeline → (pending-review state | checked release).

Every benchmark is built the same way (``benchforge build <benchmark>`` / ``python -m
pipelines.<benchmark>``); a :class:`~pipelines.common.benchmark.Benchmark` supplies only what is
its own. The driver owns:

* the command line (``--config``, ``--raw-dir``, ``--out``, ``--decisions`` for reviewed
  benchmarks, plus the benchmark's own options; anything else goes to Beam) and the config file;
* a staging folder beside the release, removed unless published (a killed build's is swept by
  the next one: :func:`exports.release.staging_dir`);
* running the pipeline on the embedded runner or any Beam runner, with progress lines;
* the balance check ``inputs = kept + filtered + rejected (+ pending)`` per counts group and the
  check that the rows written equal the kept counts — a release that fails either is not
  published;
* for reviewed benchmarks without decisions, the *pending review* state
  (``<out>/<benchmark>/review/<version>/``: candidates, push units, review media, rejected/,
  ``status.json``) — nothing is released until four reviewers approve (StreamVibe App. B.3);
* the manifest, the dataset card, ``reports/counts.png``, the atomic publish and the summary.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from exports.dataset_card import render_card
from exports.quality import QualityReport, run_suites
from exports.release import (
    SEMVER_HELP,
    ReleaseError,
    code_version,
    config_hash,
    file_inventory,
    outcome_counts,
    plot_counts,
    publish,
    staging_dir,
    write_empty_shards,
)
from pipelines.common.benchmark import Benchmark, BuildContext, Finalized
from pipelines.common.options import run_pipeline
from schemas.outcomes import REJECTION

PENDING = "pending_review"


def load_config(path: Path) -> dict[str, Any]:
    try:
        config = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"cannot read config {path}: {exc}") from exc
    if not isinstance(config, dict) or "version" not in config:
        raise SystemExit(f"{path}: needs a mapping with at least `version:`")
    return config


def parse_args(benchmark: Benchmark, argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog=f"benchforge build {benchmark.name}",
        description=f"Build a {benchmark.title} release (unknown options go to Apache Beam, "
                    "e.g. --runner=DataflowRunner, --direct_num_workers=2).")
    parser.add_argument("--config", type=Path, default=benchmark.default_config)
    parser.add_argument("--raw-dir", type=Path, required=True, help="root of the source datasets")
    parser.add_argument("--out", type=Path, default=Path("out"))
    if benchmark.reviewed:
        parser.add_argument(
            "--decisions", type=Path, default=None,
            help="review decisions: a decision-log folder (`annotation.cli pull`) or a JSONL / "
                 "Parquet file of REVIEW_DECISION rows; without it the build stops at the "
                 "pending-review state")
    benchmark.add_arguments(parser)
    return parser.parse_known_args(argv)


def read_stages(staging: Path) -> dict[str, dict[str, int]]:
    stages: dict[str, dict[str, int]] = {}
    for row in json.loads((staging / "_build" / "counts.json").read_text()):
        stages.setdefault(row["environment"], {})[row["stage"]] = row["n"]
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


def run(benchmark: Benchmark, argv: list[str] | None = None) -> Path:
    """Build ``benchmark``; return the release (or the pending-review state) folder."""
    args, beam_args = parse_args(benchmark, argv)
    config = benchmark.check_config(load_config(args.config), args.config)
    ctx = BuildContext(config, args.config, args.raw_dir, args.out.resolve() / benchmark.name, args)
    if benchmark.reviewed and args.decisions is not None:
        from annotation.decision_log import DecisionLogError, read_decisions

        try:
            ctx.decisions = read_decisions(args.decisions, benchmark.name)
        except DecisionLogError as exc:
            raise SystemExit(f"--decisions: {exc}") from None
    benchmark.prepare(ctx)
    with staging_dir(ctx.out_root, ctx.version) as staging:
        ctx.staging = staging
        print(f"[benchforge] {benchmark.describe(ctx)}", file=sys.stderr)
        run_pipeline(lambda p: benchmark.pipeline(p, ctx), beam_args, staging / "_build" / "progress")
        benchmark.after_pipeline(ctx)
        stages = read_stages(staging)
        counts = count_groups(stages, benchmark.groups(ctx), pending=ctx.pending and benchmark.reviewed)
        check_balance(counts)
        if benchmark.reviewed and ctx.pending:
            state = write_pending(benchmark, ctx, counts)
            print_pending(benchmark, ctx, state, counts)
            return state
        write_empty_shards(staging, ["filtered"], benchmark.filtered_schema, "filtered")
        write_empty_shards(staging, ["rejected"], REJECTION, "rejected")
        files = file_inventory(staging)
        check_rows(benchmark, counts, files)
        fin = benchmark.finalize(ctx, counts, files)
        final = ctx.out_root / ctx.version
        quality = gate(benchmark, staging, counts, fin.manifest, label=final)
        manifest = assemble_manifest(benchmark, ctx, stages, counts, files, fin)
        manifest["quality"] = {"success": quality.success, "expectations": len(quality.checks),
                               "report": "reports/data_quality.md"}
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        declared = benchmark.groups(ctx)
        card_counts = {g: c for g, c in counts.items() if not declared or g in declared}
        (staging / "README.md").write_text(render_card(
            title=benchmark.title, summary=benchmark.summary,
            manifest=dict(manifest, counts=card_counts), groups=fin.configs, split=benchmark.split,
            schema=benchmark.schema, warnings=fin.warnings, usage=benchmark.usage,
            extra_configs=fin.extra_configs, sections=fin.card_sections))
        plot_counts(card_counts, staging / "reports" / "counts.png",
                    f"{benchmark.title} {ctx.version}: where every input went")
        shutil.rmtree(staging / "_build")
        publish(staging, final)
    print_summary(benchmark, final, manifest, fin)
    return final


def assemble_manifest(benchmark: Benchmark, ctx: BuildContext, stages: dict[str, dict[str, int]],
                      counts: dict[str, dict[str, int]], files: list[dict[str, Any]], fin: Finalized
                      ) -> dict[str, Any]:
    return {
        "benchmark": benchmark.name,
        "version": ctx.version,
        "versioning": SEMVER_HELP,
        "schema": {"record": benchmark.schema.name, "version": benchmark.schema.version},
        "code_version": code_version(),
        "config_sha256": config_hash(ctx.config),
        "config": ctx.config,
        "global_seed": ctx.seed,
        "split": benchmark.split,
        "stages": stages,
        "counts": counts,
        "warnings": fin.warnings,
        "files": files,
        **fin.manifest,
    }


def gate(benchmark: Benchmark, release: Path, counts: dict[str, dict[str, int]],
         manifest: dict[str, Any], label: Path, reports: Path | None = None,
         data_docs: bool = False) -> QualityReport:
    """Run the benchmark's great-expectations suites on a (staged) release; a failure stops the
    publish (ReleaseError) at build time."""
    report = run_suites(benchmark.suites(release, counts, manifest), reports or release / "reports",
                        label=label, data_docs=data_docs)
    if not report.success and reports is None:
        failed = [f"{c.check} [{c.column}]: {c.examples[:3]}" for c in report.failed]
        raise ReleaseError(f"data-quality suite failed: {failed}")
    return report


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
        for group in ("filtered", "rejected"):  # what did not become a candidate, and why
            if (ctx.staging / group).exists():
                shutil.copytree(ctx.staging / group, tmp / group)
        status = {
            "state": PENDING, "benchmark": benchmark.name, "version": ctx.version,
            "candidates": len(cands), "counts": counts,
            "per_task_type": dict(sorted(Counter(u["task_type"] for u in review.units).items())),
            "config_sha256": config_hash(ctx.config), "code_version": code_version(),
            "review_media": "media/" if review.media else None,
            **review.status,
        }
        status["next"] = next_commands(benchmark, ctx, state_dir, status)
        (tmp / "status.json").write_text(json.dumps(status, indent=1, sort_keys=True) + "\n")
        publish(tmp, state_dir)
    return state_dir


def print_counts(benchmark: Benchmark, counts: dict[str, dict[str, int]], pending: bool) -> None:
    head = f"{benchmark.group_label:<12} {'inputs':>7} {'kept':>6} {'filtered':>9} {'rejected':>9}"
    print(head + (f" {'pending':>8}" if pending else ""))
    for group, c in counts.items():
        line = f"{group:<12} {c['inputs']:>7} {c['kept']:>6} {c['filtered']:>9} {c['rejected']:>9}"
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
    bf = str(exe) if exe.exists() else f"{sys.executable} -m pipelines.cli"
    data_dir = load_panel_config().data_dir
    log = ctx.out_root / "review" / "log"
    media = Path(status.get("media_root") or state / "media")
    round_ = f"--benchmark {benchmark.name} --round {status['review_round']} --rubric {status['rubric']}"
    build = (f"{bf} build {benchmark.name} --config {ctx.config_path.resolve()} "
             f"--raw-dir {ctx.raw_dir.resolve()} --out {ctx.out_root.parent}")
    return [
        f"{bf} review server start --data-dir {data_dir}",
        f"{bf} review panel ensure --data-dir {data_dir}",
        f"{bf} review push --data-dir {data_dir} {round_} --candidates {state / 'review_candidates.jsonl'} "
        f"--media-dir {media} --log-dir {log}",
        f"{bf} review pull --data-dir {data_dir} {round_} --log-dir {log}",
        f"{bf} review status --log-dir {log} --benchmark {benchmark.name}",
        f"{build} --decisions {log}",
    ]


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
