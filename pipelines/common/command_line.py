"""The command line of ``benchforge build <benchmark>`` and its config file: the driver's options
and the benchmark's own, every path option made absolute in the driver (a cluster's workers run
in working directories of their own), and anything neither benchforge nor Beam knows refused.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any

import yaml

from exports.diff import ALLOW_SMALL_BUMP
from exports.release import (
    iso_date,
)
from pipelines.common.benchmark import Benchmark
from pipelines.common.options import import_runner


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
        description=f"Build a {benchmark.info.title} release (unknown options go to Apache Beam, "
                    "e.g. --runner=DataflowRunner, --direct_num_workers=2).")
    parser.add_argument("--config", type=Path, default=benchmark.sources.default_config,
                        help="the build config YAML: version, seed, sources, filters (default: "
                             f"{shown(benchmark.sources.default_config)})")
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
    build = benchmark.build
    if len(build.splits) > 1:
        parser.add_argument(
            "--split", choices=build.splits, default=build.split,
            help=f"{build.split} (default): the evaluation release; another split is published "
                 f"together with the {build.split} split it is held out from")
    benchmark.sources.add_arguments(parser)
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


def shown(path: Path) -> str:
    """A path as the commands a build prints give it: relative to the working directory when it
    lies inside it (``.venv/bin/benchforge``, ``out/streamvibe/review/log``), else absolute —
    so the state a build writes names no folder the user did not type, and pastes as it is."""
    absolute = Path(os.path.abspath(path))
    cwd = Path.cwd()
    return absolute.relative_to(cwd).as_posix() if absolute.is_relative_to(cwd) else str(absolute)
