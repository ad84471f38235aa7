"""The leak filter driving the real openai and google-genai clients against the local protocol
server: first-turn fidelity, parsing, faults and retries, failures, cache and resume, and the
precomputed and CLIP backends. No client is mocked."""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clients import ClientConfigError
from filtering.leak import LeakFilter, LeakFilterConfig
from filtering.probes import ProbeConfigError
from tests.filtering.conftest import letter_of, make_episode
from tests.support.protocol_server import Call, EmptyBody, Hang, ProtocolServer, RawBody, Reply, Status

Build = Callable[..., dict[str, Any]]


def by_prompt(episodes: list[dict[str, Any]], plan: dict[str, dict[str, str]]):
    """Answer function: model → {episode id → category text}, answered by its letter."""
    eps = {ep["first_turn_prompt"]: ep for ep in episodes}

    def answer(call: Call) -> str:
        ep = next(e for p, e in eps.items() if call.prompt.startswith(p))
        choice = plan.get(call.model, {}).get(ep["id"], "dog")
        return letter_of(ep, choice)

    return answer


def test_probes_see_exactly_the_first_state(
    server: ProtocolServer, config_for: Build, episodes: list[dict[str, Any]]
) -> None:
    lf = LeakFilter(LeakFilterConfig.from_dict(config_for()))
    out = lf.probe(episodes)
    assert set(out) == {ep["id"] for ep in episodes}
    assert server.count(protocol="openai") == len(episodes)
    assert server.count(protocol="gemini") == len(episodes)
    for rec in server.requests:
        ep = next(e for e in episodes if rec.prompt == e["first_turn_prompt"])
        assert rec.image_sha256 == hashlib.sha256(ep["frames"][1]["bytes"]).hexdigest()
        assert rec.mime_type == "image/png"
        assert "A. I cannot answer. B. Move the camera left. C. dog D. cat" in rec.prompt
    # default answer "A" = the abstain option: answered, parsed, not correct
    row = out[episodes[0]["id"]][0]
    assert row == {
        "model": "oa-1",
        "backend": "openai",
        "status": "answered",
        "raw_answer": "A",
        "parsed": "I cannot answer.",
        "correct": False,
    }


def test_hint_is_appended_when_configured(server: ProtocolServer, config_for: Build) -> None:
    ep = make_episode("h")
    LeakFilter(LeakFilterConfig.from_dict(config_for(hint=True))).probe([ep])
    assert {r.prompt for r in server.requests} == {f"{ep['first_turn_prompt']} {ep['hint']}"}


def test_answers_parsed_and_leak_decided(
    server: ProtocolServer, config_for: Build, episodes: list[dict[str, Any]]
) -> None:
    leaky, clean = episodes[0]["id"], episodes[1]["id"]
    server.answer = by_prompt(episodes, {"oa-1": {leaky: "cat"}, "gm-1": {leaky: "cat"}})
    lf = LeakFilter(LeakFilterConfig.from_dict(config_for()))
    out = lf.probe(episodes[:2])
    assert [r["correct"] for r in out[leaky]] == [True, True]
    assert [r["parsed"] for r in out[leaky]] == ["cat", "cat"]
    assert [r["raw_answer"] for r in out[leaky]] == ["D", "D"]
    assert [r["correct"] for r in out[clean]] == [False, False]
    assert lf.decide(out[leaky])[0] == "filter"
    assert lf.decide(out[clean])[0] == "keep"
    usage = lf.usage()
    assert usage["oa-1"]["requests"] == 2 and usage["gm-1"]["requests"] == 2
    assert usage["oa-1"]["prompt_tokens"] > 0 and usage["gm-1"]["completion_tokens"] == 2


FAULTS = {"429": Status(429), "500": Status(500), "503": Status(503), "timeout": Hang(2.0),
          "malformed": RawBody(), "empty": EmptyBody()}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_transient_faults_are_retried(server: ProtocolServer, config_for: Build, fault: str) -> None:
    ep = make_episode("f")
    server.answer = lambda call: "D"
    server.push(FAULTS[fault], FAULTS[fault], model="oa-1")
    server.push(FAULTS[fault], model="gm-1")
    lf = LeakFilter(LeakFilterConfig.from_dict(config_for()))
    rows = lf.probe([ep])[ep["id"]]
    assert [r["status"] for r in rows] == ["answered", "answered"]
    assert [r["correct"] for r in rows] == [True, True]
    assert server.count("oa-1") == 3 and server.count("gm-1") == 2
    assert lf.stats["oa-1"]["retries"] == 2 and lf.stats["gm-1"]["retries"] == 1
    cause = {"empty": "malformed"}.get(fault, fault)
    assert lf.stats["oa-1"][f"retry_{cause}"] == 2 and lf.stats["gm-1"][f"retry_{cause}"] == 1


