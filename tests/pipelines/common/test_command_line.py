"""The build's command line (``pipelines/common/command_line.py``): a flag neither benchforge
nor Beam knows stops the build, every path option is made absolute once in the driver, and the
paths a build prints are the ones the user typed."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


# -- flags ----------------------------------------------------------------------------------------
def test_a_flag_neither_benchforge_nor_beam_knows_stops_the_build(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--reviews`` (StreamVibe's retired name of --decisions) was passed on to Beam, which
    only logs that it discards it: the build exited 0 without the decisions."""
    from pipelines.common.command_line import unknown_flags
    from pipelines.streamvibe.build import run as build_streamvibe

    with pytest.raises(SystemExit) as exc:
        build_streamvibe(["--raw-dir", str(tmp_path), "--out", str(tmp_path / "out"),
                          "--reviews", str(tmp_path / "log"), "--direct_num_workers=1"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --reviews (neither a benchforge option nor an Apache Beam" in err
    assert not (tmp_path / "out").exists()
    assert unknown_flags(["--runner=PortableRunner", "--job_endpoint=embed", "--project=p",
                          "--region", "r", "--temp_location=gs://b/t", "--setup_file=./setup.py",
                          "--direct_running_mode=multi_processing", "--direct_num_workers=2"]) == []
    assert unknown_flags(["--reviews", "x", "--num-workerz=2", "-q"]) == ["--reviews", "--num-workerz", "-q"]


# -- paths the workers can read -------------------------------------------------------------------
def test_every_path_option_is_made_absolute_once_in_the_driver(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Flink, Spark or Dataflow worker (or Beam's external worker pool) runs in a working
    directory of its own: the driver hands it absolute paths — ``NAME=PATH`` keeping its name,
    URLs as they are, a symlinked folder by its own place (not its target)."""
    from pipelines.common.command_line import parse_args
    from pipelines.proactivebench.build import PROACTIVEBENCH
    from pipelines.proready.build import PROREADY
    from pipelines.streamvibe.build import STREAMVIBE

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "raw").symlink_to(tmp_path / "elsewhere")
    monkeypatch.chdir(tmp_path)
    args, beam_args = parse_args(PROACTIVEBENCH, [
        "--raw-dir", "raw", "--out", "o", "--config", "c.yaml", "--source", "coco=data/coco",
        "--source", "rod=gs://bucket/rod", "--train-source", "quickdraw=../qd", "--probes", "p.yaml",
        "--direct_num_workers=1"])
    assert (args.raw_dir, args.out, args.config) == (tmp_path / "raw", tmp_path / "o", tmp_path / "c.yaml")
    assert args.source == [f"coco={tmp_path}/data/coco", "rod=gs://bucket/rod"]
    assert args.train_source == [f"quickdraw={tmp_path.parent}/qd"]
    assert args.probes == str(tmp_path / "p.yaml")
    assert beam_args == ["--direct_num_workers=1"]
    args, _ = parse_args(STREAMVIBE, ["--raw-dir", str(tmp_path), "--decisions", "log",
                                      "--source", "ego4d=e4d"])
    assert (args.decisions, args.source, args.out) == (tmp_path / "log", [f"ego4d={tmp_path}/e4d"],
                                                       tmp_path / "out")
    args, _ = parse_args(PROREADY, ["--raw-dir", "raw", "--source", "videos", "--source", "vstream=v",
                                    "--source", "gs://bucket/videos", "--corrections", "c.jsonl",
                                    "--qc-windows", "/data/qc.jsonl"])
    assert args.source == [str(tmp_path / "videos"), f"vstream={tmp_path}/v", "gs://bucket/videos"]
    assert (args.corrections, args.qc_windows) == (tmp_path / "c.jsonl", Path("/data/qc.jsonl"))


def test_printed_paths_are_relative_inside_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.common.command_line import shown

    monkeypatch.chdir(REPO)
    assert shown(REPO / ".venv" / "bin" / "benchforge") == ".venv/bin/benchforge"
    assert shown(Path("out/streamvibe/review/log")) == "out/streamvibe/review/log"
    assert shown(tmp_path / "out") == str(tmp_path / "out")  # outside it: as typed, absolute
