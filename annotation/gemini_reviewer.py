"""The Gemini reviewer: an independent model rater on the frozen candidates (seed 001 App. B.3).

App. B.3 asks Gemini to "independently assign the same binary review decision to the same frozen
candidates, using the rubric without access to human judgments or post-review corrections", so
its Cohen's κ against each human can be reported. What follows from that:

* **Same rubric, same candidates, no human judgments.** The prompt holds the rubric criteria and
  the candidate content only; content carrying review fields (``decision``, ``reviews``,
  ``approvals`` …) is refused (a failure record), so a caller cannot leak human judgments in.
* **Its own rater, never an approver.** Output rows are REVIEW_DECISION rows with
  ``reviewer="gemini:<model>"`` and ``rater_kind="model"``; the approval rule counts human
  panel members only (SPEC §6), and :mod:`annotation.agreement` treats the model separately.
* **Structured output.** A pydantic ``response_schema`` (decision, per-criterion verdicts,
  rationale) read back from ``response.parsed``; an answer that does not parse, names unknown
  criteria, or approves while marking a criterion ``not_met`` (SPEC §6: approve only when every
  applicable criterion holds) is treated as malformed and retried.
* **Failures are records, not guesses.** After bounded retries (exponential back-off with
  jitter on 429 / 5xx / timeouts / malformed JSON) a candidate yields a failure dict, never a
  default decision; it simply has no model decision in the audit.
* **Persistent cache** keyed by ``sha256(model, prompt hash, media hash)``: re-running a report
  costs no API calls and yields identical rows. Only successful answers are cached, so failed
  candidates are retried on the next run.
* **Secrets.** The API key comes from the environment (``GEMINI_API_KEY``, else
  ``GOOGLE_API_KEY``); it is handed to the client and kept in memory only to scrub error
  messages — never written to the cache, logged, shown in ``repr`` or left in a failure record.

Media (documented choice). Images are sent inline (``Part.from_bytes``). Videos are *not*
uploaded through the Files API: they are decoded with OpenCV and sampled at 1 FPS (the first
decoded frame at or after each whole second), each frame JPEG-encoded and sent inline, preceded by
a ``t=<s>s`` text label. Why: StreamVibe serialises streams causally at 1 FPS (seed 001 §3,
App. B), so the reviewer sees exactly what the benchmark's models see; inline frames need no
upload state, are hashable, and work against any ``base_url``. Frames are read sequentially
rather than by seeking, because container headers lie (opencv-doc ``tree.avi`` claims 444 frames,
68 decode). Requests whose inline payload would exceed ``max_inline_bytes`` (default 20 MB, the
Gemini inline request limit) become failure records.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel

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


class _Malformed(Exception):
    pass


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(content: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the candidate content that was reviewed."""
    return hashlib.sha256(canonical_json(content).encode()).hexdigest()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _transient_exceptions() -> tuple[type[BaseException], ...]:
    """Timeout/connection errors of whichever httpx flavour the client uses (httpx or httpx2)."""
    out: list[type[BaseException]] = []
    for name in ("httpx", "httpx2"):
        try:
            mod = __import__(name)
        except ImportError:
            continue
        out += [mod.TimeoutException, mod.TransportError]
    return tuple(out)


