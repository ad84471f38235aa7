"""The Gemini reviewer: an independent model rater on the frozen candidates (StreamVibe App. B.3).

App. B.3 asks Gemini to "independently assign the same binary review decision to the same frozen
candidates, using the rubric without access to human judgments or post-review corrections", so
its Cohen's κ against each human can be reported. What follows from that:

* **Same rubric, same candidates, no human judgments.** The prompt holds the rubric criteria and
  the candidate content only; content carrying review fields (``decision``, ``reviews``,
  ``approvals`` …) is refused (a failure record), so a caller cannot leak human judgments in.
* **Its own rater, never an approver.** Output rows are REVIEW_DECISION rows with
  ``reviewer="gemini:<model>"`` and ``rater_kind="model"``; the approval rule counts human
  panel members only (design.md §Annotation rules), and :mod:`annotation.agreement` treats the
  model separately.
* **Structured output.** A pydantic ``response_schema`` (decision, per-criterion verdicts,
  rationale); the answer text is validated against it; an answer that does not parse, names unknown
  criteria, or approves while marking a criterion ``not_met`` (design.md §Annotation rules:
  approve only when every
  applicable criterion holds) is treated as malformed and retried.
* **Failures are records, not guesses.** After bounded retries (exponential back-off with
  jitter on 429 / 5xx / timeouts / malformed JSON) a candidate yields a failure dict, never a
  default decision; it simply has no model decision in the audit.
* **Shared request machinery.** Client construction, the SDK-error → retryable/fatal mapping
  (:meth:`filtering.probes.GeminiBackend.generate`), the retry loop and policy
  (:func:`filtering.probes._run_one`, :class:`~filtering.probes.RetryPolicy`) and the persistent
  answer cache (:class:`filtering.cache.ResponseCache`, keyed by model identity + prompt sha256 +
  media sha256) are the leak filter's, as in ``pipelines/proready/models.py`` and
  ``pipelines/streamvibe/gemini.py``. :class:`ReviewBackend` only builds the multi-part request
  with ``response_schema`` and rejects answers that do not validate, so only validated answers
  are cached and failed candidates are asked again on the next run; a re-run of a report costs
  no API calls and yields identical rows. Candidates are asked one at a time, in order.
* **Secrets.** The API key comes from the environment (``GEMINI_API_KEY``, else
  ``GOOGLE_API_KEY``); it is handed to the client and kept in memory only to scrub error
  messages — never written to the cache, logged, shown in ``repr`` or left in a failure record.

Media (documented choice). Images are sent inline (``Part.from_bytes``). Videos are *not*
uploaded through the Files API: they are sampled at 1 FPS by the pipelines' own
:func:`core.media.video.causal_frames` (the frame on screen at each whole second of the
real, decoded timeline, longest side capped as in the streams), each frame JPEG-encoded and sent
inline, preceded by a ``t=<s>s`` text label.
Why: StreamVibe serialises streams causally at 1 FPS (StreamVibe §3,
App. B), so the reviewer sees exactly what the benchmark's models see; inline frames need no
upload state, are hashable, and work against any ``base_url``. Frames are read sequentially
rather than by seeking, because container headers lie (opencv-doc ``tree.avi`` claims 444 frames,
68 decode). Requests whose inline payload would exceed ``max_inline_bytes`` (default 20 MB, the
Gemini inline request limit) become failure records.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel

from core.files import canonical_json, content_hash
from filtering.cache import ResponseCache, response_key
from filtering.leak import _run_async
from filtering.probes import (
    Answer,
    FatalError,
    GeminiBackend,
    Job,
    Limits,
    Outcome,
    ProbeSpec,
    RateLimiter,
    RetryableError,
    RetryPolicy,
    _run_one,
    new_stats,
)
from schemas.review import DECISIONS, REVIEW_DECISION

log = logging.getLogger(__name__)

PROMPT_VERSION = "gemini-review-v1"
VIDEO_FPS = 1.0
JPEG_QUALITY = 90
DEFAULT_MAX_INLINE_BYTES = 20 * 1024 * 1024
API_KEY_ENVS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")

# Keys that would carry human review judgments into the prompt (App. B.3: no access to them).
FORBIDDEN_CONTENT_KEYS = frozenset(
    {"decision", "decisions", "review", "reviews", "review_decisions", "reviewer", "reviewers",
     "approval", "approvals", "approved", "human_judgments"}
)

Media = bytes | str | os.PathLike[str]
Candidate = tuple[str, int, str, dict[str, Any], Sequence[Media]]


class CriterionVerdict(BaseModel):
    """One rubric criterion as the model judged it."""

    criterion: str
    verdict: Literal["met", "not_met", "not_applicable"]


class ReviewVerdict(BaseModel):
    """The structured answer (``response_schema``); mirrors a human reviewer's form."""

    decision: Literal["approve", "revise", "reject"]
    criteria: list[CriterionVerdict]
    rationale: str


