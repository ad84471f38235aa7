"""Probe backends of the leak filter and the request orchestration around them.

The paper probes first-turn leakage with a pool of 22 MLLMs from 10 families (ProactiveBench App.
0.A.8). Here each pool member is one :class:`ProbeSpec` with a backend:

- ``openai``: any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, OpenAI...), the image
  sent as a base64 ``data:`` URL;
- ``gemini``: the ``google-genai`` client, optionally pointed at another ``base_url``;
- ``precomputed``: first-turn predictions already run elsewhere (sample id, model, raw answer)
  from JSONL or Parquet — e.g. open-weight models evaluated with the authors' own harness;
- ``clip``: open_clip zero-shot scoring of the category options (a cheap, local pool member).

Why the orchestration is ours rather than the SDKs' built-in retries: we need one policy for all
backends — bounded retries with exponential back-off and jitter on 429, 5xx, timeouts and
malformed responses; a model that still fails is *failed*, not wrong (App. 0.A.8 counts
correct answers among answering models); per-backend concurrency and rate limits; a persistent
cache so a re-run only asks what is missing; progress with rate and ETA; request/token counts.
SDK retries are switched off (``max_retries=0``; google-genai retries only with
``retry_options``) so every attempt is counted.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import logging
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any

from core.progress import Stage
from filtering.cache import ResponseCache, identity
from filtering.parsing import FirstTurn

log = logging.getLogger(__name__)

BACKENDS = ("openai", "gemini", "precomputed", "clip")
REMOTE_BACKENDS = ("openai", "gemini")


class ProbeConfigError(ValueError):
    """A probe entry of the config is unusable (names the entry and the field)."""


class RetryableError(Exception):
    """A transient failure worth retrying: 429, 5xx, timeout, connection, malformed body."""

    def __init__(self, kind: str, detail: str = "", retry_after: float | None = None) -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.retry_after = retry_after


class FatalError(Exception):
    """A failure retrying cannot fix (400/401/403/404...)."""


@dataclass(frozen=True)
class Limits:
    """Per-backend (or per ``limit_group``) request limits."""

    concurrency: int = 4
    requests_per_second: float | None = None
    timeout_s: float = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential back-off with equal jitter: delay ∈ [d/2, d], d = base·2^(n-1) ≤ max."""

    max_attempts: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        d = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        d = d / 2 + rng.uniform(0, d / 2)
        if retry_after is not None:
            d = max(d, min(retry_after, self.max_delay_s))
        return d


@dataclass(frozen=True)
class ProbeSpec:
    """One pool member: backend, model name and its settings (secrets only by reference)."""

    backend: str
    model: str
    name: str = ""
    limit_group: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    api_key_file: str | None = None
    api_version: str | None = None
    temperature: float = 0.0
    max_tokens: int = 32
    system_prompt: str | None = None
    path: str | None = None  # precomputed
    checkpoint: str | None = None  # clip
    templates: tuple[str, ...] = ("a photo of a {}.",)
    device: str = "auto"
    random_weights: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def from_dict(d: dict[str, Any], where: str) -> ProbeSpec:
        d = dict(d)
        backend = d.pop("backend", None)
        if backend not in BACKENDS:
            raise ProbeConfigError(f"{where}: backend must be one of {BACKENDS}, got {backend!r}")
        model = d.pop("model", None)
        if not model:
            raise ProbeConfigError(f"{where}: 'model' is required")
        if "api_key" in d:
            raise ProbeConfigError(
                f"{where}: put the API key in the environment (api_key_env) or a file outside "
                "the repo (api_key_file), never in the config"
            )
        known = set(ProbeSpec.__dataclass_fields__) - {"backend", "model", "extra"}
        kwargs = {k: d.pop(k) for k in list(d) if k in known}
        if "templates" in kwargs:
            kwargs["templates"] = tuple(kwargs["templates"])
        spec = ProbeSpec(backend=backend, model=str(model), extra=d, **kwargs)
        if not spec.name:
            spec = _replace(spec, name=spec.model)
        if not spec.limit_group:
            spec = _replace(spec, limit_group=spec.backend)
        if backend == "precomputed" and not spec.path:
            raise ProbeConfigError(f"{where}: precomputed probe needs 'path' (JSONL or Parquet)")
        if d:
            raise ProbeConfigError(f"{where}: unknown keys {sorted(d)}")
        return spec

    def answer_settings(self) -> dict[str, Any]:
        """Settings that change the answer (part of the cache key); never secrets or URLs."""
        if self.backend == "clip":
            return {
                "templates": list(self.templates),
                "checkpoint": self.checkpoint or "",
                "random_weights": self.random_weights,
            }
        if self.backend == "precomputed":
            return {"path": os.path.basename(self.path or "")}
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "system_prompt": self.system_prompt or "",
        }

    def identity(self) -> str:
        return identity(self.backend, self.model, self.answer_settings())

    def api_key(self) -> str:
        """Resolve the key from the environment or a file; a named-but-missing key is an error."""
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ProbeConfigError(
                    f"probe {self.name}: environment variable {self.api_key_env} is not set"
                )
            return key
        if self.api_key_file:
            path = os.path.expanduser(self.api_key_file)
            if not os.path.isfile(path):
                raise ProbeConfigError(f"probe {self.name}: api_key_file {path} does not exist")
            with open(path, encoding="utf-8") as fh:
                return fh.read().strip()
        return "not-needed"  # local OpenAI-compatible servers often run without auth


