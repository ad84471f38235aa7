"""``benchforge build <benchmark>`` finds every benchmark by its folder: a new benchmark is a
folder under ``pipelines/`` with a ``build.py`` defining its Benchmark, and no list to extend.
Every option of every command says what it does, ``benchforge review`` is called that in its
help, and a reader that stops early (``| head``) ends a command without a traceback."""

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pipelines
from pipelines import cli, registry
from pipelines.common.benchmark import Benchmark


def test_every_benchmark_folder_is_a_command() -> None:
    assert registry.BENCHMARKS == ["proactivebench", "proready", "streamvibe"]
    for name in registry.BENCHMARKS:
        found = registry.benchmark(name)
        assert isinstance(found, Benchmark) and found.name == name


def test_an_unknown_benchmark_names_the_known_ones() -> None:
    known = "known: proactivebench, proready, streamvibe"
    with pytest.raises(SystemExit, match=f"unknown benchmark 'nope'; {known}"):
        registry.benchmark("nope")


def test_a_new_benchmark_folder_is_found_as_it_is(tmp_path, monkeypatch, capsys) -> None:
    """A fourth benchmark folder (here: one reusing ProReady's parts under a new name) is a
    ``benchforge build`` command as it is; a folder whose build.py defines no Benchmark of its
    name gets a clear error, not an AttributeError."""
    pkg = tmp_path / "pipelines"
    (pkg / "fourth").mkdir(parents=True)
    (pkg / "fourth" / "__init__.py").write_text("")
    (pkg / "fourth" / "build.py").write_text(
        "from dataclasses import replace\n\n"
        "from pipelines.proready.build import PROREADY\n\n"
        "FOURTH = replace(PROREADY, info=replace(PROREADY.info, name='fourth', title='Fourth'))\n")
    shutil.copytree(registry.PIPELINES / "proready", pkg / "copied",
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(registry, "BENCHMARKS", registry.discover(pkg) + registry.BENCHMARKS)
    monkeypatch.setattr(pipelines, "__path__", [*pipelines.__path__, str(pkg)])
    try:
        fourth = registry.benchmark("fourth")
        assert (fourth.name, fourth.info.title) == ("fourth", "Fourth")
        assert fourth.build is registry.benchmark("proready").build
        with pytest.raises(SystemExit) as done:
            cli.main(["build", "fourth", "--help"])
        assert done.value.code == 0 and "usage: benchforge build fourth" in capsys.readouterr().out
        with pytest.raises(SystemExit, match="must define one Benchmark named 'copied'"):
            registry.benchmark("copied")
    finally:
        for name in [m for m in sys.modules if m.startswith(("pipelines.fourth", "pipelines.copied"))]:
            del sys.modules[name]


# -- help, program names, a reader that stops early ------------------------------------------------


def documented_commands() -> set[str]:
    """The program names the module doc's usage lines show (``review push|pull|…`` expanded)."""
    found = set()
    for line in (cli.__doc__ or "").splitlines():
        words = line.split()
        if len(words) < 3 or words[0] != "benchforge" or words[1] not in ("build", "check", "review",
                                                                           "export", "diff"):
            continue
        if words[1] in ("check", "diff"):
            found.add(f"benchforge {words[1]}")
        else:
            found |= {f"benchforge {words[1]} {w}" for w in words[2].split("|")}
    return found


def test_every_option_of_every_command_has_a_help_line() -> None:
    """Every subcommand's parser (the ones ``main`` runs, from ``cli.parsers``), every option and
    argument of it and every sub-subcommand has a non-empty help line; ``--config`` and ``--out``
    of ``benchforge build <benchmark>`` had none."""
    parsers = cli.parsers()
    assert documented_commands() <= set(parsers), documented_commands() - set(parsers)
    assert {f"benchforge build {b}" for b in registry.BENCHMARKS} | {
        "benchforge review", "benchforge review push --corrections", "benchforge export croissant",
        "benchforge export lmms-eval", "benchforge export vlmevalkit", "benchforge review audit",
        "benchforge export compat-proactivebench", "benchforge review gemini-review"} <= set(parsers)
    missing = []
    for prog, parser in sorted(parsers.items()):
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if isinstance(action, argparse._SubParsersAction):
                missing += [f"{prog} {c.dest}" for c in action._choices_actions if not (c.help or "").strip()]
                continue
            if action.help == argparse.SUPPRESS or not (action.help or "").strip():
                missing.append(f"{prog} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []
    options = {a.dest: a.help for a in parsers["benchforge build proactivebench"]._actions}
    assert "<out>/proactivebench/<version>/" in options["out"] and "build config" in options["config"]


def test_review_help_names_benchforge_review(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, usage in ((["review", "--help"], "usage: benchforge review [-h]"),
                        (["review", "push", "--help"], "usage: benchforge review push [-h]")):
        with pytest.raises(SystemExit) as done:
            cli.main(argv)
        out = capsys.readouterr().out
        assert done.value.code == 0 and out.startswith(usage), out[:200]
        assert "annotation.cli" not in out
    with pytest.raises(SystemExit):
        cli.main(["review", "--help"])
    assert "benchforge review pull --benchmark B" in capsys.readouterr().out  # the examples, too


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path: Path) -> None:
    """``benchforge review status … | head -n 1``: the reader closes the pipe after one line, the
    command's next print meets a closed pipe. Before, it printed a BrokenPipeError traceback from
    inside ``cmd_status`` and exited 1; now nothing on stderr and 141 (SIGPIPE, as ``yes | head``)."""
    from annotation import decision_log

    log = tmp_path / "log"
    decision_log.append_push(log, [{"benchmark": "streamvibe", "review_round": "r1", "version": 1,
                                    "sample_id": f"s{i:05d}", "task_type": "rv"} for i in range(5000)],
                             benchmark="streamvibe", review_round="r1")
    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "review", "status", "--log-dir",
                             str(log)], cwd=registry.PIPELINES.parent, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # ~200 KB follow: more than a pipe holds, so the writer waits
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == cli.BROKEN_PIPE == 141
    assert first.decode().startswith("s00000\tv1\tpending")
    assert err == ""
