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