# The model's decision vocabulary is the human one (schemas.review), or rows would not compare.
if get_args(ReviewVerdict.model_fields["decision"].annotation) != DECISIONS:
    raise ImportError("ReviewVerdict.decision drifted from schemas.review.DECISIONS")


class ReviewFailure(Exception):
    """A candidate the model could not review; becomes a failure record."""

    def __init__(self, kind: str, message: str, attempts: int) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.attempts = attempts


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ----------------------------------------------------------------------------- media


_IMAGE_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
)


def image_mime(data: bytes) -> str | None:
    """Mime type of an image by magic bytes, ``None`` if the bytes are not a known image."""
    for sig, off, mime in _IMAGE_SIGNATURES:
        if data[off : off + len(sig)] == sig:
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _video_suffix(data: bytes) -> str:
    if data[4:8] == b"ftyp":
        return ".mp4"
    if data[:4] == b"RIFF" and data[8:12] == b"AVI ":
        return ".avi"
    if data[:4] == b"\x1a\x45\xdf\xa3":
        return ".webm"
    return ".bin"


def sample_video_frames(data: bytes, fps: float = VIDEO_FPS) -> list[tuple[float, bytes]]:
    """The benchmark's own 1 FPS frames (:func:`core.media.video.causal_frames`) as JPEG.

    The model reviewer must see what the pipelines and the benchmark's models see: the frame on
    screen at each second of the *real* decoded timeline (``tree.avi`` gives 30 frames over its
    29.6 s, not the 5 a frame-counting sampler gets from its 68 decodable frames), capped at the
    streams' longest side and encoded by the same rule. Returns ``(t, jpeg)`` pairs; raises
    ``ValueError`` when nothing decodes.
    """
    from core.errors import BadInput
    from core.media.video import STREAM_MAX_SIDE, causal_frames_bytes

    if fps != 1.0:
        raise ValueError(f"the reviewer samples at 1 FPS like the benchmark, not {fps}")
    try:
        sampled = causal_frames_bytes(data, f"review-media{_video_suffix(data)}",
                                      max_side=STREAM_MAX_SIDE, jpeg_quality=JPEG_QUALITY)
    except BadInput as exc:
        raise ValueError(exc.reason) from exc
    return [(round(f.t, 3), f.image) for f in sampled.frames]


def _load_media(item: Media) -> bytes:
    if isinstance(item, bytes | bytearray):
        return bytes(item)
    return Path(item).read_bytes()


# ----------------------------------------------------------------------------- reviewer


@dataclass
class _Prepared:
    sample_id: str
    version: int
    task_type: str
    content: dict[str, Any]
    media: list[bytes]
    prompt_sha256: str
    media_sha256: str
    key: str


@dataclass(frozen=True)
class ReviewRequest:
    """What the model sees for one candidate: text labels and inline blobs, in order. Duck-types
    the hashes of :class:`filtering.parsing.FirstTurn` that ``_run_one`` stores in the cache."""

    slot: int  # position in the batch: attempts and the last error are recorded per slot
    prompt_sha256: str
    image_sha256: str
    segments: tuple[str | tuple[bytes, str], ...]


