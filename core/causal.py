"""Truncation invariance: the test that a released stream does not know the future.

A streaming benchmark promises that what a model is shown at time t depends only on what has
happened by t (StreamVibe §3.1: the policy sees only ⟨V≤t, I≤t, H<t⟩; StreamReady §4: questions
arrive before their evidence). The check that holds any builder to it, whatever its code: cut the
record at t — drop every frame, turn, annotation and gold evidence after t — recompute the
model-facing fields at t from what is left, and compare them with the released ones. Any field
that used information from after t comes out different.

Each benchmark supplies the three pieces — ``truncate(record, t)``, ``view(record, t)`` (the
model-facing fields at t, computed by the same function its build uses) and
``released(record, t)`` (those fields as the release stores them) — and the times to check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Record = dict[str, Any]


def truncation_violations(record: Record, times: Iterable[float], *,
                          truncate: Callable[[Record, float], Record],
                          view: Callable[[Record, float], dict[str, Any]],
                          released: Callable[[Record, float], dict[str, Any]]) -> list[str]:
    """One message per (time, field) where the released value differs from the value computed
    from the record truncated at that time; ``[]`` means the record is causal at ``times``."""
    out = []
    for t in times:
        want, got = released(record, t), view(truncate(record, t), t)
        for key in sorted(set(want) | set(got)):
            if want.get(key) != got.get(key):
                out.append(f"t={t:g} {key}: released {want.get(key)!r}, from the record cut at t "
                           f"{got.get(key)!r}")
    return out
