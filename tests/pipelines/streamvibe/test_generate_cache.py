"""Every answer a Beam worker paid for reaches the persistent cache (it once
lost one: "8 answered requests, 7 rows in the cache").

The StreamVibe ``GenerateCandidates`` DoFn is driven through the lifecycle a runner gives it —
``setup``, ``process`` on several batches, ``teardown`` — against the real google-genai client and
a local Gemini-protocol server. Afterwards the cache must hold one row per answered request, so a
rebuild asks for nothing again.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from pipelines.streamvibe.gemini import gemini_settings
from pipelines.streamvibe.pipeline import GenerateCandidates, PipelineConfig
from tests.pipelines.streamvibe.conftest import ROOT, video_facts
from tests.support.protocol_server import ProtocolServer


def _answer(call) -> dict:
    return {
        "intents": [{"id": "i1", "request": "r", "available_at": 0.0, "closed_at": -1.0,
                     "proactive": True}],
        "user_turns": [{"t": 0.0, "kind": "initial", "intent_id": "i1", "text": "r"}],
        "transitions": [{"t": 0.0, "kind": "initial", "opened": ["i1"], "closed": [],
                         "active_after": ["i1"]}],
        "evidence": [{"intent_id": "i1", "start": 5.0, "end": 8.0, "preferred": 5.0,
                      "response": "now", "proactive": True}],
    }


def _pair(k: int) -> dict:
    return {"id": f"i/c/v{k}/0", "subtype": "I", "collection": "c", "video_id": f"v{k}",
            "video": f"videos/v{k}.avi", "environment": "physical", "task_record": f"tasks/v{k}.json",
            "task": f"task {k}", "native": {}, "request": {"subtype": "I", "slots": {"event": "x"}},
            "request_index": 0}


def _rows(cache_dir: Path) -> int:
    path = cache_dir / "responses.sqlite"
    if not path.exists():
        return 0
    with closing(sqlite3.connect(path)) as con:
        return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def test_answers_of_a_dofn_lifecycle_all_reach_the_cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    cache = tmp_path / "cache"
    with ProtocolServer(_answer) as stub:
        models = {"cache_dir": str(cache), "retry": {"max_attempts": 2},
                  "generator": {"backend": "gemini", "model": "gemini-test", "base_url": stub.base_url}}
        cfg = PipelineConfig(
            root=str(tmp_path), manifest="m.jsonl", staging=str(tmp_path / "s"), split="test", seed=0,
            intents_path=str(ROOT / "configs" / "streamvibe" / "intents.yaml"), generator="gemini",
            gemini=gemini_settings({"models": models}, "test.yaml", ROOT))
        dofn = GenerateCandidates(cfg)
        dofn.setup()
        for batch in ([0, 1, 2], [3, 4, 5], [6, 7]):
            list(dofn.process([(_pair(k), video_facts(10.0)) for k in batch]))
        dofn.teardown()
        answered = sum(r.fault == "" for r in stub.requests)
    assert answered == 8
    assert _rows(cache) == answered
