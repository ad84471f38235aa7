"""lmms-eval hooks of the StreamVibe-Bench trajectory tasks (copied as ``utils.py`` by
``benchforge export lmms-eval``; docs/exports.md). It runs inside lmms-eval's environment with
the standard library and the benchforge modules shipped in ``_vendor/``.

How a stream runs (``output_type: generate_until_agentic``): one round per 1 FPS decision step
of the sample's causal stream (``steps``). At step t the model is shown the frames seen so far
(the newest last; at most ``max_frames``, evenly spaced), the user turns that have arrived with
their text (``steps[≤t].new_turns``), its own earlier responses (Self History), and is asked to
reply with what it would say now or ``SILENT``. Only stream fields are used — never ``gold_*``
— so round t sees nothing after t (StreamVibe §3.1, App. B.2). A non-silent reply is a
timestamped response at t. A reply to an interruption's immediate request is reactive: the first
response after an ``interrupt`` turn arrives is marked so, which keeps it out of ANS and
Content-F1 (App. B.5; docs/scoring.md, choice 5).

Scoring (:mod:`pipelines.streamvibe.scoring`): ``score_sample`` at tolerance ``tau`` against the
sample's ``gold_evidence`` with its proactive flags, FPR_near on ``gold_negative_probes`` by the
trajectory rule, micro-aggregated over samples (pooled counts). The content judge is a setting:
``none`` leaves ANS and Content-F1 undefined (NaN); ``exact_reference`` gives r = 4 when a
response equals the reference after case and space folding, else 0 — a strict stand-in that
needs no network, not the paper's Claude Sonnet 4.6 judge. τ and the judge travel in each
sample's result, so the result names how it was scored.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().with_name("_vendor")))

from pipelines.streamvibe.scoring import (  # noqa: E402
    EvidencePoint,
    Prediction,
    ProbeCounts,
    SampleScore,
    TimingCounts,
    aggregate,
    evidence_points,
    fpr_near_trajectory,
    score_sample,
)

SILENT = "SILENT"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().strip(".!").lower()


def exact_reference(evidence: EvidencePoint, prediction: Prediction) -> float:
    """The ``exact_reference`` content judge (module doc): 4 or 0 on the paper's 0–4 scale."""
    return 4.0 if _norm(prediction.text) == _norm(evidence.reference) else 0.0


JUDGES = {"none": None, "exact_reference": exact_reference}


def _visible(doc: dict[str, Any], k: int, max_frames: int) -> list[Any]:
    frames = doc["frames"][: int(doc["steps"][k]["frame"]) + 1]
    if len(frames) <= max_frames:
        return list(frames)
    n = len(frames)
    return [frames[round(i * (n - 1) / (max_frames - 1))] for i in range(max_frames)]


def _prompt(doc: dict[str, Any], k: int, said: list[list[Any]]) -> str:
    t = float(doc["steps"][k]["t"])
    turns = [turn for step in doc["steps"][: k + 1] for turn in step["new_turns"]]
    lines = [f"You are watching a live video stream, one frame per second. The frames shown are "
             f"the ones seen so far; the last one is now, t = {t:g} s.", "User:"]
    lines += [f"[t={turn['t']:g}s] {turn['text']}" for turn in turns]
    if said:
        lines.append("You said:")
        lines += [f"[t={st:g}s] {text}" for st, text, _ in said]
    lines.append(f"If you should say something to the user now, reply with it; otherwise reply "
                 f"exactly {SILENT}.")
    return "\n".join(lines)


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The frames seen by the first decision step (at most 16: the default ``max_frames``)."""
    return _visible(doc, 0, 16)


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None,
                previous_output: list[str] | None = None, round_idx: int | None = None,
                previous_round_info: dict[str, Any] | None = None) -> Any:
    """The prompt of step 0 (``round_idx`` None), else record the reply to the previous step and
    move to the next one; after the last step, the responses as JSON (module doc)."""
    kw = lmms_eval_specific_kwargs or {}
    if round_idx is None:
        return _prompt(doc, 0, [])
    info = previous_round_info or {"said": [], "pending_interrupt": False}
    k = round_idx - 1  # the step the last reply answered
    step = doc["steps"][k]
    pending = info["pending_interrupt"] or any(t["kind"] == "interrupt" for t in step["new_turns"])
    reply = (previous_output or [""])[-1].strip()
    said = list(info["said"])
    if reply and reply.upper() != SILENT:
        said.append([float(step["t"]), reply, not pending])
        pending = False
    info = {"said": said, "pending_interrupt": pending}
    if round_idx >= len(doc["steps"]):
        result = {"id": doc["id"], "predictions": said, "tau": float(kw.get("tau", 2.0)),
                  "content_judge": str(kw.get("content_judge", "none"))}
        return None, None, True, [json.dumps(result)], info
    visuals = _visible(doc, round_idx, int(kw.get("max_frames", 16)))
    return visuals, _prompt(doc, round_idx, said), False, previous_output, info


def doc_to_target(doc: dict[str, Any]) -> str:
    return json.dumps([p["response"] for p in doc["gold_evidence"]])


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    """The sample's counts (timing, probes, content) under every metric name; aggregation pools
    them. An unparsable result is a sample without responses."""
    try:
        out = json.loads(results[0])
        said, tau, judge = out["predictions"], float(out["tau"]), JUDGES[out["content_judge"]]
    except (ValueError, KeyError, IndexError, TypeError):
        said, tau, judge = [], 2.0, None
    preds = [Prediction(t=float(t), text=str(text), proactive=bool(proactive)) for t, text, proactive in said]
    probes = fpr_near_trajectory([p["t"] for p in doc["gold_negative_probes"]], [p.t for p in preds])
    s = score_sample(evidence_points(doc), preds, tau=tau, judge=judge, probes=probes)
    counts = {"tp": s.timing.tp, "n_pred": s.timing.n_pred, "n_gold": s.timing.n_gold,
              "fp": s.probes.fp, "n_probes": s.probes.n, "content_sum": s.content_sum,
              "content_matched": s.content_matched, "content_n_pred": s.content_n_pred,
              "content_n_gold": s.content_n_gold, "judged": judge is not None}
    return {m: counts for m in ("precision", "recall", "f1", "fpr_near", "ans", "content_f1")}


def _pooled(items: list[dict[str, Any]], metric: str) -> float:
    samples = [SampleScore(timing=TimingCounts(c["tp"], c["n_pred"], c["n_gold"]),
                           probes=ProbeCounts(c["fp"], c["n_probes"]), content_sum=c["content_sum"],
                           content_matched=c["content_matched"], content_n_pred=c["content_n_pred"],
                           content_n_gold=c["content_n_gold"]) for c in items]
    if metric in ("ans", "content_f1") and not all(c["judged"] for c in items):
        return math.nan
    value = getattr(aggregate(samples), metric)
    return math.nan if value is None else float(value)


def aggregate_precision(items: list[dict[str, Any]]) -> float:
    return _pooled(items, "precision")


def aggregate_recall(items: list[dict[str, Any]]) -> float:
    return _pooled(items, "recall")


def aggregate_f1(items: list[dict[str, Any]]) -> float:
    return _pooled(items, "f1")


def aggregate_fpr_near(items: list[dict[str, Any]]) -> float:
    return _pooled(items, "fpr_near")


def aggregate_ans(items: list[dict[str, Any]]) -> float:
    return _pooled(items, "ans")


def aggregate_content_f1(items: list[dict[str, Any]]) -> float:
    return _pooled(items, "content_f1")
