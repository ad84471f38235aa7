"""Truncation invariance of a released StreamVibe sample (StreamVibe §3.1, App. B.2).

:func:`core.causal.truncation_violations` with StreamVibe's pieces: the model-facing fields are
``steps[t]`` of the trajectory sample and ``t`` / ``frames_visible`` / ``active_intents`` /
``history`` of each pointwise row; they are recomputed with the build's own functions
(:mod:`pipelines.streamvibe.serialize`) from the record truncated at t. Used by the tests and by
the release's quality suite, so every release proves it for every step and row.

The training split is held to the same check: the stream of every SFT example and of every RL
rollout window, and the rollout's Gold History, equal what the record cut at their time gives;
and the SFT label of step t — a target, not input, but also a function of time — equals the label
computed from the record cut at t *with* the responses due at t (the one thing the label at t may
know that the input at t may not).
"""

from __future__ import annotations

from typing import Any

from core.causal import truncation_violations
from pipelines.streamvibe.serialize import EPS, causal_step, decision_time, pointwise_view
from pipelines.streamvibe.training import due_step, step_label, window_view

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


STEP_KEYS = ("t", "frame", "new_turns", "active_intents")  # the model input of a step
LABEL_KEYS = ("gold_decision", "gold_responses")  # an SFT step's label


def stream_violations(rec: dict[str, Any]) -> list[str]:
    """Every step of ``rec["steps"]`` against the step recomputed from ``rec`` cut at its time
    (the model input of the step: an SFT step's label is checked by :func:`label_violations`)."""
    by_t = {s["t"]: {k: v for k, v in s.items() if k not in LABEL_KEYS} for s in rec["steps"]}
    return truncation_violations(rec, list(by_t), truncate=truncate, view=causal_step,
                                 released=lambda r, t: by_t[t])


def truncate_through(rec: dict[str, Any], t: float) -> dict[str, Any]:
    """:func:`truncate` at t, but keeping the evidence whose response is due *at* t as well."""
    out = truncate(rec, t)
    out["gold_evidence"] = [p for p in rec["gold_evidence"] if due_step(p, rec["frame_times"]) <= t + EPS]
    return out


def label_violations(rec: dict[str, Any]) -> list[str]:
    """Every SFT label of ``rec["steps"]`` against the label computed from ``rec`` cut through
    its step."""
    by_t = {s["t"]: {k: s[k] for k in LABEL_KEYS} for s in rec["steps"]}
    return truncation_violations(rec, list(by_t), truncate=truncate_through, view=step_label,
                                 released=lambda r, t: by_t[t])


def rollout_source(row: dict[str, Any]) -> dict[str, Any]:
    """The sample an RL seed row was cut from, as far as its window needs it: the row's gold
    annotation on the stream's timeline (1 FPS from 0 s up to the window's end)."""
    times = [float(k) for k in range(int(row["window_end"]) + 1)]
    return dict(row, frame_times=times, frame_pts=times, frames=[None] * len(times), steps=[])


def rollout_violations(row: dict[str, Any]) -> list[str]:
    """Every step of an RL seed window, and its Gold History, against what the source sample cut
    at the step (at the window's start, for the history) gives."""
    rec = rollout_source(row)
    start, end = row["window_start"], row["window_end"]
    by_t = {s["t"]: s for s in row["steps"]}
    out = truncation_violations(
        rec, list(by_t), truncate=truncate, released=lambda r, t: by_t[t],
        view=lambda cut, t: next(s for s in window_view(cut, start, t)["steps"] if s["t"] == t))
    if [s["t"] for s in row["steps"]] != [t for t in rec["frame_times"] if start - EPS <= t <= end + EPS]:
        out.append(f"steps at {[s['t'] for s in row['steps']]}, the window is [{start:g}, {end:g}]")
    return out + truncation_violations(rec, [start], truncate=truncate,
                                       view=lambda cut, t: {"history": window_view(cut, t, t)["history"]},
                                       released=lambda r, t: {"history": row["history"]})


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