def test_exhausted_retries_mark_failed_not_wrong(
    server: ProtocolServer, config_for: Build, tmp_path: Path
) -> None:
    ep = make_episode("x")
    server.answer = lambda call: "D"
    server.push(*[Status(500)] * 4, model="oa-1")  # max_attempts = 4
    # 1 correct of 2 is below 0.75, but the failed probe could still bring it to 2/2: unresolved
    cfg = config_for(min_answering_models=2, threshold=0.75)
    lf = LeakFilter(LeakFilterConfig.from_dict(cfg))
    rows = lf.probe([ep])[ep["id"]]
    assert rows[0] == {
        "model": "oa-1",
        "backend": "openai",
        "status": "failed",
        "raw_answer": "",
        "parsed": "",
        "correct": False,
    }
    assert rows[1]["status"] == "answered" and rows[1]["correct"]
    assert server.count("oa-1") == 4 and lf.stats["oa-1"]["failures"] == 1
    decision, reason, evidence = lf.decide(rows)
    assert decision == "unresolved" and "only 1 of 2" in reason
    assert json.loads(evidence)["failed_models"] == ["oa-1"]
    assert lf.route(decision) == "rejected"
    # the failure is not cached: the next run asks again and resolves it
    lf2 = LeakFilter(LeakFilterConfig.from_dict(cfg))
    rows2 = lf2.probe([ep])[ep["id"]]
    assert [r["status"] for r in rows2] == ["answered", "answered"]
    assert server.count("oa-1") == 5 and server.count("gm-1") == 1
    assert lf2.decide(rows2)[0] == "filter"


def test_wrong_letter_is_an_answer_not_a_failure(server: ProtocolServer, config_for: Build) -> None:
    ep = make_episode("w")
    server.push(Reply("Z"), model="gm-1")
    rows = LeakFilter(LeakFilterConfig.from_dict(config_for())).probe([ep])[ep["id"]]
    assert rows[1] == {
        "model": "gm-1",
        "backend": "gemini",
        "status": "answered",
        "raw_answer": "Z",
        "parsed": "",
        "correct": False,
    }
    assert server.count("gm-1") == 1


def test_client_errors_are_not_retried(server: ProtocolServer, config_for: Build) -> None:
    ep = make_episode("404")
    cfg = config_for(
        probes=[{"backend": "openai", "model": "oa-1", "base_url": server.base_url + "/nope/v1"}]
    )
    lf = LeakFilter(LeakFilterConfig.from_dict(cfg))
    rows = lf.probe([ep])[ep["id"]]
    assert rows[0]["status"] == "failed"
    assert lf.stats["oa-1"]["requests"] == 1 and lf.stats["oa-1"]["retries"] == 0


def test_cache_and_resume_query_only_missing(
    server: ProtocolServer, config_for: Build, episodes: list[dict[str, Any]]
) -> None:
    cfg = LeakFilterConfig.from_dict(config_for())
    first = LeakFilter(cfg).probe(episodes[:3])
    assert server.count() == 6
    # "crash" after three samples; the resumed run over all six asks only for the other three
    lf = LeakFilter(cfg, run_id="resume")
    out = lf.probe(episodes)
    assert server.count() == 12
    assert {k: out[k] for k in first} == first
    assert lf.stats["oa-1"]["cache_hits"] == 3 and lf.stats["oa-1"]["requests"] == 3
    # an immediate re-run sends nothing
    server.reset_log()
    again = LeakFilter(cfg).probe(episodes)
    assert server.count() == 0 and again == out
    # a different prompt (hint on) is a different cache key
    LeakFilter(LeakFilterConfig.from_dict(config_for(hint=True))).probe(episodes[:1])
    assert server.count() == 2
    assert LeakFilter(cfg, run_id="resume").usage()["gm-1"]["cache_hits"] == 3


