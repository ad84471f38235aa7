"""StreamVibe-Bench scoring protocol (StreamVibe §3.1, §3.5 "Metrics", App. B.5).

What the paper says, verbatim where it defines something:

* §3.1: "Each intent i_j can correspond to one or more evidence points ξ_jk, each with a valid
  response window [s_jk, e_jk] and reference response ŷ_jk. An evidence point is covered if the
  agent responds within its window with a semantically correct response to the corresponding
  intent."
* App. B.5: "At tolerance τ, predictions and evidence points within ±τ are matched chronologically
  and one-to-one. Thus P = TP/N_pred, R = TP/N_gold, and F1 is their harmonic mean; FPR_near
  measures responses on designated nearby negative probes. For each temporally matched response,
  [the judge] assigns a 0–4 content score r that is normalized to s_{g,p} = r/4 ∈ [0, 1]. ANS is
  its mean over matched responses. Content-F1 is 2 Σ_{(g,p)∈M} s_{g,p} / (N_pred + N_gold), so
  missed intents and extra interventions remain penalized instead of disappearing from a
  conditional answer average. For Dynamic Intents, ANS and Content-F1 score proactive responses
  only; reactive answers remain in the interaction history."
* App. A.1: "The matching tolerances are ±2, ±1, and ±0 s; tighter tolerances rescore the same
  predictions." Main-text figures use τ = 2 s.
* §3.5: "Pointwise Evaluation samples positive and negative timestamps around annotated help
  points and independently predicts whether the model should respond."

Where the paper is silent we choose, say so here, and make the choice a parameter where a
reasonable reader could choose otherwise:

1. **Eligibility.** A prediction at time t may match evidence point g iff
   ``s_g − τ ≤ t ≤ e_g + τ`` (closed interval): the response window widened by the tolerance, so
   τ = 0 is exactly "responds within its window" (§3.1). ``anchor="preferred"`` instead uses the
   annotated preferred time p_g (``p_g − τ ≤ t ≤ p_g + τ``) for analyses that score against the
   single preferred moment. If both sides carry an ``intent`` id, they must be equal (§3.1 "to the
   corresponding intent"); ``None`` on either side is a wildcard (single-intent samples, or a
   model whose output does not say which intent it serves).
2. **"Matched chronologically and one-to-one"** fixes the visiting order (predictions in time
   order, ties: input order) but not which of several eligible points a prediction takes. The
   ``rule`` parameter names the choice:

   * ``"earliest_deadline"`` (default): the still-unmatched eligible point whose window *closes
     first* (ties: earlier start, then input order). Visiting points in order and always serving
     the earliest deadline is the classic greedy that yields a *maximum* one-to-one matching
     between points and intervals, so no alternative one-to-one assignment has more TP (tests
     check this against brute force). (Maximality holds within each intent group; mixing
     wildcard and labelled predictions in one sample keeps the rule deterministic but can, in
     contrived cases, fall short of the maximum.)
   * ``"earliest_start"``: the point whose window *opens first* (ties: earlier end, then input
     order) — the literal "first come, first served" reading. It differs only when windows nest
     or overlap: windows [0, 10] and [2, 3], responses at 2.5 and 8 → F1 1.0 with the default,
     0.5 with this rule (2.5 takes [0, 10], 8 finds nothing).
3. **Aggregation** over samples is not stated either; :func:`report` gives both readings.
   ``micro`` pools the counts (:func:`aggregate`): P = ΣTP/ΣN_pred, ANS = Σs/ΣTP_content,
   Content-F1 = 2Σs/(ΣN_pred + ΣN_gold) — the formulas are written over counts, and pooling keeps
   a 1-point sample from weighing as much as a 20-point one. ``per_sample``
   (:func:`per_sample_means`) is the mean of each sample's own metric over the samples where it
   is defined, with that number of samples. Undefined ratios (0/0) are ``None``, never silently
   0 or 1.
4. **FPR_near (trajectory).** A negative probe at t_n is a false positive iff some response falls
   in its 1 FPS decision step, ``floor(t/step) == floor(t_n/step)``; pointwise evaluation passes
   the per-probe respond/silence decisions directly. Probes of a release lie strictly farther
   than the largest tolerance it supports from every window (``pipelines/streamvibe/negatives.py``),
   so no response can be both a TP and a probe hit.
5. **Content metrics use proactive responses and proactive gold points only** (App. B.5): they
   re-run the same matching between the proactive predictions and the proactive evidence points
   (``EvidencePoint.proactive``; the answer to an interruption's immediate request is reactive),
   N_pred counts proactive predictions and N_gold proactive points — Table 15 likewise counts
   "proactive gold evidence points; reactive questions are excluded". Timing metrics use every
   prediction and every point (the paper restricts only ANS and Content-F1).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Anchor = Literal["window", "preferred"]
MatchRule = Literal["earliest_deadline", "earliest_start"]
MATCH_RULES: tuple[str, ...] = ("earliest_deadline", "earliest_start")
_EPS = 1e-9  # timestamps are float seconds; 12.000000000001 is 12

__all__ = [
    "ContentJudge",
    "EvidencePoint",
    "Match",
    "MatchRule",
    "PerSampleMeans",
    "Prediction",
    "ProbeCounts",
    "SampleScore",
    "ScoreReport",
    "StreamVibeScore",
    "TimingCounts",
    "aggregate",
    "content_scores",
    "evidence_points",
    "fpr_near_pointwise",
    "fpr_near_trajectory",
    "match_chronological",
    "per_sample_means",
    "report",
    "score_sample",
    "timing_counts",
]


@dataclass(frozen=True)
class EvidencePoint:
    """ξ_jk: valid response window [start, end] (s_jk, e_jk), preferred time, reference ŷ_jk, and
    whether it is proactive (False: the answer to an interruption's immediate request, which
    content metrics leave out, module doc choice 5)."""

    start: float
    end: float
    preferred: float | None = None
    reference: str = ""
    intent: str | None = None
    id: str = ""
    proactive: bool = True

    def __post_init__(self) -> None:
        if not (math.isfinite(self.start) and math.isfinite(self.end)):
            raise ValueError(f"evidence {self.id!r}: window must be finite, got {self}")
        if self.start > self.end:
            raise ValueError(f"evidence {self.id!r}: window start {self.start} > end {self.end}")
        if self.preferred is not None and not self.start <= self.preferred <= self.end:
            raise ValueError(
                f"evidence {self.id!r}: preferred time {self.preferred} outside [{self.start}, {self.end}]"
            )

    def bounds(self, tau: float, anchor: Anchor) -> tuple[float, float]:
        """Eligible prediction times at tolerance ``tau`` (see module doc, choice 1)."""
        if anchor == "window":
            return self.start - tau, self.end + tau
        if anchor == "preferred":
            if self.preferred is None:
                raise ValueError(f"evidence {self.id!r}: anchor='preferred' needs a preferred time")
            return self.preferred - tau, self.preferred + tau
        raise ValueError(f"anchor must be 'window' or 'preferred', got {anchor!r}")


def evidence_points(sample: Mapping[str, Any]) -> list[EvidencePoint]:
    """The evidence points of a released trajectory sample (its ``gold_evidence``), with intent
    ids and the proactive flag the content metrics need (module doc, choice 5)."""
    return [EvidencePoint(p["start"], p["end"], preferred=p["preferred"], reference=p["response"],
                          intent=p["intent_id"], id=p["id"], proactive=p["proactive"])
            for p in sample["gold_evidence"]]


@dataclass(frozen=True)
class Prediction:
    """One model response: time t (seconds of stream), text y_t, the intent it answers, and whether
    it was proactive (unprompted) or reactive (answering an explicit user turn)."""

    t: float
    text: str = ""
    intent: str | None = None
    proactive: bool = True


@dataclass(frozen=True)
class Match:
    """(g, p): indices into the evidence and prediction sequences passed to the matcher."""

    gold: int
    pred: int


def match_chronological(
    evidence: Sequence[EvidencePoint],
    predictions: Sequence[Prediction],
    tau: float,
    *,
    anchor: Anchor = "window",
    rule: MatchRule = "earliest_deadline",
) -> list[Match]:
    """Chronological one-to-one matching at tolerance ±τ (App. B.5; module doc, choice 2).

    Returns matches in chronological order of the predictions; deterministic, and maximum with
    the default ``rule``.
    """
    if not (tau >= 0 and math.isfinite(tau)):
        raise ValueError(f"tolerance tau must be a finite number >= 0, got {tau}")
    if rule not in MATCH_RULES:
        raise ValueError(f"matching rule must be one of {MATCH_RULES}, got {rule!r}")
    bounds = [g.bounds(tau, anchor) for g in evidence]
    free = [True] * len(evidence)
    out: list[Match] = []
    order = sorted(range(len(predictions)), key=lambda i: (predictions[i].t, i))
    for pi in order:
        p = predictions[pi]
        best: tuple[float, float, int] | None = None
        for gi, g in enumerate(evidence):
            if not free[gi] or (g.intent is not None and p.intent is not None and g.intent != p.intent):
                continue
            lo, hi = bounds[gi]
            if lo - _EPS <= p.t <= hi + _EPS:
                key = (hi, lo, gi) if rule == "earliest_deadline" else (lo, hi, gi)
                if best is None or key < best:
                    best = key
        if best is not None:
            free[best[2]] = False
            out.append(Match(gold=best[2], pred=pi))
    return out


# ----------------------------------------------------------------------------------- timing


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


@dataclass(frozen=True)
class TimingCounts:
    """TP, N_pred, N_gold for one sample or pooled over many (add them with ``+``)."""

    tp: int = 0
    n_pred: int = 0
    n_gold: int = 0

    def __add__(self, other: TimingCounts) -> TimingCounts:
        return TimingCounts(self.tp + other.tp, self.n_pred + other.n_pred, self.n_gold + other.n_gold)

    @property
    def precision(self) -> float | None:
        """P = TP / N_pred (App. B.5); ``None`` when nothing was predicted."""
        return _ratio(self.tp, self.n_pred)

    @property
    def recall(self) -> float | None:
        """R = TP / N_gold (App. B.5); ``None`` when there is no evidence point."""
        return _ratio(self.tp, self.n_gold)

    @property
    def f1(self) -> float | None:
        """Harmonic mean of P and R. 0 when either is 0 (a harmonic mean with a zero term is 0,
        whatever the other term: e.g. evidence but no response), ``None`` only when the sample
        has neither predictions nor evidence points."""
        p, r = self.precision, self.recall
        if p == 0 or r == 0:
            return 0.0
        if p is None or r is None:
            return None
        return 2 * p * r / (p + r)


def timing_counts(
    evidence: Sequence[EvidencePoint],
    predictions: Sequence[Prediction],
    tau: float,
    *,
    anchor: Anchor = "window",
    rule: MatchRule = "earliest_deadline",
) -> TimingCounts:
    """TP/N_pred/N_gold for one sample at tolerance τ."""
    m = match_chronological(evidence, predictions, tau, anchor=anchor, rule=rule)
    return TimingCounts(tp=len(m), n_pred=len(predictions), n_gold=len(evidence))


# ---------------------------------------------------------------------------------- FPR_near


@dataclass(frozen=True)
class ProbeCounts:
    """False positives on designated nearby negative probes, out of ``n`` probes."""

    fp: int = 0
    n: int = 0

    def __add__(self, other: ProbeCounts) -> ProbeCounts:
        return ProbeCounts(self.fp + other.fp, self.n + other.n)

    @property
    def fpr(self) -> float | None:
        """FPR_near = responses on negative probes / negative probes (``None`` without probes)."""
        return _ratio(self.fp, self.n)


def fpr_near_pointwise(responded: Iterable[bool]) -> ProbeCounts:
    """Pointwise evaluation (§3.5 (i)): one respond/silence decision per negative probe."""
    flags = [bool(x) for x in responded]
    return ProbeCounts(fp=sum(flags), n=len(flags))


def fpr_near_trajectory(
    probe_times: Sequence[float], response_times: Sequence[float], *, step: float = 1.0
) -> ProbeCounts:
    """Trajectory evaluation: a probe at t_n is hit iff a response falls in its decision step
    ``floor(t/step) == floor(t_n/step)`` (1 FPS streams, §3.3; module doc, choice 4)."""
    if step <= 0:
        raise ValueError(f"step must be > 0, got {step}")
    steps = {math.floor(t / step + _EPS) for t in response_times}
    fp = sum(1 for t in probe_times if math.floor(t / step + _EPS) in steps)
    return ProbeCounts(fp=fp, n=len(probe_times))


# ---------------------------------------------------------------------------------- content


@runtime_checkable
class ContentJudge(Protocol):
    """Scores one temporally matched (evidence point, response) pair on the paper's 0–4 scale.

    The paper uses Claude Sonnet 4.6 as a shared judge (§5.1, App. B.5); anything callable with
    this signature works — an LLM client, a rubric, or a human-label lookup.
    """

    def __call__(self, evidence: EvidencePoint, prediction: Prediction) -> float: ...


def content_scores(
    evidence: Sequence[EvidencePoint],
    predictions: Sequence[Prediction],
    matches: Sequence[Match],
    judge: ContentJudge,
    *,
    scale: float = 4.0,
) -> list[float]:
    """s_{g,p} = r / 4 ∈ [0, 1] for each matched pair (App. B.5); rejects r outside [0, scale]."""
    out: list[float] = []
    for m in matches:
        g, p = evidence[m.gold], predictions[m.pred]
        r = float(judge(g, p))
        if not (math.isfinite(r) and 0.0 <= r <= scale):
            raise ValueError(
                f"content judge returned {r!r} for evidence {g.id or m.gold} / response at "
                f"t={p.t}: must be in [0, {scale}]"
            )
        out.append(r / scale)
    return out


# ---------------------------------------------------------------------------------- samples


@dataclass(frozen=True)
class SampleScore:
    """Pooled-ready counts for one sample (add with ``+``); ratios via :class:`StreamVibeScore`."""

    timing: TimingCounts = field(default_factory=TimingCounts)
    probes: ProbeCounts = field(default_factory=ProbeCounts)
    content_sum: float = 0.0  # Σ s_{g,p} over content matches (proactive only)
    content_matched: int = 0  # |M| for content
    content_n_pred: int = 0  # proactive predictions
    content_n_gold: int = 0  # proactive evidence points

    def __add__(self, other: SampleScore) -> SampleScore:
        return SampleScore(
            timing=self.timing + other.timing,
            probes=self.probes + other.probes,
            content_sum=self.content_sum + other.content_sum,
            content_matched=self.content_matched + other.content_matched,
            content_n_pred=self.content_n_pred + other.content_n_pred,
            content_n_gold=self.content_n_gold + other.content_n_gold,
        )


@dataclass(frozen=True)
class StreamVibeScore:
    """The six numbers of StreamVibe Table 2: P, R, F1, FPR_near, ANS, Content-F1 (None = 0/0)."""

    precision: float | None
    recall: float | None
    f1: float | None
    fpr_near: float | None
    ans: float | None
    content_f1: float | None
    counts: SampleScore

    @classmethod
    def from_counts(cls, c: SampleScore) -> StreamVibeScore:
        den = c.content_n_pred + c.content_n_gold
        return cls(
            precision=c.timing.precision,
            recall=c.timing.recall,
            f1=c.timing.f1,
            fpr_near=c.probes.fpr,
            ans=_ratio(c.content_sum, c.content_matched),
            content_f1=(2 * c.content_sum / den) if den else None,
            counts=c,
        )


def score_sample(
    evidence: Sequence[EvidencePoint],
    predictions: Sequence[Prediction],
    *,
    tau: float = 2.0,
    judge: ContentJudge | None = None,
    probes: ProbeCounts | None = None,
    anchor: Anchor = "window",
    rule: MatchRule = "earliest_deadline",
) -> SampleScore:
    """All counts for one sample. Without a judge, content counts stay 0 (timing-only run)."""
    timing = timing_counts(evidence, predictions, tau, anchor=anchor, rule=rule)
    c_sum, c_matched, c_pred, c_gold = 0.0, 0, 0, 0
    if judge is not None:
        gold = [g for g in evidence if g.proactive]
        proactive = [p for p in predictions if p.proactive]
        m = match_chronological(gold, proactive, tau, anchor=anchor, rule=rule)
        s = content_scores(gold, proactive, m, judge)
        c_sum, c_matched, c_pred, c_gold = math.fsum(s), len(m), len(proactive), len(gold)
    return SampleScore(
        timing=timing,
        probes=probes if probes is not None else ProbeCounts(),
        content_sum=c_sum,
        content_matched=c_matched,
        content_n_pred=c_pred,
        content_n_gold=c_gold,
    )


def aggregate(samples: Iterable[SampleScore]) -> StreamVibeScore:
    """Pool per-sample counts (micro; module doc, choice 3) and compute the six metrics."""
    total = SampleScore()
    for s in samples:
        total = total + s
    return StreamVibeScore.from_counts(total)


METRICS = ("precision", "recall", "f1", "fpr_near", "ans", "content_f1")


@dataclass(frozen=True)
class PerSampleMeans:
    """Mean of each sample's own metric over the samples where it is defined; ``n[metric]`` is
    that number of samples (a metric no sample defines is ``None``)."""

    precision: float | None
    recall: float | None
    f1: float | None
    fpr_near: float | None
    ans: float | None
    content_f1: float | None
    n: dict[str, int]


def per_sample_means(samples: Iterable[SampleScore]) -> PerSampleMeans:
    """Per-sample averaging (module doc, choice 3): score each sample alone, then average."""
    scores = [StreamVibeScore.from_counts(s) for s in samples]
    values = {m: [v for v in (getattr(x, m) for x in scores) if v is not None] for m in METRICS}
    means = {m: (math.fsum(v) / len(v) if v else None) for m, v in values.items()}
    return PerSampleMeans(**means, n={m: len(v) for m, v in values.items()})


@dataclass(frozen=True)
class ScoreReport:
    """Both aggregations of the same per-sample counts (module doc, choice 3)."""

    micro: StreamVibeScore
    per_sample: PerSampleMeans


def report(samples: Iterable[SampleScore]) -> ScoreReport:
    """Micro (pooled counts) and per-sample means side by side: the paper does not say which."""
    items = list(samples)
    return ScoreReport(micro=aggregate(items), per_sample=per_sample_means(items))
