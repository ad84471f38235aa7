"""pipelines.common.options: where a build's pipeline runs, and how many cores it may use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def test_shards_are_spread_over_local_workers_and_keyed_per_shard_elsewhere() -> None:
    assert shard_writers(beam_options([])) == 1
    assert shard_writers(beam_options(["--direct_running_mode=multi_processing",
                                       "--direct_num_workers=2"])) == 2
    assert shard_writers(beam_options(["--direct_num_workers=0"])) == (os.cpu_count() or 1)
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
