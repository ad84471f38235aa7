"""pipelines.common.warm_workers: local workers forked from a template that imported the steps.

Real Beam pipelines on the embedded runner with two worker processes. Each element records the
process that handled it and whether ``wave`` (a module nothing in these pipelines imports, given
as a worker module) was already loaded there: true only in a fork of the template.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import apache_beam as beam
import pytest

from pipelines.common.options import WarmStartRunner, beam_options, run_pipeline, starts_warm_workers
from pipelines.common.warm_workers import TEMPLATE_SOCKET, attach_command, warm_workers

TWO_PROCESSES = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]
MARKER = "wave"


def _mark_steps(marks: Path, n: int = 40):
    def mark(x: int) -> int:
        parent = os.getppid()
        grandparent = Path(f"/proc/{parent}/stat").read_text().rsplit(")", 1)[1].split()[1]
        (marks / f"{x}.{os.getpid()}.{MARKER in sys.modules}.{grandparent}").touch()
        return x

    def add_steps(p: beam.Pipeline) -> None:
        _ = p | beam.Create(range(n)) | beam.Reshuffle() | beam.Map(mark)

    return add_steps


def _read_marks(marks: Path, grandparents: set[int] | None = None) -> dict[int, tuple[int, bool]]:
    """element -> (pid, marker module loaded) of the process that handled it; the parents of
    those processes' parents go into ``grandparents``."""
    out = {}
    for m in marks.iterdir():
        x, pid, warm, grandparent = m.name.split(".")
        out[int(x)] = (int(pid), warm == "True")
        if grandparents is not None:
            grandparents.add(int(grandparent))
    return out


@pytest.fixture
def own_tmp(tmp_path, monkeypatch) -> Path:
    """The template's socket folder goes under tmp_path, so the test sees it removed — deeper
    than an AF_UNIX address can name (~108 bytes), as a long TMPDIR or pytest's three-digit
    counter made it: the template must start all the same."""
    folder = tmp_path / ("deep-" * 16) / "tmp"
    folder.mkdir(parents=True)
    assert len(str(folder / "benchforge-workers-xxxxxxxx" / "template.sock")) > 108
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_local_workers_are_forks_of_a_template_that_imported_the_worker_modules(tmp_path, own_tmp):
    marks = tmp_path / "marks"
    marks.mkdir()
    run_pipeline(_mark_steps(marks), TWO_PROCESSES, tmp_path / "progress", worker_modules=(MARKER,))
    grandparents: set[int] = set()
    handled = _read_marks(marks, grandparents)
    assert sorted(handled) == list(range(40))  # every element, once
    pids = {pid for pid, _ in handled.values()}
    assert len(pids) == 2 and os.getpid() not in pids  # two worker processes, not this one
    assert all(warm for _, warm in handled.values())  # both forks of the template
    assert grandparents == {os.getpid()}  # children of the template, itself a child of this process
    assert list(own_tmp.iterdir()) == []  # the template's folder is gone with the build


def test_workers_beyond_the_template_or_without_one_start_cold(tmp_path, own_tmp):
    """A template forks as many workers as the build asked for; any other worker (and every
    worker when there is no template) is a cold start of Beam's own command, with the same
    results."""
    marks = tmp_path / "marks"
    marks.mkdir()
    options = beam_options(TWO_PROCESSES)
    assert starts_warm_workers(options)
    with warm_workers(1, (MARKER,)) as command, \
            beam.Pipeline(runner=WarmStartRunner(command), options=options) as p:
        _mark_steps(marks)(p)
    handled = _read_marks(marks)
    assert sorted(handled) == list(range(40))
    by_pid: dict[int, set[bool]] = {}
    for pid, warm in handled.values():
        by_pid.setdefault(pid, set()).add(warm)
    assert sorted(by_pid.values(), key=sorted) == [{False}, {True}]  # one fork, one cold worker

    marks_cold = tmp_path / "cold"
    marks_cold.mkdir()
    with beam.Pipeline(runner=WarmStartRunner(attach_command(tmp_path / "no-template")),
                       options=beam_options(TWO_PROCESSES)) as p:
        _mark_steps(marks_cold)(p)
    cold = _read_marks(marks_cold)
    assert sorted(cold) == list(range(40)) and not any(warm for _, warm in cold.values())


def test_a_template_no_worker_attaches_to_ends_with_the_build(own_tmp):
    with warm_workers(2, (MARKER,)):
        (folder,) = own_tmp.iterdir()
        for _ in range(200):  # it listens before it imports
            if (folder / TEMPLATE_SOCKET).exists():
                break
            time.sleep(0.05)
        assert (folder / TEMPLATE_SOCKET).exists()
        (template,) = _templates_serving(folder)
    assert list(own_tmp.iterdir()) == []
    assert _templates_serving(folder) == [] and not Path(f"/proc/{template}").exists()  # it ended


def _templates_serving(folder: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(folder).encode() in argv:
            found.append(int(entry.name))
    return found


def test_only_the_embedded_runners_local_processes_start_from_a_template():
    assert starts_warm_workers(beam_options(TWO_PROCESSES))
    assert not starts_warm_workers(beam_options([]))  # in this process
    assert not starts_warm_workers(beam_options(["--direct_num_workers=2"]))  # threads
    assert not starts_warm_workers(beam_options(["--runner=PortableRunner", "--job_endpoint=embed"]))
    assert not starts_warm_workers(beam_options(["--runner=DataflowRunner"] + TWO_PROCESSES))
