"""The App. C LLM/VLM path through the real openai and google-genai clients against a local server.

The server (tests/support/protocol_server.py) speaks both protocols; its answers are a function
of the prompt, so the expected windows below follow from the responder by hand: a one-frame
"inferable" flicker at t=23 must be removed by dwell smoothing, the CTD window ends where the
effect stops being visible, the follow-up is asked once the first answer's evidence appeared.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from pipelines.proready.build import run
from tests.pipelines.proready.conftest import write_corpus
from tests.support.protocol_server import Call, ProtocolServer, RawBody, Status

VLM, LLM = "qwen2-vl-test", "qwen2-test"


def responder(qa_answer: dict[str, Any] | str):
    def answer(call: Call) -> str:
        prompt, image = call.prompt, call.image
        if prompt.startswith("Summarize"):
            return json.dumps({"summary": "A tree; later a hand sweeps in front of it."})
        if "dense caption" in prompt:
            assert image[:2] == b"\xff\xd8"  # JPEG frames reached the server
            span = re.search(r"Segment: ([\d.]+)s to ([\d.]+)s", prompt)
            return json.dumps({"caption": f"frames {span.group(1)}-{span.group(2)}: a tree, then a hand"})
        if "proactive question" in prompt:
            return qa_answer if isinstance(qa_answer, str) else json.dumps(qa_answer)
        if "Frame-wise evidence check" in prompt:
            t = int(re.search(r"frame at t=(\d+)s", prompt).group(1))
            if "Follow-up" in prompt:
                return json.dumps({"answer_inferable": t >= 28, "cue_visible": t >= 28})
            return json.dumps({"answer_inferable": t == 23 or 25 <= t <= 28, "cue_visible": 25 <= t <= 28})
        if "verifiability check" in prompt:
            return json.dumps({"verifiable": "Follow-up" not in prompt})
        raise AssertionError(f"unexpected prompt {prompt[:60]!r}")
    return answer


QA = {"turns": [
    {"task_type": "ctd", "question": "What will the hand do to the tree?", "answer": "hide it",
     "refers_to": -1, "evidence_start_s": 25, "evidence_end_s": 28},
    {"task_type": "gsd", "question": "Follow-up on that: tell me when the hand is gone again.",
     "answer": "when it lifts away", "refers_to": 0, "evidence_start_s": 27.5, "evidence_end_s": 29.6},
]}


def _config(tmp: Path, server: ProtocolServer) -> Path:
    cfg = yaml.safe_load((Path(__file__).resolve().parents[3] / "configs" / "proready.yaml").read_text())
    cfg.pop("datasets")  # the tree corpus alone
    cfg["generation"].update(method="llm", segment_s=10, summary_interval_s=15)
    cfg["evidence"]["method"] = "vlm_framewise"
    cfg["models"] = {
        "cache_dir": str(tmp / "model-cache"),
        "retry": {"max_attempts": 3, "base_delay_s": 0.01, "max_delay_s": 0.02},
        "vlm": {"backend": "openai", "model": VLM, "base_url": server.openai_base_url},
        "llm": {"backend": "gemini", "model": LLM, "base_url": server.base_url},
    }
    path = tmp / "proready.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.fixture()
def tree_corpus(tmp_path: Path, media: Path, demo_manifest: dict[str, Any]) -> Path:
    tree = next(v for v in demo_manifest["videos"] if v["video_id"] == "tree")
    write_corpus(tmp_path / "raw", media, [tree])
    return tmp_path / "raw"


def test_llm_path_windows_retries_and_cache(tree_corpus: Path, tmp_path: Path) -> None:
    with ProtocolServer() as server:
        server.answer = responder(QA)
        server.push(Status(500), RawBody(), model=VLM)  # retried by the client layer
        cfg = _config(tmp_path, server)
        review = run(["--config", str(cfg), "--raw-dir", str(tree_corpus), "--out", str(tmp_path / "o")])
        # 3 captions (10 s segments of 29.6 s), 2 summaries, 1 QA, 7 + 4 frame checks, 2 retries
        assert server.count(LLM, "gemini") == 3
        assert server.count(VLM, "openai") == 3 + 7 + 4 + 2
        items = _candidates(review)
        assert len(items) == 1
        turns = items[0]["turns"]
        assert items[0]["id"] == "tree.llm-0" and items[0]["generator"] == "llm"
        got = [(t["task_type"], t["ask_time_s"], t["coarse_start_s"], t["coarse_end_s"], t["t_s"], t["t_e"],
                t["dependency"], t["evidence_method"]) for t in turns]
        assert got == [
            ("ctd", 15.0, 25.0, 29.6, 25.0, 28.0, "none", "vlm_framewise"),
            ("gsd", 25.0, 27.5, 29.6, 28.0, 29.0, "local", "vlm_framewise"),
        ]
        assert "steps[1]" in turns[0]["cue"]  # the coarse span is anchored on native cues

        n = len(server.requests)
        run(["--config", str(cfg), "--raw-dir", str(tree_corpus), "--out", str(tmp_path / "o2")])
        assert len(server.requests) == n  # every answer came from the persistent cache
        assert (tmp_path / "o2/proready/review/2.1.0/candidates.jsonl").is_file()


def _candidates(review: Path) -> list[dict]:
    return [json.loads(line) for line in (review / "candidates.jsonl").read_text().splitlines()]


def test_malformed_model_output_is_rejected_with_a_reason(tree_corpus: Path, tmp_path: Path) -> None:
    with ProtocolServer() as server:
        server.answer = responder('{"turns": [{"task_type": "ctd", "question": "q"}]}')
        review = run(["--config", str(_config(tmp_path, server)), "--raw-dir", str(tree_corpus),
                      "--out", str(tmp_path / "o")])
    state = json.loads((review / "status.json").read_text())
    assert state["counts"]["items"] == {"inputs": 1, "kept": 0, "filtered": 0, "rejected": 1, "pending": 0}
    (rej,) = pq.read_table(review / "rejected").to_pylist()
    assert (rej["item_id"], rej["stage"], rej["field"]) == ("tree.llm-0", "qa", "qa[0]")
    assert rej["reason"].startswith("malformed model output: qwen2-test on tree/qa/0")
    assert "turns.0.answer" in rej["reason"]


def test_evidence_never_inferable_is_filtered_with_frame_verdicts(tree_corpus: Path, tmp_path: Path) -> None:
    qa = {"turns": [dict(QA["turns"][0], question="Follow-up phrased question that never resolves",
                         evidence_start_s=15, evidence_end_s=20)]}
    with ProtocolServer() as server:
        server.answer = responder(qa)
        review = run(["--config", str(_config(tmp_path, server)), "--raw-dir", str(tree_corpus),
                      "--out", str(tmp_path / "o")])
    (f,) = pq.read_table(review / "filtered").to_pylist()
    assert f["filter_name"] == "evidence_not_found"
    ev = json.loads(f["filter_evidence"])
    # asked at 13 s (2 s lead before the 15 s hint); frames from 14 s to 20 + 2 s pad
    assert ev["turns[0]"]["times"] == list(range(14, 23))
    assert not any(ev["turns[0]"]["answer_inferable"])
    assert f["turns"][0]["evidence_method"] == "native_cue"  # never refined: the coarse hint kept


def test_template_questions_with_framewise_vlm_windows(tree_corpus: Path, tmp_path: Path) -> None:
    """Offline questions, VLM-refined windows: SSR's step-transition rule clamps t_s, follow-ups
    are asked once the answer they build on appeared."""
    def answer(call: Call) -> str:
        t = int(re.search(r"frame at t=(\d+)s", call.prompt).group(1))
        return json.dumps({"answer_inferable": t >= 26, "cue_visible": t <= 28})

    with ProtocolServer() as server:
        server.answer = answer
        cfg = _config(tmp_path, server)
        data = yaml.safe_load(cfg.read_text())
        data["generation"]["method"] = "template"
        cfg.write_text(yaml.safe_dump(data))
        review = run(["--config", str(cfg), "--raw-dir", str(tree_corpus), "--out", str(tmp_path / "o")])
        assert server.count(LLM) == 0  # no LLM on the template path
    items = {i["id"]: i for i in _candidates(review)}
    chain = items["tree.ssr-chain-1"]["turns"]
    assert [(t["ask_time_s"], t["t_s"], t["t_e"], t["evidence_method"]) for t in chain] == [
        (23.0, 26.0, 28.0, "vlm_framewise"), (26.0, 27.0, 28.0, "vlm_framewise"),
        (26.0, 28.0, 28.0, "vlm_framewise")]


def test_follow_up_without_a_valid_reference_is_rejected(tree_corpus: Path, tmp_path: Path) -> None:
    qa = {"turns": [QA["turns"][0], dict(QA["turns"][1], refers_to=5)]}
    with ProtocolServer() as server:
        server.answer = responder(qa)
        review = run(["--config", str(_config(tmp_path, server)), "--raw-dir", str(tree_corpus),
                      "--out", str(tmp_path / "o")])
    (rej,) = pq.read_table(review / "rejected").to_pylist()
    assert (rej["stage"], rej["field"]) == ("qa", "qa[0].turns[1].refers_to")
    assert rej["source_file"] == "video/tree.avi"
    assert "refers to turn 5" in rej["reason"]
