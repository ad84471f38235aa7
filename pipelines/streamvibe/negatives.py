"""Designated nearby negative probes for FPR_near (StreamVibe §3.5, App. B.5).

"FPR_near measures responses on designated nearby negative probes." A probe is a 1 FPS decision
time (integer second) where the correct action is silence: outside every evidence window of
every intent, but *near* one (``min_distance`` to ``max_distance`` seconds from its nearest
edge), because a probe far from any evidence tests nothing a model finds hard. Probes are at or
after the first intent is available (before it there is nothing to respond to) and inside the
real duration. Up to ``per_sample`` are drawn with ``rng_for(seed, sample_id, "negative_probes")``
(design.md §Conventions) and stored sorted; each keeps its type (``near_before`` a window, ``near_after`` one,
or ``between`` two windows both within reach) — App. B.2 keeps the "negative-probe type".
"""

from __future__ import annotations

import math
from typing import Any

from core.seeding import rng_for


def negative_probes(candidate: dict[str, Any], *, seed: int, per_sample: int = 4,
                    min_distance: float = 2.0, max_distance: float = 8.0) -> list[dict[str, Any]]:
    points = candidate["evidence"]
    if not points or per_sample <= 0:
        return []
    start = math.ceil(min(i["available_at"] for i in candidate["intents"]) - 1e-9)
    stop = math.ceil(candidate["duration_s"] - 1e-9)  # decision steps t < duration
    options = []
    for t in range(start, stop):
        gaps = []  # (distance, side, evidence id)
        inside = False
        for p in points:
            if p["start"] - 1e-9 <= t <= p["end"] + 1e-9:
                inside = True
                break
            if t < p["start"]:
                gaps.append((p["start"] - t, "near_before", p["id"]))
            else:
                gaps.append((t - p["end"], "near_after", p["id"]))
        if inside or not gaps:
            continue
        gaps.sort()
        dist, side, eid = gaps[0]
        if not min_distance - 1e-9 <= dist <= max_distance + 1e-9:
            continue
        reach = {g[1] for g in gaps if g[0] <= max_distance + 1e-9}
        kind = "between" if reach == {"near_before", "near_after"} else side
        options.append({"t": float(t), "probe_type": kind, "nearest_evidence": eid,
                        "distance": round(float(dist), 3)})
    rng = rng_for(seed, candidate["id"], "negative_probes")
    chosen = rng.sample(options, min(per_sample, len(options)))
    return sorted(chosen, key=lambda x: x["t"])
