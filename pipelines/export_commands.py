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


def diff(argv: list[str]) -> int:
    """``benchforge diff <old> <new>``: added / removed / changed samples per config and whether
    the version bump matches TFDS semantics; exit 1 when the bump is too small."""
    from exports.diff import diff_releases, write_diff

    parser = argparse.ArgumentParser(prog="benchforge diff", description=diff.__doc__)
    parser.add_argument("old", type=Path, help="the earlier release folder")
    parser.add_argument("new", type=Path, help="the later release folder")
    parser.add_argument("--out", type=Path, default=None,
                        help="also write diff-<old>-<new>.{json,md} into this folder")
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = parser.parse_args(argv)
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


REPO = Path(__file__).resolve().parent.parent


def citation(benchmark_name: str) -> str:
    """The BibTeX entry of the paper that defines ``benchmark_name`` (CITATIONS.bib)."""
    from exports.croissant import bibtex_entry
    from pipelines.cli import benchmark

    key = benchmark(benchmark_name).citation_key
    return bibtex_entry((REPO / "CITATIONS.bib").read_text(encoding="utf-8"), key) if key else ""


def croissant(argv: list[str]) -> int:
    """``benchforge export croissant <release> [<folder>]``: Croissant metadata of a release,
    written next to it (default) or into ``<folder>``, which must contain the release (Croissant
    paths are relative to the JSON file)."""
    from exports.croissant import write_croissant
    from exports.release_files import read_release

    parser = argparse.ArgumentParser(prog="benchforge export croissant", description=croissant.__doc__)
    parser.add_argument("release", type=Path)
    parser.add_argument("folder", type=Path, nargs="?", default=None,
                        help="where croissant.json goes (default: the folder holding the release)")
    args = parser.parse_args(argv)
    try:
        path = write_croissant(args.release, args.folder,
                               citation=citation(read_release(args.release).benchmark))
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


def vlmevalkit(argv: list[str]) -> int:
    """``benchforge export vlmevalkit <release> <out> [--hints]``: VLMEvalKit image-MCQ TSVs
    (with their MD5) of the single-turn view of a release — ProactiveBench's first turns."""
    from pipelines.proactivebench.vlmevalkit import export

    parser = argparse.ArgumentParser(prog="benchforge export vlmevalkit", description=vlmevalkit.__doc__)
    parser.add_argument("release", type=Path)
    parser.add_argument("out", type=Path, help="folder for the TSVs (copy them into $LMUData)")
    parser.add_argument("--hints", action="store_true", help="fill the hint column (§4.3 setting)")
    args = parser.parse_args(argv)
    try:
        report = export(args.release, args.out, hints=args.hints)
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    for name, ds in report["datasets"].items():
        print(f"{name}.tsv  {ds['rows']} rows  options {ds['option_letters']}  md5 {ds['md5']}")
    if report["left_out"]:
        print(f"left out {len(report['left_out'])} episodes (reasons in {args.out / 'vlmevalkit.json'})")
    return 0
