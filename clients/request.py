"""What is asked (:class:`Request`) and what came back (:class:`Outcome`).

A request is an ordered sequence of parts — text and images — because the callers interleave
them: a probe sends one image then its prompt, the StreamVibe generator a ``t=<s>s`` label before
every 1 FPS frame, the reviewer a label before each medium. Structured output is part of the
request (``schema``, a pydantic model): Gemini receives it as ``response_schema``, an
OpenAI-compatible server as a ``json_schema`` response format, and the answer is validated
against it. An answer that does not validate — or that ``check`` rejects (say, a verdict that
approves while a criterion is not met) — is *malformed* and retried like any transient fault, so
only usable answers are cached.

The cache key of a request is (model identity, prompt hash, images hash): the prompt hash covers
the text parts, where the images sit among them and the schema; the images hash every image.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError

Part = str | bytes
Check = Callable[[Any], str | None]

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


@lru_cache(maxsize=64)
def schema_fingerprint(schema: type[BaseModel]) -> str:
    """sha256 of the schema's JSON Schema: a changed schema is a changed question."""
    return hashlib.sha256(json.dumps(schema.model_json_schema(), sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Request:
    """One question to one model: ``parts`` in order; ``id`` names it in errors and logs."""

    id: str
    parts: tuple[Part, ...]
    schema: type[BaseModel] | None = None
    check: Check | None = field(default=None, compare=False, repr=False)

    @staticmethod
    def of(id: str, prompt: str, images: Sequence[bytes] = (), schema: type[BaseModel] | None = None,
           check: Check | None = None) -> Request:
        """The common shape: the images, then the prompt."""
        return Request(id, (*images, prompt), schema, check)

    @property
    def images(self) -> tuple[bytes, ...]:
        return tuple(p for p in self.parts if isinstance(p, bytes))

    @property
    def text(self) -> str:
        return "\n".join(p for p in self.parts if isinstance(p, str))

    @cached_property
    def prompt_sha256(self) -> str:
        layout: list[Any] = [p if isinstance(p, str) else {"image": i} for i, p in enumerate(self.parts)]
        spec = {"parts": layout, "schema": schema_fingerprint(self.schema) if self.schema else None}
        return hashlib.sha256(json.dumps(spec, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    @cached_property
    def images_sha256(self) -> str:
        return hashlib.sha256("".join(hashlib.sha256(i).hexdigest() for i in self.images).encode()
                              ).hexdigest()

    def parse(self, raw: str) -> tuple[Any, str | None]:
        """(validated answer, ``None``) or (``None``, why the answer is malformed). Without a
        schema the answer is the text itself."""
        if self.schema is None:
            return raw, None
        m = _FENCE.match(raw)  # OpenAI-compatible servers without constrained decoding fence JSON
        text = m.group(1) if m else raw
        try:
            parsed = self.schema.model_validate(json.loads(text))
        except json.JSONDecodeError as exc:
            return None, f"not JSON ({exc.msg} at char {exc.pos}): {raw[:80]!r}"
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(x) for x in first["loc"])
            return None, f"JSON does not match {self.schema.__name__}: {loc}: {first['msg']}"
        problem = self.check(parsed) if self.check is not None else None
        return (None, problem) if problem else (parsed, None)


@dataclass(frozen=True)
class Outcome:
    """The result of one request: ``answered`` (``raw`` text, ``parsed`` answer) or ``failed``
    (``kind`` of the last fault, its ``detail``, the ``attempts`` made; ``error`` sums it up).
    ``created`` is when the answer was first stored, so a cached rerun reproduces it exactly."""

    status: str
    raw: str = ""
    parsed: Any = None
    cached: bool = False
    created: float = 0.0
    kind: str = ""
    detail: str = ""
    attempts: int = 0
    error: str = ""

    @property
    def answered(self) -> bool:
        return self.status == "answered"

    @staticmethod
    def failed(kind: str, detail: str, attempts: int, gave_up: bool) -> Outcome:
        what = f"HTTP {kind}" if kind.isdigit() else kind
        error = (f"gave up after {attempts} attempts ({what})" if gave_up else what) + (
            f": {detail}" if detail else "")
        return Outcome("failed", kind=kind, detail=detail, attempts=attempts, error=error[:500])
