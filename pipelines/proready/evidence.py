"""Answer evidence windows [t_s, t_e] and the future-dependence check (StreamReady §4.2, App. C).

App. C: "We extract coarse candidate evidence spans using multimodal cues from native
annotations … Within this restricted window, a frame-wise VLM check identifies the earliest frame
where the answer becomes inferable and the latest frame where the supporting cue remains valid.
We refine these boundaries using dwell-based smoothing and task-specific rules (e.g., step
transitions for SSR, clue sufficiency for CRR, count completion for REC, goal realization for GSD,
causal effect visibility for CTD)."

* :func:`dwell_smooth` — a verdict must hold for ``dwell`` consecutive 1 FPS frames to count, and
  a dip shorter than ``dwell`` inside a run is bridged: single-frame VLM flickers neither open nor
  split a window.
* :func:`refine_window` — t_s = first smoothed "answer inferable" frame; t_e = last frame of the
  smoothed "cue valid" run that contains t_s; then :data:`TASK_RULES`.
* :data:`TASK_RULES` — what the native anchor means per task. SSR: the next step cannot be known
  before its transition (t_s ≥ step onset). REC: the count is complete only once the final
  occurrence starts (t_s ≥ its onset). GSD: the goal is realized only within the goal segment
  (t_s ≥ its start). CTD: the effect must be visible (t_s ≥ effect onset, t_e ≤ effect end).
  CRR: the clue is sufficient whenever the VLM says so — no clamp on t_s beyond the search span,
  which is how a clue that shows up before the annotated span is still found.
* :func:`validate_item` — the benchmark's invariants: asked strictly before t_s (future-dependent),
  0 ≤ t_s ≤ t_e ≤ duration, follow-ups asked in order and after the evidence of the turn they
  reference appears. A violation is bad input naming the item's source and field.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import BadInput


@dataclass(frozen=True)
class TaskRule:
    """How a task's native anchor bounds the refined window (App. C task-specific rules)."""

    name: str
    clamp_start: bool  # t_s may not precede the coarse (native) start
    clamp_end: bool  # t_e may not exceed the coarse (native) end


TASK_RULES: dict[str, TaskRule] = {
    "ssr": TaskRule("step transition", clamp_start=True, clamp_end=False),
    "rec": TaskRule("count completion", clamp_start=True, clamp_end=False),
    "crr": TaskRule("clue sufficiency", clamp_start=False, clamp_end=False),
    "gsd": TaskRule("goal realization", clamp_start=True, clamp_end=False),
    "ctd": TaskRule("effect visibility", clamp_start=True, clamp_end=True),
}


def dwell_smooth(flags: Sequence[bool], dwell: int) -> list[bool]:
    """Bridge False gaps shorter than ``dwell`` between True runs, then drop True runs shorter
    than ``dwell`` (morphological closing then opening on a 1-D boolean series)."""
    out = [bool(f) for f in flags]
    if dwell <= 1 or not out:
        return out
    n = len(out)
    trues = [i for i, f in enumerate(out) if f]
    for a, b in zip(trues, trues[1:], strict=False):
        if 1 < b - a <= dwell:  # gap of b - a - 1 < dwell frames
            for k in range(a + 1, b):
                out[k] = True
    i = 0
    while i < n:
        if not out[i]:
            i += 1
            continue
        j = i
        while j < n and out[j]:
            j += 1
        if j - i < dwell:
            for k in range(i, j):
                out[k] = False
        i = j
    return out


def refine_window(
    times: Sequence[float],
    inferable: Sequence[bool],
    cue_valid: Sequence[bool],
    task: str,
    coarse: tuple[float, float],
    dwell: int,
) -> tuple[float, float] | None:
    """(t_s, t_e) from per-frame verdicts at ``times`` (ascending), or None if never inferable."""
    if not (len(times) == len(inferable) == len(cue_valid)):
        raise ValueError("times, inferable and cue_valid must have the same length")
    inf = dwell_smooth(inferable, dwell)
    cue = dwell_smooth(cue_valid, dwell)
    rule = TASK_RULES[task]
    start_idx = None
    for i, t in enumerate(times):
        if inf[i] and (not rule.clamp_start or t >= coarse[0] - 1e-9):
            start_idx = i
            break
    if start_idx is None:
        return None
    t_s = float(times[start_idx])
    end_idx = start_idx
    if cue[start_idx]:
        while end_idx + 1 < len(times) and cue[end_idx + 1]:
            end_idx += 1
    else:  # cue flagged gone at onset: the inferable run itself bounds the window
        while end_idx + 1 < len(times) and inf[end_idx + 1]:
            end_idx += 1
    t_e = float(times[end_idx])
    if rule.clamp_end:
        t_e = min(t_e, coarse[1])
    return t_s, max(t_s, t_e)


