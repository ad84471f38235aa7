"""The Gemini candidate generator through the real google-genai client against a local server
speaking the generateContent protocol (tests/support/protocol_server.py) — StreamVibe §3.3.

Checked: the request (1 FPS frames with their time labels, the versioned prompt as system
instruction, the JSON response schema, the API key header), retries on 429 and on a malformed
answer, rejection of a pair whose answers stay malformed, validation of a well-formed but wrong
answer (window past the end) exactly like rule-based candidates, and the persistent cache
(a rebuild asks again only for what failed).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from pipelines.streamvibe.build import run
from tests.pipelines.streamvibe.conftest import ROOT
from tests.support.protocol_server import Call, ProtocolServer, Reply, Status

KEY = "test-key-not-a-secret"


def _answer(subtype: str, start: float, text: str) -> dict:
    req = f"request for {subtype}"
    return {
        "intents": [{"id": "i1", "request": req, "available_at": 0.0, "closed_at": -1.0,
                     "proactive": True}],
        "user_turns": [{"t": 0.0, "kind": "initial", "intent_id": "i1", "text": req}],
        "transitions": [{"t": 0.0, "kind": "initial", "opened": ["i1"], "closed": [],
                         "active_after": ["i1"]}],
        "evidence": [{"intent_id": "i1", "start": start, "end": start + 3, "preferred": start,
                      "response": text, "proactive": True}],
    }


def responder(call: Call) -> dict:
    sub = re.search(r"^Subtype (\w+) ", call.prompt, re.M).group(1)
    if sub == "I":
        return _answer("I", 24.0, "A hand appears in front of the camera.")
    if sub == "P":
        return _answer("P", 31.0, "The view is blocked.")  # past the real end (29.6 s)
    return {"not": "a candidate"}  # M: never follows the schema


@pytest.fixture
def tree_corpus(demo_raw: Path, tmp_path: Path) -> Path:
    src = demo_raw / "streamvibe"
    dst = tmp_path / "raw" / "streamvibe"
    (dst / "videos").mkdir(parents=True)
    shutil.copytree(src / "tasks", dst / "tasks")
    shutil.copyfile(src / "videos" / "tree.avi", dst / "videos" / "tree.avi")
    rows = [r for r in (src / "manifest.jsonl").read_text().splitlines()
            if json.loads(r)["video_id"] == "tree"]
    (dst / "manifest.jsonl").write_text(rows[0] + "\n")
    return dst.parent


def _config(tmp_path: Path, base_url: str) -> Path:
    cfg = yaml.safe_load((ROOT / "configs" / "streamvibe.yaml").read_text())
    cfg.pop("datasets")  # the tree video's manifest line alone
    cfg["generator"] = "gemini"
    cfg["models"]["generator"]["base_url"] = base_url
    cfg["models"].update(cache_dir=str(tmp_path / "cache"),
                         retry={"max_attempts": 3, "base_delay_s": 0.01, "max_delay_s": 0.05},
                         limits={"gemini": {"concurrency": 4, "timeout_s": 20}})
    path = tmp_path / "streamvibe.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_gemini_candidates_through_the_real_client(tree_corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with ProtocolServer(responder) as stub:
        stub.push(Status(429), Reply('{"intents": ['))  # the first two requests fail transiently
        cfg = _config(tmp_path, stub.base_url)
        args = ["--config", str(cfg), "--raw-dir", str(tree_corpus), "--out", str(tmp_path / "out"),
                "--no-review-media"]
        state = run(args)
        first = list(stub.requests)

        # 3 pairs: I ok, P answered but invalid, M malformed on every attempt (3) + 2 retried faults
        assert len(first) == 2 + 1 + 1 + 3
        body = first[-1].body
        assert first[-1].api_key == KEY
        assert "StreamVibe-Bench" in json.dumps(body["systemInstruction"])
        gen = body["generationConfig"]
        assert gen["responseMimeType"] == "application/json"
        assert "evidence" in json.dumps(gen.get("responseSchema") or gen.get("responseJsonSchema"))
        assert len(first[-1].images) == 30  # tree.avi: 30 frames at 1 FPS over its real 29.6 s
        assert set(first[-1].mime_types) == {"image/jpeg"}
        assert "t=29s" in first[-1].prompt and "Video duration: 29.6 s" in first[-1].prompt

        cands = [json.loads(x) for x in (state / "candidates.jsonl").read_text().splitlines()]
        assert [c["id"] for c in cands] == ["i/opencv-doc/tree/0"]
        c = cands[0]
        assert c["generator"] == "gemini:gemini-3.8-flash"
        assert re.fullmatch(r"candidates_v1@[0-9a-f]{12}", c["prompt_version"])
        assert [(p["start"], p["end"], p["preferred"]) for p in c["evidence"]] == [(24.0, 27.0, 24.0)]
        rej = {r["item_id"]: r for r in pq.read_table(state / "rejected").to_pylist()}
        p, m = rej["p/opencv-doc/tree/1"], rej["m/opencv-doc/tree/2"]
        assert (p["stage"], p["field"]) == ("validate", "evidence[0].end")
        assert p["source_file"] == "videos/tree.avi (gemini:gemini-3.8-flash output)"
        assert "past the end of the video" in p["reason"]
        assert (m["stage"], m["field"]) == ("generate", "model_output")
        assert "gave up after 3 attempts (malformed)" in m["reason"]
        status = json.loads((state / "status.json").read_text())
        assert {k: status["counts"][k]["inputs"] for k in ("I", "P", "M")} == {"I": 1, "P": 1, "M": 1}

        # rebuild: the two answered pairs come from the cache; only the failed one is asked again
        run(args)
        assert len(stub.requests) - len(first) == 3
        again = stub.requests[len(first):]
        assert all(re.search(r"^Subtype M ", r.prompt, re.M) for r in again)
        line = (state / "candidates.jsonl").read_text().splitlines()[0]
        assert line == json.dumps(c, sort_keys=True, ensure_ascii=False)


def test_unusable_request_is_rejected_before_any_call(tmp_path):
    from pipelines.streamvibe.gemini import GeminiGenerator, gemini_settings
    from pipelines.streamvibe.sources import load_intent_specs
    from tests.pipelines.streamvibe.conftest import video_facts

    specs = load_intent_specs(str(ROOT / "configs" / "streamvibe" / "intents.yaml"))[1]
    models = {"cache_dir": str(tmp_path / "cache"),
              "generator": {"backend": "gemini", "model": "gemini-3.8-flash", "base_url": "http://127.0.0.1:9"}}
    gen = GeminiGenerator(specs, 0, gemini_settings({"models": models}, "test.yaml", ROOT))
    pair = {"id": "i/c/v/0", "subtype": "I", "collection": "c", "video_id": "v", "video": "videos/v.avi",
            "environment": "physical", "task_record": "tasks/v.json", "task": "t", "native": {},
            "request": {"subtype": "I"}, "request_index": 0}
    (out,) = gen.generate_many([(pair, video_facts())])
    assert (out.source_file, out.field) == ("tasks/v.json", "requests[0].slots.event")
    assert gen.client.usage.requests == 0


def test_gemini_generator_without_a_model_entry_stops_the_build(tmp_path):
    cfg = yaml.safe_load((ROOT / "configs" / "streamvibe.yaml").read_text())
    del cfg["models"]["generator"]
    path = tmp_path / "sv.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(SystemExit, match=r"sv\.yaml: models\.generator: generator gemini needs a model"):
        run(["--config", str(path), "--raw-dir", str(tmp_path), "--generator", "gemini"])
    cfg["models"]["generator"] = {"backend": "gemini", "model": "m", "temprature": 0}
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(SystemExit, match=r"sv\.yaml: models\.generator: unknown keys \['temprature'\]"):
        run(["--config", str(path), "--raw-dir", str(tmp_path)])
