"""The great-expectations release gate: a good release passes; each broken release fails with
the failing expectation named (design.md §Conventions "Nothing lost", §4 great_expectations notes)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from exports.quality import QualityReport, run_suites
from pipelines.cli import main as benchforge
from pipelines.proactivebench.quality import suites
from tests.pipelines.proactivebench.fixtures import all_environment_episodes, episode, write_release


@pytest.fixture(scope="module")
def episodes() -> list[dict]:
    return all_environment_episodes()


def _failed(report) -> dict[str, list]:
    return {c.check: c.examples for c in report.failed}


def run_suite(release: Path) -> QualityReport:
    """The ProactiveBench suites on a release folder, as the build's gate runs them."""
    counts = json.loads((release / "manifest.json").read_text())["counts"]
    return run_suites(suites(release, counts), release / "reports", label=release)


def main(argv: list[str]) -> int:
    return benchforge(["check", *argv])


def test_good_release_passes_and_writes_reports(episodes, tmp_path: Path, capsys):
    rel = write_release(tmp_path / "rel", episodes, split_files=True)
    assert main([str(rel)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASSED: ")
    assert "files checked against the manifest" in out
    reports = tmp_path / "checks" / "rel"  # beside the release: a published release is never touched
    assert not (rel / "reports").exists()
    md = (reports / "data_quality.md").read_text()
    assert md.startswith("# Data quality: PASSED")
    assert "goal reachable from start within max_steps" in md
    assert (reports / "data_quality.html").read_text().startswith("<!DOCTYPE html>")


def test_duplicate_id_across_two_files_fails(tmp_path: Path, capsys):
    a = episode("quickdraw", 4, sid="quickdraw/dup", seed=1)
    b = episode("quickdraw", 5, sid="quickdraw/dup", seed=2)
    rel = write_release(tmp_path / "rel", [a, b], split_files=True)
    assert len(list((rel / "data" / "quickdraw").glob("*.parquet"))) == 2
    assert main([str(rel)]) == 1
    out = capsys.readouterr().out
    assert "FAIL unique ids [expect_column_values_to_be_unique on id]" in out
    assert "quickdraw/dup" in out
    assert "**FAIL** | unique ids" in (tmp_path / "checks" / "rel" / "data_quality.md").read_text()


def test_answer_not_among_categories_fails(episodes, tmp_path: Path):
    eps = copy.deepcopy(episodes)
    eps[2]["answer"] = "zebra"
    report = run_suite(write_release(tmp_path / "rel", eps))
    assert not report.success
    assert _failed(report) == {"answer among categories": [eps[2]["id"]]}


def test_frame_index_out_of_range_fails(episodes, tmp_path: Path):
    eps = copy.deepcopy(episodes)
    eps[0]["states"][3]["frame"] = len(eps[0]["frames"])  # one past the last frame
    report = run_suite(write_release(tmp_path / "rel", eps))
    assert _failed(report) == {"state frame index in range": [eps[0]["id"]]}


def test_unreachable_goal_and_next_state_out_of_range_fail(episodes, tmp_path: Path):
    eps = copy.deepcopy(episodes)
    mvpn = next(e for e in eps if e["environment"] == "mvpn")
    mvpn["max_steps"] = 2  # needs 3 rotations + the answer
    quickdraw = next(e for e in eps if e["environment"] == "quickdraw")
    first = quickdraw["states"][0]
    abstain = [quickdraw["option_kinds"][i] for i in first["option_ids"]].index("abstain")
    first["next_states"][abstain] = 99  # out of range, but leaves the goal reachable
    failed = _failed(run_suite(write_release(tmp_path / "rel", eps)))
    assert failed["goal reachable from start within max_steps"] == [mvpn["id"]]
    assert failed["next states in range or -1"] == [quickdraw["id"]]


def test_option_the_official_evaluator_misparses_fails(episodes, tmp_path: Path):
    eps = copy.deepcopy(episodes)
    qd = next(e for e in eps if e["environment"] == "quickdraw")
    i = qd["option_kinds"].index("proactive")
    qd["options"][i] = "Add more details to the drawing."  # two DETAILS keys: official asserts
    failed = _failed(run_suite(write_release(tmp_path / "rel", eps)))
    assert failed["options parse as their actions in the official evaluator"] == [qd["id"]]
    assert failed["first_turn_prompt renders the start state"] == [qd["id"]]


def test_mismatched_manifest_counts_fail(episodes, tmp_path: Path):
    counts = {e["environment"]: {"inputs": 1, "kept": 1, "filtered": 0, "rejected": 0}
              for e in episodes}
    counts["coco"] = {"inputs": 10, "kept": 3, "filtered": 5, "rejected": 1}  # 9 != 10
    counts["rod"] = {"inputs": 3, "kept": 2, "filtered": 1, "rejected": 0}  # 1 ROD row, not 2
    report = run_suite(write_release(tmp_path / "rel", episodes, counts=counts))
    failed = _failed(report)
    assert failed["inputs = kept + filtered + rejected"] == ["coco"]
    assert failed["kept = rows in the release"] == ["rod"]
    assert set(failed) == {"inputs = kept + filtered + rejected", "kept = rows in the release"}


def test_unreadable_release_exits_2(tmp_path: Path, capsys):
    assert main([str(tmp_path)]) == 2
    assert "manifest.json" in capsys.readouterr().err  # not a release folder
