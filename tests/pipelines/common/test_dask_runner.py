"""pipelines.common.dask_runner: each defect of Beam's DaskRunner, and its fix.

Every test runs a small pipeline on a real dask.distributed cluster (scheduler and two workers
in this process, so the steps' marker files and module state are visible here) with the fixed
runner, and again with Beam's own runner, where it must fail (``xfail(strict=True)``: a stock
runner that stops failing a test means the defect was fixed upstream, and the fix here can go).
Elements leave the pipeline as one JSON file each (a step's closure is pickled, so it cannot
append to a list of the test's).
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apache_beam as beam
import distributed
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.pvalue import AsDict, TaggedOutput
from apache_beam.runners.dask.dask_runner import DaskRunner as StockDaskRunner
from apache_beam.transforms.window import GlobalWindows

from pipelines.common import dask_runner
from pipelines.common.dask_runner import DaskRunner

STOCK = pytest.param(StockDaskRunner, id="stock", marks=pytest.mark.xfail(
    strict=True, reason="the defect of Beam's DaskRunner that pipelines.common.dask_runner fixes"))
RUNNERS = [pytest.param(DaskRunner, id="fixed"), STOCK]


@pytest.fixture(scope="module")
def cluster() -> Iterator[distributed.LocalCluster]:
    """A scheduler and two one-thread workers, in this process."""
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as c:
        yield c


@pytest.fixture
def address(cluster: distributed.LocalCluster) -> Iterator[str]:
    yield cluster.scheduler_address
    # Beam's runner never closes the client it opens (and makes it the default): close it here
    while True:
        try:
            client = distributed.default_client()
        except ValueError:
            break
        client.close()


def run(runner: type, address: str, build: Callable[[beam.Pipeline], Any], *flags: str) -> None:
    options = PipelineOptions([f"--dask_client_address={address}", *flags])
    with beam.Pipeline(runner=runner(), options=options) as p:
        build(p)


def write(element: Any, folder: str) -> None:
    (Path(folder) / uuid.uuid4().hex).write_text(json.dumps(element))


def collect(pcoll: beam.PCollection, folder: Path, label: str = "Collect") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    pcoll | label >> beam.Map(write, str(folder))


def read(folder: Path) -> list[Any]:
    """The elements written to ``folder``, sorted."""
    values = [json.loads(f.read_text()) for f in folder.iterdir()] if folder.exists() else []
    try:
        return sorted(values)
    except TypeError:  # mixed types
        return sorted(values, key=json.dumps)


# -- the defects -----------------------------------------------------------------------------------
class SplitOdd(beam.DoFn):
    def process(self, x: int) -> Iterator[Any]:
        yield TaggedOutput("odd", x) if x % 2 else x


@pytest.mark.parametrize("runner", RUNNERS)
def test_each_output_of_a_multi_output_step_gets_its_own_elements(runner: type, address: str,
                                                                  tmp_path: Path) -> None:
    def build(p: beam.Pipeline) -> None:
        outs = p | beam.Create(list(range(10))) | beam.ParDo(SplitOdd()).with_outputs("odd", main="even")
        tagged = (outs.even | "E" >> beam.Map(lambda x: ["even", x]),
                  outs.odd | "O" >> beam.Map(lambda x: ["odd", x]))
        collect(tagged | beam.Flatten(), tmp_path)

    run(runner, address, build)
    assert read(tmp_path) == sorted([["even", x] for x in range(0, 10, 2)]
                                    + [["odd", x] for x in range(1, 10, 2)])


@pytest.mark.parametrize("runner", RUNNERS)
def test_partition_routes_each_element_to_one_output(runner: type, address: str, tmp_path: Path) -> None:
    def build(p: beam.Pipeline) -> None:
        parts = p | beam.Create(list(range(9))) | beam.Partition(lambda x, n: x % n, 3)
        collect(parts[1], tmp_path)

    run(runner, address, build)
    assert read(tmp_path) == [1, 4, 7]


class EmitAtFinish(beam.DoFn):
    """Buffers its bundle and emits it in finish_bundle (as BatchElements emits its last batch)."""

    def start_bundle(self) -> None:
        self.buffer: list[int] = []

    def process(self, x: int) -> None:
        self.buffer.append(x)

    def finish_bundle(self) -> Iterator[Any]:
        for x in self.buffer:
            yield GlobalWindows.windowed_value(x)


@pytest.mark.parametrize("runner", RUNNERS)
def test_outputs_of_finish_bundle_are_kept(runner: type, address: str, tmp_path: Path) -> None:
    def build(p: beam.Pipeline) -> None:
        items = p | beam.Create(list(range(7)))
        at_finish = items | beam.ParDo(EmitAtFinish()) | "F" >> beam.Map(lambda x: ["finish", x])
        batches = (items | beam.BatchElements(min_batch_size=3, max_batch_size=3)
                   | "B" >> beam.Map(lambda b: ["batch", sorted(b)]))
        collect((at_finish, batches) | beam.Flatten(), tmp_path)

    run(runner, address, build)
    out = read(tmp_path)
    assert [x for kind, x in out if kind == "finish"] == list(range(7))
    assert sorted(x for kind, batch in out if kind == "batch" for x in batch) == list(range(7))


@pytest.mark.parametrize("runner", RUNNERS)
def test_every_sink_is_computed(runner: type, address: str, tmp_path: Path) -> None:
    def build(p: beam.Pipeline) -> None:
        items = p | beam.Create(list(range(4)))
        collect(items, tmp_path / "first", "First")
        collect(items | beam.Map(lambda x: x * 10), tmp_path / "second", "Second")

    run(runner, address, build)
    assert read(tmp_path / "first") == [0, 1, 2, 3]
    assert read(tmp_path / "second") == [0, 10, 20, 30]


def mark(x: Any, folder: str) -> Any:
    write(x, folder)  # one file each time the step processes x
    return x


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_side_input_is_computed_once(runner: type, address: str, tmp_path: Path) -> None:
    runs = tmp_path / "side_runs"
    runs.mkdir()

    def build(p: beam.Pipeline) -> None:
        side = p | "Side" >> beam.Create([("a", 1), ("b", 2)]) | "Mark" >> beam.Map(mark, str(runs))
        looked_up = (p | beam.Create(["a", "b", "a", "b", "a", "b"])
                     | beam.Map(lambda k, table: [k, table[k]], table=AsDict(side)))
        collect(looked_up, tmp_path / "out")

    run(runner, address, build, "--dask_npartitions=3")  # three bundles read the side input
    assert read(tmp_path / "out") == [["a", 1]] * 3 + [["b", 2]] * 3
    assert read(runs) == [["a", 1], ["b", 2]]


@pytest.mark.parametrize("runner", RUNNERS)
def test_each_bundle_returns_only_its_own_outputs(runner: type, address: str, tmp_path: Path) -> None:
    """Beam's runner ships one receiver object with every task of a step: where tasks share it
    (workers in one process) a bundle returns the outputs of the bundles before it too."""
    def build(p: beam.Pipeline) -> None:
        collect(p | beam.Create(list(range(300))) | beam.Map(lambda x: x + 1), tmp_path)

    run(runner, address, build, "--dask_npartitions=3")
    assert read(tmp_path) == list(range(1, 301))


@pytest.mark.parametrize("runner", RUNNERS)
def test_impulse_emits_one_empty_element(runner: type, address: str, tmp_path: Path) -> None:
    def build(p: beam.Pipeline) -> None:
        collect(p | beam.Impulse() | beam.Map(lambda b: [type(b).__name__, len(b)]), tmp_path)

    run(runner, address, build)
    assert read(tmp_path) == [["bytes", 0]]


@pytest.mark.parametrize("runner", RUNNERS)
def test_each_step_is_materialized_as_its_own_tasks(runner: type, address: str, tmp_path: Path,
                                                    cluster: distributed.LocalCluster) -> None:
    """Every step's partitions are tasks of their own (persisted), not one fused task chain."""
    def build(p: beam.Pipeline) -> None:
        items = p | beam.Create(list(range(30))) | "A" >> beam.Map(lambda x: x + 1)
        collect(items | "B" >> beam.Map(lambda x: x * 2), tmp_path)

    with distributed.Client(cluster.scheduler_address, set_as_default=False) as observer, \
            distributed.get_task_stream(client=observer) as stream:
        run(runner, address, build, "--dask_npartitions=3")
    tasks = Counter(t["key"][0].rsplit("-", 1)[0] for t in stream.data if isinstance(t["key"], tuple))
    assert {step: tasks[step] for step in ("A", "B", "Collect")} == {"A": 3, "B": 3, "Collect": 3}
    assert read(tmp_path) == sorted((x + 1) * 2 for x in range(30))


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_reshuffle_spreads_a_small_create_over_the_cluster(runner: type, address: str,
                                                             tmp_path: Path) -> None:
    def build(p: beam.Pipeline) -> None:
        items = p | beam.Create(list(range(8)), reshuffle=False) | beam.Reshuffle()
        collect(items | beam.ParDo(TagWithBundle()), tmp_path)

    run(runner, address, build)
    out = read(tmp_path)
    assert sorted(x for x, _ in out) == list(range(8))
    assert len({bundle for _, bundle in out}) == 2  # the cluster's two threads


