"""Gemini candidate generator (StreamVibe §3.3: "we use Gemini […] to identify candidate help points
with response windows, preferred times, and reference answers").

Why this is a thin adapter and not a client of its own: the request orchestration — bounded
retries with jittered exponential back-off on 429 / 5xx / timeouts / malformed answers, the
persistent answer cache keyed by (probe identity, prompt sha256, media sha256), request and token
counts — is the leak filter's (:mod:`filtering.probes`, :mod:`filtering.cache`), reused as is
(``_run_one``, ``RetryPolicy``, ``ResponseCache``, ``GeminiBackend``'s client construction). What
differs is the request: a 1 FPS frame sequence with ``t=<s>s`` labels instead of one image, and
structured output (``response_schema`` = :class:`CandidateOut`, a JSON schema the model must
follow, read back from ``response.parsed``). An answer that does not parse into that schema is a
*malformed* answer and is retried like any other transient fault; a pair whose answers stay
malformed after the retry budget is rejected with that reason (never guessed).

The prompt is a versioned file (``configs/streamvibe/prompts/candidates_v1.txt``); its name and
sha256 prefix become ``prompt_version`` on every candidate and enter the cache identity, so
editing the prompt re-asks instead of reusing stale answers. The API key comes from the
environment variable named in the config (never from a file in the repo).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from core.blobs import resolve
from core.errors import BadInput
from filtering.cache import ResponseCache, response_key
from filtering.probes import (
    Answer,
    GeminiBackend,
    Job,
    Limits,
    ProbeSpec,
    RateLimiter,
    RetryableError,
    RetryPolicy,
    _run_one,
    new_stats,
)
from pipelines.streamvibe.candidates import RawCandidate, request_texts
from pipelines.streamvibe.normalize import NormalizedVideo
from pipelines.streamvibe.sources import IntentSpec
from schemas.streamvibe import DYNAMIC, SUBTYPES


class IntentOut(BaseModel):
    id: str
    request: str
    available_at: float
    closed_at: float
    proactive: bool


class TurnOut(BaseModel):
    t: float
    kind: Literal["initial", "revise", "compose", "interrupt"]
    intent_id: str
    text: str


class TransitionOut(BaseModel):
    t: float
    kind: Literal["initial", "revise", "compose", "interrupt"]
    opened: list[str]
    closed: list[str]
    active_after: list[str]


class EvidenceOut(BaseModel):
    intent_id: str
    start: float
    end: float
    preferred: float
    response: str
    proactive: bool


class CandidateOut(BaseModel):
    """The structured answer (``response_schema``): a raw candidate (see candidates.py)."""

    intents: list[IntentOut]
    user_turns: list[TurnOut]
    transitions: list[TransitionOut]
    evidence: list[EvidenceOut]


@dataclass(frozen=True)
class CandidateRequest:
    """What the model sees for one video-request pair. Duck-types the fields of
    :class:`filtering.parsing.FirstTurn` that the orchestration and cache read."""

    episode_id: str
    prompt: str
    frames: tuple[tuple[float, bytes], ...]

    @property
    def prompt_sha256(self) -> str:
        return hashlib.sha256(self.prompt.encode()).hexdigest()

    @property
    def image_sha256(self) -> str:
        h = hashlib.sha256()
        for t, data in self.frames:
            h.update(f"{t:g}".encode())
            h.update(hashlib.sha256(data).digest())
        return h.hexdigest()


class StructuredGeminiBackend(GeminiBackend):
    """GeminiBackend (same client, key handling and options) asking for :class:`CandidateOut`
    over a labelled frame sequence; ``GeminiBackend.generate`` maps SDK errors, and a schema
    mismatch is a retryable ``malformed`` answer."""

    async def ask(self, turn: CandidateRequest) -> Answer:  # type: ignore[override]
        types = self.types
        parts: list[Any] = [types.Part.from_text(text=turn.prompt)]
        for t, data in turn.frames:
            parts.append(types.Part.from_text(text=f"t={t:g}s"))
            parts.append(types.Part.from_bytes(data=data, mime_type="image/jpeg"))
        config = types.GenerateContentConfig(
            temperature=self.spec.temperature, max_output_tokens=self.spec.max_tokens,
            system_instruction=self.spec.system_prompt or None,
            response_mime_type="application/json", response_schema=CandidateOut,
        )
        answer = await self.generate([types.Content(role="user", parts=parts)], config)
        try:
            CandidateOut.model_validate_json(answer.raw)
        except ValueError:
            raise RetryableError("malformed", "answer does not follow the candidate schema") from None
        return answer


def prompt_version(path: str) -> tuple[str, str]:
    """(version label ``<file stem>@<sha256[:12]>``, prompt text)."""
    text = Path(path).read_text(encoding="utf-8")
    return f"{Path(path).stem}@{hashlib.sha256(text.encode()).hexdigest()[:12]}", text


class GeminiGenerator:
    """``generate_many`` over a batch: cached answers first, the rest concurrently via the leak
    filter's orchestration; every pair gets a raw candidate or a BadInput with the reason."""

    def __init__(self, specs: dict[str, IntentSpec], seed: int, *, model: str, prompt: str,
                 base_url: str | None = None, api_key_env: str = "GEMINI_API_KEY",
                 cache_dir: str | None = None, max_attempts: int = 4, concurrency: int = 4,
                 timeout_s: float = 120.0, base_delay_s: float = 1.0, max_delay_s: float = 30.0,
                 batch_size: int = 8, api_version: str | None = None) -> None:
        del batch_size  # used by the pipeline's BatchElements
        self.specs = specs
        self.seed = seed
        self.prompt_version, system = prompt_version(prompt)
        self.name = f"gemini:{model}"
        self.spec = ProbeSpec.from_dict(
            {"backend": "gemini", "model": model, "name": self.name, "base_url": base_url,
             "api_key_env": api_key_env, "api_version": api_version, "temperature": 0.0,
             "max_tokens": 8192, "system_prompt": system}, where="streamvibe gemini generator")
        self.limits = Limits(concurrency=concurrency, timeout_s=timeout_s)
        self.retry = RetryPolicy(max_attempts=max_attempts, base_delay_s=base_delay_s,
                                 max_delay_s=max_delay_s)
        self.cache = ResponseCache(cache_dir)
        self.stats = new_stats()

    def identity(self) -> str:
        schema = hashlib.sha256(json.dumps(CandidateOut.model_json_schema(), sort_keys=True).encode())
        return f"{self.spec.identity()}|schema={schema.hexdigest()[:12]}"

    def request(self, pair: dict[str, Any], video: NormalizedVideo) -> CandidateRequest:
        st = pair["subtype"]
        spec = self.specs.get(st)
        if spec is None:
            raise BadInput(pair["task_record"], f"requests[{pair['request_index']}].subtype",
                           f"no intent spec for subtype {st}")
        initial, update = request_texts(pair, spec, self.seed)
        lines = [
            f"Subtype {st} ({SUBTYPES[st][0]}): {SUBTYPES[st][1]}.",
            f"Task: {pair['task']}",
            f"Video duration: {video.duration_s:g} s ({len(video.frames)} frames at 1 FPS).",
            f"User request (initial turn at t={float(pair['request'].get('at', 0)):g}s): {initial}",
        ]
        if st in DYNAMIC:
            lines.append(f"Construct the {st} update turn(s); a template for it: {update}")
        if pair["native"]:
            lines.append("Native annotations of the source: "
                         + json.dumps(pair["native"], sort_keys=True, ensure_ascii=False))
        frames = tuple((t, resolve(b)) for t, b in zip(video.frame_times, video.frames, strict=True))
        return CandidateRequest(pair["id"], "\n".join(lines), frames)

    def generate_many(self, items: list[tuple[dict[str, Any], NormalizedVideo]]
                      ) -> list[RawCandidate | BadInput]:
        reqs: list[CandidateRequest | BadInput] = []
        for pair, video in items:
            try:
                reqs.append(self.request(pair, video))
            except BadInput as err:  # e.g. a template slot missing from the task record
                reqs.append(err)
        ident = self.identity()
        keys = [response_key(ident, r.prompt_sha256, r.image_sha256) if isinstance(r, CandidateRequest)
                else "" for r in reqs]
        cached = self.cache.get_many([k for k in keys if k])
        self.stats["cache_hits"] += sum(k in cached for k in keys)
        todo = [Job(self.spec, r, k) for r, k in zip(reqs, keys, strict=True)
                if isinstance(r, CandidateRequest) and k not in cached]
        outcomes = asyncio.run(self._run(todo)) if todo else {}
        out: list[RawCandidate | BadInput] = []
        for (pair, _video), req, key in zip(items, reqs, keys, strict=True):
            where = f"{pair['video']} ({self.name} output)"
            if isinstance(req, BadInput):
                out.append(req)
                continue
            if key in cached:
                raw = cached[key]["raw_answer"]
            else:
                o = outcomes[req.episode_id]
                if o.status != "answered":
                    out.append(BadInput(where, "model_output", f"no usable answer: {o.error}",
                                        item_id=pair["id"]))
                    continue
                raw = o.raw
            try:
                out.append(CandidateOut.model_validate_json(raw).model_dump())
            except ValidationError as exc:  # a cached answer from an older schema
                msg = exc.errors()[0]["msg"]
                out.append(BadInput(where, "model_output", f"malformed model output: {msg}",
                                    item_id=pair["id"]))
        return out

    async def _run(self, jobs: list[Job]) -> dict[str, Any]:
        backend = StructuredGeminiBackend(self.spec, self.limits)
        sem = asyncio.Semaphore(max(1, self.limits.concurrency))
        limiter = RateLimiter(self.limits.requests_per_second)
        rng = random.Random()
        try:
            outs = await asyncio.gather(*(_run_one(j, backend, sem, limiter, self.limits, self.retry,
                                                   self.cache, self.stats, rng) for j in jobs))
        finally:
            await backend.close()
        return {j.turn.episode_id: o for j, o in zip(jobs, outs, strict=True)}
