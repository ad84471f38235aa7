"""The export commands of ``benchforge``: ``diff`` and ``export <kit>`` (docs/exports.md).

Why here and not in ``exports/``: the benchmark-agnostic writers live in ``exports/`` (they read
only the release files, schemas and manifest); a kit that needs a benchmark's own logic (the
ProactiveBench environment, the StreamVibe and ProReady scorers) is dispatched to that
benchmark's folder, which only ``pipelines`` may import.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def diff_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchforge diff", description=diff.__doc__)
    parser.add_argument("old", type=Path, help="the earlier release folder")
    parser.add_argument("new", type=Path, help="the later release folder")
    parser.add_argument("--out", type=Path, default=None,
                        help="also write diff-<old>-<new>.{json,md} into this folder")
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    return parser


def diff(argv: list[str]) -> int:
    """``benchforge diff <old> <new>``: added / removed / changed samples per config and whether
    the version bump matches TFDS semantics; exit 1 when the bump is too small."""
    from exports.diff import diff_releases, write_diff

    args = diff_parser().parse_args(argv)
    try:
        result = diff_releases(args.old, args.new)
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    print(json.dumps(result.to_json(), indent=1, sort_keys=True) if args.json else result.markdown(),
          end="" if not args.json else "\n")
    if args.out:
        for path in write_diff(result, args.out):
            print(f"wrote {path}", file=sys.stderr)
    return 1 if result.verdict == "too small" else 0


def croissant_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchforge export croissant", description=croissant.__doc__)
    parser.add_argument("release", type=Path, help="the release folder (holds manifest.json)")
    parser.add_argument("folder", type=Path, nargs="?", default=None,
                        help="where croissant.json goes (default: the folder holding the release)")
    return parser


def croissant(argv: list[str]) -> int:
    """``benchforge export croissant <release> [<folder>]``: Croissant metadata of a release,
    written next to it (default) or into ``<folder>``, which must contain the release (Croissant
    paths are relative to the JSON file)."""
    from exports.croissant import write_croissant
    from exports.release_files import read_release
    from pipelines.registry import benchmark

    args = croissant_parser().parse_args(argv)
    try:
        path = write_croissant(args.release, args.folder,
                               citation=benchmark(read_release(args.release).benchmark).info.citation)
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


def vlmevalkit_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchforge export vlmevalkit", description=vlmevalkit.__doc__)
    parser.add_argument("release", type=Path, help="a ProactiveBench release folder")
    parser.add_argument("out", type=Path, help="folder for the TSVs (copy them into $LMUData)")
    parser.add_argument("--hints", action="store_true", help="fill the hint column (§4.3 setting)")
    return parser


def vlmevalkit(argv: list[str]) -> int:
    """``benchforge export vlmevalkit <release> <out> [--hints]``: VLMEvalKit image-MCQ TSVs
    (with their MD5) of the single-turn view of a release — ProactiveBench's first turns."""
    from exports.release_files import read_release
    from pipelines.registry import benchmark

    args = vlmevalkit_parser().parse_args(argv)
    try:
        export = benchmark(read_release(args.release).benchmark).exports.vlmevalkit
        if export is None:
            raise ValueError(f"{read_release(args.release).benchmark} has no VLMEvalKit export "
                             "(docs/exports.md)")
        report = export(args.release, args.out, hints=args.hints)
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    for name, ds in report["datasets"].items():
        print(f"{name}.tsv  {ds['rows']} rows  options {ds['option_letters']}  md5 {ds['md5']}")
    if report["left_out"]:
        print(f"left out {len(report['left_out'])} episodes (reasons in {args.out / 'vlmevalkit.json'})")
    return 0


def lmms_eval_vendored() -> list[str]:
    """The modules every benchmark's lmms-eval hooks import (each adapter lists its own), shipped
    with every export (exports/lmms_eval.py): the same set for every benchmark, so tasks of
    several exports can run in one lmms-eval process."""
    from pipelines.registry import BENCHMARKS, benchmark

    adapters = [benchmark(name).exports.lmms_eval for name in BENCHMARKS]
    return sorted({m for a in adapters if a is not None for m in a.vendored})


def lmms_eval_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchforge export lmms-eval", description=lmms_eval.__doc__)
    parser.add_argument("release", type=Path, help="the release folder (any benchmark)")
    parser.add_argument("out", type=Path, help="tasks go to <out>/<benchmark>/ (pass it to "
                                               "lmms-eval as --include_path)")
    parser.add_argument("--hint", action="store_true", help="ProactiveBench: append the hint (§4.3)")
    parser.add_argument("--video-root", type=Path, default=None,
                        help="ProReady-QA: folder the items' video_file paths are relative to")
    parser.add_argument("--content-judge", choices=("none", "exact_reference"), default="none",
                        help="StreamVibe / ProReady-QA: how a response's content is judged "
                             "(docs/exports.md); the papers' LLM judges need the network")
    parser.add_argument("--tau", type=float, default=2.0, help="StreamVibe: matching tolerance (s)")
    return parser


def lmms_eval(argv: list[str]) -> int:
    """``benchforge export lmms-eval <release> <out>``: lmms-eval task folders (one task per
    config) that read the local release and score with benchforge's metric functions."""
    from exports.lmms_eval import write_task_folder
    from exports.release_files import read_release
    from pipelines.registry import benchmark

    args = lmms_eval_parser().parse_args(argv)
    try:
        release = read_release(args.release)
        adapter = benchmark(release.benchmark).exports.lmms_eval
        if adapter is None:
            raise ValueError(f"{release.benchmark} has no lmms-eval export (docs/exports.md)")
        tasks = adapter.tasks(release, **{k: getattr(args, k) for k in adapter.options})
        report = write_task_folder(release, args.out.resolve(), release.benchmark, tasks, adapter.utils,
                                   lmms_eval_vendored(), settings=tasks[0].specific_kwargs if tasks else {})
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    print(f"wrote {len(report['tasks'])} tasks to {args.out / release.benchmark} "
          f"(group {release.benchmark}: {', '.join(report['tasks'])})")
    return 0