def parse_verdict(raw: str, criteria: set[str]) -> ReviewVerdict | str:
    """The validated verdict of an answer text, or the reason it is malformed."""
    try:
        verdict = ReviewVerdict.model_validate_json(raw)
    except ValueError:
        return "response text is not a valid ReviewVerdict JSON"
    names = [c.criterion for c in verdict.criteria]
    if len(set(names)) != len(names) or set(names) != criteria:
        return f"criteria {sorted(names)} do not match the rubric's {sorted(criteria)}"
    if verdict.decision == "approve" and any(c.verdict == "not_met" for c in verdict.criteria):
        return "decision 'approve' with a criterion marked not_met"
    return verdict


class ReviewBackend(GeminiBackend):
    """GeminiBackend (same client, key handling and SDK-error mapping) asking for a
    :class:`ReviewVerdict` over the candidate's parts. An answer that does not validate is a
    retryable ``malformed`` answer, so ``_run_one`` never caches it. The kind and message of each
    slot's last error and its attempt count are kept for the failure record (``_run_one``'s
    :class:`~filtering.probes.Outcome` carries only a summary)."""

    def __init__(self, spec: ProbeSpec, limits: Limits, criteria: set[str]) -> None:
        super().__init__(spec, limits)
        self.criteria = criteria
        self.attempts: dict[int, int] = {}
        self.last_error: dict[int, tuple[str, str]] = {}

    async def ask(self, turn: ReviewRequest) -> Answer:  # type: ignore[override]
        types = self.types
        parts = [types.Part.from_text(text=s) if isinstance(s, str)
                 else types.Part.from_bytes(data=s[0], mime_type=s[1]) for s in turn.segments]
        config = types.GenerateContentConfig(
            system_instruction=self.spec.system_prompt, response_mime_type="application/json",
            response_schema=ReviewVerdict, temperature=self.spec.temperature,
        )
        self.attempts[turn.slot] = self.attempts.get(turn.slot, 0) + 1
        # Stays if _run_one's own deadline cancels this attempt.
        self.last_error[turn.slot] = ("timeout", "no answer before the request deadline")
        try:
            answer = await self.generate([types.Content(role="user", parts=parts)], config)
        except (RetryableError, FatalError) as exc:
            self.last_error[turn.slot] = self._describe(exc)
            raise
        except Exception as exc:
            self.last_error[turn.slot] = ("unexpected", f"{type(exc).__name__}: {exc}")
            raise
        verdict = parse_verdict(answer.raw, self.criteria)
        if isinstance(verdict, str):
            self.last_error[turn.slot] = ("malformed", verdict)
            raise RetryableError("malformed", verdict)
        return answer

    def _describe(self, exc: RetryableError | FatalError) -> tuple[str, str]:
        # generate() raises ``from None``, which hides but keeps the SDK error as __context__.
        ctx = exc.__context__
        if isinstance(ctx, self.errors.APIError):
            return f"http_{int(ctx.code or 0)}", f"{ctx.code} {ctx.status}: {ctx.message}"
        kind = exc.kind if isinstance(exc, RetryableError) else "fatal"
        kind = {"connection": "transport"}.get(kind, kind)
        return kind, f"{type(ctx).__name__}: {ctx}" if ctx is not None else str(exc)


def _cached(cache: ResponseCache, keys: list[str], criteria: set[str]
            ) -> dict[str, tuple[ReviewVerdict, float]]:
    """Cached verdicts with the time they were stored; an entry that no longer validates (say, an
    older schema) is left out, so it is asked again."""
    out = {}
    for key, hit in cache.get_many(keys).items():
        verdict = parse_verdict(hit["raw_answer"], criteria)
        if not isinstance(verdict, str):
            out[key] = (verdict, hit["created"])
    return out


def _find_forbidden(value: Any, path: str = "content") -> str | None:
    if isinstance(value, dict):
        for k, v in value.items():
            if str(k).lower() in FORBIDDEN_CONTENT_KEYS:
                return f"{path}.{k}"
            hit = _find_forbidden(v, f"{path}.{k}")
            if hit:
                return hit
    elif isinstance(value, list):
        for i, v in enumerate(value):
            hit = _find_forbidden(v, f"{path}[{i}]")
            if hit:
                return hit
    return None


