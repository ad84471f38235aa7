"""Fixtures for the StreamVibe construction tests: the real registry videos (design.md §Environment), the demo
corpus built from them, hand-made candidates, and scripted review decision logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]



@pytest.fixture(scope="session")
def media(videos: Path) -> Path:
    """The real registry videos (make setup)."""
    return videos


@pytest.fixture(scope="session")
def demo_raw(media: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RAW_DIR holding the demo corpus (pipelines/streamvibe/demo.py) under ``streamvibe/``."""
    from pipelines.streamvibe import demo as streamvibe_demo

    raw = tmp_path_factory.mktemp("raw")
    streamvibe_demo.build(media, raw / "streamvibe")
    return raw


def video_facts(duration: float = 30.0, header: int = 300, decoded: int = 300):
    from pipelines.streamvibe.normalize import NormalizedVideo

    n = int(-(-duration // 1))
    return NormalizedVideo("videos/x.avi", "0" * 64, 10.0, header, decoded, duration, 32, 24,
                           tuple(float(k) for k in range(n)), tuple(float(k) for k in range(n)),
                           tuple(b"\xff\xd8" for _ in range(n)))


def candidate(subtype: str = "R", evidence: list[dict[str, Any]] | None = None, **over: Any
              ) -> dict[str, Any]:
    """A rule-generated-looking candidate over a 30 s video (one intent at τ=0)."""
    from pipelines.streamvibe.candidates import transitions_for

    intents = over.pop("intents", [{"id": "i1", "subtype": subtype, "request": "Tell me every time x.",
                                    "available_at": 0.0, "closed_at": -1.0, "proactive": True}])
    turns = over.pop("user_turns", [{"t": 0.0, "kind": "initial", "intent_id": "i1",
                                     "text": "Tell me every time x."}])
    c = {
        "id": f"{subtype.lower()}/c/v/0", "subtype": subtype, "category": "explicit",
        "environment": "physical", "source_collection": "c", "source_video_id": "v",
        "source_file": "videos/v.avi", "task_record": "tasks/v.json", "video_sha256": "0" * 64,
        "duration_s": 30.0, "fps": 10.0, "header_frames": 300, "decodable_frames": 300, "video_note": "",
        "task": "t", "initial_instruction": turns[0]["text"], "intents": intents, "user_turns": turns,
        "transitions": transitions_for(intents, turns),
        "evidence": evidence if evidence is not None else [
            {"intent_id": "i1", "start": 5.0, "end": 8.0, "preferred": 5.0, "response": "x (1)",
             "proactive": True},
            {"intent_id": "i1", "start": 15.0, "end": 18.0, "preferred": 15.0, "response": "x (2)",
             "proactive": True}],
        "negative_probes": [], "generator": "rule", "prompt_version": "", "fixes": [],
    }
    c.update(over)
    return c


def approvals(review_candidates: Path, *, objections: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Scripted reviewers r1..r4 (``pipelines/streamvibe/demo.py``)."""
    from pipelines.streamvibe import demo as streamvibe_demo

    return streamvibe_demo.decisions(review_candidates, objections=objections)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="session")
def manifest_only_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo config without its video datasets: the custom manifest alone, for the tests that
    check what that source yields, sample by sample (the datasets have their own tests:
    test_native_sources.py)."""
    import yaml

    cfg = yaml.safe_load((ROOT / "configs" / "streamvibe.yaml").read_text())
    cfg.pop("datasets", None)
    for key in ("intents", "prompt"):
        cfg[key] = str(ROOT / cfg[key])
    path = tmp_path_factory.mktemp("cfg") / "streamvibe.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.fixture(scope="session")
def build(manifest_only_config: Path):
    """``benchforge build streamvibe`` with the manifest-only config (its other arguments as
    given): the custom manifest's samples alone."""
    from pipelines.streamvibe.build import run

    return lambda args: run(["--config", str(manifest_only_config), *args])
