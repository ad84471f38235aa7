"""``python -m exports.quality_cli <release dir>``: the CI gate for a ProactiveBench release.

Runs the great-expectations suite of :mod:`exports.quality`, writes Data Docs and a plain
``reports/data_quality.md`` into the release, prints a summary and exits non-zero when any
expectation fails (1) or the release cannot be read (2), so CI stops before publishing.
"""

from __future__ import annotations

import argparse
import logging
import sys

from exports.quality import run_suite


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Data-quality suite for a ProactiveBench release")
    parser.add_argument("release", help="release directory (holds data/ and manifest.json)")
    parser.add_argument("--reports", help="output folder (default: <release>/reports)")
    parser.add_argument("--no-data-docs", action="store_true", help="skip the HTML Data Docs")
    args = parser.parse_args(argv)
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    try:
        report = run_suite(args.release, args.reports, data_docs=not args.no_data_docs)
    except (FileNotFoundError, ValueError, KeyError, OSError) as err:
        print(f"error: cannot validate {args.release}: {type(err).__name__}: {err}",
              file=sys.stderr)
        return 2
    passed = len(report.checks) - len(report.failed)
    print(f"{'PASSED' if report.success else 'FAILED'}: {passed}/{len(report.checks)} "
          f"expectations on {report.rows} episodes")
    for c in report.failed:
        print(f"  FAIL {c.check} [{c.expectation} on {c.column}]: {c.unexpected_count} "
              f"unexpected, e.g. {c.examples[:5]}")
    print(f"summary: {report.markdown}")
    if report.data_docs_index:
        print(f"data docs: {report.data_docs_index}")
    return 0 if report.success else 1


if __name__ == "__main__":
    sys.exit(main())
