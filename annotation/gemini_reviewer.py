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
* **Shared request machinery.** The model call is the project's model-client layer
  (:mod:`clients`, as for the leak filter and both generators): real google-genai client,
  retry policy, response cache (keyed by model identity — system instruction included — prompt
  and media), usage counts. The reviewer only builds the multi-part request, with the verdict
  schema and a rubric check; an answer that does not validate is retried and never cached, so
  failed candidates are asked again on the next run, and a rerun of a report costs no API calls
  and yields identical rows. Candidates are asked one at a time, in order (``concurrency`` 1).
* **Secrets.** The API key comes from the environment (``GEMINI_API_KEY``, else
  ``GOOGLE_API_KEY``) when a request is due; the client layer scrubs it from server messages, so
  it is never written to the cache, logged, shown in ``repr`` or left in a failure record.

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

import logging
import os
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel

from clients import Limits, ModelClient, ModelSpec, Request, RetryPolicy, image_mime
from core.files import canonical_json, content_hash
from schemas.review import DECISIONS, REVIEW_DECISION

log = logging.getLogger(__name__)

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




# ----------------------------------------------------------------------------- media


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


def check_verdict(verdict: ReviewVerdict, criteria: set[str]) -> str | None:
    """Why a schema-valid verdict is still malformed (unknown or missing criteria, an approval
    with a criterion not met), or ``None``."""
    names = [c.criterion for c in verdict.criteria]
    if len(set(names)) != len(names) or set(names) != criteria:
        return f"criteria {sorted(names)} do not match the rubric's {sorted(criteria)}"
    if verdict.decision == "approve" and any(c.verdict == "not_met" for c in verdict.criteria):
        return "decision 'approve' with a criterion marked not_met"
    return None


