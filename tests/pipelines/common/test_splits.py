"""The shared driver's splits (``pipelines/common/driver.py``): ``--split`` exists only for a
benchmark that declares more than its evaluation split, a training split is always published with
the evaluation split, and a release with several splits counts each apart in its manifest."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from pipelines.common.assembly import split_facts
from pipelines.common.benchmark import BuildContext
from pipelines.common.command_line import parse_args
from tests.support.parts import NoSteps, bare


class TrainingSplit(NoSteps):
    """Declares a training split (as StreamVibe does)."""

    splits = ("test", "train")

    def split_of(self, group: str) -> str:
        return "train" if group.startswith("train/") else self.split


WITH_TRAINING = bare("with-training", TrainingSplit())
ONE_SPLIT = bare("one-split")  # its evaluation split only


def _ctx(splits: tuple[str, ...]) -> BuildContext:
    return BuildContext({"version": "1.0.0"}, Path("c.yaml"), Path("raw"), Path("out"),
                        argparse.Namespace(), splits=splits)


def test_split_option_only_where_a_benchmark_has_a_training_split(capsys):
    assert parse_args(WITH_TRAINING, ["--raw-dir", "raw", "--split", "train"])[0].split == "train"
    assert parse_args(WITH_TRAINING, ["--raw-dir", "raw"])[0].split == "test"
    with pytest.raises(SystemExit):
        parse_args(WITH_TRAINING, ["--raw-dir", "raw", "--split", "validation"])
    assert "invalid choice" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # once passed on to Beam, which ignored it
        parse_args(ONE_SPLIT, ["--raw-dir", "raw", "--split", "train"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --split" in capsys.readouterr().err


def test_manifest_counts_each_split_apart():
    counts = {"I": {"inputs": 3, "kept": 2, "filtered": 0, "rejected": 1},
              "R": {"inputs": 4, "kept": 2, "filtered": 1, "rejected": 1},
              "train/I": {"inputs": 5, "kept": 4, "filtered": 1, "rejected": 0}}
    bench = WITH_TRAINING
    assert split_facts(bench, _ctx(("test",)), counts) == {"split": "test"}
    assert split_facts(bench, _ctx(("test", "train")), counts) == {
        "split": ["test", "train"],
        "splits": {"test": {"groups": ["I", "R"], "inputs": 7, "kept": 4, "filtered": 1, "rejected": 2},
                   "train": {"groups": ["train/I"], "inputs": 5, "kept": 4, "filtered": 1, "rejected": 0}}}
    assert ONE_SPLIT.build.split_of("anything") == "test"