def test_api_key_from_env_reaches_server_and_missing_key_errors(
    server: ProtocolServer, config_for: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    ep = make_episode("k")
    monkeypatch.setenv("BF_TEST_KEY", "sekret-123")
    cfg = config_for(
        probes=[
            {
                "backend": "openai",
                "model": "oa-1",
                "base_url": server.openai_base_url,
                "api_key_env": "BF_TEST_KEY",
            },
            {"backend": "gemini", "model": "gm-1", "base_url": server.base_url, "api_key_env": "BF_TEST_KEY"},
        ]
    )
    lf = LeakFilter(LeakFilterConfig.from_dict(cfg))
    lf.probe([ep])
    assert {r.api_key for r in server.requests} == {"sekret-123"}
    assert "sekret" not in json.dumps(lf.describe())
    monkeypatch.delenv("BF_TEST_KEY")
    with pytest.raises(ClientConfigError, match="BF_TEST_KEY is not set"):
        LeakFilter(LeakFilterConfig.from_dict(cfg)).probe([make_episode("k2")])


def test_rate_limit_spaces_requests(
    server: ProtocolServer, config_for: Build, episodes: list[dict[str, Any]]
) -> None:
    import time

    cfg = config_for(probes=[{"backend": "openai", "model": "oa-1", "base_url": server.openai_base_url}])
    cfg["models"]["limits"]["openai"].update({"concurrency": 8, "requests_per_second": 20})
    t0 = time.monotonic()
    LeakFilter(LeakFilterConfig.from_dict(cfg)).probe(episodes)
    assert time.monotonic() - t0 >= (len(episodes) - 1) / 20 * 0.95


def test_precomputed_jsonl_and_parquet(tmp_path: Path, episodes: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    e0, e1 = episodes[0]["id"], episodes[1]["id"]
    rows = [
        {"sample_id": e0, "model": "llava", "raw_answer": "D"},
        {"sample_id": e1, "model": "llava", "raw_answer": "dog"},
        {"sample_id": e0, "model": "qwen", "raw_answer": "cat"},
    ]
    jl = tmp_path / "pred.jsonl"
    jl.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    pqf = tmp_path / "pred.parquet"
    pq.write_table(pa.Table.from_pylist(rows), pqf)
    cfg = LeakFilterConfig.from_dict(
        {
            "leak_filter": {"unresolved_policy": "filter", "min_answering_models": 2, "progress": False},
            "probes": [
                {"backend": "precomputed", "model": "llava", "path": str(jl)},
                {"backend": "precomputed", "model": "qwen", "path": str(pqf)},
            ],
        }
    )
    lf = LeakFilter(cfg)
    out = lf.probe(episodes[:2])
    assert [(r["status"], r["correct"]) for r in out[e0]] == [("answered", True), ("answered", True)]
    assert out[e1][0]["parsed"] == "dog" and not out[e1][0]["correct"]
    assert out[e1][1]["status"] == "failed"  # no qwen prediction for e1
    assert lf.decide(out[e0])[0] == "filter"
    assert lf.route(lf.decide(out[e1])[0]) == "filtered"  # unresolved → policy "filter"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sample_id": "x", "model": "m"}\n')
    cfg_bad = LeakFilterConfig.from_dict(
        {
            "leak_filter": {"unresolved_policy": "keep", "progress": False},
            "probes": [{"backend": "precomputed", "model": "m", "path": str(bad)}],
        }
    )
    with pytest.raises(ProbeConfigError, match="bad.jsonl: row 1: field 'raw_answer'"):
        LeakFilter(cfg_bad).probe(episodes[:1])


def test_clip_probe_scores_categories(tiny_clip: str, tmp_path: Path, episodes: list[dict[str, Any]]) -> None:
    cfg = LeakFilterConfig.from_dict(
        {
            "leak_filter": {"unresolved_policy": "keep", "progress": False},
            "models": {"cache_dir": str(tmp_path / "c")},
            "probes": [
                {
                    "backend": "clip",
                    "model": tiny_clip,
                    "random_weights": True,
                    "templates": ["a photo of a {}."],
                    "device": "cpu",
                }
            ],
        }
    )
    lf = LeakFilter(cfg)
    out = lf.probe(episodes)
    for ep in episodes:
        (row,) = out[ep["id"]]
        assert row["status"] == "answered" and row["raw_answer"] in ep["categories"]
        assert row["parsed"] == row["raw_answer"]
        assert row["correct"] == (row["raw_answer"] == "cat")
    assert lf.stats[tiny_clip]["requests"] == len(episodes)
    assert lf.describe()["clip"][tiny_clip]["checkpoint_sha256"] == "random-weights"
    lf2 = LeakFilter(cfg)
    assert lf2.probe(episodes) == out and lf2.stats[tiny_clip]["cache_hits"] == len(episodes)


def test_leak_filter_pickles_and_works_after(server: ProtocolServer, config_for: Build) -> None:
    lf = LeakFilter(LeakFilterConfig.from_dict(config_for()))
    lf.probe([make_episode("p1")])
    clone = pickle.loads(pickle.dumps(lf))
    out = clone.probe([make_episode("p2")])
    assert [r["status"] for r in out["coco/p2"]] == ["answered", "answered"]


def test_probe_works_when_called_inside_a_running_event_loop(
    server: ProtocolServer, config_for: Build
) -> None:
    import asyncio

    lf = LeakFilter(LeakFilterConfig.from_dict(config_for()))

    async def caller() -> dict[str, list[dict[str, Any]]]:
        return lf.probe([make_episode("loop")])

    out = asyncio.run(caller())
    assert [r["status"] for r in out["coco/loop"]] == ["answered", "answered"]
