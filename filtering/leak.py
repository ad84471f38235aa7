"""The first-turn leak filter (ProactiveBench §3.3, App. 0.A.8).

"Samples are filtered if they are correctly predicted at least 25% of the time in MCQA,
considering all evaluated MLLMs, during the first turn" (§3.3); with 22 probe models that is
6/22 (App. 0.A.8). Why: a sample a model can answer from the least informative frame does not
measure proactiveness — after filtering, first-turn accuracy drops from 32.5% to 6.4% (§3.3).

This module turns that sentence into an auditable procedure:

- every probe sees exactly the episode's first state (image, prompt, option order; hint per
  config) and its answer is parsed like the official environment (``filtering.parsing``);
- each model's raw answer and correctness is kept per sample (``probe_results``, PROBE_RESULT);
- a model that failed after bounded retries is *failed*, not wrong: the rate is
  correct / answering models;
- a sample with fewer answering models than ``min_answering_models`` is *unresolved* and routed
  by the explicit ``unresolved_policy`` (keep | filter | reject) — never silently kept;
- with no probes configured, nothing is filtered and :meth:`LeakFilter.describe` says loudly
  that the filter was not applied (for the manifest and dataset card).
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import yaml

from core.progress import Stage
from filtering.cache import ResponseCache, identity, response_key
from filtering.parsing import FirstTurn, first_turn, score_answer
from filtering.probes import (
    REMOTE_BACKENDS,
    ClipProbe,
    Job,
    Limits,
    Outcome,
    ProbeConfigError,
    ProbeSpec,
    RetryPolicy,
    load_precomputed,
    new_stats,
    run_remote,
)

DECISIONS = ("keep", "filter", "unresolved")
UNRESOLVED_POLICIES = ("keep", "filter", "reject")
NOT_APPLIED_NOTICE = (
    "**The leak filter was NOT applied**: no probe models were configured, so samples that "
    "can be answered from the first frame (ProactiveBench §3.3, App. 0.A.8) were not removed."
)


@dataclass(frozen=True)
class LeakFilterConfig:
    """Probe pool and decision rule, usually read from YAML (``configs/probes.example.yaml``)."""

    probes: tuple[ProbeSpec, ...] = ()
    threshold: float = 0.25
    min_answering_models: int = 1
    unresolved_policy: str | None = None
    hint: bool = False
    cache_dir: str | None = None
    progress: bool = True
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    limits: dict[str, Limits] = field(default_factory=dict)
    clip_batch_size: int = 32
    source: str = "<dict>"

    @staticmethod
    def from_dict(raw: dict[str, Any] | None, source: str = "<dict>") -> LeakFilterConfig:
        raw = dict(raw or {})
        lf = dict(raw.pop("leak_filter", {}) or {})
        probes_raw = raw.pop("probes", []) or []
        backends_raw = raw.pop("backends", {}) or {}
        if raw:
            raise ProbeConfigError(f"{source}: unknown top-level keys {sorted(raw)}")
        probes = tuple(ProbeSpec.from_dict(p, f"{source}: probes[{i}]") for i, p in enumerate(probes_raw))
        names = [p.name for p in probes]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ProbeConfigError(f"{source}: duplicate probe names {dupes} (set 'name')")
        threshold = float(lf.pop("threshold", 0.25))
        if not 0 < threshold <= 1:
            raise ProbeConfigError(f"{source}: leak_filter.threshold must be in (0, 1]")
        min_ans = lf.pop("min_answering_models", None)
        if min_ans is None:
            min_ans = max(1, math.ceil(len(probes) / 2))
        policy = lf.pop("unresolved_policy", None)
        if probes and policy not in UNRESOLVED_POLICIES:
            raise ProbeConfigError(
                f"{source}: leak_filter.unresolved_policy must be set explicitly to one of "
                f"{UNRESOLVED_POLICIES} (got {policy!r}); unresolved samples are never kept "
                "silently"
            )
        try:
            retry = RetryPolicy(**(lf.pop("retry", {}) or {}))
        except TypeError as e:
            raise ProbeConfigError(f"{source}: leak_filter.retry: {e}") from None
        limits: dict[str, Limits] = {}
        for group, v in backends_raw.items():
            try:
                limits[group] = Limits(**(v or {}))
            except TypeError as e:
                raise ProbeConfigError(f"{source}: backends.{group}: {e}") from None
        cfg = LeakFilterConfig(
            probes=probes,
            threshold=threshold,
            min_answering_models=int(min_ans),
            unresolved_policy=policy,
            hint=bool(lf.pop("hint", False)),
            cache_dir=lf.pop("cache_dir", None),
            progress=bool(lf.pop("progress", True)),
            retry=retry,
            limits=limits,
            clip_batch_size=int(lf.pop("clip_batch_size", 32)),
            source=source,
        )
        if lf:
            raise ProbeConfigError(f"{source}: unknown leak_filter keys {sorted(lf)}")
        return cfg

    @staticmethod
    def from_yaml(path: str) -> LeakFilterConfig:
        try:
            with open(path, encoding="utf-8") as fh:
                raw = yaml.safe_load(fh)
        except FileNotFoundError:
            raise ProbeConfigError(f"probe config {path} does not exist") from None
        except yaml.YAMLError as e:
            raise ProbeConfigError(f"probe config {path}: invalid YAML: {e}") from None
        if raw is not None and not isinstance(raw, dict):
            raise ProbeConfigError(f"probe config {path}: top level must be a mapping")
        return LeakFilterConfig.from_dict(raw, source=path)


def leaks(correct: int, answering: int, threshold: float) -> bool:
    """correct / answering ≥ threshold, in exact arithmetic (6/22 ≥ 0.25; 1/4 ≥ 0.25)."""
    return answering > 0 and Fraction(correct, answering) >= Fraction(str(threshold))


class LeakFilter:
    """Probe episodes' first turns with a model pool and decide keep / filter / unresolved.

    Picklable: runtime state (clients, CLIP models, precomputed tables) is rebuilt lazily, so a
    Beam DoFn may build it in ``setup()`` from the config path or receive it pickled.
    ``run_id`` tags the usage log in the cache so a report can sum requests across workers.
    """

    def __init__(self, config: LeakFilterConfig | str, run_id: str = "") -> None:
        self.config = LeakFilterConfig.from_yaml(config) if isinstance(config, str) else config
        self.run_id = run_id
        self.stats: dict[str, dict[str, int]] = {}
        self._clip: dict[str, ClipProbe] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_clip"] = {}
        return state

    @property
    def applied(self) -> bool:
        return bool(self.config.probes)

    @property
    def pool(self) -> list[str]:
        return [p.name for p in self.config.probes]

    def describe(self) -> dict[str, Any]:
        """Manifest entry: whether applied, the rule, and the pool (no secrets, no URLs)."""
        cfg = self.config
        out: dict[str, Any] = {
            "applied": self.applied,
            "rule": "filter if correct / answering models >= threshold (ProactiveBench App. 0.A.8)",
            "threshold": cfg.threshold,
            "min_answering_models": cfg.min_answering_models,
            "unresolved_policy": cfg.unresolved_policy,
            "hint": cfg.hint,
            "pool": [
                {"name": p.name, "backend": p.backend, "model": p.model, "settings": p.answer_settings()}
                for p in cfg.probes
            ],
        }
        for p in cfg.probes:
            if p.backend == "clip":
                out.setdefault("clip", {})[p.name] = self._clip_probe(p).describe()
        if not self.applied:
            out["notice"] = NOT_APPLIED_NOTICE
        return out

    def card_notice(self) -> str:
        """Markdown for the dataset card (prominent when the filter was not applied)."""
        if not self.applied:
            return f"> ⚠️ {NOT_APPLIED_NOTICE}\n"
        return (
            f"Leak filter applied with {len(self.pool)} probe models "
            f"(threshold {self.config.threshold:g}, unresolved → "
            f"{self.config.unresolved_policy}).\n"
        )

    # ------------------------------------------------------------------ probing
    def _clip_probe(self, spec: ProbeSpec) -> ClipProbe:
        if spec.name not in self._clip:
            self._clip[spec.name] = ClipProbe(spec, self.config.cache_dir, self.config.clip_batch_size)
        return self._clip[spec.name]

    def _identity(self, spec: ProbeSpec) -> str:
        if spec.backend == "clip":
            d = self._clip_probe(spec).describe()
            return identity(
                "clip", spec.model, {"checkpoint_sha256": d["checkpoint_sha256"], "templates": d["templates"]}
            )
        return spec.identity()

    def probe(self, episodes: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        """First-turn answers of every pool model for each episode (PROBE_RESULT dicts).

        Cached answers are reused; only missing (probe, prompt, image) triples are requested.
        """
        turns = [first_turn(ep, hint=self.config.hint) for ep in episodes]
        ids = [t.episode_id for t in turns]
        if len(set(ids)) != len(ids):
            raise ValueError("LeakFilter.probe: duplicate episode ids in one batch")
        if not self.config.probes:
            return {i: [] for i in ids}
        cache = ResponseCache(self.config.cache_dir)
        outcomes: dict[tuple[str, str], Outcome] = {}
        batch_stats: dict[str, dict[str, int]] = {}
        remote: list[Job] = []
        total = len(turns) * len(self.config.probes)
        progress = Stage("leak filter: first-turn probes", total, enabled=self.config.progress)

        for spec in self.config.probes:
            st = batch_stats.setdefault(spec.name, new_stats())
            if spec.backend == "precomputed":
                table = load_precomputed(spec.path or "")
                for t in turns:
                    raw = table.get((t.episode_id, spec.model))
                    outcomes[(spec.name, t.episode_id)] = (
                        Outcome("answered", raw=raw)
                        if raw is not None
                        else Outcome("failed", error="no precomputed prediction")
                    )
                    st["failures"] += int(raw is None)
                progress.advance(len(turns))
                continue
            ident = self._identity(spec)
            keys = {t.episode_id: response_key(ident, t.prompt_sha256, t.image_sha256) for t in turns}
            hits = cache.get_many(list(keys.values()))
            todo: list[FirstTurn] = []
            for t in turns:
                hit = hits.get(keys[t.episode_id])
                if hit is not None:
                    outcomes[(spec.name, t.episode_id)] = Outcome("answered", hit["raw_answer"], cached=True)
                    st["cache_hits"] += 1
                else:
                    todo.append(t)
            progress.advance(len(turns) - len(todo), cached=len(turns) - len(todo))
            if spec.backend == "clip" and todo:
                answers = self._clip_probe(spec).answer(todo)
                st["requests"] += len(todo)
                for t, raw in zip(todo, answers, strict=True):
                    cache.put(keys[t.episode_id], ident, t.prompt_sha256, t.image_sha256, raw)
                    outcomes[(spec.name, t.episode_id)] = Outcome("answered", raw)
                progress.advance(len(todo))
            elif spec.backend in REMOTE_BACKENDS:
                remote.extend(Job(spec, t, keys[t.episode_id]) for t in todo)

        try:
            if remote:
                outcomes.update(
                    _run_async(
                        run_remote(
                            remote, self.config.limits, self.config.retry, cache, batch_stats, progress
                        )
                    )
                )
        finally:
            cache.flush()  # answers received before an error are kept for the next run
        progress.close()
        cache.log_usage(self.run_id, batch_stats)
        for name, st in batch_stats.items():
            agg = self.stats.setdefault(name, new_stats())
            for k, v in st.items():
                agg[k] = agg.get(k, 0) + v

        out: dict[str, list[dict[str, Any]]] = {}
        for t in turns:
            rows = []
            for spec in self.config.probes:
                o = outcomes[(spec.name, t.episode_id)]
                if o.status == "answered":
                    s = score_answer(t, o.raw)
                    rows.append(
                        {
                            "model": spec.name,
                            "backend": spec.backend,
                            "status": "answered",
                            "raw_answer": o.raw,
                            "parsed": s.parsed,
                            "correct": s.correct,
                        }
                    )
                else:
                    rows.append(
                        {
                            "model": spec.name,
                            "backend": spec.backend,
                            "status": "failed",
                            "raw_answer": "",
                            "parsed": "",
                            "correct": False,
                        }
                    )
            out[t.episode_id] = rows
        return out

    # ------------------------------------------------------------------ deciding
    def decide(self, probe_results: list[dict[str, Any]]) -> tuple[str, str, str]:
        """(decision, reason, evidence JSON) for one sample's probe results.

        decision ∈ {"keep", "filter", "unresolved"}; route it with :meth:`route`.
        """
        cfg = self.config
        answering = [r for r in probe_results if r["status"] == "answered"]
        failed = sorted(r["model"] for r in probe_results if r["status"] != "answered")
        correct = sum(1 for r in answering if r["correct"])
        evidence = {
            "rule": "correct / answering >= threshold",
            "threshold": cfg.threshold,
            "answering": len(answering),
            "correct": correct,
            "failed_models": failed,
            "min_answering_models": cfg.min_answering_models,
            "per_model": [
                {k: r[k] for k in ("model", "backend", "status", "raw_answer", "parsed", "correct")}
                for r in probe_results
            ],
        }
        ev = json.dumps(evidence, sort_keys=True, ensure_ascii=False)
        if not self.applied:
            return "keep", "leak filter not applied: no probe models configured", ev
        if len(answering) < cfg.min_answering_models:
            return (
                "unresolved",
                f"only {len(answering)} of {len(probe_results)} probe models answered "
                f"(minimum {cfg.min_answering_models}); policy: {cfg.unresolved_policy}",
                ev,
            )
        if leaks(correct, len(answering), cfg.threshold):
            return (
                "filter",
                f"first-turn leak: {correct}/{len(answering)} answering models correct "
                f"(>= {cfg.threshold:g})",
                ev,
            )
        return ("keep", f"{correct}/{len(answering)} answering models correct (< {cfg.threshold:g})", ev)

    def route(self, decision: str) -> str:
        """Where a decision sends the sample: kept | filtered | rejected (design.md §Conventions)."""
        if decision == "keep":
            return "kept"
        if decision == "filter":
            return "filtered"
        if decision == "unresolved":
            policy = self.config.unresolved_policy
            return {"keep": "kept", "filter": "filtered", "reject": "rejected"}[policy or "reject"]
        raise ValueError(f"unknown decision {decision!r}")

    def usage(self) -> dict[str, dict[str, int]]:
        """Request/token counts: from the cache's usage log for this run_id when there is one
        (sums all Beam workers), else this instance's own counters."""
        if self.config.cache_dir:
            return ResponseCache(self.config.cache_dir).usage(self.run_id)
        return {k: dict(v) for k, v in self.stats.items()}


def _run_async(coro: Any) -> Any:
    """Run a coroutine from sync code, also when the caller already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = e

    th = threading.Thread(target=target)
    th.start()
    th.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
