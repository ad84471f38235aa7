"""Serialize approved candidates: causal stream, trajectory and pointwise records, allocation.

* **Causal stream** (§3.1: the policy sees only c_t = ⟨V≤t, I≤t, H<t⟩; App. B.2: "at time t, the
  record exposes only frames and user turns available by t"): ``steps[t]`` names the frame on
  screen at t (sampled at or before t), carries the user turns that arrived since the previous
  step (with their text), and the intents those turns have made valid. Each is a function of the
  record *up to t* only — ``pipelines/streamvibe/causality.py`` proves it for every step. The
  trajectory sample is that stream plus the ``gold_*`` annotation (§3.5 "Trajectory Evaluation
  runs the model continuously over the full video stream"), named apart so no consumer mistakes
  it for model input (``schemas/streamvibe.py``).
* **Active intents.** §3.1: 𝒜_t ⊆ I≤t, and "an intent remains active until all its evidence points
  are covered". Whether the points are covered is decided by the policy's own responses (its
  history H<t), and knowing that an intent has *no further* points needs the future annotation
  — dropping an intent after its last gold point told a model to stay silent until the next
  user turn (in the demo's revision sample, from 16 s to 40 s). So the stream's
  ``active_intents`` is what the user's turns up to t make valid — opened and not superseded
  (App. C.2 separates this "request validity" from "event coverage"); coverage is left to the
  model under evaluation.
* **Pointwise** (§3.5: "samples positive and negative timestamps around annotated help points
  […] Gold History"): one row per evidence point (at the first decision step at or after its
  preferred time that is still inside the window, else the last step inside it) and one per
  designated negative probe. Model input: the frames visible at t, the active intents, and the
  gold history (user turns up to t and the gold responses of points decided before t); the
  ``gold_*`` columns are the label. A row's id is ``<sample id>@<t>#<j>``, ``j`` counting the
  rows at that t: it carries no label (it was ``…#<evidence id>`` for a positive and bare for a
  negative, which told a model the answer). A negative probe lies outside every window, so it
  never shares a t with a positive; two positives due at the same second get ``#0`` and ``#1``.
* **Allocation** (Table 15, "Target balanced evaluation allocation"): per subtype at most its
  target, chosen round-robin across source collections in a seeded order so one collection
  cannot fill a subtype; the shortfall against each target is reported, never padded.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from typing import Any

from core.seeding import seed_bytes
from pipelines.streamvibe.normalize import NormalizedVideo
from schemas.streamvibe import ANNOTATION_FIELDS, PROVENANCE_FIELDS, SAMPLE, gold_name

EPS = 1e-9


def decision_time(p: dict[str, Any]) -> float:
    """The 1 FPS step at which a pointwise positive is asked (see module doc)."""
    t = math.ceil(p["preferred"] - EPS)
    if t <= p["end"] + EPS:
        return float(t)
    return float(math.floor(p["end"] + EPS))


def active_at(rec: dict[str, Any], t: float) -> list[str]:
    """𝒜_t by the user's turns up to t: the active set after the latest transition (module doc)."""
    active: list[str] = []
    for x in rec["gold_transitions"]:
        if x["t"] <= t + EPS:
            active = list(x["active_after"])
    return active


def frames_by(rec: dict[str, Any], t: float) -> int:
    """How many of the stream's frames are sampled at or before t."""
    return bisect.bisect_right(rec["frame_times"], t + EPS)


def causal_step(rec: dict[str, Any], t: float) -> dict[str, Any]:
    """``steps`` entry at decision time t (the time of a sampled frame), from the record up to t."""
    k = frames_by(rec, t) - 1
    prev = rec["frame_times"][k - 1] if k > 0 else -math.inf
    new = [u for u in rec["gold_user_turns"] if prev + EPS < u["t"] <= t + EPS]
    return {"t": float(t), "frame": k, "new_turns": new, "active_intents": active_at(rec, t)}


def sample_record(candidate: dict[str, Any], video: NormalizedVideo,
                  review: list[dict[str, Any]]) -> dict[str, Any]:
    rec = {f.name: candidate[f.name] for f in PROVENANCE_FIELDS}
    rec.update({gold_name(f.name): candidate[f.name] for f in ANNOTATION_FIELDS})
    rec["frames"] = [{"bytes": b, "path": f"{candidate['source_file']}#t={t:g}"}
                     for b, t in zip(video.frames, video.frame_times, strict=True)]
    rec["frame_times"] = list(video.frame_times)
    rec["frame_pts"] = list(video.frame_pts)
    rec["steps"] = [causal_step(rec, t) for t in rec["frame_times"]]
    rec["review"] = review
    SAMPLE.validate(rec)
    return rec


def gold_history(rec: dict[str, Any], t: float) -> list[dict[str, Any]]:
    """H<t under Gold History: user turns ≤ t and gold responses of points decided before t."""
    items = [(u["t"], 0, {"t": u["t"], "role": "user", "intent_id": u["intent_id"], "text": u["text"]})
             for u in rec["gold_user_turns"] if u["t"] <= t + EPS]
    for p in rec["gold_evidence"]:
        asked = decision_time(p)
        if asked < t - EPS:
            items.append((asked, 1, {"t": asked, "role": "assistant", "intent_id": p["intent_id"],
                                     "text": p["response"]}))
    return [x for _, _, x in sorted(items, key=lambda z: (z[0], z[1], z[2]["intent_id"]))]


def pointwise_view(rec: dict[str, Any], t: float) -> dict[str, Any]:
    """The model input of a pointwise row at t (module doc)."""
    return {"t": t, "frames_visible": frames_by(rec, t), "active_intents": active_at(rec, t),
            "history": gold_history(rec, t)}


def pointwise_records(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per evidence point and per negative probe of a trajectory sample."""
    probes = [(decision_time(p), "positive", p) for p in rec["gold_evidence"]]
    probes += [(n["t"], n["probe_type"], None) for n in rec["gold_negative_probes"]]
    rows = []
    at: dict[float, int] = defaultdict(int)  # rows so far at each decision time
    for t, kind, p in sorted(probes, key=lambda z: (z[0], z[1])):
        at[t] += 1
        rows.append({
            "id": f"{rec['id']}@{t:g}#{at[t] - 1}",
            "sample_id": rec["id"],
            "subtype": rec["subtype"],
            **pointwise_view(rec, t),
            "gold_should_respond": p is not None,
            "gold_probe_type": kind,
            "gold_evidence_id": p["id"] if p else "",
            "gold_response": p["response"] if p else "",
        })
    return rows


def allocate(candidates: list[dict[str, Any]], target: int, seed: int) -> tuple[list[str], list[str]]:
    """(selected ids, over-target ids) for one subtype: round-robin over collections, each in
    seeded order (``sha256(seed, id, "allocation")``)."""
    by_coll: dict[str, list[str]] = defaultdict(list)
    for c in candidates:
        by_coll[c["source_collection"]].append(c["id"])
    queues = {k: sorted(v, key=lambda i: seed_bytes(seed, i, "allocation")) for k, v in by_coll.items()}
    order: list[str] = []
    while any(queues.values()):
        for k in sorted(queues):
            if queues[k]:
                order.append(queues[k].pop(0))
    return sorted(order[:target]), sorted(order[target:])
