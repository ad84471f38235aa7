"""``ask_many`` through the real openai and google-genai clients against the local server:
what goes on the wire, structured output, retries and their counts, failures, secrets, limits,
the cache and de-duplication."""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
import time
from collections.abc import Callable

import pytest
from pydantic import BaseModel

from clients import ClientConfigError, Limits, ModelClient, ModelSpec, Request, RetryPolicy, ask_many
from tests.clients.conftest import KEY, png
from tests.support.protocol_server import Call, EmptyBody, Hang, ProtocolServer, RawBody, Reply, Status

Make = Callable[..., ModelClient]
BACKENDS = ["openai", "gemini"]


class Verdict(BaseModel):
    label: str
    score: int


@pytest.mark.parametrize("backend", BACKENDS)
def test_answers_in_order_with_images_and_usage(server: ProtocolServer, make_client: Make,
                                                backend: str) -> None:
    server.answer = lambda c: f"{c.model} saw {len(c.images)} image(s): {c.texts[-1]}"
    red, blue = png((255, 0, 0)), png((0, 0, 255))
    client = make_client(backend, system_prompt="Be brief.", max_tokens=16)
    reqs = [Request.of("a", "first", [red]), Request.of("b", "second", [red, blue]), Request.of("c", "third")]
    outs = client.ask_many(reqs)
    assert [o.raw for o in outs] == ["m-1 saw 1 image(s): first", "m-1 saw 2 image(s): second",
                                     "m-1 saw 0 image(s): third"]
    assert [(o.status, o.cached, o.attempts) for o in outs] == [("answered", False, 1)] * 3
    calls = {c.texts[-1]: c for c in server.requests}
    assert calls["second"].images == [red, blue] and calls["second"].mime_types == ["image/png"] * 2
    assert {c.api_key for c in server.requests} == {KEY}
    body = calls["first"].body
    if backend == "openai":
        assert body["messages"][0] == {"role": "system", "content": "Be brief."}
        assert [p["type"] for p in body["messages"][1]["content"]] == ["image_url", "text"]
        assert body["max_tokens"] == 16 and body["temperature"] == 0.0
    else:
        assert body["systemInstruction"]["parts"][0]["text"] == "Be brief."
        assert body["generationConfig"]["maxOutputTokens"] == 16
        assert [list(p) for p in body["contents"][0]["parts"]] == [["inlineData"], ["text"]]
    # the server reports prompt tokens = words + 85 per image, completion tokens = answer words
    u = client.usage
    assert (u.requests, u.retries, u.failures, u.cache_hits) == (3, 0, 0, 0)
    assert u.prompt_tokens == (1 + 85) + (1 + 170) + 1
    assert u.completion_tokens == 5 + 5 + 5


@pytest.mark.parametrize("backend", BACKENDS)
def test_structured_output_is_requested_and_parsed(server: ProtocolServer, make_client: Make,
                                                   backend: str) -> None:
    server.answer = lambda c: "```json\n" + json.dumps({"label": c.texts[0], "score": 3}) + "\n```"
    client = make_client(backend)
    (out,) = client.ask_many([Request.of("v", "cat", schema=Verdict)])
    assert out.parsed == Verdict(label="cat", score=3)  # fenced JSON is accepted
    body = server.requests[0].body
    if backend == "openai":
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Verdict"
        assert fmt["json_schema"]["schema"]["required"] == ["label", "score"]
    else:
        gen = body["generationConfig"]
        assert gen["responseMimeType"] == "application/json"
        schema = gen.get("responseSchema") or gen.get("responseJsonSchema")
        assert set(schema["properties"]) == {"label", "score"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_answers_that_do_not_validate_are_retried_then_failed_and_never_cached(
        server: ProtocolServer, make_client: Make, backend: str) -> None:
    server.answer = lambda c: json.dumps({"label": "x"})  # no score
    client = make_client(backend)
    (out,) = client.ask_many([Request.of("v", "q", schema=Verdict)])
    assert (out.status, out.kind, out.attempts) == ("failed", "malformed", 4)
    assert out.detail == "JSON does not match Verdict: score: Field required"
    assert out.error.startswith("gave up after 4 attempts (malformed): JSON does not match Verdict")
    assert server.count() == 4 and client.cache.count() == 0
    assert client.usage.faults == {"malformed": 4} and client.usage.failures == 1
    # a check can refuse a schema-valid answer; the next attempt that passes is the answer
    server.push(Reply({"label": "bad", "score": 1}))
    server.answer = lambda c: json.dumps({"label": "good", "score": 2})
    check = lambda v: "label is bad" if v.label == "bad" else None  # noqa: E731
    (out,) = client.ask_many([Request.of("w", "q2", schema=Verdict, check=check)])
    assert out.parsed.label == "good" and out.attempts == 2 and client.cache.count() == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_transient_faults_are_retried_and_counted_by_cause(server: ProtocolServer, make_client: Make,
                                                           backend: str) -> None:
    server.push(Status(429), Status(503), RawBody(), EmptyBody(), Hang(2.0))
    client = make_client(backend, retry=RetryPolicy(max_attempts=6, base_delay_s=0.001, max_delay_s=0.01))
    (out,) = client.ask_many([Request.of("r", "retry me")])
    assert (out.status, out.raw, out.attempts) == ("answered", "A", 6)
    assert [c.fault for c in server.requests] == ["429", "503", "raw_body", "empty_body", "hang", ""]
    u = client.usage
    assert (u.requests, u.retries, u.failures) == (6, 5, 0)
    assert u.faults == {"429": 1, "503": 1, "malformed": 2, "timeout": 1}
    assert u.as_dict()["retry_malformed"] == 2


def test_retry_after_is_honoured_up_to_the_policy_cap(server: ProtocolServer, make_client: Make) -> None:
    client = make_client("openai", retry=RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=1.0))
    server.push(Status(429, retry_after=0.4))
    t0 = time.monotonic()
    (out,) = client.ask_many([Request.of("r", "later")])
    assert out.answered and time.monotonic() - t0 >= 0.4
    server.push(Status(429, retry_after=30))  # capped at max_delay_s
    t0 = time.monotonic()
    (out,) = client.ask_many([Request.of("s", "sooner")])
    assert out.answered and time.monotonic() - t0 < 5


