"""Agreement audit of the first-round review decisions (StreamVibe App. B.3, design.md §Annotation rules).

What is measured, and why it is measured *there*:

* **Population.** The original, independent first-round judgments of the frozen candidate set:
  version 1 only, the first decision each rater stored, *including* candidates that were later
  corrected or dropped. Later versions are not new samples (they were re-reviewed after
  discussion, so they are not independent), and the retained set is filtered *for* agreement —
  κ on retained samples alone is invalid evidence of reviewer reliability (App. B.3), so
  :func:`audit` refuses to give it a number.
* **Human–human.** Fleiss' κ (Fleiss 1971) over the panel, the raw pairwise agreement P̄ and the
  fraction of candidates on which every panel member gave the same decision, per task type and
  overall.
* **Model–human.** Cohen's κ (Cohen 1960) between the model rater (``gemini:<model>``) and each
  human reviewer separately, then the mean and range of those pairwise coefficients — App. B.3
  asks for this instead of treating the four humans as one rater.
* **Uncertainty.** Percentile bootstrap 95% intervals over *candidates* (the unit that was
  sampled), each drawn from a generator seeded by ``sha256(global_seed, scope, purpose)``
  (design.md §Conventions), so reports are byte-identical across runs and a change in one task type does not
  move another type's interval.
* **Undefined values** (no candidates, fewer than two raters, a single decision class that makes
  the chance-correction denominator zero, or a retained-only population) are
  :class:`Undefined` with a reason. statsmodels and sklearn return ``nan`` there (design.md §Environment); a
  ``nan`` in a report reads like a bug and silently poisons means, a reason does not.

Decision scheme. The paper's κ is over the binary review decision c ∈ {0, 1} (approve vs. not;
design.md §Annotation rules: "a required correction is a non-approval"), so
``scheme="binary"`` (default) folds
``revise`` and ``reject`` into ``not_approve`` for κ, P̄ and unanimity. ``scheme="decision"``
uses the three stored classes. Decision *distributions* always show all three classes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np

from core.seeding import np_rng_for
from schemas.review import DECISIONS

Scheme = Literal["binary", "decision"]
Population = Literal["first_round", "retained_only"]

BINARY_CATEGORIES = ("approve", "not_approve")
OVERALL = "overall"

REASON_NO_CANDIDATES = "no candidates"
REASON_FEW_RATERS = "fewer than 2 raters per candidate"
REASON_ONE_CLASS = (
    "all decisions fall in one class, so the chance-correction denominator 1 - sum(p_c^2) is zero"
)
REASON_COHEN_ONE_CLASS = (
    "both raters use the same single class, so the chance-correction denominator 1 - p_e is zero"
)
REASON_NO_MODEL = "no model rater configured"
REASON_NO_MODEL_DECISIONS = "the model rater has no first-round decision on these candidates"
REASON_RETAINED = (
    "kappa on retained samples alone is invalid: retention requires unanimous approval, so "
    "filtering enforces agreement and leaves a single decision class (StreamVibe App. B.3); audit "
    "the frozen first-round candidate set instead"
)

_EPS = 1e-12


@dataclass(frozen=True)
class Undefined:
    """A statistic that has no value here, with the reason (never ``nan``, never a number)."""

    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"undefined": True, "reason": self.reason}

    def __str__(self) -> str:
        return f"undefined ({self.reason})"


Value = float | Undefined


@dataclass(frozen=True)
class Interval:
    """Percentile bootstrap interval over candidates.

    ``n_undefined`` counts replicates whose statistic was undefined (e.g. a resample that drew
    only unanimous candidates); the percentiles are taken over the defined replicates only, which
    is reported rather than hidden.
    """

    low: float
    high: float
    level: float
    n_boot: int
    n_undefined: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "n_boot": self.n_boot,
            "n_undefined": self.n_undefined,
        }


IntervalValue = Interval | Undefined


def _jsonable(value: Any) -> Any:
    if isinstance(value, Undefined | Interval | PairStats | ScopeStats):
        return value.to_dict()
    if isinstance(value, float | np.floating):
        return float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


# --------------------------------------------------------------------------- core statistics


def landis_koch(kappa: Value) -> str | Undefined:
    """Landis & Koch (1977) band, the vocabulary App. B.3 reports κ in."""
    if isinstance(kappa, Undefined):
        return kappa
    if kappa < 0:
        return "poor"
    bands = ((0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial"))
    for upper, name in bands:
        if kappa <= upper:
            return name
    return "almost perfect"


def _check_table(table: Any) -> np.ndarray:
    t = np.asarray(table, dtype=float)
    if t.ndim != 2:
        raise ValueError(f"count table must be 2-D (candidates x categories), got shape {t.shape}")
    if t.size and (t < 0).any():
        raise ValueError("count table has negative counts")
    if t.shape[0]:
        n = t.sum(axis=1)
        if not np.all(n == n[0]):
            raise ValueError(
                "Fleiss' kappa needs the same number of raters on every candidate; row totals "
                f"range {n.min():g}..{n.max():g}"
            )
    return t


def raw_agreement(table: Any) -> Value:
    """P̄: mean over candidates of the fraction of agreeing rater pairs (Fleiss 1971 eq. 2)."""
    t = _check_table(table)
    if t.shape[0] == 0:
        return Undefined(REASON_NO_CANDIDATES)
    n = t[0].sum()
    if n < 2:
        return Undefined(REASON_FEW_RATERS)
    return float(((t * (t - 1)).sum(axis=1) / (n * (n - 1))).mean())


def fleiss_kappa(table: Any) -> Value:
    """Fleiss' κ from an N×K table of counts (StreamVibe App. B.3 formula, any K).

    Undefined when there are no candidates, fewer than two raters, or one decision class.
    """
    t = _check_table(table)
    p_bar = raw_agreement(t)
    if isinstance(p_bar, Undefined):
        return p_bar
    p = t.sum(axis=0) / t.sum()
    p_e = float((p**2).sum())
    if 1.0 - p_e <= _EPS:
        return Undefined(REASON_ONE_CLASS)
    return (p_bar - p_e) / (1.0 - p_e)


def unanimous_fraction(table: Any) -> Value:
    """Fraction of candidates on which all raters gave the same decision."""
    t = _check_table(table)
    if t.shape[0] == 0:
        return Undefined(REASON_NO_CANDIDATES)
    if t[0].sum() < 2:
        return Undefined(REASON_FEW_RATERS)
    return float((t.max(axis=1) == t.sum(axis=1)).mean())


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> Value:
    """Cohen's κ of two raters on the same candidates: (p_o − p_e)/(1 − p_e) (App. B.3)."""
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa: rater sequences differ in length ({len(a)} vs {len(b)})")
    if not a:
        return Undefined(REASON_NO_CANDIDATES)
    cats = sorted(set(a) | set(b))
    index = {c: i for i, c in enumerate(cats)}
    ai = np.array([index[x] for x in a])
    bi = np.array([index[x] for x in b])
    p_o = float((ai == bi).mean())
    pa = np.bincount(ai, minlength=len(cats)) / len(ai)
    pb = np.bincount(bi, minlength=len(cats)) / len(bi)
    p_e = float((pa * pb).sum())
    if 1.0 - p_e <= _EPS:
        return Undefined(REASON_COHEN_ONE_CLASS)
    return (p_o - p_e) / (1.0 - p_e)