class GeminiReviewer:
    """Review frozen candidates with a Gemini model as an extra, non-approving rater.

    ``criteria`` are ``(name, description)`` pairs of the rubric the humans use.
    ``initial_delay``/``max_delay`` bound the back-off (:class:`filtering.probes.RetryPolicy`):
    retry ``k`` waits ``min(max_delay, initial_delay * 2**(k-1))`` scaled into [0.5, 1] by jitter.
    """

    def __init__(
        self,
        model: str,
        rubric_name: str,
        criteria: list[tuple[str, str]],
        cache_dir: str | os.PathLike[str],
        base_url: str | None = None,
        max_retries: int = 4,
        *,
        benchmark: str = "streamvibe",
        review_round: str = "gemini-first-round",
        timeout_s: float = 120.0,
        initial_delay: float = 1.0,
        max_delay: float = 30.0,
        max_inline_bytes: int = DEFAULT_MAX_INLINE_BYTES,
        temperature: float = 0.0,
    ) -> None:
        if not criteria:
            raise ValueError("GeminiReviewer needs at least one rubric criterion")
        names = [c[0] for c in criteria]
        if len(set(names)) != len(names):
            raise ValueError(f"rubric {rubric_name!r} has duplicate criterion names: {names}")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.model = model
        self.rubric_name = rubric_name
        self.criteria = list(criteria)
        self.cache_dir = Path(cache_dir)
        self.base_url = base_url
        self.max_retries = max_retries
        self.benchmark = benchmark
        self.review_round = review_round
        self.timeout_s = timeout_s
        self.max_inline_bytes = max_inline_bytes
        self.temperature = temperature
        self.retry = RetryPolicy(max_attempts=max_retries + 1, base_delay_s=initial_delay,
                                 max_delay_s=max_delay)
        self.limits = Limits(concurrency=1, timeout_s=timeout_s)
        # max_tokens=0: no output cap is sent; the key env is chosen when a request is due.
        self.spec = ProbeSpec(backend="gemini", model=model, name=self.reviewer_id,
                              limit_group="gemini", base_url=base_url, temperature=temperature,
                              max_tokens=0, system_prompt=self.system_instruction())
        self.stats = new_stats()
        self._secret: str | None = None  # only to scrub messages; never written anywhere

    @property
    def reviewer_id(self) -> str:
        return f"gemini:{self.model}"

    @property
    def requests_made(self) -> int:
        return self.stats["requests"]

    # -- prompt ---------------------------------------------------------------------------
    def system_instruction(self) -> str:
        lines = [
            f"You are an independent reviewer of benchmark candidate samples (rubric "
            f"'{self.rubric_name}'). Judge the candidate only from the content and media "
            "given; you have no access to other reviewers' judgments.",
            "For every rubric criterion below give a verdict: met, not_met or not_applicable.",
            "Decision: 'approve' only if every applicable criterion is met; 'revise' if the "
            "sample is fixable by correcting its annotation; 'reject' if it cannot be fixed "
            "(e.g. insufficient evidence or unresolvable ambiguity). Never guess a reference.",
            "Videos are given as frames sampled at 1 frame per second, each preceded by its "
            "timestamp label 't=<seconds>s'.",
            "Rubric criteria (name: description):",
        ]
        lines += [f"- {name}: {desc}" for name, desc in self.criteria]
        lines.append("Answer with JSON: decision, criteria (one entry per criterion), rationale.")
        return "\n".join(lines)

    def _candidate_text(self, sample_id: str, task_type: str, content: dict[str, Any]) -> str:
        return (
            f"Candidate sample {sample_id} (task type: {task_type}).\n"
            f"Content (JSON):\n{canonical_json(content)}"
        )

    def _prompt_sha256(self, text: str) -> str:
        spec = {
            "prompt_version": PROMPT_VERSION,
            "system": self.system_instruction(),
            "text": text,
            "video_sampling": {"fps": VIDEO_FPS, "jpeg_quality": JPEG_QUALITY},
            "temperature": self.temperature,
            "schema": ReviewVerdict.model_json_schema(),
        }
        return _sha256(canonical_json(spec).encode())

    def _prepare(self, cand: Candidate) -> _Prepared:
        sample_id, version, task_type, content, media = cand
        media_bytes = [_load_media(m) for m in media]
        text = self._candidate_text(sample_id, task_type, content)
        prompt_sha = self._prompt_sha256(text)
        media_sha = _sha256("".join(_sha256(b) for b in media_bytes).encode())
        key = response_key(self.spec.identity(), prompt_sha, media_sha)
        return _Prepared(sample_id, int(version), task_type, content, media_bytes, prompt_sha,
                         media_sha, key)

    def _request(self, slot: int, prep: _Prepared) -> ReviewRequest:
        segments: list[str | tuple[bytes, str]] = [
            self._candidate_text(prep.sample_id, prep.task_type, prep.content)]
        total = 0
        for i, data in enumerate(prep.media, start=1):
            mime = image_mime(data)
            if mime is not None:
                segments += [f"Media {i}: image.", (data, mime)]
                total += len(data)
                continue
            try:
                frames = sample_video_frames(data)
            except ValueError as exc:
                raise ReviewFailure("invalid_media", f"media {i}: {exc}", 0) from exc
            segments.append(f"Media {i}: video, {len(frames)} frames sampled at {VIDEO_FPS:g} FPS.")
            for t, jpeg in frames:
                segments += [f"t={t:g}s", (jpeg, "image/jpeg")]
                total += len(jpeg)
        # base64 inflates inline data by 4/3.
        if total * 4 // 3 > self.max_inline_bytes:
            raise ReviewFailure(
                "media_too_large",
                f"inline media would be {total * 4 // 3} bytes > {self.max_inline_bytes}",
                0,
            )
        return ReviewRequest(slot, prep.prompt_sha256, prep.media_sha256, tuple(segments))

    # -- API ----------------------------------------------------------------------------------
    def _scrub(self, message: str) -> str:
        if self._secret:
            message = message.replace(self._secret, "***")
        return message[:500]

    async def _ask_all(self, jobs: list[Job], cache: ResponseCache
                       ) -> tuple[dict[int, Outcome], ReviewBackend]:
        env = next((e for e in API_KEY_ENVS if os.environ.get(e)), None)
        if env is None:
            raise RuntimeError(
                f"no Gemini API key: set one of {', '.join(API_KEY_ENVS)} in the environment"
            )
        self._secret = os.environ[env]
        spec = replace(self.spec, api_key_env=env)
        backend = ReviewBackend(spec, self.limits, {c[0] for c in self.criteria})
        sem = asyncio.Semaphore(1)
        limiter = RateLimiter(self.limits.requests_per_second)
        rng = random.Random()  # only spreads retry delays; answers never depend on it
        outcomes: dict[int, Outcome] = {}
        try:
            for job in jobs:  # one candidate at a time, in order, each with its own retries
                outcomes[job.turn.slot] = await _run_one(  # type: ignore[attr-defined]
                    job, backend, sem, limiter, self.limits, self.retry, cache, self.stats, rng)
        finally:
            await backend.close()
        return outcomes, backend

    def _decision_row(self, prep: _Prepared, verdict: ReviewVerdict, created: float) -> dict:
        met = {c.criterion for c in verdict.criteria if c.verdict == "met"}
        row = {
            "benchmark": self.benchmark,
            "review_round": self.review_round,
            "sample_id": prep.sample_id,
            "version": prep.version,
            "content_hash": content_hash(prep.content),
            "task_type": prep.task_type,
            "reviewer": self.reviewer_id,
            "rater_kind": "model",
            "decision": verdict.decision,
            "criteria": [name for name, _ in self.criteria if name in met],
            "comment": verdict.rationale,
            "lead_time": 0.0,
            # when the answer was first cached: identical on every re-run
            "created_at": datetime.fromtimestamp(created, UTC).isoformat(timespec="seconds"),
            "source_task_id": -1,
            "source_annotation_id": -1,
        }
        REVIEW_DECISION.validate(row)
        return row

    def _failure(self, cand: Candidate, prep: _Prepared | None, fail: ReviewFailure) -> dict:
        return {
            "sample_id": cand[0],
            "version": int(cand[1]),
            "task_type": cand[2],
            "reviewer": self.reviewer_id,
            "rater_kind": "model",
            "model": self.model,
            "error_kind": fail.kind,
            "message": self._scrub(fail.message),
            "attempts": fail.attempts,
            "prompt_sha256": prep.prompt_sha256 if prep else "",
            "media_sha256": prep.media_sha256 if prep else "",
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }

    def _check_input(self, cand: Candidate) -> _Prepared:
        if len(cand) != 5:
            raise ReviewFailure("invalid_input", "candidate is not a 5-tuple", 0)
        forbidden = _find_forbidden(cand[3])
        if forbidden:
            raise ReviewFailure(
                "invalid_input",
                f"{forbidden} looks like a review judgment; the model reviewer must not "
                "see human judgments (StreamVibe App. B.3)",
                0,
            )
        try:
            return self._prepare(cand)
        except OSError as exc:
            raise ReviewFailure("invalid_media", f"{type(exc).__name__}: {exc}", 0) from exc

    def review(
        self, candidates: Sequence[Candidate]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Review each candidate; return (REVIEW_DECISION rows, failure records).

        Every candidate ends in exactly one of the two lists (design.md §Conventions "nothing lost"). Cached
        answers are used first; the rest go through the leak filter's retry machinery.
        """
        start = time.monotonic()
        names = {c[0] for c in self.criteria}
        cache = ResponseCache(str(self.cache_dir))
        preps: dict[int, _Prepared] = {}
        results: dict[int, dict[str, Any] | ReviewFailure] = {}
        for slot, cand in enumerate(candidates):
            try:
                preps[slot] = self._check_input(cand)
            except ReviewFailure as fail:
                results[slot] = fail
        hits = _cached(cache, sorted({p.key for p in preps.values()}), names)
        cache_hits = sum(p.key in hits for p in preps.values())
        self.stats["cache_hits"] += cache_hits
        jobs: dict[str, Job] = {}  # one request per distinct key (duplicates share its answer)
        for slot, prep in preps.items():
            if prep.key in hits or prep.key in jobs:
                continue
            try:
                jobs[prep.key] = Job(self.spec, self._request(slot, prep), prep.key)  # type: ignore[arg-type]
            except ReviewFailure as fail:
                results[slot] = fail
        outcomes: dict[int, Outcome] = {}
        backend: ReviewBackend | None = None
        if jobs:
            try:
                outcomes, backend = _run_async(self._ask_all(list(jobs.values()), cache))
            finally:
                cache.flush()  # ResponseCache buffers puts; persist what was answered
            hits.update(_cached(cache, list(jobs), names))
        for slot, prep in preps.items():
            if slot in results:
                continue
            if prep.key in hits:
                results[slot] = self._decision_row(prep, *hits[prep.key])
                continue
            asked = jobs[prep.key].turn.slot  # type: ignore[attr-defined]
            assert backend is not None
            kind, message = backend.last_error.get(asked, ("unexpected", outcomes[asked].error))
            results[slot] = ReviewFailure(kind, message, backend.attempts.get(asked, 0))
            log.warning("gemini review of %s failed: %s after %d attempt(s)", prep.sample_id, kind,
                        results[slot].attempts)  # type: ignore[union-attr]
        decisions: list[dict[str, Any]] = []
        failures: list[dict[str, Any]] = []
        for slot, cand in enumerate(candidates):
            res = results[slot]
            if isinstance(res, ReviewFailure):
                failures.append(self._failure(cand, preps.get(slot), res))
            else:
                decisions.append(res)
        log.info("gemini review of %d candidates in %.1fs: %d cached, %d requests, %d failed",
                 len(candidates), time.monotonic() - start, cache_hits, self.stats["requests"],
                 len(failures))
        return decisions, failures