def _replace(spec: ProbeSpec, **kw: Any) -> ProbeSpec:
    from dataclasses import replace

    return replace(spec, **kw)


def image_mime(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:4] == b"GIF8":
        return "image/gif"
    return "application/octet-stream"


def as_supported_image(data: bytes) -> tuple[bytes, str]:
    """Bytes + MIME type the APIs accept; anything else is re-encoded losslessly as PNG."""
    mime = image_mime(data)
    if mime != "application/octet-stream":
        return data, mime
    from PIL import Image

    buf = io.BytesIO()
    Image.open(io.BytesIO(data)).convert("RGB").save(buf, format="PNG")
    return buf.getvalue(), "image/png"


@dataclass
class Answer:
    raw: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


class OpenAIBackend:
    """Chat completions through the real ``openai`` SDK (AsyncOpenAI)."""

    def __init__(self, spec: ProbeSpec, limits: Limits) -> None:
        import openai

        self.spec = spec
        self._openai = openai
        self.client = openai.AsyncOpenAI(
            api_key=spec.api_key(),
            base_url=spec.base_url,
            max_retries=0,
            timeout=limits.timeout_s,
        )

    async def ask(self, turn: FirstTurn) -> Answer:
        data, mime = as_supported_image(turn.image)
        url = f"data:{mime};base64,{base64.b64encode(data).decode()}"
        messages: list[dict[str, Any]] = []
        if self.spec.system_prompt:
            messages.append({"role": "system", "content": self.spec.system_prompt})
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": url}},
                    {"type": "text", "text": turn.prompt},
                ],
            }
        )
        return await self.complete(messages)

    async def complete(self, messages: list[dict[str, Any]]) -> Answer:
        """Send ``messages``; SDK errors become Retryable/Fatal so callers building other
        requests (multi-image captions, text-only summaries) share one error mapping."""
        openai = self._openai
        try:
            resp = await self.client.chat.completions.create(
                model=self.spec.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=self.spec.temperature,
                max_tokens=self.spec.max_tokens,
            )
        except openai.RateLimitError as e:
            raise RetryableError("429", retry_after=_retry_after(e.response.headers)) from None
        except openai.APITimeoutError:
            raise RetryableError("timeout") from None
        except openai.APIConnectionError as e:
            raise RetryableError("connection", type(e).__name__) from None
        except openai.APIStatusError as e:
            if e.status_code >= 500 or e.status_code in (408, 409):
                raise RetryableError(str(e.status_code)) from None
            raise FatalError(f"HTTP {e.status_code}") from None
        except (ValueError, openai.APIResponseValidationError) as e:  # JSONDecodeError et al.
            raise RetryableError("malformed", type(e).__name__) from None
        try:
            content = resp.choices[0].message.content
        except (TypeError, IndexError, AttributeError):
            raise RetryableError("malformed", "no choices") from None
        if not isinstance(content, str):
            raise RetryableError("malformed", "no message content")
        usage = resp.usage
        return Answer(
            content,
            int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0),
        )

    async def close(self) -> None:
        await self.client.close()