@pytest.mark.parametrize("backend", BACKENDS)
def test_client_errors_fail_at_once_with_the_server_message_scrubbed(
        server: ProtocolServer, make_client: Make, backend: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server.push(Status(400, f"bad request; your key {KEY} is fine"))
    client = make_client(backend)
    (out,) = client.ask_many([Request.of("x", "q")])
    assert (out.status, out.kind, out.attempts) == ("failed", "400", 1)
    assert out.error.startswith("HTTP 400: ") and "***" in out.detail and KEY not in out.error
    assert (client.usage.requests, client.usage.retries, client.usage.failures) == (1, 0, 1)
    server.push(*[Status(500, f"echo {KEY}")] * 4)
    (out,) = client.ask_many([Request.of("y", "q")])
    assert out.error.startswith("gave up after 4 attempts (HTTP 500)") and KEY not in out.error
    assert KEY not in caplog.text and KEY not in repr(client)


def test_missing_key_fails_before_anything_is_sent(server: ProtocolServer, make_client: Make,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    client = make_client("gemini", cache=True)
    monkeypatch.delenv("BF_CLIENTS_TEST_KEY")
    with pytest.raises(ClientConfigError, match="environment variable BF_CLIENTS_TEST_KEY is not set"):
        client.ask_many([Request.of("k", "q")])
    assert server.count() == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_cache_answers_a_rerun_and_duplicates_are_asked_once(server: ProtocolServer, make_client: Make,
                                                             backend: str) -> None:
    server.answer = lambda c: f"answer to {c.texts[-1]}"
    client = make_client(backend)
    img = png((1, 2, 3))
    reqs = [Request.of("a", "p", [img]), Request.of("a-again", "p", [img]), Request.of("b", "q", [img])]
    first = client.ask_many(reqs)
    assert server.count() == 2 and [o.raw for o in first] == ["answer to p", "answer to p", "answer to q"]
    assert client.cache.count() == 2
    again = make_client(backend).ask_many(reqs + [Request.of("c", "p", [png((9, 9, 9))])])
    assert server.count() == 3  # only the new image is asked
    assert [o.cached for o in again] == [True, True, True, False]
    assert [o.created for o in again[:3]] == [o.created for o in first]
    # another model, or the same prompt in another layout, is another question
    make_client(backend, model="m-2").ask_many(reqs[:1])
    client.ask_many([Request("a", ("p", img))])
    assert server.count() == 5


def test_concurrency_bounds_requests_in_progress(api_key: str) -> None:
    with ProtocolServer(latency_s=0.1) as slow:
        spec = ModelSpec("openai", "m-1", base_url=slow.openai_base_url, api_key_env="BF_CLIENTS_TEST_KEY")
        client = ModelClient(spec, limits=Limits(concurrency=3, timeout_s=5))
        t0 = time.monotonic()
        outs = client.ask_many([Request.of(str(i), f"q{i}") for i in range(9)])
        elapsed = time.monotonic() - t0
        assert all(o.answered for o in outs) and slow.count() == 9
        assert slow.max_in_flight == 3
    assert 0.3 <= elapsed < 0.9  # three waves of 0.1 s


def test_concurrency_one_keeps_order_through_retries(server: ProtocolServer, make_client: Make) -> None:
    """A request keeps its slot while it backs off: with one slot, a failing request exhausts its
    retries before the next one starts (the Gemini reviewer relies on this)."""
    server.push(Status(429), Status(429), Status(429))
    client = make_client("gemini", limits=Limits(concurrency=1, timeout_s=1.0),
                         retry=RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.02))
    outs = client.ask_many([Request.of(str(i), f"q{i}") for i in range(3)])
    assert [o.status for o in outs] == ["failed", "answered", "answered"]
    assert [(c.texts[-1], c.fault) for c in server.requests] == [
        ("q0", "429"), ("q0", "429"), ("q0", "429"), ("q1", ""), ("q2", "")]


def test_rate_limit_spaces_attempt_starts(server: ProtocolServer, make_client: Make) -> None:
    client = make_client("openai", limits=Limits(concurrency=8, requests_per_second=20, timeout_s=1.0))
    t0 = time.monotonic()
    client.ask_many([Request.of(str(i), f"q{i}") for i in range(6)])
    assert time.monotonic() - t0 >= 5 / 20 * 0.95


def test_a_pool_of_clients_is_asked_in_one_batch(server: ProtocolServer, make_client: Make) -> None:
    server.answer = lambda c: c.model
    a, b = make_client("openai", model="oa"), make_client("gemini", model="gm")
    work = [(a, Request.of("1", "q")), (b, Request.of("1", "q")), (a, Request.of("2", "r"))]
    outs = ask_many(work)
    assert [o.raw for o in outs] == ["oa", "gm", "oa"]
    assert (a.usage.requests, b.usage.requests) == (2, 1)
    assert {(c.protocol, c.model) for c in server.requests} == {("openai", "oa"), ("gemini", "gm")}


def test_works_inside_a_running_event_loop_and_after_pickling(server: ProtocolServer,
                                                              make_client: Make) -> None:
    client = make_client("gemini")

    async def caller() -> str:
        return client.ask_many([Request.of("l", "loop")])[0].raw

    assert asyncio.run(caller()) == "A"
    clone = pickle.loads(pickle.dumps(client))
    assert clone.ask_many([Request.of("p", "pickled")])[0].raw == "A"
    assert clone.usage.requests == 2  # the counts travel with the client


def test_request_hashes_cover_layout_schema_and_images() -> None:
    img = png((5, 5, 5))
    base = Request.of("a", "p", [img])
    assert Request("other id", (img, "p")).prompt_sha256 == base.prompt_sha256
    assert Request("a", ("p", img)).prompt_sha256 != base.prompt_sha256
    assert Request.of("a", "p", [img], Verdict).prompt_sha256 != base.prompt_sha256
    assert Request.of("a", "p", [png((6, 6, 6))]).images_sha256 != base.images_sha256
    assert Request.of("a", "p", [img]).images_sha256 == base.images_sha256


def test_call_records_what_the_server_saw(server: ProtocolServer, make_client: Make) -> None:
    seen: list[Call] = []
    server.answer = lambda c: seen.append(c) or "ok"
    make_client("openai").ask_many([Request.of("s", "hello", [png((0, 0, 0))])])
    (call,) = seen
    assert (call.protocol, call.model, call.prompt, call.mime_type) == ("openai", "m-1", "hello", "image/png")


def test_gemini_answer_is_the_first_candidates_non_thought_text(server: ProtocolServer,
                                                                 make_client: Make) -> None:
    reply = {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "let me think", "thought": True}, {"text": "The answer "}, {"text": "is B."}]}}],
        "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 3}}
    server.push(RawBody(json.dumps(reply).encode()))
    client = make_client("gemini")
    (out,) = client.ask_many([Request.of("t", "q")])
    assert out.raw == "The answer is B." and out.attempts == 1
    assert (client.usage.prompt_tokens, client.usage.completion_tokens) == (7, 3)
    only_thoughts = {"candidates": [{"content": {"parts": [{"text": "hmm", "thought": True}]}}]}
    server.push(RawBody(json.dumps(only_thoughts).encode()))
    (out,) = client.ask_many([Request.of("u", "q2")])
    assert out.answered and out.attempts == 2 and client.usage.faults == {"malformed": 1}
