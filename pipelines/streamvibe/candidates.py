"""Candidate evidence points for a video-request pair: two generators behind one interface.

StreamVibe §3.3: "For each video-request pair, we use Gemini […] to identify candidate help points
with response windows, preferred times, and reference answers. For dynamic intents, we further
construct timestamped multi-turn interactions in which intents may be revised, extended, or
interrupted as the task unfolds." App. B.2: "Candidate evidence points are produced from the
source video and task record".

* :class:`RuleGenerator` reads the task record's *native annotations* (step segments, state
  changes, event times, GUI action logs) — e.g. step boundaries → Guidance points, repeated
  events → Recurring points — so the pipeline runs offline and its output is reproducible.
* :class:`pipelines.streamvibe.gemini.GeminiGenerator` asks the model with structured output.

Both return the same *raw candidate* (intents, user turns, transitions, evidence) from
``generate_many([(pair, video), …])`` — a list aligned with the input holding a raw candidate or
the :class:`BadInput` that explains why there is none. Nothing here decides whether a candidate
is valid — :mod:`pipelines.streamvibe.validate` does, for both generators alike.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from core.errors import BadInput
from core.seeding import rng_for
from pipelines.streamvibe.normalize import NormalizedVideo
from pipelines.streamvibe.sources import IntentSpec
from schemas.streamvibe import DYNAMIC, SUBTYPES

RawCandidate = dict[str, Any]
KIND_OF = {"RV": "revise", "CP": "compose", "IT": "interrupt"}


class CandidateGenerator(Protocol):
    """One interface for both generators (rule-based and Gemini)."""

    name: str
    prompt_version: str

    def generate_many(self, items: list[tuple[dict[str, Any], NormalizedVideo]]
                      ) -> list[RawCandidate | BadInput]: ...

    def close(self) -> None:
        """Release what the generator holds (a DoFn's ``teardown``): persist cached answers."""


def r3(x: float) -> float:
    return round(float(x), 3)


def has_step(s: float, e: float, duration: float) -> bool:
    """True when [s, e] holds a 1 FPS decision step k (integer second) with k < duration."""
    k = math.ceil(s - 1e-9)
    return k <= e + 1e-9 and k < duration - 1e-9


class _Fmt(dict):
    """Template slots; a missing slot is reported (file and field) instead of a KeyError."""

    def __init__(self, values: dict[str, Any], where: tuple[str, str]) -> None:
        super().__init__(values)
        self.where = where

    def __missing__(self, key: str) -> str:
        raise BadInput(self.where[0], f"{self.where[1]}.slots.{key}", "template needs this slot")


def fill(template: str, values: dict[str, Any], where: tuple[str, str]) -> str:
    return template.format_map(_Fmt(values, where)).strip()


def request_texts(pair: dict[str, Any], spec: IntentSpec, seed: int) -> tuple[str, str]:
    """(initial request, update turn) drawn from the spec's templates with a per-sample RNG."""
    req = pair["request"]
    where = (pair["task_record"], f"requests[{pair['request_index']}]")
    slots = {"task": pair["task"], **(req.get("slots") or {})}
    rng = rng_for(seed, pair["id"], "request_template")
    initial = fill(rng.choice(spec.templates), slots, where)
    update = fill(rng.choice(spec.update_templates), slots, where) if spec.update_templates else ""
    return initial, update


def transitions_for(intents: list[dict[str, Any]], turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The active-intent transition each user turn causes (App. B.2 "active intent transition").

    initial/compose/interrupt open the turn's intent; revise also closes every active intent
    whose ``closed_at`` is the turn's time (the superseded one).
    """
    active: set[str] = set()
    out = []
    for turn in sorted(turns, key=lambda x: x["t"]):
        closed = sorted(i["id"] for i in intents
                        if i["id"] in active and i["closed_at"] >= 0 and i["closed_at"] == turn["t"])
        active -= set(closed)
        active.add(turn["intent_id"])
        out.append({"t": turn["t"], "kind": turn["kind"], "opened": [turn["intent_id"]],
                    "closed": closed, "active_after": sorted(active)})
    return out


def _windows(times: list[float], before: float, after: float, lo: float, hi: float
             ) -> list[tuple[float, float, float]]:
    """Windows [t-before, t+after] clipped to [lo, hi]; consecutive windows never overlap (a
    window ends half a second before the next one starts; events closer than that merge)."""
    out: list[tuple[float, float, float]] = []
    times = sorted(times)
    for k, t in enumerate(times):
        s, e = max(lo, t - before), min(hi, t + after)
        if out and s <= out[-1][1]:
            s = max(s, out[-1][1] + 0.5)
        if k + 1 < len(times):
            e = min(e, times[k + 1] - before - 0.5, times[k + 1] - 0.5)
        if s > t or e < t:
            continue  # too close to its neighbour: merged into the previous point
        out.append((r3(s), r3(e), r3(t)))
    return out


class RuleGenerator:
    """Candidates from native annotations (offline, deterministic)."""

    name = "rule"
    prompt_version = ""

    def __init__(self, specs: dict[str, IntentSpec], seed: int) -> None:
        self.specs = specs
        self.seed = seed

    def close(self) -> None:
        """Nothing to release: the rule generator holds no client."""

    def generate_many(self, items: list[tuple[dict[str, Any], NormalizedVideo]]
                      ) -> list[RawCandidate | BadInput]:
        out: list[RawCandidate | BadInput] = []
        for pair, video in items:
            try:
                out.append(self.generate(pair, video))
            except BadInput as err:
                out.append(err)
            # a malformed native annotation: a key missing, a value of another type (an event
            # that is a list has no .get), a time that is no number or infinite
            except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
                out.append(BadInput(pair["task_record"], "native",
                                    f"malformed native annotation ({type(exc).__name__}: {exc})"))
        return out

    def _native(self, pair: dict[str, Any], key: str) -> list[dict[str, Any]]:
        items = pair["native"].get(key)
        if not isinstance(items, list) or not items:
            raise BadInput(pair["task_record"], f"native.{key}",
                           f"subtype {pair['subtype']} needs native {key} annotations")
        return items

    def _events(self, pair: dict[str, Any], label_key: str) -> list[dict[str, Any]]:
        label = pair["request"].get(label_key)
        where = f"requests[{pair['request_index']}].{label_key}"
        if not label:
            raise BadInput(pair["task_record"], where, "missing native event label")
        found = [e for e in self._native(pair, "events") if e.get("label") == label]
        if not found:
            raise BadInput(pair["task_record"], "native.events", f"no event labelled {label!r}")
        return sorted(found, key=lambda e: float(e["t"]))

    def _points(self, spec: IntentSpec, intent: str, items: list[tuple[float, str]], lo: float,
                hi: float, duration: float) -> list[dict[str, Any]]:
        """Windows around native times. Inside the real video the window's tail is clipped to
        the end, and a point whose window then holds no decision step (an event in the last
        fraction of a second) is dropped; a native time *past* the end is kept as annotated, so
        validation rejects it with the reason (a task record that does not match its video must
        be seen, not hidden)."""
        wins = _windows([t for t, _ in items], spec.before, spec.after, lo, hi)
        text = dict(items)
        out = []
        for s, e, p in wins:
            if p < duration:
                e = min(e, r3(duration))
                if not has_step(s, e, duration):
                    continue
            out.append({"intent_id": intent, "start": s, "end": e, "preferred": p,
                        "response": text[p], "proactive": True})
        return out

    def generate(self, pair: dict[str, Any], video: NormalizedVideo) -> RawCandidate:
        st = pair["subtype"]
        spec = self.specs.get(st)
        if spec is None:
            raise BadInput(pair["task_record"], f"requests[{pair['request_index']}].subtype",
                           f"no intent spec for subtype {st}")
        req = pair["request"]
        where = (pair["task_record"], f"requests[{pair['request_index']}]")
        slots = {"task": pair["task"], **(req.get("slots") or {})}
        tau = r3(req.get("at", 0.0))
        hi, dur = math.inf, video.duration_s
        initial, update = request_texts(pair, spec, self.seed)
        intents = [{"id": "i1", "subtype": st, "request": initial, "available_at": tau,
                    "closed_at": -1.0, "proactive": True}]
        turns = [{"t": tau, "kind": "initial", "intent_id": "i1", "text": initial}]

        def resp(values: dict[str, Any]) -> str:
            return fill(spec.response, {**slots, **values}, where)

        def event_items(evs: list[dict[str, Any]]) -> list[tuple[float, str]]:
            return [(r3(e["t"]), resp({"text": e.get("text", e["label"]), "n": k + 1}))
                    for k, e in enumerate(evs)]

        points: list[dict[str, Any]] = []
        if spec.rule == "events":
            evs = [e for e in self._events(pair, "event") if float(e["t"]) >= tau]
            if st == "I":
                evs = evs[:1]
            items = event_items(evs)
            if st not in DYNAMIC:
                points = self._points(spec, "i1", items, tau, hi, dur)
            else:
                if req.get("turn_at") is None:
                    raise BadInput(where[0], f"{where[1]}.turn_at", f"{st} needs the update turn time")
                u = r3(req["turn_at"])
                proactive = True
                if st == "RV":  # the revision supersedes i1 at u
                    intents[0]["closed_at"] = u
                    points = self._points(spec, "i1", [(t, x) for t, x in items if t < u], tau, u, dur)
                elif st in ("CP", "IT"):  # i1 stays active
                    points = self._points(spec, "i1", items, tau, hi, dur)
                if st in ("RV", "CP"):
                    new = [e for e in self._events(pair, "new_event") if float(e["t"]) >= u]
                    points += self._points(spec, "i2", event_items(new), u, hi, dur)
                else:  # IT: an immediate (reactive) question answered right away
                    answer = str(req.get("answer", "")).strip()
                    if not answer:
                        raise BadInput(where[0], f"{where[1]}.answer", "IT needs the answer to the question")
                    points.append({"intent_id": "i2", "start": u, "end": r3(u + spec.immediate_window),
                                   "preferred": u, "response": answer, "proactive": False})
                    proactive = False
                intents.append({"id": "i2", "subtype": st, "request": update, "available_at": u,
                                "closed_at": -1.0, "proactive": proactive})
                turns.append({"t": u, "kind": KIND_OF[st], "intent_id": "i2", "text": update})
        elif spec.rule == "states":
            changes = sorted(self._native(pair, "states"), key=lambda c: float(c["t"]))
            target = req.get("state")
            if st == "P" and target:
                changes = [c for c in changes if c.get("to") == target]
                if not changes:
                    raise BadInput(pair["task_record"], "native.states", f"no transition to {target!r}")
            items = [(r3(c["t"]), c.get("text") or resp({"from": c.get("from", ""), "to": c.get("to", "")}))
                     for c in changes if float(c["t"]) >= tau]
            points = self._points(spec, "i1", items, tau, hi, dur)
        elif spec.rule == "steps":
            steps = sorted(self._native(pair, "steps"), key=lambda s: float(s["start"]))
            if st == "G":  # guidance for the next action: at each step boundary after the first
                items = [(r3(s["start"]), resp({"label": s.get("label", "")})) for s in steps[1:]]
            else:  # L: an explanation where a step carries one
                items = [(r3(s["start"]), resp({"explain": s["explain"], "label": s.get("label", "")}))
                         for s in steps if s.get("explain")]
                if not items:
                    raise BadInput(pair["task_record"], "native.steps", "no step has an 'explain' text")
            points = self._points(spec, "i1", [(t, x) for t, x in items if t >= tau], tau, hi, dur)
        else:  # actions (GUI logs)
            acts = sorted(self._native(pair, "actions"), key=lambda a: float(a["t"]))
            items = [(r3(a["t"]), resp({"action": a.get("action", ""), "target": a.get("target", "")}))
                     for a in acts if float(a["t"]) >= tau]
            points = self._points(spec, "i1", items, tau, hi, dur)
        points.sort(key=lambda p: (p["preferred"], p["intent_id"]))
        return {"intents": intents, "user_turns": turns,
                "transitions": transitions_for(intents, turns), "evidence": points}


def assemble(pair: dict[str, Any], video: NormalizedVideo, raw: RawCandidate,
             generator: CandidateGenerator) -> dict[str, Any]:
    """Raw candidate + the provenance App. B.2 keeps (source collection, video id, duration…)."""
    turns = sorted(raw.get("user_turns") or [], key=lambda x: float(x.get("t", 0) or 0))
    return {
        "id": pair["id"],
        "subtype": pair["subtype"],
        "category": SUBTYPES[pair["subtype"]][0],
        "environment": pair["environment"],
        "source_collection": pair["collection"],
        "source_video_id": pair["video_id"],
        "source_file": pair["video"],
        "task_record": pair["task_record"],
        "video_sha256": video.sha256,
        "duration_s": video.duration_s,
        "fps": round(video.fps, 3),
        "header_frames": video.header_frames,
        "decodable_frames": video.decodable_frames,
        "video_note": video.note,
        "task": pair["task"],
        "initial_instruction": str(turns[0].get("text", "")) if turns else "",
        "intents": list(raw.get("intents") or []),
        "user_turns": list(raw.get("user_turns") or []),
        "transitions": list(raw.get("transitions") or []),
        "evidence": list(raw.get("evidence") or []),
        "negative_probes": [],
        "generator": generator.name,
        "prompt_version": generator.prompt_version,
        "fixes": [],
    }
