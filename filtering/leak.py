"""The first-turn leak filter (ProactiveBench §3.3, App. 0.A.8).

"Samples are filtered if they are correctly predicted at least 25% of the time in MCQA,
considering all evaluated MLLMs, during the first turn" (§3.3); with 22 probe models that is
6/22 (App. 0.A.8). Why: a sample a model can answer from the least informative frame does not
measure proactiveness — after filtering, first-turn accuracy drops from 32.5% to 6.4% (§3.3).

This module turns that sentence into an auditable procedure:

- every probe sees exactly the episode's first state (image, prompt, option order; hint per
  config) and its answer is parsed like the official environment (``filtering.parsing``);
- each model's raw answer and correctness is kept per sample (``probe_results``, PROBE_RESULT);
- the rate is correct / the whole pool, as App. 0.A.8 defines it ("considering all evaluated
  MLLMs": 6 of 22): a model that failed after bounded retries did not answer correctly. With
  ``denominator: answering`` the rate is correct / answering models instead (a failure is then
  neither right nor wrong) — an explicit, recorded deviation for pools with unreliable members;
- a sample with fewer answering models than ``min_answering_models`` is *unresolved* and routed
  by the explicit ``unresolved_policy`` (keep | filter | reject) — never silently kept;
- with no probes configured, nothing is filtered and :meth:`LeakFilter.describe` says loudly
  that the filter was not applied (for the manifest and dataset card).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import yaml

from clients import (
    ModelClient,
    ModelsConfig,
    ModelSpec,
    Outcome,
    Request,
    ResponseCache,
    Usage,
    ask_many,
    parse_models,
)
from clients import response_key as cache_key
from core.progress import Stage
from filtering.parsing import FirstTurn, first_turn, score_answer
from filtering.probes import ClipProbe, LocalProbe, Probe, ProbeConfigError, load_precomputed, parse_probe

DECISIONS = ("keep", "filter", "unresolved")
UNRESOLVED_POLICIES = ("keep", "filter", "reject")
DENOMINATORS = ("pool", "answering")
NOT_APPLIED_NOTICE = (
    "**The leak filter was NOT applied**: no probe models were configured, so samples that "
    "can be answered from the first frame (ProactiveBench §3.3, App. 0.A.8) were not removed."
)
#: keys that moved to the shared ``models:`` section (clients.config): a clear error, not a silent miss
MOVED = {"leak_filter.cache_dir": "models.cache_dir", "leak_filter.retry": "models.retry",
         "backends": "models.limits"}


@dataclass(frozen=True)
class LeakFilterConfig:
    """Probe pool and decision rule, usually read from YAML (``configs/probes.example.yaml``);
    the cache, retry policy and limits are the shared ``models:`` section (:mod:`clients.config`)."""

    probes: tuple[Probe, ...] = ()
    threshold: float = 0.25
    denominator: str = "pool"  # pool (App. 0.A.8) | answering
    min_answering_models: int = 1
    unresolved_policy: str | None = None
    hint: bool = False
    progress: bool = True
    models: ModelsConfig = field(default_factory=ModelsConfig)
    clip_batch_size: int = 32
    source: str = "<dict>"

    @staticmethod
    def from_dict(raw: dict[str, Any] | None, source: str = "<dict>") -> LeakFilterConfig:
        raw = dict(raw or {})
        lf = dict(raw.pop("leak_filter", {}) or {})
        for old, new in MOVED.items():
            section, _, key = old.partition(".")
            if (key in lf) if key else (section in raw):
                raise ProbeConfigError(f"{source}: {old}: moved to {new} (docs/filtering.md)")
        models_raw = raw.pop("models", None)
        probes_raw = raw.pop("probes", []) or []
        if raw:
            raise ProbeConfigError(f"{source}: unknown top-level keys {sorted(raw)}")
        models = parse_models(models_raw, source)
        probes = tuple(parse_probe(p, f"{source}: probes[{i}]") for i, p in enumerate(probes_raw))
        names = [p.name for p in probes]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ProbeConfigError(f"{source}: duplicate probe names {dupes} (set 'name')")
        threshold = float(lf.pop("threshold", 0.25))
        if not 0 < threshold <= 1:
            raise ProbeConfigError(f"{source}: leak_filter.threshold must be in (0, 1]")
        denominator = lf.pop("denominator", "pool")
        if denominator not in DENOMINATORS:
            raise ProbeConfigError(f"{source}: leak_filter.denominator must be one of {DENOMINATORS}, "
                                   f"got {denominator!r}")
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
        cfg = LeakFilterConfig(
            probes=probes,
            threshold=threshold,
            denominator=denominator,
            min_answering_models=int(min_ans),
            unresolved_policy=policy,
            hint=bool(lf.pop("hint", False)),
            progress=bool(lf.pop("progress", True)),
            models=models,
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


def leaks(correct: int, out_of: int, threshold: float) -> bool:
    """correct / out_of ≥ threshold, in exact arithmetic (6/22 ≥ 0.25; 1/4 ≥ 0.25)."""
    return out_of > 0 and Fraction(correct, out_of) >= Fraction(str(threshold))


class LeakFilter:
    """Probe episodes' first turns with a model pool and decide keep / filter / unresolved.

    Picklable: runtime state (CLIP models, precomputed tables) is rebuilt lazily, and the model
    clients hold settings only, so a Beam DoFn may build it in ``setup()`` from the config path
    or receive it pickled; its ``teardown()`` calls :meth:`close`. ``run_id`` tags the usage log
    in the cache so a report can sum requests across workers.
    """

    def __init__(self, config: LeakFilterConfig | str, run_id: str = "") -> None:
        self.config = LeakFilterConfig.from_yaml(config) if isinstance(config, str) else config
        self.run_id = run_id
        self._usage: dict[str, Usage] = {}
        self._clients: dict[str, ModelClient] = {}
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

    @property
    def stats(self) -> dict[str, dict[str, int]]:
        """This instance's counts per pool member (requests, retries, faults, cache hits…)."""
        return {name: u.as_dict() for name, u in self._usage.items()}

    def describe(self) -> dict[str, Any]:
        """Manifest entry: whether applied, the rule, and the pool (no secrets, no URLs)."""
        cfg = self.config
        out: dict[str, Any] = {
            "applied": self.applied,
            "rule": f"filter if correct / {cfg.denominator} >= threshold (ProactiveBench App. 0.A.8)",
            "threshold": cfg.threshold,
            "denominator": cfg.denominator,
            "min_answering_models": cfg.min_answering_models,
            "unresolved_policy": cfg.unresolved_policy,
            "hint": cfg.hint,
            "pool": [
                {"name": p.name, "backend": p.backend, "model": p.model, "settings": p.answer_settings()}
                for p in cfg.probes
            ],
        }
        for p in cfg.probes:
            if isinstance(p, LocalProbe) and p.backend == "clip":
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
    def _clip_probe(self, probe: LocalProbe) -> ClipProbe:
        if probe.name not in self._clip:
            self._clip[probe.name] = ClipProbe(probe, self.config.models.cache_dir,
                                               self.config.clip_batch_size)
        return self._clip[probe.name]

    def _client(self, spec: ModelSpec) -> ModelClient:
        if spec.name not in self._clients:
            self._clients[spec.name] = self.config.models.client(spec, label=spec.name)
        return self._clients[spec.name]

    def probe(self, episodes: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        """First-turn answers of every pool model for each episode (PROBE_RESULT dicts).

        Cached answers are reused; only missing (model, prompt, image) triples are requested.
        """
        turns = [first_turn(ep, hint=self.config.hint) for ep in episodes]
        ids = [t.episode_id for t in turns]
        if len(set(ids)) != len(ids):
            raise ValueError("LeakFilter.probe: duplicate episode ids in one batch")
        if not self.config.probes:
            return {i: [] for i in ids}
        requests = {t.episode_id: Request.of(t.episode_id, t.prompt, (t.image,)) for t in turns}
        outcomes: dict[tuple[str, str], Outcome] = {}
        batch: dict[str, Usage] = {}
        remote: list[tuple[ModelClient, Request]] = []
        progress = Stage("leak filter: first-turn probes", len(turns) * len(self.config.probes),
                         enabled=self.config.progress)
        for p in self.config.probes:
            if isinstance(p, ModelSpec):
                client = self._client(p)
                batch[p.name] = client.usage.copy()  # the batch's counts: the difference after it
                remote += [(client, requests[t.episode_id]) for t in turns]
            elif p.backend == "precomputed":
                batch[p.name] = self._precomputed(p, turns, outcomes)
                progress.advance(len(turns))
            else:
                batch[p.name] = self._clip_answers(p, turns, requests, outcomes, progress)
        try:
            answers = ask_many(remote, stage=progress) if remote else []
        finally:
            progress.close()
        for (client, request), out in zip(remote, answers, strict=True):
            outcomes[(client.name, request.id)] = out
        for name, client in self._clients.items():
            if name in batch:
                batch[name] = client.usage - batch[name]
        ResponseCache.open(self.config.models.cache_dir).log_usage(self.run_id, batch)
        for name, u in batch.items():
            if name not in self._clients:
                self._usage[name] = self._usage.get(name, Usage()) + u
        self._usage.update({name: c.usage for name, c in self._clients.items()})
        return {t.episode_id: [self._row(p, t, outcomes[(p.name, t.episode_id)]) for p in self.config.probes]
                for t in turns}

    def _precomputed(self, p: LocalProbe, turns: list[FirstTurn],
                     outcomes: dict[tuple[str, str], Outcome]) -> Usage:
        table = load_precomputed(p.path or "")
        usage = Usage()
        for t in turns:
            raw = table.get((t.episode_id, p.model))
            if raw is None:
                outcomes[(p.name, t.episode_id)] = Outcome.failed("missing", "no precomputed prediction",
                                                                 0, gave_up=False)
                usage.count(failures=1)
            else:
                outcomes[(p.name, t.episode_id)] = Outcome("answered", raw)
        return usage

    def _clip_answers(self, p: LocalProbe, turns: list[FirstTurn], requests: dict[str, Request],
                      outcomes: dict[tuple[str, str], Outcome], progress: Stage) -> Usage:
        """CLIP answers through the same response cache as the model clients."""
        clip = self._clip_probe(p)
        ident = clip.identity()
        cache = ResponseCache.open(self.config.models.cache_dir)
        keys = {t.episode_id: cache_key(ident, requests[t.episode_id]) for t in turns}
        hits = cache.get_many(list(keys.values()))
        usage = Usage()
        todo = []
        for t in turns:
            hit = hits.get(keys[t.episode_id])
            if hit is not None:
                outcomes[(p.name, t.episode_id)] = Outcome("answered", hit.raw_answer, cached=True)
                usage.count(cache_hits=1)
            else:
                todo.append(t)
        progress.advance(len(turns) - len(todo), cached=len(turns) - len(todo))
        if todo:
            for t, raw in zip(todo, clip.answer(todo), strict=True):
                cache.put(keys[t.episode_id], ident, requests[t.episode_id], raw)
                outcomes[(p.name, t.episode_id)] = Outcome("answered", raw)
            cache.flush()
            usage.count(requests=len(todo))
            progress.advance(len(todo))
        return usage

    @staticmethod
    def _row(p: Probe, t: FirstTurn, o: Outcome) -> dict[str, Any]:
        if not o.answered:
            return {"model": p.name, "backend": p.backend, "status": "failed", "raw_answer": "",
                    "parsed": "", "correct": False}
        s = score_answer(t, o.raw)
        return {"model": p.name, "backend": p.backend, "status": "answered", "raw_answer": o.raw,
                "parsed": s.parsed, "correct": s.correct}

    def close(self) -> None:
        """Persist buffered answers (a Beam DoFn's ``teardown``)."""
        ResponseCache.open(self.config.models.cache_dir).flush()

    # ------------------------------------------------------------------ deciding
    def decide(self, probe_results: list[dict[str, Any]]) -> tuple[str, str, str]:
        """(decision, reason, evidence JSON) for one sample's probe results.

        decision ∈ {"keep", "filter", "unresolved"}; route it with :meth:`route`.
        """
        cfg = self.config
        answering = [r for r in probe_results if r["status"] == "answered"]
        failed = sorted(r["model"] for r in probe_results if r["status"] != "answered")
        correct = sum(1 for r in answering if r["correct"])
        out_of = len(probe_results) if cfg.denominator == "pool" else len(answering)
        evidence = {
            "rule": f"correct / {cfg.denominator} >= threshold",
            "threshold": cfg.threshold,
            "denominator": cfg.denominator,
            "out_of": out_of,
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
            # Decided anyway when no answer of the failed probes could change the outcome: with
            # every probe answering, the rate is over the whole pool (both denominators), so
            # correct/pool already at the threshold filters, and (correct + failed)/pool below
            # it keeps. Only a sample the failed probes could still push across is unresolved.
            pool = len(probe_results)
            if leaks(correct, pool, cfg.threshold):
                return ("filter", f"first-turn leak: {correct}/{pool} probe models correct "
                                  f"(>= {cfg.threshold:g}) whatever the {len(failed)} failed "
                                  "probes would answer", ev)
            if not leaks(correct + len(failed), pool, cfg.threshold):
                return ("keep", f"{correct}/{pool} probe models correct: below {cfg.threshold:g} "
                                f"even if all {len(failed)} failed probes were correct", ev)
            return (
                "unresolved",
                f"only {len(answering)} of {pool} probe models answered "
                f"(minimum {cfg.min_answering_models}) and the {len(failed)} failed could still "
                f"bring {correct} correct to the threshold; policy: {cfg.unresolved_policy}",
                ev,
            )
        who = "probe models" if cfg.denominator == "pool" else "answering models"
        if leaks(correct, out_of, cfg.threshold):
            return "filter", f"first-turn leak: {correct}/{out_of} {who} correct (>= {cfg.threshold:g})", ev
        return "keep", f"{correct}/{out_of} {who} correct (< {cfg.threshold:g})", ev

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
        if self.config.models.cache_dir:
            return ResponseCache.open(self.config.models.cache_dir).usage(self.run_id)
        return self.stats
