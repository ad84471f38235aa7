"""Requests planned from a dataset's native annotations (StreamVibe §3.2–3.3, App. B.2).

§3.3 builds one candidate "for each video-request pair"; with a source dataset in its released
layout (:mod:`pipelines.common.video_sources`) nobody has written the requests, so the builder
decides, per video, which intent subtypes its annotations support and writes one request per
subtype from the subtype's templates (``configs/streamvibe/intents.yaml``), its slots filled
from the native labels:

* **I** — an event label that occurs exactly once (App. B.2 "one requested event");
* **R** — an event label that occurs at least twice ("repeated occurrences");
* **P** — a state the video changes into (a Charades action starting, an Ego4D activity);
* **M** — at least one state change to monitor;
* **G** — a step list with at least two steps (guidance at each next step);
* **L** — steps whose text explains them;
* **T** — a GUI action log;
* **RV / CP** — two event labels and a turn time between them that the annotations support
  (the first intent's event before the turn, the second's at least ``MIN_GAP_S`` later);
* **IT** — an event intent plus an immediate question at the end of an annotated span, answered
  from that span's text.

Events are the point-like reading of every timed label (a step's or an action's start, a
narration); states are the activity a person is in after each action or narration starts.
Every choice among several candidates (which label, which turn) is drawn with the project's
per-sample ``rng_for(global_seed, <dataset>/<video>, "plan:<subtype>")``, so one video's plan
never depends on another's. Each native item keeps the file and field it came from, so a
rejection later (a window past the decoded end) names the line a person must fix.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from core.errors import BadInput, Rejection
from core.seeding import rng_for
from pipelines.common.sources import Filtered
from pipelines.common.video_sources import DATASETS
from pipelines.common.video_sources.base import NativeFiltered, NativeVideo
from pipelines.streamvibe.sources import UNASSIGNED, pair_id
from schemas.streamvibe import BENCHMARK, SUBTYPES

EVENT_KINDS = ("step", "action", "narration")
STATE_KINDS = ("action", "narration")
MIN_GAP_S = 3.0  # a dynamic turn falls after the first intent's window (3 s, intents.yaml)
IMMEDIATE_S = 3.0  # IT's answer is due within this (immediate_window, intents.yaml)
PLANNED = "planned"  # the task_record of a planned pair names the annotation file it came from


def native_record(video: NativeVideo) -> dict[str, list[dict[str, Any]]]:
    """The rule generator's native record (events, states, steps, actions) with provenance."""
    events = [{"t": s.start, "label": s.label, "text": _clause(s.text), "phrase": s.phrase,
               "field": s.field} for s in video.of_kind(*EVENT_KINDS)]
    states, before = [], "nothing has happened yet"
    for s in video.of_kind(*STATE_KINDS):
        now = _clause(s.get("state") or s.text)
        if now != before:
            states.append({"t": s.start, "from": before, "to": now, "field": s.field})
            before = now
    steps = [{"start": s.start, "end": s.end, "label": _clause(s.text), "explain": s.text,
              "field": s.field} for s in video.of_kind("step")]
    actions = [{"t": s.start, "action": s.label, "target": s.get("target"), "field": s.field}
               for s in video.of_kind("gui_action")]
    return {"events": events, "states": states, "steps": steps, "actions": actions}


def _clause(text: str) -> str:
    """A native sentence as it stands inside a response template that ends the sentence itself
    ("Now: {text}."): its own final stop dropped (ActivityNet's captions end with one)."""
    return text.rstrip(" .")


def _times(events: list[dict[str, Any]], last: float) -> dict[str, list[float]]:
    """Label → its occurrence times a window can still hold (at least a second before ``last``,
    the annotated end), one per second: two occurrences closer than that are one point to the
    rule generator (candidates._windows), so a planned R with them would have one point."""
    out: dict[str, list[float]] = {}
    for e in sorted(events, key=lambda e: float(e["t"])):
        t, seen = float(e["t"]), out.setdefault(e["label"], [])
        if t <= last - 1.0 and (not seen or t - seen[-1] >= 1.0):
            seen.append(t)
    return {label: ts for label, ts in out.items() if ts}


