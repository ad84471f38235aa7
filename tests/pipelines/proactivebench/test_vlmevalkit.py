"""VLMEvalKit TSVs of the demo ProactiveBench release (pipelines/proactivebench/vlmevalkit.py,
exports/vlmevalkit.py), read back the way VLMEvalKit reads them.

VLMEvalKit is not on PyPI, so this test does what its loader does, from its sources:
``load`` = ``pd.read_csv(path, sep='\\t')``, ``md5`` = MD5 of the file bytes, the prompt from
the ``A``–``Z`` columns that are not NaN, ``decode_base64_to_image`` = ``base64.b64decode``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import string
from pathlib import Path

import pandas as pd
import pytest

from exports.release_files import iter_rows, read_release
from pipelines.cli import main as cli
from tests.support.demo import DemoReleases


@pytest.fixture(scope="module")
def exported(demo_releases: DemoReleases, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vlmevalkit")
    assert cli(["export", "vlmevalkit", str(demo_releases.paths["proactivebench"]), str(out)]) == 0
    return out


def test_every_image_decodes_to_the_release_bytes_and_the_md5_is_the_files(
        exported: Path, demo_releases: DemoReleases) -> None:
    release = read_release(demo_releases.paths["proactivebench"])
    report = json.loads((exported / "vlmevalkit.json").read_text())
    assert report["release"]["manifest_sha256"] == release.manifest_sha256
    assert set(report["datasets"]) == {f"ProactiveBench_{c}" for c in release.configs() if c != "rod"}
    checked = 0
    for name, meta in report["datasets"].items():
        tsv = exported / f"{name}.tsv"
        assert hashlib.md5(tsv.read_bytes()).hexdigest() == meta["md5"]
        data = pd.read_csv(tsv, sep="\t")
        episodes = {e["id"]: e for e in iter_rows(release.files(name.removeprefix("ProactiveBench_")))}
        assert list(data["index"]) == list(range(len(episodes))) == list(range(meta["rows"]))
        for _, row in data.iterrows():
            ep = episodes[row["sample_id"]]
            start = ep["states"][ep["start_state"]]
            assert base64.b64decode(row["image"]) == ep["frames"][start["frame"]]["bytes"]
            options = [row[c] for c in string.ascii_uppercase if c in row and not pd.isna(row[c])]
            assert options == [ep["options"][i] for i in start["option_ids"]] + list(ep["categories"])
            assert options[string.ascii_uppercase.index(row["answer"])] == ep["answer"]
            assert ep["first_turn_prompt"].startswith(row["question"] + " Choose from the following")
            assert pd.isna(row["hint"]) and row["category"] == ep["environment"]
            assert (row["split"], row["release_version"], row["manifest_sha256"]) == \
                ("test", release.version, release.manifest_sha256)
            checked += 1
    assert checked == sum(c["kept"] for e, c in release.manifest["counts"].items()
                          if e != "rod" and not e.startswith("train/"))  # the evaluation split's


def test_options_beyond_d_are_more_letter_columns(exported: Path) -> None:
    data = pd.read_csv(exported / "ProactiveBench_imagenet_c.tsv", sep="\t")
    assert [c for c in data.columns if len(c) == 1] == list("ABCDEFGHI")  # 5 suggestions + 4 categories
    mvpn = pd.read_csv(exported / "ProactiveBench_mvpn.tsv", sep="\t")
    assert "G" not in mvpn.columns


def test_rod_first_turns_have_no_right_answer_and_are_left_out(exported: Path) -> None:
    report = json.loads((exported / "vlmevalkit.json").read_text())
    assert sorted(report["left_out"]) == sorted(i for i in report["left_out"] if i.startswith("rod/"))
    assert len(report["left_out"]) == 5 and all("void" in r for r in report["left_out"].values())
    assert not (exported / "ProactiveBench_rod.tsv").exists()


def test_streams_have_no_single_turn_config(demo_releases: DemoReleases, tmp_path: Path) -> None:
    assert cli(["export", "vlmevalkit", str(demo_releases.paths["streamvibe"]), str(tmp_path)]) == 2
