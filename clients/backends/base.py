"""What both wire protocols share: the answer a backend returns, the protocol a backend keeps,
and the scrubbing of the API key from server messages. A module of its own so that the two
backends and the package that chooses between them never import each other in a circle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from clients.request import Request
from clients.settings import ModelSpec


@dataclass(frozen=True)
class Answer:
    raw: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Backend(Protocol):
    async def send(self, spec: ModelSpec, request: Request) -> Answer: ...

    async def aclose(self) -> None: ...


def scrub(text: str, secret: str) -> str:
    """``text`` without ``secret`` (servers echo request data in error messages), at most 300
    characters."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "***")
    return text[:300]