def plan_requests(video: NativeVideo, native: dict[str, list[dict[str, Any]]], seed: int,
                  allowed: tuple[str, ...] = tuple(SUBTYPES)) -> list[dict[str, Any]]:
    """One request per subtype the annotations support (module doc), in subtype order."""
    events = native["events"]
    last = video.annotated_duration_s or max((s.end for s in video.spans), default=0.0)
    times = _times(events, last)
    phrase = {e["label"]: e["phrase"] for e in reversed(events)}
    once = sorted(label for label, ts in times.items() if len(ts) == 1)
    repeated = sorted(label for label, ts in times.items() if len(ts) >= 2)
    out: list[dict[str, Any]] = []

    def rng(subtype: str):
        return rng_for(seed, video.key, f"plan:{subtype}")

    if "I" in allowed and once:
        label = rng("I").choice(once)
        out.append({"subtype": "I", "event": label, "slots": {"event": phrase[label]}})
    if "P" in allowed and native["states"]:
        targets = sorted({c["to"] for c in native["states"]})
        state = rng("P").choice(targets)
        out.append({"subtype": "P", "state": state, "slots": {"state": state}})
    if "R" in allowed and repeated:
        label = rng("R").choice(repeated)
        out.append({"subtype": "R", "event": label, "slots": {"event": phrase[label]}})
    if "G" in allowed and len(native["steps"]) >= 2:
        out.append({"subtype": "G", "slots": {"task": video.task}})
    if "L" in allowed and native["steps"]:
        out.append({"subtype": "L", "slots": {"topic": video.topic}})
    if "M" in allowed and native["states"]:
        out.append({"subtype": "M", "slots": {"subject": "what is going on in front of the camera"}})
    if "T" in allowed and native["actions"]:
        out.append({"subtype": "T", "slots": {"app": video.topic, "task": video.task}})
    turns = _dynamic_turns(times)
    for st in ("RV", "CP"):
        if st in allowed and turns:
            a, b, u = rng(st).choice(turns)
            out.append({"subtype": st, "event": a, "new_event": b, "turn_at": u,
                        "slots": {"event": phrase[a], "new_event": phrase[b]}})
    spans = [s for s in video.of_kind(*EVENT_KINDS)
             if (s.end > s.start or s.kind == "narration") and s.end + IMMEDIATE_S <= last]
    if "IT" in allowed and times and spans:
        r = rng("IT")
        label = r.choice(sorted(times))
        span = r.choice(spans)
        out.append({"subtype": "IT", "event": label, "turn_at": span.end,
                    "slots": {"event": phrase[label], "question": "what just happened?"},
                    "answer": span.text[0].upper() + span.text[1:].rstrip(".") + "."})
    return out


def _dynamic_turns(times: dict[str, list[float]]) -> list[tuple[str, str, float]]:
    """(first label, second label, turn time): the first label occurs before the turn, the
    second at or after it, the turn ``MIN_GAP_S`` after the first label's first occurrence."""
    out = []
    for a, ta in sorted(times.items()):
        u = round(ta[0] + MIN_GAP_S, 3)
        for b, tb in sorted(times.items()):
            if b != a and any(t >= u for t in tb):
                out.append((a, b, u))
    return out


def planned_pairs(dataset: str, root: str, seed: int, allowed: tuple[str, ...] = tuple(SUBTYPES)
                  ) -> Iterator[dict[str, Any] | Rejection | Filtered]:
    """Every video of one dataset as its planned video-request pairs — or one rejection (bad
    input, naming file and field) or one filtered input (a rule of the dataset, or annotations
    that support no subtype), under the pseudo-subtype ``unassigned``."""
    reader = DATASETS[dataset](root)
    for x in reader.videos():
        if isinstance(x, BadInput):  # files named as the release names them: <dataset>/<file>
            x.source_file = f"{dataset}/{x.source_file}"
            yield Rejection.from_bad_input(x, benchmark=BENCHMARK, environment=UNASSIGNED,
                                           stage="listing", item_id=x.item_id or dataset)
            continue
        if isinstance(x, NativeFiltered):
            yield Filtered(x.item_id, BENCHMARK, UNASSIGNED, f"{dataset}/{x.source_file}", x.rule,
                           x.reason)
            continue
        native = native_record(x)
        requests = plan_requests(x, native, seed, allowed)
        if not requests:
            yield Filtered(x.key, BENCHMARK, UNASSIGNED, f"{dataset}/{x.annotation_file}",
                           "no supported subtype",
                           f"the annotations support none of {list(allowed)} (planner rules: "
                           f"{_kinds(x)})")
            continue
        for k, req in enumerate(requests):
            yield {
                "id": pair_id(req["subtype"], dataset, x.video_id, k),
                "subtype": req["subtype"],
                "collection": dataset,
                "video_id": x.video_id,
                "video": f"{dataset}/{x.video}",
                "source": dataset,
                "environment": x.environment,
                "task_record": f"{dataset}/{x.annotation_file}",
                "task": x.task,
                "native": native,
                "request": req,
                "request_index": k,
                "annotated_duration_s": x.annotated_duration_s,
            }


def _kinds(video: NativeVideo) -> str:
    kinds = Counter(s.kind for s in video.spans)
    return ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "no spans"


def native_past_end(pair: dict[str, Any], decoded_s: float, tolerance_s: float = 0.5) -> BadInput | None:
    """The first native item of a planned pair that lies past the video's *decoded* end, naming
    its file and field (and the annotated duration when that claims more than the file holds),
    else ``None``. Checked before generation: a real download is often shorter than its
    annotation, and a truncated file's header may still claim its full length."""
    worst: tuple[float, str] | None = None
    for items in pair["native"].values():
        for item in items:
            end = float(item.get("end", item.get("t", 0.0)))
            if end > decoded_s + tolerance_s and (worst is None or (end, item["field"]) < worst):
                worst = (end, item["field"])
    if worst is None:
        return None
    file, _, where = worst[1].partition(": ")
    claimed = pair.get("annotated_duration_s")
    said = (f"; the annotation claims {claimed} s" if claimed is not None
            and claimed > decoded_s + tolerance_s else "")
    return BadInput(f"{pair['collection']}/{file}", where, f"annotated at {worst[0]} s, past the "
                    f"video's decoded end ({round(decoded_s, 3)} s{said})", pair["id"])