class TagWithBundle(beam.DoFn):
    def start_bundle(self) -> None:
        self.bundle = uuid.uuid4().hex

    def process(self, x: int) -> Iterator[Any]:
        yield [x, self.bundle]


class CountsLifecycle(beam.DoFn):
    """Writes a file for each setup and teardown of an instance (a model loaded in setup)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def setup(self) -> None:
        self.instance = uuid.uuid4().hex
        write(["setup", self.instance], self.folder)

    def process(self, x: int) -> Iterator[Any]:
        yield [x, self.instance]

    def teardown(self) -> None:
        write(["teardown", self.instance], self.folder)


@pytest.mark.parametrize("runner", RUNNERS)
def test_setup_runs_once_per_worker_process_and_teardown_at_the_end(runner: type, address: str,
                                                                    tmp_path: Path) -> None:
    """Six bundles on two worker threads of one process: at most one set-up instance per
    thread (two), each torn down once when the pipeline ends — not a setup per bundle."""
    lifecycle = tmp_path / "lifecycle"
    lifecycle.mkdir()

    def build(p: beam.Pipeline) -> None:
        collect(p | beam.Create(list(range(60))) | beam.ParDo(CountsLifecycle(str(lifecycle))),
                tmp_path / "out")

    run(runner, address, build, "--dask_npartitions=6")
    events = read(lifecycle)
    setups = sorted(i for e, i in events if e == "setup")
    assert 1 <= len(setups) <= 2
    assert sorted(i for e, i in events if e == "teardown") == setups
    out = read(tmp_path / "out")
    assert sorted(x for x, _ in out) == list(range(60)) and {i for _, i in out} == set(setups)


# -- the fixed runner only -------------------------------------------------------------------------
class FailsOn(beam.DoFn):
    def __init__(self, bad: int, folder: str) -> None:
        self.bad, self.folder = bad, folder

    def process(self, x: int) -> Iterator[int]:
        if x == self.bad:
            raise ValueError(f"bad element {x}")
        yield x

    def teardown(self) -> None:
        write("teardown", self.folder)


def test_a_failing_step_fails_the_pipeline_with_its_error(address: str, tmp_path: Path) -> None:
    torn_down = tmp_path / "teardown"
    torn_down.mkdir()

    def build(p: beam.Pipeline) -> None:
        collect(p | beam.Create(list(range(6))) | beam.ParDo(FailsOn(4, str(torn_down))), tmp_path / "out")

    with pytest.raises(ValueError, match="bad element 4"):
        run(DaskRunner, address, build, "--dask_npartitions=2")
    assert "teardown" in read(torn_down)  # the failed bundle's instance was torn down


def test_the_worker_processes_drop_the_runs_instances(address: str, tmp_path: Path) -> None:
    def build(p: beam.Pipeline) -> None:
        collect(p | beam.Create([1, 2]) | beam.ParDo(CountsLifecycle(str(tmp_path / "l"))), tmp_path / "o")

    (tmp_path / "l").mkdir()
    run(DaskRunner, address, build)
    assert dask_runner._IDLE == {}  # noqa: SLF001 - no instance kept after the run


def test_the_runner_is_chosen_by_its_alias_and_its_options_parse(address: str) -> None:
    from apache_beam.options.pipeline_options import StandardOptions

    from pipelines.common.command_line import unknown_flags
    from pipelines.common.options import beam_options, runner_module, runs_elsewhere, shard_writers

    flags = ["--dask_client_address=tcp://10.0.0.1:8786", "--dask_scheduler_file=/shared/s.json",
             "--dask_npartitions=8", "--dask_connection_timeout=30"]
    assert unknown_flags(["--runner=dask", *flags]) == []
    assert unknown_flags(["--runner=dask", "--dask_adress=x"]) == ["--dask_adress"]
    options = beam_options(["--runner=dask", *flags])
    assert options.view_as(StandardOptions).runner == "pipelines.common.dask_runner.DaskRunner"
    assert options.view_as(dask_runner.DaskOptions).npartitions == 8
    assert runner_module("dask") == runner_module("pipelines.common.dask_runner.DaskRunner") \
        == "pipelines.common.dask_runner"
    assert runs_elsewhere(["--runner=dask"]) and shard_writers(options) is None
