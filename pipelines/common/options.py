"""Beam pipeline options and the one way every benchmark driver runs its pipeline."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path

import apache_beam as beam
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions
from apache_beam.portability import python_urns
from apache_beam.runners.portability.fn_api_runner import FnApiRunner

from core.memory import bound_heap
from core.progress import progress_board
from pipelines.common.warm_workers import warm_workers

# runners Beam ships outside StandardOptions.ALL_KNOWN_RUNNERS, by the short name users type
EXTRA_RUNNERS = ("apache_beam.runners.dask.dask_runner.DaskRunner",)
# short names of benchforge's own runners: ``dask`` and ``DaskRunner`` are Beam's DaskRunner with
# its defects fixed (pipelines/common/dask_runner.py, docs/dask.md) — the stock one loses records
# of these pipelines silently, so a short name never picks it; its dotted path still does
RUNNER_ALIASES = {"dask": "pipelines.common.dask_runner.DaskRunner",
                  "daskrunner": "pipelines.common.dask_runner.DaskRunner"}


def runner_name(beam_args: Sequence[str]) -> str | None:
    """The value of ``--runner`` (``--runner=X`` or ``--runner X``; the last one wins, as in
    Beam's parser), None when not given."""
    found = None
    for i, arg in enumerate(beam_args):
        if arg.startswith("--runner="):
            found = arg.split("=", 1)[1]
        elif arg == "--runner" and i + 1 < len(beam_args):
            found = beam_args[i + 1]
    return found


def runner_path(name: str) -> str:
    """The dotted ``module.Class`` of the runner ``name``: a short name Beam knows
    (``FlinkRunner``, ``flink``, ``DaskRunner``), one of :data:`RUNNER_ALIASES` (``dask``) or a
    dotted ``module.Class``; SystemExit for any other name."""
    known = {path.rsplit(".", 1)[-1].lower(): path
             for path in (*StandardOptions.ALL_KNOWN_RUNNERS, *EXTRA_RUNNERS)}
    known.update(RUNNER_ALIASES)
    path = known.get(name.lower()) or known.get(name.lower() + "runner") or name
    if "." not in path:
        raise SystemExit(f"error: --runner={name}: not a runner Apache Beam knows (e.g. "
                         f"{', '.join(sorted({p.rsplit('.', 1)[-1] for p in known.values()}))}; "
                         "or dask) nor a dotted module.RunnerClass")
    return path


def runner_module(name: str) -> str:
    """The module defining the runner ``name`` (:func:`runner_path`)."""
    return runner_path(name).rsplit(".", 1)[0]


def import_runner(beam_args: Sequence[str]) -> None:
    """Import the module of the runner ``--runner`` names, so the PipelineOptions it defines
    are known before the options are parsed.

    Why: Beam registers an options class when its module is imported; a runner's own module
    (DaskRunner's ``--dask_client_address``, a third-party runner given as ``module.Class``) is
    imported only when the pipeline runs — after :func:`~pipelines.common.command_line.unknown_flags`
    had refused its flags as unknown. A module that cannot be imported (the runner's extra is
    not installed) stops the build with one line naming it."""
    name = runner_name(beam_args)
    if not name:
        return
    module = runner_module(name)
    try:
        import_module(module)
    except Exception as exc:  # noqa: BLE001 - any failing import (ImportError, a broken extra) is one line
        raise SystemExit(f"error: --runner={name}: cannot import {module} ({type(exc).__name__}: "
                         f"{exc}); install the runner's extra (e.g. pip install "
                         "'apache-beam[dask]' for DaskRunner)") from None


def beam_options(beam_args: list[str]) -> PipelineOptions:
    """Embedded FnApiRunner by default (Beam's DirectRunner first tries to download the Prism
    runner binary, which cannot work offline); any ``--runner=`` given wins, its module
    imported first (:func:`import_runner`), an alias (``dask``) given to Beam as its dotted
    name."""
    import_runner(beam_args)
    args = list(beam_args)
    if not any(a.startswith("--runner") for a in args):
        args.append("--runner=FnApiRunner")
    elif (name := runner_name(args)) and name.lower() in RUNNER_ALIASES:
        args.append(f"--runner={RUNNER_ALIASES[name.lower()]}")  # Beam knows no alias; the last wins
    return PipelineOptions(args)


def local_workers(beam_args: list[str]) -> int:
    """The processes a build may use on this machine: ``--direct_num_workers`` (Beam's 0 = one
    per core), 1 when not given. The release gate, which runs here after the pipeline, decodes
    with as many threads, so ``WORKERS=2`` speeds up the whole build, not only the pipeline."""
    return _workers(beam_options(beam_args))


def _workers(options: PipelineOptions) -> int:
    n = options.view_as(DirectOptions).direct_num_workers
    return (os.cpu_count() or 1) if n == 0 else max(1, n)


IN_PROCESS_RUNNERS = ("FnApiRunner", "DirectRunner", "BundleBasedDirectRunner", "SwitchingDirectRunner")


def runs_elsewhere(beam_args: list[str]) -> bool:
    """True when the pipeline's work runs outside this process — local worker processes
    (``--direct_running_mode=multi_processing``) or any other runner (Dataflow, Flink, Spark,
    a portable job server) — so this process mostly waits while it runs."""
    options = beam_options(beam_args)
    runner = options.view_as(StandardOptions).runner or "FnApiRunner"
    mode = options.view_as(DirectOptions).direct_running_mode
    return runner not in IN_PROCESS_RUNNERS or mode == "multi_processing"


def shard_writers(options: PipelineOptions) -> int | None:
    """How many writers a sharded write spreads its shards over (by size,
    :func:`exports.parquet_shards.spread_shards`): the workers of an in-process runner with two
    or more, ``None`` (one key per shard) for one worker and for any other runner.

    Why: the embedded runner deals the keys of a ``GroupByKey`` out to its workers in turn, in
    the order they first arrived — with one key per shard, the largest shards could all go to
    one of two workers, and writing took as long as with one worker (docs/scaling.md). One key
    per writer gives each worker exactly its planned shards. A single worker has nothing to
    balance, and one key would make the whole PCollection one element, held whole (encoded and
    decoded) while its shards are written; one key per shard holds one shard. A distributed
    runner balances its own keys over many more workers, so it gets one per shard."""
    runner = options.view_as(StandardOptions).runner or "FnApiRunner"
    workers = _workers(options)
    return workers if runner in IN_PROCESS_RUNNERS and workers > 1 else None


class _DropWorkerStartupNoise(logging.Filter):
    """Local worker processes warn at every start that they have no "semi_persistent_directory"
    (the folder a distributed runner stages a pickled ``__main__`` session into; our steps are
    importable modules and never need one). The embedded runner relays the warning through
    this one logger; everything else it relays still shows."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "No semi_persistent_directory found" not in record.getMessage()


_RELAY = logging.getLogger("apache_beam.runners.portability.local_job_service")
if not any(isinstance(f, _DropWorkerStartupNoise) for f in _RELAY.filters):
    _RELAY.addFilter(_DropWorkerStartupNoise())


class WarmStartRunner(FnApiRunner):
    """The embedded runner, its worker processes forked from the template
    :func:`~pipelines.common.warm_workers.warm_workers` started: the worker command of its
    subprocess environment (Beam's ``python -m apache_beam.runners.worker.sdk_worker_main``)
    becomes ``command``, the client that attaches to the template. Nothing else changes."""

    def __init__(self, command: str) -> None:
        super().__init__()
        self._command = command

    def run_via_runner_api(self, pipeline_proto, options):
        for environment in pipeline_proto.components.environments.values():
            if environment.urn == python_urns.SUBPROCESS_SDK:
                environment.payload = self._command.encode()
        return super().run_via_runner_api(pipeline_proto, options)


def starts_warm_workers(options: PipelineOptions) -> bool:
    """True when the pipeline runs on the embedded runner's local worker processes, which
    :func:`run_pipeline` then prepares while the pipeline is being built."""
    runner = options.view_as(StandardOptions).runner or "FnApiRunner"
    mode = options.view_as(DirectOptions).direct_running_mode
    return runner == "FnApiRunner" and mode == "multi_processing"


def run_pipeline(add_steps: Callable[[beam.Pipeline], None], beam_args: list[str],
                 progress_dir: Path, worker_modules: Sequence[str] = ()) -> None:
    """Build the pipeline with ``add_steps`` and run it to completion, with one progress line
    per stage on the console (workers report into ``progress_dir``). The heap is bounded first
    (:func:`core.memory.bound_heap`), here and in the worker processes the runner starts, so
    memory does not keep the high-water mark of every buffer the build moved.

    With local worker processes, a template process imports Beam's harness and
    ``worker_modules`` (the modules holding the pipeline's steps) while this process builds
    the pipeline, and the workers are forks of it (:mod:`pipelines.common.warm_workers`)."""
    bound_heap()
    options = beam_options(beam_args)
    with contextlib.ExitStack() as stack:
        runner = None
        if starts_warm_workers(options):
            runner = WarmStartRunner(stack.enter_context(warm_workers(_workers(options), worker_modules)))
        stack.enter_context(progress_board(progress_dir))
        add_steps(stack.enter_context(beam.Pipeline(runner=runner, options=options)))
