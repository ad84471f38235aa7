"""Truncation invariance of a released StreamVibe sample (StreamVibe §3.1, App. B.2).

:func:`core.causal.truncation_violations` with StreamVibe's pieces: the model-facing fields are
``steps[t]`` of the trajectory sample and ``t`` / ``frames_visible`` / ``active_intents`` /
``history`` of each pointwise row; they are recomputed with the build's own functions
(:mod:`pipelines.streamvibe.serialize`) from the record truncated at t. Used by the tests and by
the release's quality suite, so every release proves it for every step and row.
"""

from __future__ import annotations

from typing import Any

from core.causal import truncation_violations
from pipelines.streamvibe.serialize import EPS, causal_step, decision_time, pointwise_view

STREAM_KEYS = ("frames", "frame_times", "frame_pts")


def truncate(rec: dict[str, Any], t: float) -> dict[str, Any]:
    """The sample as known at t: frames sampled after t, turns, intents, transitions and negative
    probes after t are gone; an intent closed after t is still open; evidence keeps only the
    points whose response was due before t (H<t may hold nothing later); gold fields without a
    time (the task description) are blanked and the video ends at t."""
    out = dict(rec)
    keep = [k for k, ft in enumerate(rec["frame_times"]) if ft <= t + EPS]
    for key in STREAM_KEYS:
        if key in rec:
            out[key] = [rec[key][k] for k in keep]
    out["steps"] = [s for s in rec["steps"] if s["t"] <= t + EPS]
    out["duration_s"] = min(rec["duration_s"], t)
    out["gold_user_turns"] = [u for u in rec["gold_user_turns"] if u["t"] <= t + EPS]
    out["gold_transitions"] = [x for x in rec["gold_transitions"] if x["t"] <= t + EPS]
    out["gold_intents"] = [dict(i, closed_at=i["closed_at"] if i["closed_at"] <= t + EPS else -1.0)
                           for i in rec["gold_intents"] if i["available_at"] <= t + EPS]
    out["gold_evidence"] = [p for p in rec["gold_evidence"] if decision_time(p) < t - EPS]
    out["gold_negative_probes"] = [n for n in rec["gold_negative_probes"] if n["t"] < t - EPS]
    out["gold_task"] = ""
    out["gold_initial_instruction"] = (out["gold_user_turns"][0]["text"] if out["gold_user_turns"]
                                       else "")
    return out


def stream_violations(rec: dict[str, Any]) -> list[str]:
    """Every step of ``rec["steps"]`` against the step recomputed from ``rec`` cut at its time."""
    by_t = {s["t"]: s for s in rec["steps"]}
    return truncation_violations(rec, list(by_t), truncate=truncate, view=causal_step,
                                 released=lambda r, t: by_t[t])


POINTWISE_INPUT = ("t", "frames_visible", "active_intents", "history")


def pointwise_violations(rec: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """Every pointwise row of sample ``rec`` against its model input recomputed from ``rec`` cut
    at the row's time."""
    out = []
    for row in rows:
        given = {k: row[k] for k in POINTWISE_INPUT}
        out += truncation_violations(rec, [row["t"]], truncate=truncate, view=pointwise_view,
                                     released=lambda _r, _t, v=given: v)
    return out
