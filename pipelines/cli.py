"""``benchforge``: one entry point for building, checking, reviewing and exporting.

    benchforge build proactivebench --raw-dir demo_corpus [--out out] [Beam options…]
    benchforge build streamvibe --raw-dir demo_corpus [--decisions <decision log>]
    benchforge build proready --raw-dir demo_corpus [--decisions <decision log>] [--corrections …]
    benchforge check out/proactivebench/2.0.0            # any benchmark's release
    benchforge review push|pull|audit|status|verify|import|server|panel|gemini-review …   (annotation.cli)
    benchforge review push --benchmark proready … --candidates <state>/review_candidates.jsonl \
        --corrections corrections.jsonl … --log-dir <log>   (the corrected versions n+1)
    benchforge export compat-proactivebench <release> <out> [--overwrite] [--verify]
    benchforge export croissant <release> [<folder>]
    benchforge export vlmevalkit <release> <out> [--hints]
    benchforge export lmms-eval <release> <out> [--hint] [--video-root DIR] [--content-judge …] [--tau S]
    benchforge diff <old release> <new release> [--out DIR] [--json]

The same flag means the same thing for every benchmark (``--config``, ``--raw-dir``, ``--out``,
``--decisions``); the Make targets are thin wrappers around these commands.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from pipelines.registry import BENCHMARKS, benchmark, export_commands, rubric

REVIEW_PROG = "benchforge review"  # what `benchforge review --help` names the program
BROKEN_PIPE = 141  # a shell's status for a command ended by SIGPIPE (128 + 13): entry()


def check_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchforge check", description=check.__doc__)
    parser.add_argument("release", type=Path, help="release folder (holds manifest.json and data/)")
    parser.add_argument("--reports", type=Path, default=None,
                        help="where the reports go (default: checks/<version>/ beside the release); "
                             "never inside the release: a published release does not change")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="threads decoding the embedded images (default: one per core)")
    return parser


def check(argv: list[str]) -> int:
    """The gate of a published release: every file against the manifest's sha256, size and row
    count, every embedded image and media file decoded, the benchmark's expectations; exit 0
    passed, 1 failed, 2 unreadable (no manifest, unknown benchmark)."""
    from pipelines.common.assembly import gate, release_label

    args = check_parser().parse_args(argv)
    release = args.release.resolve()
    reports = (args.reports or release.parent / "checks" / release.name).resolve()
    if reports == release or release in reports.parents:
        print(f"error: --reports {args.reports} lies inside the release; a published release is "
              "never written into", file=sys.stderr)
        return 2
    try:
        manifest = json.loads((release / "manifest.json").read_text())
        bench = benchmark(str(manifest["benchmark"]))
    except (OSError, ValueError, KeyError) as err:
        print(f"error: cannot validate {args.release}: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    report = gate(bench, release, manifest, label=release_label(manifest), reports=reports,
                  threads=max(1, args.threads))
    passed = len(report.checks) - len(report.failed)
    print(f"{'PASSED' if report.success else 'FAILED'}: {passed}/{len(report.checks)} expectations "
          f"on {report.rows} rows of {manifest['benchmark']} {manifest.get('version', '?')}; "
          f"{report.files_checked} files checked against the manifest, {report.media_summary}, "
          f"{len(report.problems)} file problems")
    for p in report.problems:
        print(f"  FAIL file {p.path} [{p.check}]: {p.detail}")
    for c in report.failed:
        print(f"  FAIL {c.check} [{c.expectation} on {c.column}]: {c.unexpected_count} unexpected, "
              f"e.g. {c.examples[:5]}")
    print(f"summary: {report.markdown}\nhtml: {report.html}")
    return 0 if report.success else 1


def correction_parser() -> argparse.ArgumentParser:
    """The options ``review push --corrections`` reads itself; the others go on to the push."""
    parser = argparse.ArgumentParser(prog="benchforge review push --corrections")
    parser.add_argument("--benchmark", required=True, help="the benchmark whose candidates are corrected")
    parser.add_argument("--candidates", type=Path, required=True,
                        help="review_candidates.jsonl of the pending-review state")
    parser.add_argument("--corrections", type=Path, required=True,
                        help="JSONL of corrections (ProReady-QA: sample_id, version n+1, full "
                             "turns; docs/proready.md), pushed as versions n+1")
    parser.add_argument("--log-dir", type=Path, required=True,
                        help="the review's decision log; the corrected push units are written beside it")
    return parser


def correction_push(argv: list[str]) -> list[str]:
    """``review push … --corrections FILE``: the benchmark turns the corrections into the push
    units of versions n+1 (its :attr:`Review.correction_units`, the same rule its release build
    applies), written beside the decision log; the returned arguments push them, with the media
    of the pending-review state the candidates file belongs to."""
    args, rest = correction_parser().parse_known_args(argv[1:])
    state = args.candidates.resolve().parent
    review = benchmark(args.benchmark).review
    if review is None or review.correction_units is None:
        raise SystemExit(f"{args.benchmark} takes no corrections file")
    units = review.correction_units(state, args.corrections)
    if not units:
        raise SystemExit(f"--corrections: {args.corrections} corrects no candidate")
    out = args.log_dir / "corrections" / f"{args.corrections.stem}.review_candidates.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(u, sort_keys=True, ensure_ascii=False) + "\n" for u in units))
    status = json.loads((state / "status.json").read_text())
    media = [] if "--media-dir" in rest else ["--media-dir", status.get("media_root") or str(state / "media")]
    return ["push", "--benchmark", args.benchmark, "--candidates", str(out), "--log-dir",
            str(args.log_dir), *media, *rest]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = ("build", "check", "review", "export", "diff")
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in commands:
        print(__doc__, file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    command, rest = argv[0], argv[1:]
    if command == "build":
        if not rest or rest[0].startswith("-"):
            raise SystemExit(f"benchforge build <benchmark> …; benchmarks: {', '.join(BENCHMARKS)}")
        from pipelines.common import driver

        driver.main(benchmark(rest[0]), rest[1:])
        return 0
    if command == "check":
        return check(rest)
    if command == "diff":
        from pipelines.export_commands import diff

        return diff(rest)
    if command == "review":
        from annotation.cli import main as review_main

        if rest[:1] == ["push"] and "--corrections" in rest:
            rest = correction_push(rest)
        return int(review_main(rest, prog=REVIEW_PROG, rubrics=rubric) or 0)
    if rest[:1] in (["croissant"], ["vlmevalkit"], ["lmms-eval"]):
        from pipelines import export_commands as shared

        return int(getattr(shared, rest[0].replace("-", "_"))(rest[1:]))
    own = export_commands()  # the benchmarks' own export commands, from their folders
    if rest and rest[0] in own:
        return int(own[rest[0]].main(rest[1:]) or 0)
    raise SystemExit(f"benchforge export {'|'.join(['croissant', 'vlmevalkit', 'lmms-eval', *own])} … "
                     "(benchforge --help)")


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Every argument parser of every ``benchforge`` command, by program name — the same
    functions build them for :func:`main`, so what a test checks here is what users get: every
    benchmark's ``build``, ``check``, ``diff``, each ``export``, ``review`` and each of its
    subcommands, and ``review push --corrections``."""
    from annotation.cli import build_parser as review_parser
    from pipelines import export_commands as ex
    from pipelines.common.command_line import build_parser

    found = [build_parser(benchmark(name)) for name in BENCHMARKS]
    found += [check_parser(), ex.diff_parser(), ex.croissant_parser(), ex.vlmevalkit_parser(),
              ex.lmms_eval_parser(), *(c.parser() for c in export_commands().values()),
              correction_parser()]
    review = review_parser(REVIEW_PROG)
    found += [review, *subcommands(review)]
    return {p.prog: p for p in found}


def subcommands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers of ``parser``'s subcommands (``review push``, ``review pull``, …)."""
    return [sub for action in parser._actions if isinstance(action, argparse._SubParsersAction)  # noqa: SLF001
            for sub in action.choices.values()]


def entry() -> None:
    """The ``benchforge`` command (and ``python -m pipelines.cli``): :func:`main`, then the
    process ends without interpreter teardown (core/process_end.py; docs/scaling.md). Tests and
    notebooks call :func:`main`, which returns.

    A reader that stops early (``benchforge review status … | head``) closes the pipe, and the
    next write raises BrokenPipeError in whatever ``print`` was running; it is handled here,
    once, as Python's documentation on SIGPIPE advises: stdout is pointed at ``/dev/null`` (so the
    flush at exit cannot raise again) and the process ends quietly with 141, the status a shell
    reports for a command killed by SIGPIPE (128 + 13), as ``yes | head`` ends."""
    from core.process_end import end_process

    try:
        code = main()
        sys.stdout.flush()  # output still buffered must meet a closed pipe here, not at exit
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        end_process(BROKEN_PIPE)
    end_process(code)


if __name__ == "__main__":
    entry()