DECISION_STRIDE_S = 1.0  # the released tasks' default decision stride (lmms_eval_utils)


def first_decision_time(turns: list[dict[str, Any]], t_s: float, duration: float) -> float | None:
    """The first time at or after ``t_s`` at which a streamed model decides: the item is played
    at 1 FPS from its first question's ask time and the model replies after each frame
    (``decision_stride_s``, 1 s, in the released lmms-eval tasks), up to the video's end. A
    window with no such time cannot be answered on time by any model (a native narration at
    9.2 s of a 10 s video gives [9.2, 10.0]: the last decision is at 9 s). ``None``: none
    before the end."""
    first = min(float(t["ask_time_s"]) for t in turns)
    k = max(0, math.ceil((t_s - first) / DECISION_STRIDE_S - 1e-9))
    tick = first + k * DECISION_STRIDE_S
    return tick if tick < duration - 1e-9 else None


def validate_item(item: dict[str, Any], source_file: str) -> None:
    """Raise :class:`BadInput` for the first broken invariant of a candidate item."""
    duration = float(item["video_duration_s"])
    turns = item["turns"]
    if not turns:
        raise BadInput(source_file, "turns", "item has no turns", item["id"])
    for k, t in enumerate(turns):
        f = f"turns[{k}]"
        ask, t_s, t_e = float(t["ask_time_s"]), float(t["t_s"]), float(t["t_e"])
        if t["turn_index"] != k:
            raise BadInput(source_file, f"{f}.turn_index", f"is {t['turn_index']}, expected {k}",
                           item["id"])
        if not 0 <= ask < duration:
            raise BadInput(source_file, f"{f}.ask_time_s",
                           f"asked at {ask}s, outside the video [0, {duration})", item["id"])
        if not 0 <= t_s <= t_e <= duration:
            raise BadInput(source_file, f"{f}.evidence_window",
                           f"need 0 <= t_s <= t_e <= duration, got [{t_s}, {t_e}] in {duration}s",
                           item["id"])
        if t_s <= ask:
            raise BadInput(
                source_file, f"{f}.t_s",
                f"evidence at {t_s}s does not follow the question asked at {ask}s: the question is "
                "not future-dependent (StreamReady App. C)", item["id"],
            )
        tick = first_decision_time(turns, t_s, duration)
        if tick is None or tick > t_e + 1e-9:
            raise BadInput(
                source_file, f"{f}.evidence_window",
                f"window [{t_s}, {t_e}] s holds no decision time of the 1 FPS stream (the first "
                f"question's ask time + whole seconds, before the {duration} s end): a streamed "
                "model could not answer inside it", item["id"],
            )
        if k:
            prev = turns[k - 1]
            if ask < float(prev["ask_time_s"]):
                raise BadInput(source_file, f"{f}.ask_time_s",
                               f"follow-up asked at {ask}s, before turn {k - 1} ({prev['ask_time_s']}s)",
                               item["id"])
            ref = int(t["refers_to"])
            if not 0 <= ref < k:
                raise BadInput(source_file, f"{f}.refers_to",
                               f"a follow-up must reference an earlier turn, got {ref}", item["id"])
            if ask < float(turns[ref]["t_s"]):
                raise BadInput(
                    source_file, f"{f}.ask_time_s",
                    f"follow-up asked at {ask}s, before the answer it builds on appears "
                    f"(turn {ref} t_s={turns[ref]['t_s']}s)", item["id"],
                )
            want = "local" if ref == k - 1 else "global"
            if t["dependency"] != want:
                raise BadInput(source_file, f"{f}.dependency",
                               f"is {t['dependency']!r} but refers_to={ref} makes it {want!r}", item["id"])
        elif int(t["refers_to"]) != -1 or t["dependency"] != "none":
            raise BadInput(source_file, f"{f}.refers_to", "the first turn cannot reference a turn",
                           item["id"])


def temporal_iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    """IoU of two closed intervals; two identical instants count as 1 (App. C QC)."""
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    if union <= 0:
        return 1.0 if a == b else 0.0
    return inter / union
