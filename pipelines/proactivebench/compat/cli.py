"""Compat export: a ProactiveBench release in the layout of the authors' ``proactivebench`` package.

The command behind ``benchforge export compat-proactivebench`` (and ``make compat-export``):
writes the export (``write.py``) and, with ``--verify``, replays it in the authors' classes under
Python 3.12 (``verify.py``); the exit status is 1 if the replay finds a problem.
"""

from __future__ import annotations

import argparse

from pipelines.proactivebench.compat.verify import official_check
from pipelines.proactivebench.compat.write import export


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchforge export compat-proactivebench",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("release", help="release directory (with data/)")
    parser.add_argument("out", help="output directory for the compat export")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace <out> when it already holds files (default: refuse)")
    parser.add_argument("--verify", action="store_true",
                        help="replay the export in the official classes under Python 3.12")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result = export(args.release, args.out, overwrite=args.overwrite)
    print(f"exported {result.exported}; rejected {len(result.rejected)} "
          f"(reasons in {result.out_dir / 'compat_report.json'})")
    if args.verify:
        counts, problems = official_check(args.release, args.out)
        print(f"official replay: {counts}")
        for p in problems:
            print(f"  PROBLEM {p}")
        return 1 if problems else 0
    return 0
