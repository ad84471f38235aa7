"""Hard-negative mining and the first-turn leak filter (ProactiveBench §3.3, App. 0.A.7, 0.A.8).

- :mod:`filtering.negatives` — ``HardNegativeMiner`` (open_clip text encoder).
- :mod:`filtering.leak` — ``LeakFilterConfig`` / ``LeakFilter`` (probe pool, 25% rule).
- :mod:`filtering.probes` — the pool's entries: models (asked through :mod:`clients`) and the
  local ``precomputed`` / ``clip`` probes.
- :mod:`filtering.report` — ``write_leak_report`` and the binomial analysis.
- :mod:`filtering.parsing` — the official environment's answer parsing, ported.

Heavy dependencies (torch, open_clip; the API SDKs, in :mod:`clients`) are imported lazily so
that importing the package from a Beam pipeline stays cheap.
"""
