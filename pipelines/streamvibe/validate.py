"""Validate a candidate against the task formulation (StreamVibe §3.1, App. B.2); fix only the
unambiguous, reject the rest with the reason.

Checks (every one names the field that failed):

* each intent is introduced by exactly one user turn at its availability time τ_j; turns of a
  non-Dynamic sample: exactly one (the initial instruction); Dynamic RV/CP/IT: an initial turn and
  at least one revise/compose/interrupt turn of the subtype's kind;
* every evidence point: finite, s ≤ preferred ≤ e, inside the *real* decoded duration, not before
  its intent is available (§3.1: "relevant evidence may emerge only after an intent is
  expressed"), not after its intent was superseded, a 1 FPS decision step (integer second)
  inside the window (App. B.2: "aligned to 1 FPS streams"), non-empty gold response;
* I has exactly one point, R at least two (Table 15), every intent at least one;
* no duplicate or overlapping windows within an intent;
* Dynamic transitions are what the turns imply: a revision closes the superseded intent(s)
  (``closed_at`` = the revision's time), composition and interruption close nothing, and
  ``active_after`` is the resulting set.

Unambiguous fixes (recorded in ``fixes``): turns / points out of time order are sorted and points
renumbered; an exact duplicate point is dropped; a window end at most one decision step (1 s)
past the real end of the video is clipped to the end; a window starting before its intent is
available, or ending after its intent was superseded, is clipped to that bound *when the
preferred time stays inside* (the cut part is invalid by definition); a gold response's
surrounding whitespace is stripped. Everything else is a rejection.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from core.errors import BadInput
from pipelines.streamvibe.candidates import KIND_OF, has_step, r3, transitions_for
from schemas.streamvibe import DYNAMIC, TURN_KINDS

END_SLACK_S = 1.0  # one 1 FPS decision step


def _src(c: dict[str, Any]) -> str:
    return c["task_record"] if c["generator"] == "rule" else f"{c['source_file']} ({c['generator']} output)"


def _num(c: dict[str, Any], value: Any, field: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise BadInput(_src(c), field, f"not a number: {value!r}", item_id=c["id"]) from None
    if not math.isfinite(x):
        raise BadInput(_src(c), field, f"not finite: {value!r}", item_id=c["id"])
    return x


def validate_candidate(candidate: dict[str, Any]) -> dict[str, Any]:
    """Return a checked copy of ``candidate`` (with ``fixes``) or raise BadInput."""
    c = copy.deepcopy(candidate)
    fixes: list[str] = list(c.get("fixes") or [])
    dur = float(c["duration_s"])
    st = c["subtype"]

    def bad(field: str, reason: str) -> BadInput:
        return BadInput(_src(c), field, reason, item_id=c["id"])

    # -- intents and turns ---------------------------------------------------------------
    intents = c["intents"]
    if not intents:
        raise bad("intents", "no intent")
    ids = [i.get("id") for i in intents]
    if len(set(ids)) != len(ids) or not all(ids):
        raise bad("intents", f"intent ids must be unique and non-empty, got {ids}")
    by_id = {i["id"]: i for i in intents}
    for n, i in enumerate(intents):
        i["available_at"] = r3(_num(c, i.get("available_at"), f"intents[{n}].available_at"))
        i["closed_at"] = r3(_num(c, i.get("closed_at", -1), f"intents[{n}].closed_at"))
        if not str(i.get("request", "")).strip():
            raise bad(f"intents[{n}].request", "empty request")
        i["subtype"] = str(i.get("subtype") or st)
        i["proactive"] = bool(i.get("proactive", True))
        if not 0 <= i["available_at"] < dur:
            raise bad(f"intents[{n}].available_at",
                      f"{i['available_at']} s is outside the video (real duration {dur} s)")
        if i["closed_at"] >= 0 and i["closed_at"] <= i["available_at"]:
            raise bad(f"intents[{n}].closed_at", "closed before it became available")
    turns = c["user_turns"]
    for n, u in enumerate(turns):
        u["t"] = r3(_num(c, u.get("t"), f"user_turns[{n}].t"))
        if u.get("kind") not in TURN_KINDS:
            raise bad(f"user_turns[{n}].kind", f"{u.get('kind')!r} not one of {TURN_KINDS}")
        if u.get("intent_id") not in by_id:
            raise bad(f"user_turns[{n}].intent_id", f"unknown intent {u.get('intent_id')!r}")
        if not str(u.get("text", "")).strip():
            raise bad(f"user_turns[{n}].text", "empty user turn")
    order = sorted(range(len(turns)), key=lambda k: (turns[k]["t"], k))
    if order != list(range(len(turns))):
        turns[:] = [turns[k] for k in order]
        fixes.append("user turns sorted by time")
    introduced = [u["intent_id"] for u in turns]
    for i in intents:
        if introduced.count(i["id"]) != 1:
            raise bad("user_turns", f"intent {i['id']} must be introduced by exactly one turn")
        turn = turns[introduced.index(i["id"])]
        if turn["t"] != i["available_at"]:
            raise bad("user_turns", f"intent {i['id']} available at {i['available_at']} but its "
                      f"turn is at {turn['t']}")
    if not turns or turns[0]["kind"] != "initial" or any(u["kind"] == "initial" for u in turns[1:]):
        raise bad("user_turns", "exactly one initial turn, first in time")
    if st in DYNAMIC:
        kinds = {u["kind"] for u in turns[1:]}
        if not turns[1:] or kinds != {KIND_OF[st]}:
            raise bad("user_turns", f"{st} needs at least one '{KIND_OF[st]}' turn and no other kind, "
                      f"got {sorted(kinds)}")
    elif len(turns) != 1:
        raise bad("user_turns", f"{st} is not Dynamic: only the initial instruction, got {len(turns)} turns")
    c["initial_instruction"] = turns[0]["text"]

    # -- transitions (Dynamic consistency) ----------------------------------------------
    for i in intents:
        if i["closed_at"] >= 0 and not any(u["kind"] == "revise" and u["t"] == i["closed_at"]
                                           for u in turns):
            raise bad(f"intents.{i['id']}.closed_at", "no revision turn at the closing time")
    for u in turns:
        if u["kind"] == "revise" and not any(i["closed_at"] == u["t"] and i["id"] != u["intent_id"]
                                             for i in intents):
            raise bad("transitions", f"revision at {u['t']} s closes no intent (superseded intent "
                      "left open)")
    expected = transitions_for(intents, turns)
    given = c.get("transitions") or []
    norm = [{"t": r3(_num(c, x.get("t"), "transitions.t")), "kind": x.get("kind"),
             "opened": sorted(x.get("opened") or []), "closed": sorted(x.get("closed") or []),
             "active_after": sorted(x.get("active_after") or [])} for x in given]
    if norm != expected:
        raise bad("transitions", f"inconsistent with the user turns: expected {expected}, got {norm}")
    c["transitions"] = expected

    # -- evidence -------------------------------------------------------------------------
    points = c["evidence"]
    if not points:
        raise bad("evidence", "no evidence point")
    for n, p in enumerate(points):
        f = f"evidence[{n}]"
        if p.get("intent_id") not in by_id:
            raise bad(f"{f}.intent_id", f"unknown intent {p.get('intent_id')!r}")
        s = _num(c, p.get("start"), f"{f}.start")
        e = _num(c, p.get("end"), f"{f}.end")
        pref = _num(c, p.get("preferred"), f"{f}.preferred")
        if not s <= pref <= e:
            raise bad(f, f"window not ordered: need start <= preferred <= end, got [{s}, {pref}, {e}]")
        if s < 0:
            raise bad(f"{f}.start", f"negative time {s}")
        if pref >= dur or s >= dur:
            raise bad(f"{f}.end", f"window [{s}, {e}] is past the end of the video (real decodable "
                      f"duration {dur} s; header claims {c['header_frames']} frames)")
        if e > dur:
            if e - dur > END_SLACK_S:
                raise bad(f"{f}.end", f"window end {e} s is past the end of the video (real "
                          f"decodable duration {dur} s)")
            fixes.append(f"{f}.end clipped from {e} to the real end {dur}")
            e = dur
        intent = by_id[p["intent_id"]]
        tau = intent["available_at"]
        if pref < tau:
            raise bad(f"{f}.preferred", f"evidence at {pref} s before its intent {intent['id']} is "
                      f"available ({tau} s)")
        if s < tau:
            fixes.append(f"{f}.start clipped from {s} to intent availability {tau}")
            s = tau
        closed = intent["closed_at"]
        if closed >= 0:
            if pref >= closed:
                raise bad(f"{f}.preferred", f"evidence at {pref} s after intent {intent['id']} was "
                          f"superseded ({closed} s)")
            if e > closed:
                fixes.append(f"{f}.end clipped from {e} to supersession {closed}")
                e = closed
        if not has_step(s, e, dur):
            raise bad(f, f"window [{s}, {e}] contains no 1 FPS decision step (integer second)")
        resp = str(p.get("response") or "")
        if not resp.strip():
            raise bad(f"{f}.response", "empty gold response")
        if resp != resp.strip():
            fixes.append(f"{f}.response whitespace stripped")
        p.update(start=r3(s), end=r3(e), preferred=r3(pref), response=resp.strip(),
                 proactive=bool(p.get("proactive", intent["proactive"])))
    # exact duplicates dropped, then time order and ids
    seen: set[tuple] = set()
    unique = []
    for p in points:
        key = (p["intent_id"], p["start"], p["end"], p["preferred"], p["response"])
        if key in seen:
            fixes.append(f"duplicate evidence point at {p['preferred']} s dropped")
            continue
        seen.add(key)
        unique.append(p)
    ordered = sorted(unique, key=lambda p: (p["preferred"], p["intent_id"], p["start"]))
    if [id(p) for p in ordered] != [id(p) for p in unique]:
        fixes.append("evidence points sorted by time")
    for k, p in enumerate(ordered, start=1):
        p["id"] = f"e{k}"
    c["evidence"] = [{k: p[k] for k in ("id", "intent_id", "start", "end", "preferred", "response",
                                        "proactive")} for p in ordered]
    for i in intents:
        mine = sorted((p for p in c["evidence"] if p["intent_id"] == i["id"]), key=lambda p: p["start"])
        if not mine:
            raise bad("evidence", f"intent {i['id']} has no evidence point")
        if i["subtype"] == "I" and len(mine) != 1:
            raise bad("evidence", f"subtype I needs exactly one evidence point, got {len(mine)}")
        if i["subtype"] == "R" and len(mine) < 2:
            raise bad("evidence", f"subtype R needs two or more evidence points, got {len(mine)}")
        for a, b in zip(mine, mine[1:], strict=False):
            if b["start"] <= a["end"]:
                raise bad("evidence", f"overlapping windows of intent {i['id']}: {a['id']} "
                          f"[{a['start']}, {a['end']}] and {b['id']} [{b['start']}, {b['end']}]")
    c["intents"] = [{k: i[k] for k in ("id", "subtype", "request", "available_at", "closed_at",
                                       "proactive")} for i in intents]
    c["user_turns"] = [{k: u[k] for k in ("t", "kind", "intent_id", "text")} for u in turns]
    c["fixes"] = fixes
    return c
