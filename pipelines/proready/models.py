"""VLM / LLM calls of the generation path (StreamReady App. C) through the model-client layer.

App. C uses Qwen-2-VL for dense captions and the frame-wise evidence check and Qwen-2 for
summaries and QA. They are reached through either protocol the project speaks — OpenAI-compatible
chat completions (vLLM and SGLang serve Qwen this way) or Gemini ``generateContent`` — by
:mod:`clients`, which owns the SDK clients, retries, limits, the response cache and usage counts.
The config's ``models:`` section (:mod:`clients.config`) has the roles ``vlm`` and ``llm``.

Every request carries its pydantic schema (``Caption``, ``FrameVerdict``…): the answer is asked
as JSON of that shape and validated; an answer that is valid HTTP but not that JSON is retried,
and one still malformed when the retries run out is *malformed model output* — the caller turns
it into a rejection naming the stage and the request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clients import ModelClient, ModelsConfig, Request, parse_models

ROLES = ("vlm", "llm")
MODEL_DEFAULTS = {"max_tokens": 1024}


def model_settings(raw: Any, source: str, repo: Path) -> ModelsConfig:
    """The ``models:`` section of a ProReady config (a relative ``cache_dir``: from the repo)."""
    return parse_models(raw, source, roles=ROLES, defaults=MODEL_DEFAULTS, base_dir=repo)


def ask_json(client: ModelClient, requests: list[Request]) -> list[Any]:
    """The validated answers in request order, or for each request that has none an error string
    (``"malformed model output: …"`` / ``"failed: …"``)."""
    out: list[Any] = []
    for req, o in zip(requests, client.ask_many(requests), strict=True):
        if o.answered:
            out.append(o.parsed)
        elif o.kind == "malformed":
            out.append(f"malformed model output: {client.name} on {req.id}: {o.detail}")
        else:
            out.append(f"failed: {client.name} on {req.id}: {o.error}")
    return out
