"""pipelines.common.options: where a build's pipeline runs, and how many cores it may use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.common.options import beam_options, local_workers, runs_elsewhere, shard_writers

ROOT = Path(__file__).resolve().parents[3]


def test_runs_elsewhere_only_when_the_work_leaves_this_process() -> None:
    assert not runs_elsewhere([])  # the embedded runner, in this process
    assert not runs_elsewhere(["--direct_num_workers=2"])  # threads of this process
    assert runs_elsewhere(["--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    assert runs_elsewhere(["--runner=PortableRunner", "--job_endpoint=embed"])
    assert runs_elsewhere(["--runner=DataflowRunner"])
    assert local_workers([]) == 1
    assert local_workers(["--direct_num_workers=2"]) == 2


def test_shards_are_spread_over_several_local_workers_and_keyed_per_shard_otherwise() -> None:
    # one worker: one key per shard, so no element holds the whole PCollection
    assert shard_writers(beam_options([])) is None
    assert shard_writers(beam_options(["--direct_num_workers=1"])) is None
    assert shard_writers(beam_options(["--direct_running_mode=multi_processing",
                                       "--direct_num_workers=2"])) == 2
    cores = os.cpu_count() or 1
    assert shard_writers(beam_options(["--direct_num_workers=0"])) == (cores if cores > 1 else None)
    assert shard_writers(beam_options(["--runner=PortableRunner", "--job_endpoint=embed"])) is None
    assert shard_writers(beam_options(["--runner=DataflowRunner"])) is None


def test_the_gate_modules_are_imported_in_the_background() -> None:
    """The driver of an out-of-process pipeline imports great-expectations while it waits."""
    code = ("import sys; from exports.quality import import_in_background; "
            "assert 'great_expectations' not in sys.modules; "
            "t = import_in_background(); t.join(); "
            "print(t.daemon, 'great_expectations.expectations' in sys.modules, "
            "'matplotlib.pyplot' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["True", "True", "True"]


# -- a runner's own options -------------------------------------------------------------------------
def test_the_runner_flag_and_its_module_are_found_as_beam_reads_them() -> None:
    from pipelines.common.options import runner_module, runner_name

    assert runner_name(["--direct_num_workers=2"]) is None
    assert runner_name(["--runner", "FlinkRunner", "--runner=SparkRunner"]) == "SparkRunner"  # last wins
    assert runner_module("FlinkRunner") == "apache_beam.runners.portability.flink_runner"
    assert runner_module("flink") == "apache_beam.runners.portability.flink_runner"
    assert runner_module("dataflow") == "apache_beam.runners.dataflow.dataflow_runner"
    # a short name never picks Beam's own DaskRunner, which loses records (docs/dask.md)
    assert runner_module("DaskRunner") == runner_module("dask") == "pipelines.common.dask_runner"
    stock = "apache_beam.runners.dask.dask_runner"
    assert runner_module(f"{stock}.DaskRunner") == stock
    assert runner_module("my_cluster.runner.TaskManagerRunner") == "my_cluster.runner"


def test_a_third_party_runners_options_are_known_once_its_module_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beam registers a runner's PipelineOptions when its module is imported, which it does only
    when the pipeline runs — after the driver had refused the runner's flags as unknown. Named
    by ``--runner=module.Class``, the module is imported first; other unknown flags still stop
    the build."""
    from pipelines.common.command_line import unknown_flags

    (tmp_path / "tm_runner_for_test.py").write_text(
        "from apache_beam.options.pipeline_options import PipelineOptions\n"
        "from apache_beam.runners.runner import PipelineRunner\n\n\n"
        "class TaskManagerOptions(PipelineOptions):\n"
        "    @classmethod\n"
        "    def _add_argparse_args(cls, parser):\n"
        "        parser.add_argument('--task_manager_address_for_test')\n\n\n"
        "class TaskManagerRunner(PipelineRunner):\n"
        "    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "tm_runner_for_test", raising=False)
    flag = "--task_manager_address_for_test=tm:6123"
    assert unknown_flags([flag]) == ["--task_manager_address_for_test"]  # its module not imported yet
    runner = "--runner=tm_runner_for_test.TaskManagerRunner"
    assert unknown_flags([runner, flag]) == []
    assert unknown_flags([runner, flag, "--task_manager_adress=x"]) == ["--task_manager_adress"]
    assert "tm_runner_for_test" in sys.modules
    monkeypatch.delitem(sys.modules, "tm_runner_for_test")


def test_a_runner_that_cannot_be_imported_is_one_clear_line(tmp_path: Path) -> None:
    from pipelines.common.options import import_runner
    from pipelines.proactivebench.build import run

    with pytest.raises(SystemExit) as exc:
        import_runner(["--runner=no_such_cluster_pkg.Runner"])
    assert str(exc.value) == (
        "error: --runner=no_such_cluster_pkg.Runner: cannot import no_such_cluster_pkg "
        "(ModuleNotFoundError: No module named 'no_such_cluster_pkg'); install the runner's extra "
        "(e.g. pip install 'apache-beam[dask]' for DaskRunner)")
    with pytest.raises(SystemExit) as exc:
        import_runner(["--runner", "Flonk"])
    assert str(exc.value).startswith("error: --runner=Flonk: not a runner Apache Beam knows (e.g. ")
    assert "FlinkRunner" in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(SystemExit, match="cannot import no_such_cluster_pkg"):  # before any work
        run(["--raw-dir", str(tmp_path), "--out", str(tmp_path / "out"), "--runner=no_such_cluster_pkg.R"])
    assert not (tmp_path / "out").exists()