class GeminiBackend:
    """generateContent through the real ``google-genai`` SDK (``client.aio``)."""

    def __init__(self, spec: ProbeSpec, limits: Limits) -> None:
        from google import genai
        from google.genai import types

        self.spec = spec
        self.types = types
        self.errors = genai.errors
        opts: dict[str, Any] = {"timeout": int(limits.timeout_s * 1000)}
        if spec.base_url:
            opts["base_url"] = spec.base_url
        if spec.api_version:
            opts["api_version"] = spec.api_version
        self.client = genai.Client(api_key=spec.api_key(), http_options=types.HttpOptions(**opts))

    async def ask(self, turn: FirstTurn) -> Answer:
        types = self.types
        data, mime = as_supported_image(turn.image)
        config = types.GenerateContentConfig(
            temperature=self.spec.temperature,
            max_output_tokens=self.spec.max_tokens,
            system_instruction=self.spec.system_prompt or None,
        )
        return await self.generate([types.Part.from_bytes(data=data, mime_type=mime), turn.prompt], config)

    async def generate(self, contents: list[Any], config: Any) -> Answer:
        """``generateContent`` with SDK errors mapped to Retryable/Fatal (shared by every caller
        that builds its own contents or config, e.g. JSON answers or several images)."""
        try:
            resp = await self.client.aio.models.generate_content(
                model=self.spec.model, contents=contents, config=config
            )
        except self.errors.APIError as e:
            code = int(e.code or 0)
            if code == 429:
                raise RetryableError("429") from None
            if code >= 500 or code == 408:
                raise RetryableError(str(code)) from None
            raise FatalError(f"HTTP {code}") from None
        except TimeoutError:
            raise RetryableError("timeout") from None
        except ValueError as e:  # JSONDecodeError: malformed body
            raise RetryableError("malformed", type(e).__name__) from None
        except OSError as e:  # aiohttp/httpx connection errors derive from OSError
            raise RetryableError("connection", type(e).__name__) from None
        except Exception as e:  # noqa: BLE001 - httpx/aiohttp transport errors vary by version
            name = type(e).__name__
            if "Timeout" in name:
                raise RetryableError("timeout", name) from None
            if any(s in name for s in ("Connect", "Disconnect", "Transport", "Payload")):
                raise RetryableError("connection", name) from None
            raise
        text = resp.text
        if not isinstance(text, str):
            raise RetryableError("malformed", "no candidate text")
        um = resp.usage_metadata
        return Answer(
            text,
            int(getattr(um, "prompt_token_count", 0) or 0),
            int(getattr(um, "candidates_token_count", 0) or 0),
        )

    async def close(self) -> None:
        await self.client.aio.aclose()


def _retry_after(headers: Any) -> float | None:
    try:
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


