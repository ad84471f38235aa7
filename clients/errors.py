"""The three ways a model call can go wrong, as the client layer tells them apart.

Why three: a bad configuration or a missing secret is the operator's to fix and must stop the
run (:class:`ClientConfigError`); a transient fault — 429, 5xx, a timeout, a dropped connection, an
answer that is not what was asked for — is worth another attempt (:class:`RetryableError`); a
request the server refuses for good (400, 401, 403, 404…) is not (:class:`FatalError`). The
backends map every SDK exception to one of the last two, so the retry policy is written once.
Messages never carry secrets: the backends scrub their API key out of server messages.
"""

from __future__ import annotations


class ClientConfigError(ValueError):
    """A models section, a model entry or a secret reference is unusable; the message names the
    file and the key."""


class RetryableError(Exception):
    """A transient failure: ``kind`` is the HTTP status (``"429"``, ``"503"``) or one of
    ``timeout``, ``connection``, ``malformed``; ``retry_after`` is the server's hint in seconds."""

    def __init__(self, kind: str, detail: str = "", retry_after: float | None = None) -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail
        self.retry_after = retry_after


class FatalError(Exception):
    """A failure retrying cannot fix; ``kind`` is the HTTP status (``"400"``) or ``unexpected``."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail
