"""Answer Readiness Score (ARS) and effective accuracy — StreamReady §4.3, Eq. 9–11, App. B.2.

The paper::

    ARS = 1/N Σ_i (EP_i · LP_i);   Acc_e = Acc × ARS                                  (Eq. 9)
    EP  = softmin(1, 2 σ(γ_e (t_a − t_s) / (τ + ε)))                                   (Eq. 10)
    LP  = softmin(1, softmax(0, 1 − γ_ℓ (t_a − t_e) / (τ + ε)))                        (Eq. 11)

with γ_e = 6, γ_ℓ = 1 (§5 "Penalty Sharpness"), τ the median evidence duration, ε for numerical
stability, and "for questions with multiple valid answers, we compute ARS separately for each turn
and report their average". App. B.2 states the properties the operators must give: an answer at
t_s gets full credit ("the factor of 2 … ensures that answers given exactly at the evidence onset
receive full credit"); for t_s < t_a < t_e "both EP and LP remain at 1"; far before t_s "EP
saturates naturally toward zero"; after t_e "LP decays gradually rather than collapsing"; early is
"a harsher" penalty than late (§1, §4.3); and t_s > t_e never yields "contradictory or negative
values".

Our choice of softmin / softmax (the paper never writes their form)
-------------------------------------------------------------------
Both are the log-sum-exp family with a temperature T::

    softmin_T(a, b) = −T log(e^{−a/T} + e^{−b/T})    (T → 0: min(a, b))
    softmax_T(a, b) =  T log(e^{a/T}  + e^{b/T})     (T → 0: max(a, b))

* The **outer softmin(1, ·)** in Eq. 10 and 11 defaults to **T = 0, the exact min**. No smooth
  function can do what App. B.2 asks of it: it must return exactly 1 at t_a = t_s (softmin(1,1)=1)
  and exactly 1 inside the window (softmin(1, y) = 1 for y > 1), and a differentiable symmetric
  function with f(x, x) = x and f ≤ min has no derivative on the diagonal. Any T > 0 gives
  softmin(1, 1) = 1 − T log 2 (a perfectly timed answer would lose credit), so T > 0 is offered
  only for using ARS as a differentiable training signal, with results clipped to [0, 1].
* The **inner softmax(0, ·)** in Eq. 11 defaults to **T = γ_ℓ / γ_e** (1/6 with the paper's
  values), i.e. softplus: LP = min(1, T log(1 + e^{(1 − γ_ℓ (t_a − t_e)/τ)/T})). This is what
  makes the late tail "decay gradually rather than collapse" and keeps LP > 0 forever, and it is
  the smallest temperature at which the late tail (∝ e^{−γ_ℓ d/(Tτ)}) decays no faster than the
  early tail (∝ e^{−γ_e d/τ}), so an answer d seconds early *always* scores below one d seconds
  late — for every d > 0, not only near the window. With a hard max (T = 0) LP hits exactly 0 at
  d = τ/γ_ℓ while EP is still ≈ 0.005, so the early answer would out-score the late one there.
  The cost is small: LP = 1 at t_e (the softplus of 1 is 1.0004 and is clipped by the outer min),
  LP(t_e + τ/2) = 0.508 instead of 0.5, LP(t_e + τ) = 0.116 instead of 0.
  Pass ``softmax_temperature=0`` for the literal hard clamp.

Inverted windows (t_s > t_e)
----------------------------
``inverted="error"`` (default) rejects them with :class:`BadInput` naming the item and field:
in a benchmark build an inverted window is an annotation error, and a score computed on it would
silently hide that. ``"swap"`` scores against [t_e, t_s]. ``"as_is"`` applies Eq. 10–11 literally,
as App. B.2 describes: both penalties are monotone, so the result stays in [0, 1] and is never
more generous than the swapped window (between t_e and t_s both penalties apply).

Effective accuracy
------------------
Eq. 9 writes Acc_e = Acc × ARS (both averaged over questions): ``ARSResult.acc_e``. Every row of
the paper's Table 2 has Acc × ARS < Acc_e ≤ min(Acc, ARS) (e.g. StreamReady 0.564 × 0.69 = 0.39
vs. 0.53 reported), which is what the per-question product mean(correct_i · ARS_i) gives when
correct answers tend to be well timed; we report it too as ``ARSResult.acc_e_joint``.

No answer (t_a is ``None``) scores ARS 0 and counts as incorrect: never answering is infinitely
late (lim LP = 0).

τ is one number per release
---------------------------
τ is "the median evidence duration" (§4.3), a scale "consistent" across videos (App. B.2). A
median taken over whatever subset is being scored would give each task, split or filtered set
its own scale, and the same answer a different score. So :func:`score` takes τ explicitly: the
release records the median over all its turns as ``ars_tau_s`` in ``manifest.json``
(:func:`release_tau` reads it), and every subset is scored with that value.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.errors import BadInput

InvertedPolicy = Literal["error", "swap", "as_is"]

__all__ = [
    "ARSParams",
    "ARSResult",
    "Question",
    "Turn",
    "early_penalty",
    "late_penalty",
    "median_evidence_duration",
    "release_tau",
    "score",
    "softmax",
    "softmin",
    "turn_ars",
]


# ----------------------------------------------------------------------------------- operators


def softmin(a: float, b: float, temperature: float = 0.0) -> float:
    """−T log(e^{−a/T} + e^{−b/T}); the exact ``min`` at T = 0 (see module doc)."""
    if temperature <= 0:
        return min(a, b)
    m = min(a, b)
    return m - temperature * math.log1p(math.exp(-(max(a, b) - m) / temperature))


def softmax(a: float, b: float, temperature: float = 0.0) -> float:
    """T log(e^{a/T} + e^{b/T}); the exact ``max`` at T = 0 (softplus when a = 0)."""
    if temperature <= 0:
        return max(a, b)
    m = max(a, b)
    return m + temperature * math.log1p(math.exp(-(m - min(a, b)) / temperature))


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@dataclass(frozen=True)
class ARSParams:
    """Eq. 10–11 constants (paper defaults) and our operator/edge-case choices (module doc)."""

    gamma_e: float = 6.0
    gamma_l: float = 1.0
    eps: float = 1e-6
    softmin_temperature: float = 0.0
    softmax_temperature: float | None = None  # None: γ_ℓ / γ_e
    inverted: InvertedPolicy = "error"

    def __post_init__(self) -> None:
        if self.gamma_e <= 0 or self.gamma_l <= 0 or self.eps <= 0:
            raise ValueError(f"gamma_e, gamma_l and eps must be > 0: {self}")
        if self.softmin_temperature < 0 or (
            self.softmax_temperature is not None and self.softmax_temperature < 0
        ):
            raise ValueError(f"temperatures must be >= 0: {self}")
        if self.inverted not in ("error", "swap", "as_is"):
            raise ValueError(f"inverted must be 'error', 'swap' or 'as_is', got {self.inverted!r}")

    @property
    def t_max(self) -> float:
        """Temperature of the inner softmax of Eq. 11."""
        if self.softmax_temperature is None:
            return self.gamma_l / self.gamma_e
        return self.softmax_temperature


def _clip01(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def early_penalty(t_a: float, t_s: float, tau: float, params: ARSParams | None = None) -> float:
    """EP (Eq. 10): 1 for t_a ≥ t_s, 2σ(γ_e (t_a − t_s)/(τ+ε)) → 0 as the answer gets earlier."""
    p = params or ARSParams()
    x = 2.0 * _sigmoid(p.gamma_e * (t_a - t_s) / (tau + p.eps))
    return _clip01(softmin(1.0, x, p.softmin_temperature))


def late_penalty(t_a: float, t_e: float, tau: float, params: ARSParams | None = None) -> float:
    """LP (Eq. 11): 1 for t_a ≤ t_e, then a gradual decay ≈ 1 − γ_ℓ (t_a − t_e)/τ, never < 0."""
    p = params or ARSParams()
    z = 1.0 - p.gamma_l * (t_a - t_e) / (tau + p.eps)
    return _clip01(softmin(1.0, softmax(0.0, z, p.t_max), p.softmin_temperature))


# ------------------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Turn:
    """One answer turn: evidence window [t_s, t_e] (seconds), answer time t_a (None = never
    answered) and whether the answer was correct (None = not judged; counts as incorrect)."""

    t_s: float
    t_e: float
    t_a: float | None
    correct: bool | None = None


@dataclass(frozen=True)
class Question:
    """A ProReady-QA question; multi-turn questions carry one :class:`Turn` per valid answer."""

    turns: Sequence[Turn]
    id: str = ""
    source_file: str = ""


def _window(turn: Turn, q: Question, k: int, p: ARSParams) -> tuple[float, float]:
    for name, v in (("t_s", turn.t_s), ("t_e", turn.t_e)):
        if not math.isfinite(v):
            raise BadInput(
                q.source_file or "<scoring input>",
                f"turns[{k}].{name}",
                f"must be a finite number of seconds, got {v!r}",
                item_id=q.id,
            )
    if turn.t_s <= turn.t_e or p.inverted == "as_is":
        return turn.t_s, turn.t_e
    if p.inverted == "swap":
        return turn.t_e, turn.t_s
    raise BadInput(
        q.source_file or "<scoring input>",
        f"turns[{k}].evidence_window",
        f"t_s={turn.t_s} > t_e={turn.t_e} (inverted evidence window; pass inverted='swap' or "
        "'as_is' to score it anyway)",
        item_id=q.id,
    )


def median_evidence_duration(questions: Sequence[Question], params: ARSParams | None = None) -> float:
    """τ: median of |t_e − t_s| over every turn of a whole release (StreamReady §4.3); the build
    records it in the manifest — never call it on the subset being scored (module doc)."""
    p = params or ARSParams()
    durations = [
        abs(e - s) for q in questions for k, t in enumerate(q.turns) for s, e in [_window(t, q, k, p)]
    ]
    if not durations:
        raise ValueError("no evidence windows: cannot compute the median evidence duration τ")
    return float(statistics.median(durations))


def turn_ars(
    turn: Turn, tau: float, params: ARSParams | None = None, question: Question | None = None, k: int = 0
) -> float:
    """EP · LP for one turn (the summand of Eq. 9); 0 when the turn was never answered."""
    p = params or ARSParams()
    q = question or Question(turns=(turn,))
    t_s, t_e = _window(turn, q, k, p)
    if turn.t_a is None:
        return 0.0
    if not math.isfinite(turn.t_a):
        raise BadInput(
            q.source_file or "<scoring input>",
            f"turns[{k}].t_a",
            f"answer time must be finite, got {turn.t_a!r}",
            item_id=q.id,
        )
    return early_penalty(turn.t_a, t_s, tau, p) * late_penalty(turn.t_a, t_e, tau, p)


@dataclass(frozen=True)
class ARSResult:
    """Dataset-level scores; ``per_question`` holds (id, ARS_i, Acc_i) in input order."""

    ars: float
    acc: float
    acc_e: float  # Eq. 9 as written: Acc × ARS
    acc_e_joint: float  # mean over questions of mean over turns of correct · ARS
    tau: float
    n_questions: int
    n_turns: int
    per_question: list[tuple[str, float, float]] = field(default_factory=list)


def items_tau(items: Sequence[dict[str, Any]]) -> float | None:
    """τ of a release (Eq. 10–11): the median evidence duration over all its released turns —
    recorded as the manifest's ``ars_tau_s``, the scale every evaluator of the release uses."""
    qs = [Question([Turn(t["t_s"], t["t_e"], None) for t in i["turns"]], id=i["id"]) for i in items]
    return round(median_evidence_duration(qs), 4) if qs else None


def release_tau(release: str | Path) -> float:
    """The release's τ (``ars_tau_s`` in its ``manifest.json``), to pass to :func:`score`."""
    manifest = json.loads((Path(release) / "manifest.json").read_text())
    tau = manifest.get("ars_tau_s")
    if tau is None:
        raise ValueError(f"{release}/manifest.json has no ars_tau_s: not a ProReady-QA release")
    return float(tau)


def score(
    questions: Sequence[Question], *, tau: float, params: ARSParams | None = None
) -> ARSResult:
    """ARS, Acc and effective accuracy over ``questions`` (Eq. 9, per-turn averaging) at the
    release's τ (:func:`release_tau`), whether ``questions`` is the release or a subset of it.
    """
    p = params or ARSParams()
    if not questions:
        raise ValueError("no questions to score")
    for q in questions:
        if not q.turns:
            raise BadInput(q.source_file or "<scoring input>", "turns", "question has no turns", item_id=q.id)
    t = float(tau)
    if not (math.isfinite(t) and t >= 0):
        raise ValueError(f"tau must be a finite number >= 0, got {tau}")
    per: list[tuple[str, float, float]] = []
    joint: list[float] = []
    n_turns = 0
    for q in questions:
        ars_t = [turn_ars(turn, t, p, q, k) for k, turn in enumerate(q.turns)]
        acc_t = [1.0 if (turn.correct and turn.t_a is not None) else 0.0 for turn in q.turns]
        n_turns += len(ars_t)
        per.append((q.id, math.fsum(ars_t) / len(ars_t), math.fsum(acc_t) / len(acc_t)))
        joint.append(math.fsum(a * c for a, c in zip(ars_t, acc_t, strict=True)) / len(ars_t))
    ars = math.fsum(a for _, a, _ in per) / len(per)
    acc = math.fsum(c for _, _, c in per) / len(per)
    return ARSResult(
        ars=ars,
        acc=acc,
        acc_e=acc * ars,
        acc_e_joint=math.fsum(joint) / len(joint),
        tau=t,
        n_questions=len(per),
        n_turns=n_turns,
        per_question=per,
    )