#: failure kinds of the decision log: HTTP statuses as ``http_<code>``, transport faults as such
def _failure_kind(kind: str) -> str:
    return f"http_{kind}" if kind.isdigit() else {"connection": "transport"}.get(kind, kind)


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
    ``initial_delay``/``max_delay`` bound the back-off (:class:`clients.RetryPolicy`): retry ``k``
    waits ``min(max_delay, initial_delay * 2**(k-1))`` scaled into [0.5, 1] by jitter.
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
        self.benchmark = benchmark
        self.review_round = review_round
        self.max_inline_bytes = max_inline_bytes
        # no output cap (max_tokens None); the key env is read only when a request is due
        spec = ModelSpec("gemini", model, name=self.reviewer_id, base_url=base_url,
                         api_key_env=API_KEY_ENVS, temperature=temperature,
                         system_prompt=self.system_instruction())
        self.client = ModelClient(
            spec, cache_dir=str(cache_dir), label="gemini review",
            retry=RetryPolicy(max_attempts=max_retries + 1, base_delay_s=initial_delay,
                              max_delay_s=max_delay),
            limits=Limits(concurrency=1, timeout_s=timeout_s))

    @property
    def reviewer_id(self) -> str:
        return f"gemini:{self.model}"

    @property
    def requests_made(self) -> int:
        return self.client.usage.requests

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

    def _request(self, cand: Candidate) -> Request:
        """The candidate as the model sees it: its text, then each medium after a label (an
        image inline; a video as its 1 FPS frames, each after ``t=<s>s``)."""
        if len(cand) != 5:
            raise ReviewFailure("invalid_input", "candidate is not a 5-tuple", 0)
        sample_id, _version, task_type, content, media = cand
        forbidden = _find_forbidden(content)
        if forbidden:
            raise ReviewFailure(
                "invalid_input",
                f"{forbidden} looks like a review judgment; the model reviewer must not "
                "see human judgments (StreamVibe App. B.3)",
                0,
            )
        parts: list[str | bytes] = [self._candidate_text(sample_id, task_type, content)]
        total = 0
        for i, item in enumerate(media, start=1):
            try:
                data = _load_media(item)
            except OSError as exc:
                raise ReviewFailure("invalid_media", f"{type(exc).__name__}: {exc}", 0) from exc
            if image_mime(data) is not None:
                parts += [f"Media {i}: image.", data]
                total += len(data)
                continue
            try:
                frames = sample_video_frames(data)
            except ValueError as exc:
                raise ReviewFailure("invalid_media", f"media {i}: {exc}", 0) from exc
            parts.append(f"Media {i}: video, {len(frames)} frames sampled at {VIDEO_FPS:g} FPS.")
            for t, jpeg in frames:
                parts += [f"t={t:g}s", jpeg]
                total += len(jpeg)
        # base64 inflates inline data by 4/3.
        if total * 4 // 3 > self.max_inline_bytes:
            raise ReviewFailure(
                "media_too_large",
                f"inline media would be {total * 4 // 3} bytes > {self.max_inline_bytes}",
                0,
            )
        names = {c[0] for c in self.criteria}
        return Request(sample_id, tuple(parts), schema=ReviewVerdict,
                       check=lambda verdict: check_verdict(verdict, names))

    # -- records ------------------------------------------------------------------------------
    def _decision_row(self, cand: Candidate, verdict: ReviewVerdict, created: float) -> dict:
        sample_id, version, task_type, content, _ = cand
        met = {c.criterion for c in verdict.criteria if c.verdict == "met"}
        row = {
            "benchmark": self.benchmark,
            "review_round": self.review_round,
            "sample_id": sample_id,
            "version": int(version),
            "content_hash": content_hash(content),
            "task_type": task_type,
            "reviewer": self.reviewer_id,
            "rater_kind": "model",
            "decision": verdict.decision,
            "criteria": [name for name, _ in self.criteria if name in met],
            "comment": verdict.rationale,
            "lead_time": 0.0,
            # when the answer was first cached: identical on every rerun
            "created_at": datetime.fromtimestamp(created, UTC).isoformat(timespec="seconds"),
            "source_task_id": -1,
            "source_annotation_id": -1,
        }
        REVIEW_DECISION.validate(row)
        return row

    def _failure(self, cand: Candidate, request: Request | None, fail: ReviewFailure) -> dict:
        return {
            "sample_id": cand[0],
            "version": int(cand[1]),
            "task_type": cand[2],
            "reviewer": self.reviewer_id,
            "rater_kind": "model",
            "model": self.model,
            "error_kind": fail.kind,
            "message": fail.message[:500],
            "attempts": fail.attempts,
            "prompt_sha256": request.prompt_sha256 if request else "",
            "media_sha256": request.images_sha256 if request else "",
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }

    # -- API ----------------------------------------------------------------------------------
    def review(
        self, candidates: Sequence[Candidate]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Review each candidate; return (REVIEW_DECISION rows, failure records).

        Every candidate ends in exactly one of the two lists (design.md §Conventions "nothing
        lost"). Cached answers are used first; the rest are asked through :mod:`clients`.
        """
        start = time.monotonic()
        requests: dict[int, Request] = {}
        results: dict[int, dict[str, Any] | ReviewFailure] = {}
        for slot, cand in enumerate(candidates):
            try:
                requests[slot] = self._request(cand)
            except ReviewFailure as fail:
                results[slot] = fail
        slots = sorted(requests)
        outcomes = self.client.ask_many([requests[s] for s in slots]) if slots else []
        for slot, out in zip(slots, outcomes, strict=True):
            if out.answered:
                results[slot] = self._decision_row(candidates[slot], out.parsed, out.created)
            else:
                results[slot] = ReviewFailure(_failure_kind(out.kind), out.detail, out.attempts)
                log.warning("gemini review of %s failed: %s after %d attempt(s)", candidates[slot][0],
                            out.kind, out.attempts)
        decisions: list[dict[str, Any]] = []
        failures: list[dict[str, Any]] = []
        for slot, cand in enumerate(candidates):
            res = results[slot]
            if isinstance(res, ReviewFailure):
                failures.append(self._failure(cand, requests.get(slot), res))
            else:
                decisions.append(res)
        cached = sum(o.cached for o in outcomes)
        log.info("gemini review of %d candidates in %.1fs: %d cached, %d requests, %d failed",
                 len(candidates), time.monotonic() - start, cached, self.requests_made, len(failures))
        return decisions, failures
