"""Gemini candidate generator (StreamVibe §3.3: "we use Gemini […] to identify candidate help points
with response windows, preferred times, and reference answers").

Why this is a thin adapter: the request orchestration — bounded retries with jittered exponential
back-off on 429 / 5xx / timeouts / malformed answers, the persistent answer cache, request and
token counts — is the model-client layer's (:mod:`clients`). What is StreamVibe's own is the
request: a 1 FPS frame sequence with ``t=<s>s`` labels, and structured output (the request's
schema :class:`CandidateOut`, sent as ``response_schema``). An answer that does not validate
against it is *malformed* and retried like any other transient fault; a pair whose answers stay
malformed after the retry budget is rejected with that reason (never guessed).

The prompt is a versioned file (``configs/streamvibe/prompts/candidates_v1.txt``, the model's
system instruction); its name and sha256 prefix become ``prompt_version`` on every candidate, and
as part of the model's identity it enters the cache key, so editing the prompt re-asks instead of
reusing stale answers. The model, cache, retries and limits are the config's ``models:`` section
(role ``generator``, :mod:`clients.config`); the API key comes from the environment.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from clients import ClientConfigError, ModelClient, ModelsConfig, Request, parse_models
from core.blobs import resolve
from core.errors import BadInput
from pipelines.streamvibe.candidates import RawCandidate, request_texts
from pipelines.streamvibe.normalize import NormalizedVideo
from pipelines.streamvibe.sources import IntentSpec
from schemas.streamvibe import DYNAMIC, SUBTYPES

ROLE = "generator"
#: the generator's model defaults (a candidate is a long JSON document)
MODEL_DEFAULTS = {"temperature": 0.0, "max_tokens": 8192}


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
class GeminiSettings:
    """The generator's part of configs/streamvibe.yaml: its prompt file and the ``models:``
    section; ``batch_size`` pairs are asked at once (one Beam batch)."""

    prompt: str
    models: ModelsConfig
    batch_size: int = 8


def gemini_settings(cfg: dict[str, Any], source: str | Path, repo: Path) -> GeminiSettings:
    """Read ``prompt`` and ``models`` of a StreamVibe config (relative paths: from the repo); with
    ``generator: gemini`` the ``models.generator`` entry is required."""
    prompt = str(cfg.get("prompt") or "configs/streamvibe/prompts/candidates_v1.txt")
    models = parse_models(cfg.get("models"), str(source), roles=(ROLE,), defaults=MODEL_DEFAULTS,
                          base_dir=repo)
    if cfg.get("generator") == "gemini" and models.spec(ROLE) is None:
        raise ClientConfigError(f"{source}: models.{ROLE}: generator gemini needs a model entry")
    return GeminiSettings(prompt if Path(prompt).is_absolute() else str(repo / prompt), models)


def prompt_version(path: str) -> tuple[str, str]:
    """(version label ``<file stem>@<sha256[:12]>``, prompt text)."""
    text = Path(path).read_text(encoding="utf-8")
    return f"{Path(path).stem}@{hashlib.sha256(text.encode()).hexdigest()[:12]}", text


class GeminiGenerator:
    """``generate_many`` over a batch through :meth:`clients.ModelClient.ask_many`: every pair
    gets a raw candidate or a BadInput with the reason."""

    def __init__(self, specs: dict[str, IntentSpec], seed: int, settings: GeminiSettings) -> None:
        self.specs = specs
        self.seed = seed
        self.prompt_version, system = prompt_version(settings.prompt)
        spec = settings.models.spec(ROLE)
        if spec is None:
            raise ClientConfigError(f"{settings.models.source}: models.{ROLE}: generator gemini needs a "
                                    "model entry")
        spec = replace(spec, system_prompt=system)
        self.name = f"{spec.backend}:{spec.model}"
        self.client: ModelClient = settings.models.client(spec, label="streamvibe candidates")

    def request(self, pair: dict[str, Any], video: NormalizedVideo) -> Request:
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
        parts: list[str | bytes] = ["\n".join(lines)]
        for t, ref in zip(video.frame_times, video.frames, strict=True):
            parts += [f"t={t:g}s", resolve(ref)]
        return Request(pair["id"], tuple(parts), schema=CandidateOut)

    def generate_many(self, items: list[tuple[dict[str, Any], NormalizedVideo]]
                      ) -> list[RawCandidate | BadInput]:
        reqs: list[Request | BadInput] = []
        for pair, video in items:
            try:
                reqs.append(self.request(pair, video))
            except BadInput as err:  # e.g. a template slot missing from the task record
                reqs.append(err)
        asked = [r for r in reqs if isinstance(r, Request)]
        outcomes = iter(self.client.ask_many(asked) if asked else [])
        out: list[RawCandidate | BadInput] = []
        for (pair, _video), req in zip(items, reqs, strict=True):
            if isinstance(req, BadInput):
                out.append(req)
                continue
            o = next(outcomes)
            if o.answered:
                out.append(o.parsed.model_dump())
            else:
                out.append(BadInput(f"{pair['video']} ({self.name} output)", "model_output",
                                    f"no usable answer: {o.error}", item_id=pair["id"]))
        return out

    def close(self) -> None:
        self.client.close()
