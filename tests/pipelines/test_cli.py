"""``benchforge build <benchmark>`` finds every benchmark by its folder: a new benchmark is a
folder under ``pipelines/`` with a ``build.py`` defining its Benchmark, and no list to extend."""

import shutil
import sys

import pytest

import pipelines
from pipelines import cli
from pipelines.common.benchmark import Benchmark


def test_every_benchmark_folder_is_a_command() -> None:
    assert cli.BENCHMARKS == ["proactivebench", "proready", "streamvibe"]
    for name in cli.BENCHMARKS:
        found = cli.benchmark(name)
        assert isinstance(found, Benchmark) and found.name == name


def test_an_unknown_benchmark_names_the_known_ones() -> None:
    known = "known: proactivebench, proready, streamvibe"
    with pytest.raises(SystemExit, match=f"unknown benchmark 'nope'; {known}"):
        cli.benchmark("nope")


def test_a_new_benchmark_folder_is_found_as_it_is(tmp_path, monkeypatch, capsys) -> None:
    """A fourth benchmark folder (here: one reusing ProReady's hooks under a new name) is a
    ``benchforge build`` command as it is; a folder whose build.py defines no Benchmark of its
    name gets a clear error, not an AttributeError."""
    pkg = tmp_path / "pipelines"
    (pkg / "fourth").mkdir(parents=True)
    (pkg / "fourth" / "__init__.py").write_text("")
    (pkg / "fourth" / "build.py").write_text(
        "from pipelines.proready.build import ProReady\n\n\n"
        "class Fourth(ProReady):\n    name = 'fourth'\n    title = 'Fourth'\n\n\nFOURTH = Fourth()\n")
    shutil.copytree(cli.PIPELINES / "proready", pkg / "copied", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cli, "BENCHMARKS", cli.discover(pkg) + cli.BENCHMARKS)
    monkeypatch.setattr(pipelines, "__path__", [*pipelines.__path__, str(pkg)])
    try:
        fourth = cli.benchmark("fourth")
        assert type(fourth).__name__ == "Fourth" and fourth.name == "fourth"
        with pytest.raises(SystemExit) as done:
            cli.main(["build", "fourth", "--help"])
        assert done.value.code == 0 and "usage: benchforge build fourth" in capsys.readouterr().out
        with pytest.raises(SystemExit, match="must define one Benchmark named 'copied'"):
            cli.benchmark("copied")
    finally:
        for name in [m for m in sys.modules if m.startswith(("pipelines.fourth", "pipelines.copied"))]:
            del sys.modules[name]
