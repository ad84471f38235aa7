"""The training split: task-aligned SFT streams and the localized-RL seed pool (StreamVibe §3.4,
§4.2, App. B.4, Table 18).

Training data comes from the same construction and review pipeline as the evaluation data (§3.3:
"The validated annotations are aligned to 1 FPS streams and converted into causal interaction
sequences for training and evaluation"), so a training record starts from the same approved
candidate and the same causal stream (:func:`pipelines.streamvibe.serialize.sample_record`);
this module adds only what training needs on top of it.

* **SFT labels** (§4.2 Eq. 1 supervises *decision* tokens — silence or response — and *response*
  tokens): every step of the stream carries ``gold_decision`` and the gold responses due at that
  step. A response is due at the step the pointwise positives use
  (:func:`pipelines.streamvibe.serialize.decision_time`: the first step at or after the preferred
  time inside the window), or at the stream's last step when that time is past it — so every
  evidence point is labelled at exactly one step. The label at t depends on the annotation up to
  t only (``causality.label_violations`` checks it per step, like the stream).
* **RL seeds** (§4.2: "short causal rollouts around annotated help points"; App. B.4: a
  "separate balanced" seed pool, 5K each from Implicit, Explicit and general streaming): one row
  per help point with its rollout window — from ``before_s`` ahead of the point's window to
  ``after_s`` after it, in whole steps, inside the stream — the stream's frames and steps in that
  window, the Gold History before it (the model starts the rollout from a correct past), and the
  gold evidence due inside it (the N_gt of the point-level reward, Eq. 2). The window's reach
  defaults to the FPR_near probes' (8 s, App. B.5), so a rollout holds the nearby silence a policy
  must keep as well as the point.
* **Allocation.** Table 18 counts SFT *examples* per category (35K Explicit, 35K Implicit, no
  Dynamic) and RL *tasks* per group (5K each); App. B.4 calls the RL pool "separate" and Table 18
  adds the two to "85K task-oriented training examples in total", so a sample feeds SFT or RL,
  never both. Per category, the approved samples are walked in a seeded round-robin order over
  source collections (as the evaluation allocation, ``serialize.allocate``), and each goes to the
  pool that is further from its target relative to the target (SFT: samples; RL: help points;
  ties to SFT) until both are full; the rest are filtered (``allocation``). When data is short,
  both pools fall short by the same fraction, and the shortfall is reported, never padded. An RL
  sample with more points than the pool has room for contributes a seeded subset of them.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from typing import Any

from core.seeding import rng_for, seed_bytes
from pipelines.streamvibe.normalize import NormalizedVideo
from pipelines.streamvibe.serialize import EPS, causal_step, decision_time, sample_record
from schemas.streamvibe import RL_SEED, SFT_STREAM, TRAIN_PREFIX


def is_train(item_id: str) -> bool:
    """Ids of the training split carry its prefix (``train/i/…``): pairs, candidates, samples."""
    return item_id.startswith(TRAIN_PREFIX)


def due_step(p: dict[str, Any], frame_times: list[float]) -> float:
    """The step at which evidence point ``p``'s response is due (module doc)."""
    t = decision_time(p)
    k = bisect.bisect_right(frame_times, t + EPS) - 1
    return float(frame_times[max(k, 0)])


def responses_due(rec: dict[str, Any], t: float) -> list[dict[str, Any]]:
    """The gold responses due at step t, in evidence order."""
    return [{"evidence_id": p["id"], "intent_id": p["intent_id"], "text": p["response"]}
            for p in rec["gold_evidence"] if abs(due_step(p, rec["frame_times"]) - t) <= EPS]


def step_label(rec: dict[str, Any], t: float) -> dict[str, Any]:
    """The SFT label of step t: ``response`` with the responses due at t, else ``silence``."""
    due = responses_due(rec, t)
    return {"gold_decision": "response" if due else "silence", "gold_responses": due}


def sft_record(candidate: dict[str, Any], video: NormalizedVideo, review: list[dict[str, Any]],
               stream_sha256: str) -> dict[str, Any]:
    """The SFT stream of an approved training candidate: the evaluation sample's stream with a
    label on every step."""
    rec = sample_record(candidate, video, review)
    rec["steps"] = [dict(s, **step_label(rec, s["t"])) for s in rec["steps"]]
    rec["stream_sha256"] = stream_sha256
    SFT_STREAM.validate(rec)
    return rec


def history_before(rec: dict[str, Any], start: float) -> list[dict[str, Any]]:
    """Gold History before a rollout that starts at step ``start``: user turns that arrived at an
    earlier step (the first step of the window brings its own) and gold responses due before it."""
    k = bisect.bisect_left(rec["frame_times"], start - EPS)
    prev = rec["frame_times"][k - 1] if k > 0 else -math.inf
    items = [(u["t"], 0, {"t": u["t"], "role": "user", "intent_id": u["intent_id"], "text": u["text"]})
             for u in rec["gold_user_turns"] if u["t"] <= prev + EPS]
    for p in rec["gold_evidence"]:
        due = due_step(p, rec["frame_times"])
        if due < start - EPS:
            items.append((due, 1, {"t": due, "role": "assistant", "intent_id": p["intent_id"],
                                   "text": p["response"]}))
    return [x for _, _, x in sorted(items, key=lambda z: (z[0], z[1], z[2]["intent_id"]))]


