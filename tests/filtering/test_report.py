"""The leak report: the paper's binomial figures (App. 0.A.8), tables and plot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from filtering.report import (
    binomial_analysis,
    env_rows,
    first_turn_accuracy,
    per_model_accuracy,
    write_leak_report,
)


def test_binomial_analysis_reproduces_paper_numbers() -> None:
    """n = 22, p = 0.4: 92.8% recall for the 25% rule vs 37.6% for the binomial test."""
    a = binomial_analysis(22, 0.4)
    assert a["rule_min_correct"] == 6 and a["test_min_correct"] == 10
    assert round(100 * a["rule_recall"], 1) == 92.8
    assert round(100 * a["test_recall"], 1) == 37.6
    assert a["rule_recall"] == pytest.approx(0.927774, abs=1e-6)
    assert a["test_recall"] == pytest.approx(0.375648, abs=1e-6)
    assert a["rule_flag_rate_at_chance"] == pytest.approx(0.483203, abs=1e-6)
    assert a["test_flag_rate_at_chance"] == pytest.approx(0.029509, abs=1e-6)


def row(model: str, correct: bool, status: str = "answered") -> dict:
    return {
        "model": model,
        "backend": "openai",
        "status": status,
        "raw_answer": "",
        "parsed": "",
        "correct": correct,
    }


def test_accuracy_helpers_and_env_rows() -> None:
    samples = [
        {
            "environment": "coco",
            "route": "filtered",
            "decision": "filter",
            "probe_results": [row("a", True), row("b", True)],
        },
        {
            "environment": "coco",
            "route": "kept",
            "decision": "keep",
            "probe_results": [row("a", False), row("b", False, "failed")],
        },
        {
            "environment": "coco",
            "route": "rejected",
            "decision": "unresolved",
            "probe_results": [row("a", False, "failed"), row("b", False, "failed")],
        },
        {
            "environment": "rod",
            "route": "kept",
            "decision": "keep",
            "probe_results": [row("a", False), row("b", True)],
        },
    ]
    pm = {m["model"]: m for m in per_model_accuracy(s["probe_results"] for s in samples)}
    assert (pm["a"]["answered"], pm["a"]["correct"], pm["a"]["failed"]) == (3, 1, 1)
    assert pm["b"]["accuracy"] == 1.0  # failed answers are not counted as wrong
    assert first_turn_accuracy([[row("a", True)], [row("a", False)], [row("b", False)]]) == 0.25
    rows = {r["environment"]: r for r in env_rows(samples)}
    assert rows["coco"] == {
        "environment": "coco",
        "kept": 1,
        "filtered": 1,
        "unresolved": 1,
        "acc_before": 0.75,
        "acc_after": 0.0,
    }
    assert rows["rod"]["acc_before"] == 0.5 and rows["rod"]["kept"] == 1


def test_write_leak_report(tmp_path: Path) -> None:
    rows = [
        {
            "environment": "coco",
            "kept": 1240,
            "filtered": 300,
            "unresolved": 4,
            "acc_before": 0.40,
            "acc_after": 0.05,
        },
        {
            "environment": "imagenet_c",
            "kept": 1095,
            "filtered": 3761,
            "unresolved": 0,
            "acc_before": 0.553,
            "acc_after": 0.08,
        },
    ]
    per_model = [
        {"model": "m1", "backend": "openai", "answered": 10, "correct": 3, "failed": 1, "accuracy": 0.3}
    ]
    usage = {
        "m1": {
            "requests": 12,
            "retries": 2,
            "cache_hits": 5,
            "failures": 1,
            "prompt_tokens": 1000,
            "completion_tokens": 12,
        }
    }
    paths = write_leak_report(str(tmp_path), rows, ["m1", "m2"], 22, 0.4, per_model=per_model, usage=usage)
    md, png, js = paths
    text = Path(md).read_text()
    assert "| imagenet_c | 4856 | 1095 | 3761 | 0 | 55.3% | 8.0% |" in text
    assert "| threshold rule (≥ 0.25) | X ≥ 6 | 92.8% | 48.3% |" in text
    assert "X ≥ 10 | 37.6% | 3.0% |" in text
    assert "| m1 | 12 | 2 | 5 | 1 | 1000 | 12 |" in text
    assert "| m1 | openai | 10 | 3 | 1 | 30.0% |" in text
    assert "NOT applied" not in text
    with Image.open(png) as im:
        assert im.size[0] > 1000 and im.format == "PNG"
    assert json.loads(Path(js).read_text())["binomial"]["rule_min_correct"] == 6


def test_report_without_probes_says_not_applied(tmp_path: Path) -> None:
    rows = [
        {
            "environment": "coco",
            "kept": 10,
            "filtered": 0,
            "unresolved": 0,
            "acc_before": None,
            "acc_after": None,
        }
    ]
    md, _, js = write_leak_report(str(tmp_path), rows, [], 0, 0.4)
    text = Path(md).read_text()
    assert text.splitlines()[2].startswith("> ⚠️ **The leak filter was NOT applied**")
    assert json.loads(Path(js).read_text())["applied"] is False