_TRANSIENT = _transient_exceptions()

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
    """Decode a video and keep the first frame at or after each ``k / fps`` seconds, as JPEG.

    Returns ``(timestamp_seconds, jpeg_bytes)`` pairs. Raises ``ValueError`` if nothing decodes.
    """
    import cv2

    with tempfile.NamedTemporaryFile(suffix=_video_suffix(data)) as tmp:
        tmp.write(data)
        tmp.flush()
        cap = cv2.VideoCapture(tmp.name)
        try:
            src_fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
            if not cap.isOpened() or not src_fps > 0:
                raise ValueError("video could not be opened or has no frame rate")
            frames: list[tuple[float, bytes]] = []
            next_t, i = 0.0, 0
            while True:
                ok, frame = cap.read()
                if not ok:
                    break
                t = i / src_fps
                if t + 1e-9 >= next_t:
                    params = [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]
                    ok_enc, buf = cv2.imencode(".jpg", frame, params)
                    if not ok_enc:
                        raise ValueError(f"frame {i} could not be JPEG-encoded")
                    frames.append((round(len(frames) / fps, 3), buf.tobytes()))
                    next_t = len(frames) / fps
                i += 1
        finally:
            cap.release()
    if not frames:
        raise ValueError("no frame of the video decodes")
    return frames


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
    ``initial_delay``/``max_delay`` bound the back-off: attempt ``k`` waits
    ``min(max_delay, initial_delay * 2**k)`` scaled by a uniform jitter in [0.5, 1].
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
        sleep: Callable[[float], None] = time.sleep,
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
        self.initial_delay = initial_delay
        self.max_delay = max_delay
        self.max_inline_bytes = max_inline_bytes
        self.temperature = temperature
        self._sleep = sleep
        self._rng = random.Random()
        self._client: Any = None
        self._secret: str | None = None  # only to scrub messages; never written anywhere
        self.requests_made = 0

    @property
    def reviewer_id(self) -> str:
        return f"gemini:{self.model}"

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
        key = _sha256(f"{self.model}\x1f{prompt_sha}\x1f{media_sha}".encode())
        return _Prepared(sample_id, int(version), task_type, content, media_bytes, prompt_sha,
                         media_sha, key)

    def _parts(self, prep: _Prepared) -> list[Any]:
        from google.genai import types

        parts = [types.Part.from_text(text=self._candidate_text(prep.sample_id, prep.task_type,
                                                                prep.content))]
        total = 0
        for i, data in enumerate(prep.media, start=1):
            mime = image_mime(data)
            if mime is not None:
                parts.append(types.Part.from_text(text=f"Media {i}: image."))
                parts.append(types.Part.from_bytes(data=data, mime_type=mime))
                total += len(data)
                continue
            try:
                frames = sample_video_frames(data)
            except ValueError as exc:
                raise ReviewFailure("invalid_media", f"media {i}: {exc}", 0) from exc
            parts.append(types.Part.from_text(
                text=f"Media {i}: video, {len(frames)} frames sampled at {VIDEO_FPS:g} FPS."))
            for t, jpeg in frames:
                parts.append(types.Part.from_text(text=f"t={t:g}s"))
                parts.append(types.Part.from_bytes(data=jpeg, mime_type="image/jpeg"))
                total += len(jpeg)
        # base64 inflates inline data by 4/3.
        if total * 4 // 3 > self.max_inline_bytes:
            raise ReviewFailure(
                "media_too_large",
                f"inline media would be {total * 4 // 3} bytes > {self.max_inline_bytes}",
                0,
            )
        return parts

    # -- cache ------------------------------------------------------------------------------
    def _cache_path(self, key: str) -> Path:
        return self.cache_dir / key[:2] / f"{key}.json"

    def _cache_get(self, key: str) -> dict[str, Any] | None:
        path = self._cache_path(key)
        try:
            entry = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError) as exc:
            log.warning("ignoring unreadable cache entry %s: %s", path, exc)
            return None
        if entry.get("key") != key:
            return None
        return entry

    def _cache_put(self, prep: _Prepared, verdict: ReviewVerdict) -> dict[str, Any]:
        entry = {
            "key": prep.key,
            "model": self.model,
            "prompt_sha256": prep.prompt_sha256,
            "media_sha256": prep.media_sha256,
            "verdict": verdict.model_dump(mode="json"),
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        path = self._cache_path(prep.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump(entry, fh, sort_keys=True, indent=1)
        os.replace(tmp, path)  # atomic: a crash never leaves a half-written entry
        return entry

    # -- API ----------------------------------------------------------------------------------
    def _get_client(self) -> Any:
        if self._client is None:
            from google import genai
            from google.genai import types

            key = next((os.environ[e] for e in API_KEY_ENVS if os.environ.get(e)), None)
            if not key:
                raise RuntimeError(
                    f"no Gemini API key: set one of {', '.join(API_KEY_ENVS)} in the environment"
                )
            self._secret = key
            # retry_options=None: the client must not retry on its own; we own back-off.
            opts = types.HttpOptions(base_url=self.base_url, timeout=int(self.timeout_s * 1000),
                                     retry_options=None)
            self._client = genai.Client(api_key=key, http_options=opts)
        return self._client

    def _scrub(self, message: str) -> str:
        if self._secret:
            message = message.replace(self._secret, "***")
        return message[:500]

    def _validate(self, verdict: ReviewVerdict) -> None:
        names = [c.criterion for c in verdict.criteria]
        expected = {c[0] for c in self.criteria}
        if len(set(names)) != len(names) or set(names) != expected:
            raise _Malformed(
                f"criteria {sorted(names)} do not match the rubric's {sorted(expected)}"
            )
        if verdict.decision == "approve" and any(c.verdict == "not_met" for c in verdict.criteria):
            raise _Malformed("decision 'approve' with a criterion marked not_met")

    def _call(self, prep: _Prepared) -> ReviewVerdict:
        from google.genai import errors, types

        parts = self._parts(prep)
        client = self._get_client()
        config = types.GenerateContentConfig(
            system_instruction=self.system_instruction(),
            response_mime_type="application/json",
            response_schema=ReviewVerdict,
            temperature=self.temperature,
        )
        contents = [types.Content(role="user", parts=parts)]
        attempt = 0
        while True:
            attempt += 1
            retryable = True
            try:
                self.requests_made += 1
                resp = client.models.generate_content(model=self.model, contents=contents,
                                                      config=config)
                parsed = resp.parsed
                if not isinstance(parsed, ReviewVerdict):
                    finish = None
                    if resp.candidates:
                        finish = resp.candidates[0].finish_reason
                    if not resp.candidates or (finish is not None and str(finish).endswith(
                            ("SAFETY", "BLOCKLIST", "PROHIBITED_CONTENT", "RECITATION"))):
                        raise ReviewFailure("blocked", f"no answer (finish_reason={finish})",
                                            attempt)
                    raise _Malformed("response text is not a valid ReviewVerdict JSON")
                self._validate(parsed)
                return parsed
            except ReviewFailure:
                raise
            except errors.APIError as exc:
                code = int(exc.code or 0)
                kind = f"http_{code}"
                retryable = code in (408, 429) or code >= 500
                message = f"{exc.code} {exc.status}: {exc.message}"
            except _TRANSIENT as exc:
                kind = "timeout" if "Timeout" in type(exc).__name__ else "transport"
                message = f"{type(exc).__name__}: {exc}"
            except (_Malformed, ValueError) as exc:  # bad envelope JSON, schema mismatch
                kind = "malformed"
                message = f"{type(exc).__name__}: {exc}"
            if not retryable or attempt > self.max_retries:
                raise ReviewFailure(kind, self._scrub(message), attempt)
            delay = min(self.max_delay, self.initial_delay * 2 ** (attempt - 1))
            delay *= self._rng.uniform(0.5, 1.0)
            log.info("gemini %s on %s (attempt %d), retrying in %.2fs", kind, prep.sample_id,
                     attempt, delay)
            self._sleep(delay)

    def _decision_row(self, prep: _Prepared, entry: dict[str, Any]) -> dict[str, Any]:
        verdict = ReviewVerdict.model_validate(entry["verdict"])
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
            "created_at": entry["created_at"],
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

    def review(
        self, candidates: Sequence[Candidate]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Review each candidate; return (REVIEW_DECISION rows, failure records).

        Every candidate ends in exactly one of the two lists (SPEC §3 "nothing lost").
        """
        decisions: list[dict[str, Any]] = []
        failures: list[dict[str, Any]] = []
        start = time.monotonic()
        total = len(candidates)
        cache_hits = 0
        for n, cand in enumerate(candidates, start=1):
            prep: _Prepared | None = None
            try:
                if len(cand) != 5:
                    raise ReviewFailure("invalid_input", "candidate is not a 5-tuple", 0)
                forbidden = _find_forbidden(cand[3])
                if forbidden:
                    raise ReviewFailure(
                        "invalid_input",
                        f"{forbidden} looks like a review judgment; the model reviewer must not "
                        "see human judgments (seed 001 App. B.3)",
                        0,
                    )
                try:
                    prep = self._prepare(cand)
                except OSError as exc:
                    raise ReviewFailure("invalid_media", f"{type(exc).__name__}: {exc}", 0) from exc
                entry = self._cache_get(prep.key)
                if entry is not None:
                    cache_hits += 1
                else:
                    verdict = self._call(prep)
                    entry = self._cache_put(prep, verdict)
                decisions.append(self._decision_row(prep, entry))
            except ReviewFailure as fail:
                failures.append(self._failure(cand, prep, fail))
            if n % 10 == 0 or n == total:
                elapsed = time.monotonic() - start
                rate = n / elapsed if elapsed > 0 else float("inf")
                eta = (total - n) / rate if rate > 0 else 0.0
                log.info("gemini review %d/%d (%.1f/s, ETA %.0fs; %d cached, %d failed)", n, total,
                         rate, eta, cache_hits, len(failures))
        return decisions, failures
