"""The one way the project asks models: :func:`ask_many` (and :meth:`ModelClient.ask_many`).

A batch goes: cache lookup (cached answers are re-validated, then reused) → the misses, each
distinct question once, concurrently on the process's event loop (:mod:`clients.runtime`) within
their limit group's slots and rate → answers validated against the request's schema, usable ones
cached → the cache flushed. Each request ends ``answered`` or ``failed`` (after the retry policy,
or at once for a fault retrying cannot fix); a failed model is *failed*, never a guessed answer.

Retries: 429, 5xx (and 408/409), timeouts, connection errors and malformed answers (a broken
reply, no text, or text that does not validate) are retried with the policy's back-off; a
request keeps its concurrency slot while it backs off, so a struggling endpoint is not hammered
by fresh requests meanwhile, and with ``concurrency: 1`` requests run strictly one after another,
in order.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from clients.cache import Cached, ResponseCache, response_key
from clients.errors import FatalError, RetryableError
from clients.request import Outcome, Request
from clients.runtime import runtime
from clients.settings import Limits, ModelSpec, RetryPolicy
from clients.usage import Usage
from core.progress import Stage

log = logging.getLogger(__name__)


class ModelClient:
    """One model with its response cache, retry policy, limits and usage counts.

    Picklable (Beam ships it to workers): it holds settings and counts only; the SDK clients and
    connections belong to the process (:mod:`clients.runtime`). Call :meth:`close` in a DoFn's
    ``teardown``.
    """

    def __init__(self, spec: ModelSpec, *, cache_dir: str | None = None,
                 retry: RetryPolicy | None = None, limits: Limits | None = None,
                 label: str = "") -> None:
        self.spec = spec
        self.cache_dir = cache_dir
        self.retry = retry or RetryPolicy()
        self.limits = limits or Limits()
        self.label = label or spec.name
        self.usage = Usage()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def cache(self) -> ResponseCache:
        return ResponseCache.open(self.cache_dir)

    def identity(self) -> str:
        return self.spec.identity()

    def ask_many(self, requests: Sequence[Request], stage: Stage | None = None) -> list[Outcome]:
        """Outcomes in request order. Without a ``stage``, batches of 20 or more requests show a
        progress line named after the client's label."""
        own = stage is None
        stage = stage or Stage(f"{self.label} model requests", len(requests), enabled=len(requests) >= 20)
        try:
            return ask_many([(self, r) for r in requests], stage=stage)
        finally:
            if own:
                stage.close()

    def close(self) -> None:
        """Persist buffered answers (a Beam DoFn's ``teardown``)."""
        self.cache.flush()

    def __repr__(self) -> str:
        return f"ModelClient({self.spec.backend}:{self.spec.model}, cache_dir={self.cache_dir!r})"

    # -- one request, on the runtime loop ---------------------------------------------------
    async def _ask(self, request: Request, key: str) -> Outcome:
        """All attempts at one request within its group's slot; the answer is cached after the
        slot is released, so the next request starts as soon as this one has its answer."""
        rt = runtime()
        backend = rt.backend(self.spec, self.limits)
        group = rt.group(self.spec.limit_group, self.limits)
        deadline = self.limits.timeout_s * 1.5 + 1  # the SDK's own timeout should fire first
        kind, detail = "", ""
        answer, parsed, attempt = None, None, 0
        async with group.slots:
            for attempt in range(1, self.retry.max_attempts + 1):
                await group.limiter.acquire()
                self.usage.count(requests=1)
                retry_after = None
                try:
                    async with asyncio.timeout(deadline):
                        answer = await backend.send(self.spec, request)
                except RetryableError as e:
                    kind, detail, retry_after = e.kind, e.detail, e.retry_after
                except TimeoutError:
                    kind, detail = "timeout", "no answer before the request deadline"
                except FatalError as e:
                    self.usage.count(failures=1)
                    return Outcome.failed(e.kind, e.detail, attempt, gave_up=False)
                except Exception as e:  # noqa: BLE001 - an SDK surprise fails this request, not the run
                    self.usage.count(failures=1)
                    return Outcome.failed("unexpected", type(e).__name__, attempt, gave_up=False)
                else:
                    self.usage.count(prompt_tokens=answer.prompt_tokens,
                                     completion_tokens=answer.completion_tokens)
                    parsed, problem = request.parse(answer.raw)
                    if problem is None:
                        break
                    answer, kind, detail = None, "malformed", problem
                self.usage.fault(kind)
                if attempt < self.retry.max_attempts:
                    self.usage.count(retries=1)
                    await asyncio.sleep(self.retry.delay(attempt, rt.rng, retry_after))
        if answer is None:
            self.usage.count(failures=1)
            return Outcome.failed(kind, detail, attempt, gave_up=True)
        created = time.time()
        self.cache.put(key, self.identity(), request, answer.raw, answer.prompt_tokens,
                       answer.completion_tokens, created)
        return Outcome("answered", answer.raw, parsed, created=created, attempts=attempt)


