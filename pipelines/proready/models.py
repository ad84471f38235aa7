"""VLM / LLM calls of the generation path through the filtering probes' clients (StreamReady App. C).

App. C uses Qwen-2-VL for dense captions and the frame-wise evidence check and Qwen-2 for
summaries and QA. We talk to whatever serves them through the two protocols the project already
speaks — OpenAI-compatible chat completions (vLLM, SGLang serve Qwen this way) and Gemini
``generateContent`` — and reuse :mod:`filtering.probes` for everything that is not request
building: the real SDK clients, bounded retries with back-off and jitter on 429 / 5xx / timeouts /
malformed envelopes (:func:`filtering.probes._run_one`), rate limits and concurrency
(:class:`~filtering.probes.RateLimiter`), the persistent sqlite answer cache
(:class:`filtering.cache.ResponseCache`, keyed by model identity + prompt sha256 + image sha256)
and progress lines (:class:`core.progress.Stage`).

Why a thin adapter at all: a probe sends exactly one image with one prompt (``FirstTurn``); a
caption request sends eight frames (App. C: "8 uniformly sampled frames") and a summary none. The
two backend subclasses below only override ``ask`` to build that request and hand it to the
parents' ``complete`` / ``generate``, which own the SDK-exception → ``RetryableError`` /
``FatalError`` mapping.

Answers are JSON validated with pydantic. A reply that is valid HTTP but not the requested JSON is
*malformed model output*: the caller turns it into a rejection naming the stage and the request.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import random
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from core.progress import Stage
from filtering.cache import ResponseCache, response_key
from filtering.leak import _run_async
from filtering.probes import (
    Answer,
    GeminiBackend,
    Job,
    Limits,
    OpenAIBackend,
    Outcome,
    ProbeSpec,
    RateLimiter,
    RetryPolicy,
    _run_one,
    as_supported_image,
    new_stats,
)

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class ModelRequest:
    """One request: text prompt plus zero or more images (in order)."""

    episode_id: str  # request id for logs / progress (``FirstTurn`` calls it episode_id)
    prompt: str
    images: tuple[bytes, ...] = ()

    @property
    def prompt_sha256(self) -> str:
        return hashlib.sha256(self.prompt.encode()).hexdigest()

    @property
    def image_sha256(self) -> str:
        return hashlib.sha256("".join(hashlib.sha256(i).hexdigest() for i in self.images).encode()
                              ).hexdigest()


class MultiImageOpenAI(OpenAIBackend):
    """OpenAI-compatible chat completions with 0..n images (base64 ``data:`` URLs)."""

    async def ask(self, turn: ModelRequest) -> Answer:  # type: ignore[override]
        content: list[dict[str, Any]] = []
        for img in turn.images:
            data, mime = as_supported_image(img)
            content.append({"type": "image_url",
                            "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode()}"}})
        content.append({"type": "text", "text": turn.prompt})
        messages: list[dict[str, Any]] = []
        if self.spec.system_prompt:
            messages.append({"role": "system", "content": self.spec.system_prompt})
        messages.append({"role": "user", "content": content})
        return await self.complete(messages)


class MultiImageGemini(GeminiBackend):
    """Gemini generateContent with 0..n inline images and a JSON response MIME type."""

    async def ask(self, turn: ModelRequest) -> Answer:  # type: ignore[override]
        types = self.types
        parts: list[Any] = []
        for img in turn.images:
            data, mime = as_supported_image(img)
            parts.append(types.Part.from_bytes(data=data, mime_type=mime))
        parts.append(turn.prompt)
        config = types.GenerateContentConfig(
            temperature=self.spec.temperature, max_output_tokens=self.spec.max_tokens,
            system_instruction=self.spec.system_prompt or None,
            response_mime_type="application/json",
        )
        return await self.generate(parts, config)


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def parse_json(raw: str, model: type[T]) -> T:
    """Validate a model's JSON answer (``ValueError`` with a short reason if it does not fit)."""
    m = _FENCE.match(raw)
    text = m.group(1) if m else raw
    try:
        return model.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at char {exc.pos}): {raw[:80]!r}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        raise ValueError(f"JSON does not match {model.__name__}: {loc}: {first['msg']}") from None


