"""Released ProReady-QA items: model input apart from gold, and its truncation invariance.

StreamReady §4: questions arrive in the stream *before* their evidence; a model answers "whenever
it is ready" (§5 implementation details), and ARS scores when it did against [t_s, t_e] (§4.3).
What a model may be given at time t is therefore the questions asked by t — nothing of their
answers or windows, and nothing of later turns. A released item (``schemas/proready.py``
``RELEASED_ITEM``) keeps that input in ``questions`` and the reviewed turns in ``gold_turns``.

Truncation invariance (:func:`core.causal.truncation_violations`): at every t, the questions
released for t equal those computed, by :func:`model_questions` (the function the build uses),
from the item truncated at t — turns asked after t removed, evidence after t blanked. Both sides
are step functions of t that change only at the item's own times, so checking those times and one
point between each consecutive pair (:func:`check_times`) checks every t, every 1 FPS step
included.
"""

from __future__ import annotations

from typing import Any

from core.causal import truncation_violations
from schemas.proready import ITEM, RELEASED_ITEM

EPS = 1e-9
_TIMED = ("t_s", "t_e", "coarse_start_s", "coarse_end_s")
_UNKNOWN = -1.0  # a time not known yet at the cut


def model_questions(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model input of a chain: each turn's question with its ask time, in ask order."""
    order = sorted(turns, key=lambda t: (t["ask_time_s"], t["turn_index"]))
    return [{"turn_index": t["turn_index"], "ask_time_s": t["ask_time_s"], "question": t["question"]}
            for t in order]


def release_record(item: dict[str, Any]) -> dict[str, Any]:
    """A reviewed item (``ITEM``) as released (``RELEASED_ITEM``)."""
    rec = {k: item[k] for k in RELEASED_ITEM.names if k in item}
    rec["questions"] = model_questions(item["turns"])
    rec["gold_turns"] = item["turns"]
    RELEASED_ITEM.validate(rec)
    return rec


def reviewed_item(rec: dict[str, Any]) -> dict[str, Any]:
    """A released item back in the reviewed shape, for the QC reports that read turns."""
    item = {k: rec[k] for k in ITEM.names if k in rec}
    item["turns"] = rec["gold_turns"]
    return item


def _cut_turn(turn: dict[str, Any], t: float) -> dict[str, Any]:
    if turn["t_s"] > t + EPS:  # the answer is not on screen yet: nothing of it is known
        return dict(turn, answer="", cue="", evidence_method="", **dict.fromkeys(_TIMED, _UNKNOWN))
    return {**turn, **{k: _UNKNOWN for k in _TIMED if turn[k] > t + EPS}}


def truncate(rec: dict[str, Any], t: float) -> dict[str, Any]:
    """The item as known at t (module doc)."""
    turns = [_cut_turn(x, t) for x in rec["gold_turns"] if x["ask_time_s"] <= t + EPS]
    return dict(rec, gold_turns=turns, num_turns=len(turns),
                questions=[q for q in rec["questions"] if q["ask_time_s"] <= t + EPS],
                video_duration_s=min(rec["video_duration_s"], t))


def questions_view(rec: dict[str, Any], t: float) -> dict[str, Any]:
    """Model input at t, computed from the gold turns as the build computes ``questions``."""
    return {"questions": [q for q in model_questions(rec["gold_turns"]) if q["ask_time_s"] <= t + EPS]}


def released_view(rec: dict[str, Any], t: float) -> dict[str, Any]:
    return {"questions": [q for q in rec["questions"] if q["ask_time_s"] <= t + EPS]}


def check_times(rec: dict[str, Any]) -> list[float]:
    """Every time the item names, 0, its end, and the midpoint of each gap (module doc)."""
    marks = {0.0, float(rec["video_duration_s"])}
    for turn in rec["gold_turns"]:
        marks.update(float(turn[k]) for k in ("ask_time_s", *_TIMED) if turn[k] >= 0)
    ordered = sorted(marks)
    return sorted(set(ordered) | {(a + b) / 2 for a, b in zip(ordered, ordered[1:], strict=False)})


def question_violations(rec: dict[str, Any]) -> list[str]:
    """``[]`` when the released questions at every t are what the item cut at t gives."""
    return truncation_violations(rec, check_times(rec), truncate=truncate, view=questions_view,
                                 released=released_view)