def _from_cache(request: Request, hit: Cached) -> Outcome | None:
    parsed, problem = request.parse(hit.raw_answer)
    if problem is not None:
        return None  # stored under another validation rule: ask again
    return Outcome("answered", hit.raw_answer, parsed, cached=True, created=hit.created)


def ask_many(work: Sequence[tuple[ModelClient, Request]], stage: Stage | None = None) -> list[Outcome]:
    """Ask each ``(client, request)`` pair; outcomes in order. Several clients (a probe pool) run
    concurrently, each within its own limit group. ``stage`` counts finished requests (cached ones
    as ``cached=``, failures as ``failed=``); the caller closes it."""
    stage = stage or Stage("model requests", len(work), enabled=False)
    keys = [response_key(c.identity(), r) for c, r in work]
    outcomes: list[Outcome | None] = [None] * len(work)
    by_cache: dict[str | None, list[int]] = {}
    for i, (client, _) in enumerate(work):
        by_cache.setdefault(client.cache_dir, []).append(i)
    for cache_dir, idx in by_cache.items():
        hits = ResponseCache.open(cache_dir).get_many([keys[i] for i in idx])
        for i in idx:
            client, request = work[i]
            hit = hits.get(keys[i])
            if hit is not None and (out := _from_cache(request, hit)) is not None:
                outcomes[i] = out
                client.usage.count(cache_hits=1)
    n_cached = sum(o is not None for o in outcomes)
    stage.advance(n_cached, cached=n_cached)
    todo: dict[str, list[int]] = {}  # one request per distinct question; duplicates share it
    for i, out in enumerate(outcomes):
        if out is None:
            todo.setdefault(keys[i], []).append(i)
    if todo:
        try:
            answers = runtime().run(_ask_all(work, todo, stage))
        finally:
            for cache_dir in by_cache:  # answers received before an error are kept
                ResponseCache.open(cache_dir).flush()
        for key, idx in todo.items():
            for i in idx:
                outcomes[i] = answers[key]
    return [o for o in outcomes if o is not None]


async def _ask_all(work: Sequence[tuple[ModelClient, Request]], todo: dict[str, list[int]],
                   stage: Stage) -> dict[str, Outcome]:
    rt = runtime()
    for client in {id(c): c for c, _ in (work[idx[0]] for idx in todo.values())}.values():
        rt.backend(client.spec, client.limits)  # a missing API key fails before anything is sent

    async def one(key: str, idx: list[int]) -> tuple[str, Outcome]:
        client, request = work[idx[0]]
        out = await client._ask(request, key)
        if not out.answered:
            log.warning("%s failed on %s: %s", client.name, request.id, out.error)
        stage.advance(len(idx), failed=len(idx) if not out.answered else 0)
        return key, out

    return dict(await asyncio.gather(*(one(k, idx) for k, idx in todo.items())))