class ModelClient:
    """One model endpoint (``spec.backend`` ``openai`` or ``gemini``) with cache and retries.

    Picklable (Beam ships it to workers); the async SDK client lives only inside one
    :meth:`ask_many` call, as in :func:`filtering.probes.run_remote`.
    """

    def __init__(self, spec: ProbeSpec, cache_dir: str | None, limits: Limits | None = None,
                 retry: RetryPolicy | None = None, label: str = "model") -> None:
        if spec.backend not in ("openai", "gemini"):
            raise ValueError(f"{label}: backend must be openai or gemini, got {spec.backend!r}")
        self.spec = spec
        self.cache_dir = cache_dir
        self.limits = limits or Limits()
        self.retry = retry or RetryPolicy()
        self.label = label
        self.stats = new_stats()

    @staticmethod
    def from_config(d: dict[str, Any], cache_dir: str | None, label: str) -> ModelClient:
        d = dict(d)
        limits = Limits(**(d.pop("limits", None) or {}))
        retry = RetryPolicy(**(d.pop("retry", None) or {}))
        d.setdefault("max_tokens", 1024)
        return ModelClient(ProbeSpec.from_dict(d, where=label), cache_dir, limits, retry, label)

    def ask_many(self, requests: list[ModelRequest]) -> list[Outcome]:
        """Answers in request order; cached answers are not re-asked."""
        cache = ResponseCache(self.cache_dir)
        ident = self.spec.identity()
        keys = [response_key(ident, r.prompt_sha256, r.image_sha256) for r in requests]
        hits = cache.get_many(keys)
        out: list[Outcome | None] = [
            Outcome("answered", raw=hits[k]["raw_answer"], cached=True) if k in hits else None
            for k in keys
        ]
        self.stats["cache_hits"] += len(hits)
        todo = [i for i, o in enumerate(out) if o is None]
        if todo:
            progress = Stage(f"{self.label} model requests", len(todo), enabled=len(todo) >= 20)
            try:
                results = _run_async(self._remote([Job(self.spec, requests[i], keys[i])  # type: ignore[arg-type]
                                                   for i in todo], cache, progress))
            finally:
                cache.flush()  # ResponseCache buffers puts; persist what was answered
            progress.close()
            for i, res in zip(todo, results, strict=True):
                out[i] = res
        return [o for o in out if o is not None]

    async def _remote(self, jobs: list[Job], cache: ResponseCache, progress: Stage) -> list[Outcome]:
        cls = MultiImageOpenAI if self.spec.backend == "openai" else MultiImageGemini
        backend = cls(self.spec, self.limits)
        sem = asyncio.Semaphore(max(1, self.limits.concurrency))
        limiter = RateLimiter(self.limits.requests_per_second)
        rng = random.Random()  # only spreads retry delays; answers never depend on it

        async def one(job: Job) -> Outcome:
            res = await _run_one(job, backend, sem, limiter, self.limits, self.retry, cache,
                                 self.stats, rng)
            progress.advance(1, failed=int(res.status == "failed"))
            return res

        try:
            return list(await asyncio.gather(*(one(j) for j in jobs)))
        finally:
            await backend.close()

    def ask_json(self, requests: list[ModelRequest], model: type[T]) -> list[T | str]:
        """Parsed answers, or an error string ("failed: …" / "malformed model output: …")."""
        out: list[T | str] = []
        for req, res in zip(requests, self.ask_many(requests), strict=True):
            if res.status != "answered":
                out.append(f"failed: {self.spec.name} on {req.episode_id}: {res.error}")
                continue
            try:
                out.append(parse_json(res.raw, model))
            except ValueError as exc:
                out.append(f"malformed model output: {self.spec.name} on {req.episode_id}: {exc}")
        return out
