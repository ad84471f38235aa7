"""Designated nearby negative probes for FPR_near (StreamVibe §3.5, App. B.5).

"FPR_near measures responses on designated nearby negative probes." A probe is a 1 FPS decision
time (integer second) where the correct action is silence: outside every evidence window of
every intent, but *near* one, because a probe far from any evidence tests nothing a model finds
hard. Probes are at or after the first intent is available (before it there is nothing to respond
to) and inside the real duration. Up to ``per_sample`` are drawn with
``rng_for(seed, sample_id, "negative_probes")`` (design.md §Conventions) and stored sorted; each
keeps its type (``near_before`` a window, ``near_after`` one, or ``between`` two windows both
within reach) — App. B.2 keeps the "negative-probe type".

*Near* has a lower bound the scorer sets: at tolerance τ a response may match a point anywhere in
[s − τ, e + τ] (``scoring.py`` choice 1), so a probe at most τ from a window would count one
response as a true positive *and* a false positive. Probes therefore lie **strictly more than**
``tau_s`` from every window — ``tau_s`` is the largest tolerance the release supports (StreamVibe
App. A.1 scores at ±2, ±1 and ±0 s, so 2 s), recorded in the manifest — and at most
``max_distance`` from the nearest one.
"""

from __future__ import annotations

import math
from typing import Any

from core.seeding import rng_for

_EPS = 1e-9


def _nearest(t: int, points: list[dict[str, Any]]) -> list[tuple[float, str, str]] | None:
    """(distance, side, evidence id) to every window, nearest first; None when t is inside one."""
    gaps = []
    for p in points:
        if p["start"] - _EPS <= t <= p["end"] + _EPS:
            return None
        side = "near_before" if t < p["start"] else "near_after"
        gaps.append((p["start"] - t if side == "near_before" else t - p["end"], side, p["id"]))
    return sorted(gaps)


def negative_probes(candidate: dict[str, Any], *, seed: int, per_sample: int = 4,
                    tau_s: float = 2.0, max_distance: float = 8.0) -> list[dict[str, Any]]:
    points = candidate["evidence"]
    if not points or per_sample <= 0:
        return []
    start = math.ceil(min(i["available_at"] for i in candidate["intents"]) - _EPS)
    stop = math.ceil(candidate["duration_s"] - _EPS)  # decision steps t < duration
    options = []
    for t in range(start, stop):
        gaps = _nearest(t, points)
        if not gaps:
            continue
        dist, side, eid = gaps[0]
        if not tau_s + _EPS < dist <= max_distance + _EPS:
            continue
        reach = {g[1] for g in gaps if g[0] <= max_distance + _EPS}
        kind = "between" if reach == {"near_before", "near_after"} else side
        options.append({"t": float(t), "probe_type": kind, "nearest_evidence": eid,
                        "distance": round(float(dist), 3)})
    rng = rng_for(seed, candidate["id"], "negative_probes")
    chosen = rng.sample(options, min(per_sample, len(options)))
    return sorted(chosen, key=lambda x: x["t"])


def supported_tolerances(config: dict[str, Any]) -> list[float]:
    """``tolerances_s`` of a build config, sorted (default: App. A.1's 2, 1 and 0 s). The largest
    sets the probes' lower bound, so it must stay below their reach ``negatives.max_distance``."""
    taus = config.get("tolerances_s", [2, 1, 0])
    reach = float((config.get("negatives") or {}).get("max_distance", 8))
    if not taus or any(isinstance(t, bool) or not isinstance(t, int | float) or t < 0 for t in taus):
        raise ValueError(f"tolerances_s must be a list of numbers >= 0, got {taus!r}")
    if max(taus) >= reach:
        raise ValueError(f"the largest tolerance ({max(taus)} s) must be below negatives.max_distance "
                         f"({reach} s): no probe could lie between them")
    return sorted(float(t) for t in taus)


def probe_facts(config: dict[str, Any]) -> dict[str, Any]:
    """What the manifest says about FPR_near: the supported τ and where the probes lie."""
    taus = config["tolerances_s"]
    return {"tolerances_s": taus, "probes_farther_than_s": max(taus),
            "probes_within_s": float((config.get("negatives") or {}).get("max_distance", 8))}


def probe_card_lines(config: dict[str, Any]) -> list[str]:
    """The dataset card's paragraph on supported tolerances (Markdown lines)."""
    f = probe_facts(config)
    far, near = f"{f['probes_farther_than_s']:g}", f"{f['probes_within_s']:g}"
    return ["", "## Tolerances and FPR_near probes", "",
            f"Supported matching tolerances: τ ∈ {{{', '.join(f'{t:g}' for t in f['tolerances_s'])}}} s "
            f"(any τ ≤ {far} s). Every negative probe lies more than {far} s and at most {near} s from "
            "the nearest evidence window, so at a supported τ no response is both a true positive and "
            f"a probe hit. Scoring at τ > {far} s is not supported by this release."]