def count_table(labels: Sequence[Sequence[str]], categories: Sequence[str]) -> np.ndarray:
    """N×K counts from per-candidate label lists (one label per rater)."""
    index = {c: i for i, c in enumerate(categories)}
    out = np.zeros((len(labels), len(categories)), dtype=np.int64)
    for i, row in enumerate(labels):
        for lab in row:
            out[i, index[lab]] += 1
    return out


# --------------------------------------------------------------------------- bootstrap


def _percentile(values: np.ndarray, n_boot: int, level: float) -> IntervalValue:
    ok = np.isfinite(values)
    n_undef = int((~ok).sum())
    if not ok.any():
        return Undefined("every bootstrap replicate was undefined")
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(values[ok], [alpha, 1.0 - alpha])
    return Interval(float(lo), float(hi), level, n_boot, n_undef)


def _boot_indices(
    global_seed: int | str, scope: str, purpose: str, n: int, n_boot: int
) -> np.ndarray:
    rng = np_rng_for(global_seed, f"agreement/{scope}", purpose)
    return rng.integers(0, n, size=(n_boot, n))


def _fleiss_boot(table: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Fleiss' κ for every resample at once (``nan`` marks an undefined replicate)."""
    t = table.astype(float)
    n = t[0].sum()
    p_i = (t * (t - 1)).sum(axis=1) / (n * (n - 1))
    p_bar = p_i[idx].mean(axis=1)
    p = t[idx].sum(axis=1) / (idx.shape[1] * n)  # (B, K)
    p_e = (p**2).sum(axis=1)
    denom = 1.0 - p_e
    with np.errstate(divide="ignore", invalid="ignore"):
        k = (p_bar - p_e) / denom
    k[denom <= _EPS] = np.nan
    return k


def _cohen_boot(a: np.ndarray, b: np.ndarray, k_cats: int, idx: np.ndarray) -> np.ndarray:
    agree = (a == b).astype(float)[idx].mean(axis=1)
    p_e = np.zeros(idx.shape[0])
    for c in range(k_cats):
        p_e += (a == c).astype(float)[idx].mean(axis=1) * (b == c).astype(float)[idx].mean(axis=1)
    denom = 1.0 - p_e
    with np.errstate(divide="ignore", invalid="ignore"):
        k = (agree - p_e) / denom
    k[denom <= _EPS] = np.nan
    return k


# --------------------------------------------------------------------------- first round


@dataclass
class FirstRound:
    """The audited population: first decision per (candidate, rater) on version 1."""

    panel: list[str]
    model_rater: str | None
    task_type: dict[str, str] = field(default_factory=dict)
    human: dict[str, dict[str, str]] = field(default_factory=dict)
    model: dict[str, str] = field(default_factory=dict)
    ignored: Counter[str] = field(default_factory=Counter)

    def complete(self, sample_ids: Iterable[str] | None = None) -> list[str]:
        ids = self.human if sample_ids is None else sample_ids
        return sorted(s for s in ids if all(r in self.human.get(s, {}) for r in self.panel))

    def incomplete(self) -> list[str]:
        return sorted(s for s in self.human if not all(r in self.human[s] for r in self.panel))


def _created_key(row: Mapping[str, Any], pos: int) -> tuple[float, int]:
    raw = row.get("created_at")
    if raw in (None, ""):
        return (math.inf, pos)
    try:
        ts = datetime.fromisoformat(str(raw))
    except ValueError as exc:
        raise ValueError(
            f"review decision #{pos} (sample {row.get('sample_id')!r}, reviewer "
            f"{row.get('reviewer')!r}): created_at {raw!r} is not ISO-8601"
        ) from exc
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return (ts.timestamp(), pos)


def first_round(
    decisions: Sequence[Mapping[str, Any]], panel: Sequence[str], model_rater: str | None
) -> FirstRound:
    """Select the independent first-round judgments (App. B.3).

    Keeps version-1 rows only and, per (candidate, rater), the earliest stored decision (ties:
    input order) — a reviewer's later change of mind on the same version happened after
    discussion and is not independent. Rows from raters outside the panel/model are counted
    in ``ignored`` rather than silently mixed in.
    """
    if len(set(panel)) != len(panel):
        raise ValueError(f"panel has duplicate reviewer ids: {list(panel)}")
    if model_rater is not None and model_rater in panel:
        raise ValueError(f"model rater {model_rater!r} is also listed in the human panel")
    fr = FirstRound(panel=list(panel), model_rater=model_rater)
    panel_set = set(panel)
    order = sorted(range(len(decisions)), key=lambda i: _created_key(decisions[i], i))
    for i in order:
        row = decisions[i]
        sid, reviewer, decision = row.get("sample_id"), row.get("reviewer"), row.get("decision")
        if not sid or not reviewer:
            raise ValueError(f"review decision #{i}: missing sample_id or reviewer: {dict(row)!r}")
        if decision not in DECISIONS:
            raise ValueError(
                f"review decision #{i} (sample {sid!r}, reviewer {reviewer!r}): decision "
                f"{decision!r} is not one of {DECISIONS}"
            )
        if int(row.get("version", 1)) != 1:
            fr.ignored["later_version"] += 1
            continue
        is_model = reviewer == model_rater
        if not is_model and reviewer not in panel_set:
            fr.ignored["rater_not_audited"] += 1
            continue
        task_type = str(row.get("task_type", ""))
        seen = fr.task_type.setdefault(sid, task_type)
        if seen != task_type:
            raise ValueError(
                f"sample {sid!r}: version-1 rows disagree on task_type ({seen!r} vs {task_type!r})"
            )
        if is_model:
            if sid in fr.model:
                fr.ignored["repeat_decision"] += 1
            else:
                fr.model[sid] = decision
            continue
        per = fr.human.setdefault(sid, {})
        if reviewer in per:
            fr.ignored["repeat_decision"] += 1
        else:
            per[reviewer] = decision
    model_only = [s for s in fr.model if s not in fr.human]
    if model_only:
        fr.ignored["model_only_candidate"] += len(model_only)
    return fr


# --------------------------------------------------------------------------- audit


@dataclass
class PairStats:
    """Cohen's κ of the model rater against one human reviewer."""

    reviewer: str
    n: int
    kappa: Value
    interval: IntervalValue
    band: str | Undefined

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(
            {
                "reviewer": self.reviewer,
                "n": self.n,
                "kappa": self.kappa,
                "interval": self.interval,
                "band": self.band,
            }
        )


@dataclass
class ScopeStats:
    """Statistics for one task type (or ``overall``)."""

    scope: str
    n_candidates: int
    n_incomplete: int
    decision_distribution: dict[str, int]
    model_decision_distribution: dict[str, int] | None
    fleiss_kappa: Value
    fleiss_interval: IntervalValue
    fleiss_band: str | Undefined
    p_bar: Value
    unanimous_fraction: Value
    n_model: int
    n_model_missing: int
    cohen: list[PairStats]
    cohen_mean: Value
    cohen_mean_interval: IntervalValue
    cohen_min: Value
    cohen_max: Value
    cohen_band: str | Undefined

    def to_dict(self) -> dict[str, Any]:
        return _jsonable({k: getattr(self, k) for k in self.__dataclass_fields__})


@dataclass
class AgreementAudit:
    """Result of :func:`audit`; ``to_dict`` is JSON-serialisable (undefined values keep reasons)."""

    panel: list[str]
    model_rater: str | None
    scheme: str
    categories: list[str]
    population: str
    global_seed: int | str
    n_boot: int
    level: float
    overall: ScopeStats
    per_type: dict[str, ScopeStats]
    ignored: dict[str, int]
    incomplete_ids: list[str]
    unreviewed_ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return _jsonable({k: getattr(self, k) for k in self.__dataclass_fields__})


def _map(decision: str, scheme: Scheme) -> str:
    if scheme == "decision":
        return decision
    return "approve" if decision == "approve" else "not_approve"


def _scope_stats(
    scope: str,
    seed_key: str,
    ids: list[str],
    fr: FirstRound,
    scheme: Scheme,
    categories: Sequence[str],
    population: Population,
    global_seed: int | str,
    n_boot: int,
    level: float,
) -> ScopeStats:
    complete = fr.complete(ids)
    n_incomplete = len(ids) - len(complete)
    dist = Counter({d: 0 for d in DECISIONS})
    for s in complete:
        dist.update(fr.human[s][r] for r in fr.panel)
    model_dist: dict[str, int] | None = None
    if fr.model_rater is not None:
        mc = Counter({d: 0 for d in DECISIONS})
        mc.update(fr.model[s] for s in complete if s in fr.model)
        model_dist = dict(mc)

    labels = [[_map(fr.human[s][r], scheme) for r in fr.panel] for s in complete]
    table = count_table(labels, categories)
    if not complete:
        empty = Undefined(REASON_FEW_RATERS if len(fr.panel) < 2 else REASON_NO_CANDIDATES)
        p_bar: Value = empty
        unan: Value = empty
        fk: Value = empty
    else:
        p_bar = raw_agreement(table)
        unan = unanimous_fraction(table)
        fk = fleiss_kappa(table)
    if population == "retained_only":
        fk = Undefined(REASON_RETAINED)
    f_int: IntervalValue
    if isinstance(fk, Undefined):
        f_int = fk
    else:
        idx = _boot_indices(global_seed, seed_key, "fleiss-bootstrap", len(complete), n_boot)
        f_int = _percentile(_fleiss_boot(table, idx), n_boot, level)

    # Model vs each human, on the audited candidates the model also judged.
    pairs: list[PairStats] = []
    c_mean: Value
    c_int: IntervalValue
    c_min: Value
    c_max: Value
    shared = [s for s in complete if s in fr.model]
    if fr.model_rater is None:
        c_mean = c_min = c_max = Undefined(REASON_NO_MODEL)
        c_int = c_mean
    elif population == "retained_only":
        c_mean = c_min = c_max = Undefined(REASON_RETAINED)
        c_int = c_mean
        pairs = [PairStats(r, len(shared), c_mean, c_mean, c_mean) for r in fr.panel]
    elif not shared:
        reason = REASON_NO_CANDIDATES if not complete else REASON_NO_MODEL_DECISIONS
        c_mean = c_min = c_max = Undefined(reason)
        c_int = c_mean
        pairs = [PairStats(r, 0, c_mean, c_mean, c_mean) for r in fr.panel]
    else:
        index = {c: i for i, c in enumerate(categories)}
        m = np.array([index[_map(fr.model[s], scheme)] for s in shared])
        idx = _boot_indices(global_seed, seed_key, "cohen-bootstrap", len(shared), n_boot)
        boots = []
        kappas: list[Value] = []
        for r in fr.panel:
            h = np.array([index[_map(fr.human[s][r], scheme)] for s in shared])
            k = cohen_kappa([categories[i] for i in m], [categories[i] for i in h])
            kappas.append(k)
            if isinstance(k, Undefined):
                pairs.append(PairStats(r, len(shared), k, k, k))
                boots.append(np.full(n_boot, np.nan))
            else:
                b = _cohen_boot(m, h, len(categories), idx)
                boots.append(b)
                interval = _percentile(b, n_boot, level)
                pairs.append(PairStats(r, len(shared), k, interval, landis_koch(k)))
        undefined = [p for p in pairs if isinstance(p.kappa, Undefined)]
        if undefined:
            first = undefined[0]
            reason = f"Cohen's kappa vs {first.reviewer} is undefined: {first.kappa.reason}"  # type: ignore[union-attr]
            c_mean = c_min = c_max = Undefined(reason)
            c_int = c_mean
        else:
            vals = [float(k) for k in kappas]  # type: ignore[arg-type]
            c_mean = float(np.mean(vals))
            c_min, c_max = min(vals), max(vals)
            c_int = _percentile(np.mean(np.vstack(boots), axis=0), n_boot, level)
    return ScopeStats(
        scope=scope,
        n_candidates=len(complete),
        n_incomplete=n_incomplete,
        decision_distribution=dict(dist),
        model_decision_distribution=model_dist,
        fleiss_kappa=fk,
        fleiss_interval=f_int,
        fleiss_band=landis_koch(fk),
        p_bar=p_bar,
        unanimous_fraction=unan,
        n_model=len(shared),
        n_model_missing=len(complete) - len(shared) if fr.model_rater is not None else 0,
        cohen=pairs,
        cohen_mean=c_mean,
        cohen_mean_interval=c_int,
        cohen_min=c_min,
        cohen_max=c_max,
        cohen_band=landis_koch(c_mean),
    )


def audit(
    decisions: Sequence[Mapping[str, Any]],
    panel: Sequence[str],
    model_rater: str | None,
    *,
    scheme: Scheme = "binary",
    population: Population = "first_round",
    global_seed: int | str = 0,
    n_boot: int = 2000,
    level: float = 0.95,
    candidates: Mapping[str, str] | None = None,
) -> AgreementAudit:
    """Agreement audit of REVIEW_DECISION rows, per task type and overall (App. B.3).

    ``decisions`` may hold the whole decision log: :func:`first_round` selects version-1 first
    decisions. Candidates missing a panel member's decision are excluded from the statistics
    (Fleiss' κ needs the same raters on every candidate) and listed in ``incomplete_ids``.
    ``candidates`` (sample id -> task type) is the frozen version-1 candidate set — the push
    records know it, the decisions alone do not: candidates in it that nobody decided are
    counted as incomplete in their task type and listed in ``unreviewed_ids``, so a round that
    left candidates unreviewed cannot look complete.
    ``population="retained_only"`` declares that the rows cover retained samples only; κ is then
    undefined by construction (App. B.3) while counts and distributions are still reported.
    """
    if scheme not in ("binary", "decision"):
        raise ValueError(f"scheme must be 'binary' or 'decision', got {scheme!r}")
    if population not in ("first_round", "retained_only"):
        raise ValueError(f"population must be 'first_round' or 'retained_only', got {population!r}")
    if n_boot < 1:
        raise ValueError("n_boot must be >= 1")
    categories = list(BINARY_CATEGORIES if scheme == "binary" else DECISIONS)
    fr = first_round(decisions, panel, model_rater)
    unreviewed = sorted(set(candidates or {}) - set(fr.human))
    all_ids = sorted(set(fr.human) | set(unreviewed))
    types = {**{s: str(t) for s, t in (candidates or {}).items()}, **fr.task_type}
    by_type: dict[str, list[str]] = {}
    for s in all_ids:
        by_type.setdefault(types[s], []).append(s)
    args = (fr, scheme, categories, population, global_seed, n_boot, level)
    # Seed keys keep a task type literally named "overall" from sharing the overall resamples.
    per_type = {t: _scope_stats(t, f"type/{t}", ids, *args) for t, ids in sorted(by_type.items())}
    overall = _scope_stats(OVERALL, OVERALL, all_ids, *args)
    return AgreementAudit(
        panel=list(panel),
        model_rater=model_rater,
        scheme=scheme,
        categories=categories,
        population=population,
        global_seed=global_seed,
        n_boot=n_boot,
        level=level,
        overall=overall,
        per_type=per_type,
        ignored=dict(sorted(fr.ignored.items())),
        incomplete_ids=fr.incomplete(),
        unreviewed_ids=unreviewed,
    )
