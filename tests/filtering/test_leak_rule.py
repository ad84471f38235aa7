"""The App. 0.A.8 decision rule, unresolved handling and config validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clients import ClientConfigError
from filtering.leak import LeakFilter, LeakFilterConfig, leaks
from filtering.probes import ProbeConfigError


def results(correct: int, wrong: int, failed: int = 0) -> list[dict]:
    rows = []
    for i in range(correct):
        rows.append(
            {
                "model": f"c{i}",
                "backend": "openai",
                "status": "answered",
                "raw_answer": "D",
                "parsed": "cat",
                "correct": True,
            }
        )
    for i in range(wrong):
        rows.append(
            {
                "model": f"w{i}",
                "backend": "gemini",
                "status": "answered",
                "raw_answer": "C",
                "parsed": "dog",
                "correct": False,
            }
        )
    for i in range(failed):
        rows.append(
            {
                "model": f"f{i}",
                "backend": "openai",
                "status": "failed",
                "raw_answer": "",
                "parsed": "",
                "correct": False,
            }
        )
    return rows


def pool_config(n: int = 22, **leak: object) -> LeakFilterConfig:
    probes = [{"backend": "precomputed", "model": f"m{i}", "path": "x.jsonl"} for i in range(n)]
    lf = {"unresolved_policy": "reject", "min_answering_models": 11}
    lf.update(leak)
    return LeakFilterConfig.from_dict({"leak_filter": lf, "probes": probes})


def test_threshold_is_exact_six_of_twenty_two() -> None:
    assert leaks(6, 22, 0.25) and not leaks(5, 22, 0.25)
    assert leaks(1, 4, 0.25)  # exactly 25% counts (≥), no float rounding
    assert not leaks(0, 0, 0.25)
    lf = LeakFilter(pool_config())
    decision, reason, evidence = lf.decide(results(6, 16))
    assert decision == "filter" and "6/22" in reason
    ev = json.loads(evidence)
    assert (ev["correct"], ev["out_of"], ev["threshold"]) == (6, 22, 0.25)
    assert len(ev["per_model"]) == 22 and ev["per_model"][0]["raw_answer"] == "D"
    assert lf.decide(results(5, 17))[0] == "keep"
    assert lf.route("filter") == "filtered" and lf.route("keep") == "kept"


def test_the_rate_is_over_the_whole_pool_as_the_paper_defines_it() -> None:
    """App. 0.A.8: 25% "considering all evaluated MLLMs" — 6 of 22. With two failed probes,
    5 correct is 5/22 < 25% (kept); dividing by the 20 that answered would filter it (5/20)."""
    lf = LeakFilter(pool_config())
    decision, reason, evidence = lf.decide(results(5, 15, failed=2))
    assert decision == "keep" and "5/22 probe models" in reason
    ev = json.loads(evidence)
    assert (ev["denominator"], ev["out_of"], ev["answering"]) == ("pool", 22, 20)
    assert ev["failed_models"] == ["f0", "f1"]
    assert lf.decide(results(6, 14, failed=2))[0] == "filter"  # 6/22
    answering = LeakFilter(pool_config(denominator="answering"))
    decision, reason, _ = answering.decide(results(5, 15, failed=2))
    assert decision == "filter" and "5/20 answering models" in reason
    assert LeakFilter(pool_config()).describe()["denominator"] == "pool"
    with pytest.raises(ProbeConfigError, match="denominator must be one of"):
        pool_config(denominator="answered")


@pytest.mark.parametrize("denominator", ["pool", "answering"])
def test_only_a_sample_the_failed_probes_could_still_push_across_is_unresolved(denominator: str) -> None:
    """6 correct of 22 (16 failed) has reached the App. 0.A.8 threshold whatever the failed
    probes would answer: filtered, even under ``unresolved_policy: keep`` (it was kept as
    unresolved when the minimum-answering check ran first). 1 correct with 16 failed could
    still reach 6/22: unresolved; 1 correct with 4 failed cannot: kept."""
    lf = LeakFilter(pool_config(unresolved_policy="keep", denominator=denominator))
    decision, reason, _ = lf.decide(results(6, 0, failed=16))
    assert (decision, lf.route(decision)) == ("filter", "filtered")
    assert "6/22" in reason and "16 failed" in reason
    assert lf.decide(results(1, 5, failed=16))[0] == "unresolved"
    strict = LeakFilter(pool_config(unresolved_policy="filter", denominator=denominator,
                                    min_answering_models=20))
    decision, reason, _ = strict.decide(results(1, 17, failed=4))  # 18 answering < 20
    assert decision == "keep" and "even if all 4 failed" in reason  # 1 + 4 < 6 of 22
    assert strict.decide(results(2, 16, failed=4))[0] == "unresolved"  # 2 + 4 = 6 of 22
    assert strict.decide(results(6, 13, failed=3))[0] == "filter"


@pytest.mark.parametrize("policy,route", [("keep", "kept"), ("filter", "filtered"), ("reject", "rejected")])
def test_unresolved_is_routed_by_explicit_policy(policy: str, route: str) -> None:
    lf = LeakFilter(pool_config(unresolved_policy=policy))
    decision, reason, _ = lf.decide(results(5, 5, failed=12))  # 10 answering < 11
    assert decision == "unresolved"
    assert "only 10 of 22" in reason and policy in reason
    assert lf.route(decision) == route


def test_unresolved_policy_must_be_explicit() -> None:
    with pytest.raises(ProbeConfigError, match="unresolved_policy must be set explicitly"):
        LeakFilterConfig.from_dict({"probes": [{"backend": "openai", "model": "m"}]})


def test_no_probes_builds_and_says_not_applied(tmp_path: Path) -> None:
    cfg_path = tmp_path / "none.yaml"
    cfg_path.write_text("leak_filter:\n  threshold: 0.25\nprobes: []\n")
    lf = LeakFilter(str(cfg_path))
    assert not lf.applied
    desc = lf.describe()
    assert desc["applied"] is False and "NOT applied" in desc["notice"]
    assert "NOT applied" in lf.card_notice()
    decision, reason, _ = lf.decide([])
    assert decision == "keep" and "not applied" in reason


def test_config_errors_name_the_entry(tmp_path: Path) -> None:
    with pytest.raises(ProbeConfigError, match=r"probes\[0\].*api_key_env"):
        LeakFilterConfig.from_dict(
            {
                "leak_filter": {"unresolved_policy": "keep"},
                "probes": [{"backend": "openai", "model": "m", "api_key": "sk-secret"}],
            }
        )
    with pytest.raises(ProbeConfigError, match=r"probes\[1\]\.backend: must be one of"):
        LeakFilterConfig.from_dict(
            {
                "leak_filter": {"unresolved_policy": "keep"},
                "probes": [{"backend": "clip", "model": "m"}, {"backend": "llama", "model": "m"}],
            }
        )
    with pytest.raises(ProbeConfigError, match="duplicate probe names"):
        LeakFilterConfig.from_dict(
            {
                "leak_filter": {"unresolved_policy": "keep"},
                "probes": [{"backend": "openai", "model": "m"}, {"backend": "gemini", "model": "m"}],
            }
        )
    with pytest.raises(ClientConfigError, match=r"models\.limits\.openai: unknown keys \['concurency'\]"):
        LeakFilterConfig.from_dict({"models": {"limits": {"openai": {"concurency": 3}}}})
    with pytest.raises(ProbeConfigError, match="backends: moved to models.limits"):
        LeakFilterConfig.from_dict({"backends": {"openai": {"concurrency": 3}}})
    with pytest.raises(ProbeConfigError, match="leak_filter.cache_dir: moved to models.cache_dir"):
        LeakFilterConfig.from_dict({"leak_filter": {"cache_dir": ".cache/probes"}})
    with pytest.raises(ProbeConfigError, match="does not exist"):
        LeakFilterConfig.from_yaml(str(tmp_path / "missing.yaml"))


def test_example_config_parses() -> None:
    root = Path(__file__).resolve().parents[2]
    cfg = LeakFilterConfig.from_yaml(str(root / "configs" / "probes.example.yaml"))
    assert cfg.threshold == 0.25 and cfg.unresolved_policy in ("keep", "filter", "reject")
    assert {p.backend for p in cfg.probes} == {"openai", "gemini", "precomputed", "clip"}
    assert cfg.models.limits["openai"].concurrency >= 1 and cfg.models.cache_dir == ".cache/probes"