def rollout_window(p: dict[str, Any], frame_times: list[float], before_s: float, after_s: float
                   ) -> tuple[float, float]:
    """(first, last) step of the rollout around evidence point ``p`` (module doc)."""
    first = max(frame_times[0], float(math.floor(p["start"] - before_s + EPS)))
    last = min(frame_times[-1], float(math.ceil(p["end"] + after_s - EPS)))
    return first, max(last, due_step(p, frame_times))


def window_view(rec: dict[str, Any], start: float, end: float) -> dict[str, Any]:
    """What a rollout over [start, end] gives the model: the stream's steps in the window (frame
    indices rebased to the window's frames) and the Gold History before it."""
    first = bisect.bisect_left(rec["frame_times"], start - EPS)
    steps = [causal_step(rec, t) for t in rec["frame_times"] if start - EPS <= t <= end + EPS]
    return {"steps": [dict(s, frame=s["frame"] - first) for s in steps],
            "history": history_before(rec, start)}


def check_one_fps(rec: dict[str, Any]) -> None:
    """Rollout rows index frames by time: the stream must sample t = 0, 1, 2, … (the causal
    sampler's definition, ``core.media.video.causal_frames``)."""
    if list(rec["frame_times"]) != [float(k) for k in range(len(rec["frame_times"]))]:
        raise ValueError(f"{rec['id']}: the stream does not sample t = 0, 1, 2, …: {rec['frame_times'][:5]}")


def rl_seed_rows(rec: dict[str, Any], point_ids: list[str], before_s: float, after_s: float
                 ) -> list[dict[str, Any]]:
    """One RL seed row per help point in ``point_ids`` of the serialized sample ``rec`` (an
    SFT stream or an evaluation sample: the stream and the gold annotation are what is read)."""
    check_one_fps(rec)
    times = rec["frame_times"]
    points = {p["id"]: p for p in rec["gold_evidence"]}
    gold = {k: v for k, v in rec.items() if k.startswith("gold_")}
    provenance = {f.name: rec[f.name] for f in RL_SEED.fields
                  if f.name in rec and not f.name.startswith("gold_")
                  and f.name not in ("id", "frames", "frame_times", "frame_pts", "steps")}
    rows = []
    for pid in point_ids:
        start, end = rollout_window(points[pid], times, before_s, after_s)
        lo, hi = int(start), int(end) + 1
        row = {
            "id": f"{rec['id']}@{pid}",
            "sample_id": rec["id"],
            **provenance,
            "window_start": start,
            "window_end": end,
            "frames": rec["frames"][lo:hi],
            "frame_times": times[lo:hi],
            "frame_pts": rec["frame_pts"][lo:hi],
            **window_view(rec, start, end),
            "gold_help_point": pid,
            "gold_reward_evidence": [p for p in rec["gold_evidence"]
                                     if start - EPS <= due_step(p, times) <= end + EPS],
            **gold,
        }
        row["steps"] = [{k: s[k] for k in ("t", "frame", "new_turns", "active_intents")}
                        for s in row["steps"]]
        RL_SEED.validate(row)
        rows.append(row)
    return rows


def training_order(cands: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """Round-robin over source collections, each in seeded order (as ``serialize.allocate``)."""
    by_coll: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cands:
        by_coll[c["source_collection"]].append(c)
    queues = {k: sorted(v, key=lambda c: seed_bytes(seed, c["id"], "train_allocation"))
              for k, v in by_coll.items()}
    order: list[dict[str, Any]] = []
    while any(queues.values()):
        for k in sorted(queues):
            if queues[k]:
                order.append(queues[k].pop(0))
    return order


def allocate_training(cands: list[dict[str, Any]], sft_target: int, rl_target: int, seed: int
                      ) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """(SFT sample ids, RL sample id → its help point ids, over-target ids) of one category."""
    sft: list[str] = []
    rl: dict[str, list[str]] = {}
    over: list[str] = []
    rl_points = 0
    for c in training_order(cands, seed):
        sft_fill = len(sft) / sft_target if sft_target else math.inf
        rl_fill = rl_points / rl_target if rl_target else math.inf
        if sft_fill >= 1 and rl_fill >= 1:
            over.append(c["id"])
        elif sft_fill <= rl_fill:
            sft.append(c["id"])
        else:
            ids = [p["id"] for p in c["evidence"]]
            room = rl_target - rl_points
            if len(ids) > room:
                ids = sorted(rng_for(seed, c["id"], "rl_seed_points").sample(ids, room))
            rl[c["id"]] = ids
            rl_points += len(ids)
    return sorted(sft), dict(sorted(rl.items())), sorted(over)


def decision_balance(samples: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Silence / response steps per source collection (§4.2: the adaptive SFT weights follow the
    silence/response ratio of each training source)."""
    out: dict[str, dict[str, Any]] = {}
    for r in samples:
        c = out.setdefault(r["source_collection"], {"samples": 0, "silence": 0, "response": 0})
        c["samples"] += 1
        for s in r["steps"]:
            c[s["gold_decision"]] += 1
    for c in out.values():
        c["silence_per_response"] = round(c["silence"] / c["response"], 3) if c["response"] else None
    return dict(sorted(out.items()))