class RateLimiter:
    """Spacing limiter (GCRA, burst 1): at most ``rate`` request starts per second."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self._next = 0.0

    async def acquire(self) -> None:
        if not self.interval:
            return
        now = time.monotonic()
        slot = max(self._next, now)
        self._next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)


@dataclass
class Job:
    spec: ProbeSpec
    turn: FirstTurn
    key: str


@dataclass
class Outcome:
    status: str  # answered | failed
    raw: str = ""
    error: str = ""
    cached: bool = False


def new_stats() -> dict[str, int]:
    return {
        "requests": 0,
        "retries": 0,
        "cache_hits": 0,
        "failures": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
    }


async def _run_one(
    job: Job,
    backend: Any,
    sem: asyncio.Semaphore,
    limiter: RateLimiter,
    limits: Limits,
    retry: RetryPolicy,
    cache: ResponseCache,
    stats: dict[str, int],
    rng: random.Random,
) -> Outcome:
    last = ""
    for attempt in range(1, retry.max_attempts + 1):
        retry_after = None
        async with sem:
            await limiter.acquire()
            stats["requests"] += 1
            try:
                ans = await asyncio.wait_for(backend.ask(job.turn), limits.timeout_s * 1.5 + 1)
            except RetryableError as e:
                last, retry_after = e.kind, e.retry_after
            except TimeoutError:
                last = "timeout"
            except FatalError as e:
                stats["failures"] += 1
                return Outcome("failed", error=str(e))
            except Exception as e:  # noqa: BLE001 - an SDK surprise fails this model, not the run
                stats["failures"] += 1
                return Outcome("failed", error=f"unexpected {type(e).__name__}")
            else:
                stats["prompt_tokens"] += ans.prompt_tokens
                stats["completion_tokens"] += ans.completion_tokens
                cache.put(
                    job.key,
                    job.spec.identity(),
                    job.turn.prompt_sha256,
                    job.turn.image_sha256,
                    ans.raw,
                    ans.prompt_tokens,
                    ans.completion_tokens,
                )
                return Outcome("answered", raw=ans.raw)
        stats[f"retry_{last}"] = stats.get(f"retry_{last}", 0) + 1
        if attempt < retry.max_attempts:
            stats["retries"] += 1
            await asyncio.sleep(retry.delay(attempt, rng, retry_after))
    stats["failures"] += 1
    return Outcome("failed", error=f"gave up after {retry.max_attempts} attempts ({last})")


async def run_remote(
    jobs: list[Job],
    limits: dict[str, Limits],
    retry: RetryPolicy,
    cache: ResponseCache,
    stats: dict[str, dict[str, int]],
    progress: Stage,
) -> dict[tuple[str, str], Outcome]:
    """Run uncached remote jobs concurrently; returns (probe name, episode id) → outcome."""
    backends: dict[str, Any] = {}
    sems: dict[str, asyncio.Semaphore] = {}
    limiters: dict[str, RateLimiter] = {}
    rng = random.Random()
    try:
        for job in jobs:
            spec = job.spec
            if spec.name not in backends:
                lim = limits.get(spec.limit_group, Limits())
                cls = OpenAIBackend if spec.backend == "openai" else GeminiBackend
                backends[spec.name] = cls(spec, lim)
            if spec.limit_group not in sems:
                lim = limits.get(spec.limit_group, Limits())
                sems[spec.limit_group] = asyncio.Semaphore(max(1, lim.concurrency))
                limiters[spec.limit_group] = RateLimiter(lim.requests_per_second)

        async def one(job: Job) -> tuple[tuple[str, str], Outcome]:
            g = job.spec.limit_group
            out = await _run_one(
                job,
                backends[job.spec.name],
                sems[g],
                limiters[g],
                limits.get(g, Limits()),
                retry,
                cache,
                stats.setdefault(job.spec.name, new_stats()),
                rng,
            )
            if out.status == "failed":
                log.warning("probe %s failed on %s: %s", job.spec.name, job.turn.episode_id, out.error)
            progress.advance(1, failed=int(out.status == "failed"))
            return (job.spec.name, job.turn.episode_id), out

        pairs = await asyncio.gather(*(one(j) for j in jobs))
        return dict(pairs)
    finally:
        for b in backends.values():
            with contextlib.suppress(Exception):  # closing must not mask the real result
                await b.close()


_PRECOMPUTED: dict[tuple[str, float], dict[tuple[str, str], str]] = {}


def load_precomputed(path: str) -> dict[tuple[str, str], str]:
    """(sample id, model) → raw first-turn answer from JSONL or Parquet (memoised per file)."""
    if not os.path.isfile(path):
        raise ProbeConfigError(f"precomputed predictions file {path} does not exist")
    key = (os.path.abspath(path), os.stat(path).st_mtime)
    if key in _PRECOMPUTED:
        return _PRECOMPUTED[key]
    rows: list[dict[str, Any]]
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    else:
        rows = []
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        raise ProbeConfigError(f"{path}:{n}: invalid JSON ({e.msg})") from None
    table: dict[tuple[str, str], str] = {}
    for n, row in enumerate(rows, 1):
        for col in ("sample_id", "model", "raw_answer"):
            if not isinstance(row.get(col), str):
                raise ProbeConfigError(f"{path}: row {n}: field {col!r} missing or not a string")
        k = (row["sample_id"], row["model"])
        if k in table and table[k] != row["raw_answer"]:
            raise ProbeConfigError(f"{path}: row {n}: conflicting duplicate answer for {k}")
        table[k] = row["raw_answer"]
    _PRECOMPUTED[key] = table
    return table


class ClipProbe:
    """open_clip zero-shot choice among the category options (image vs. prompt-ensembled text).

    It can only pick a category, never a proactive option, so it is an upper bound on what
    "recognisable at the first frame" means for a contrastive model; it answers with the
    category text, parsed like any other answer.
    """

    def __init__(self, spec: ProbeSpec, cache_dir: str | None, batch_size: int = 32) -> None:
        from filtering.negatives import HardNegativeMiner

        self.spec = spec
        self.batch_size = batch_size
        self.text = HardNegativeMiner(
            spec.model,
            spec.checkpoint,
            list(spec.templates),
            spec.device,
            spec.random_weights,
            cache_dir=cache_dir,
        )

    def describe(self) -> dict[str, Any]:
        return self.text.describe()

    def answer(self, turns: list[FirstTurn]) -> list[str]:
        import numpy as np
        import torch
        from PIL import Image

        from filtering.clip_models import load_clip, resolve_device

        clip = load_clip(self.text.model_name, self.text.checkpoint_path, resolve_device(self.spec.device))
        out: list[str] = []
        for i in range(0, len(turns), self.batch_size):
            chunk = turns[i : i + self.batch_size]
            imgs = torch.stack(
                [clip.preprocess(Image.open(io.BytesIO(t.image)).convert("RGB")) for t in chunk]
            ).to(clip.device)
            with torch.no_grad():
                feats = clip.model.encode_image(imgs).float()
                feats = (feats / feats.norm(dim=-1, keepdim=True)).cpu().numpy()
            for t, f in zip(chunk, feats, strict=True):
                text = self.text.embed(list(t.categories))
                scores = np.round(text @ f.astype(np.float64), 6)
                out.append(t.categories[int(np.argmax(scores))])
        return out
