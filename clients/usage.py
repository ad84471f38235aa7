"""Usage accounting: what a client sent and what it cost.

Why counted per attempt: a provider bills every attempt, and a run that retried half its requests
is a run to look at — so ``requests`` counts attempts sent, ``retries`` the attempts that followed
a fault, ``faults`` the failed attempts by cause (``429``, ``timeout``, ``malformed``…),
``failures`` the requests that ended without an answer, ``cache_hits`` the requests answered
from the cache (nothing sent), and the token counts what the server reported.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

COUNTERS = ("requests", "retries", "cache_hits", "failures", "prompt_tokens", "completion_tokens")


@dataclass
class Usage:
    requests: int = 0
    retries: int = 0
    cache_hits: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def count(self, **counters: int) -> None:
        with self._lock:
            for name, n in counters.items():
                setattr(self, name, getattr(self, name) + n)

    def fault(self, kind: str) -> None:
        with self._lock:
            self.faults[kind] = self.faults.get(kind, 0) + 1

    def as_dict(self) -> dict[str, int]:
        """The counters, with the faults as ``retry_<cause>`` (how the usage log stores them)."""
        out = {name: getattr(self, name) for name in COUNTERS}
        out.update({f"retry_{k}": v for k, v in sorted(self.faults.items())})
        return out

    def copy(self) -> Usage:
        with self._lock:
            return Usage(**{n: getattr(self, n) for n in COUNTERS}, faults=dict(self.faults))

    def __add__(self, other: Usage) -> Usage:
        faults = {k: self.faults.get(k, 0) + other.faults.get(k, 0) for k in {*self.faults, *other.faults}}
        return Usage(**{n: getattr(self, n) + getattr(other, n) for n in COUNTERS}, faults=faults)

    def __sub__(self, other: Usage) -> Usage:
        """What was counted since ``other`` (a :meth:`copy` taken before a batch)."""
        faults = {k: v - other.faults.get(k, 0) for k, v in self.faults.items()}
        return Usage(**{n: getattr(self, n) - getattr(other, n) for n in COUNTERS},
                     faults={k: v for k, v in faults.items() if v})

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
