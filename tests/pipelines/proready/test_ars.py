"""ARS (StreamReady Eq. 9–11) and the properties App. B.2 states for it."""

from __future__ import annotations

import math

import pytest

from core.errors import BadInput
from pipelines.proready.ars import (
    ARSParams,
    Question,
    Turn,
    early_penalty,
    late_penalty,
    median_evidence_duration,
    release_tau,
    score,
    softmax,
    softmin,
    turn_ars,
)

TAU = 10.0  # seconds
TS, TE = 100.0, 120.0


def ars_at(t_a: float, params: ARSParams | None = None, ts: float = TS, te: float = TE) -> float:
    return turn_ars(Turn(ts, te, t_a), TAU, params)


def test_operators() -> None:
    assert softmin(1.0, 0.3) == 0.3 and softmax(0.0, -2.0) == 0.0  # T = 0: exact
    assert softmin(1.0, 1.0, 0.5) == pytest.approx(1 - 0.5 * math.log(2))
    assert softmax(0.0, 1.0, 1 / 6) == pytest.approx(math.log1p(math.exp(6)) / 6)
    assert softmax(0.0, -1000.0, 0.1) == pytest.approx(0.0, abs=1e-300)  # no overflow


def test_answer_at_onset_scores_exactly_one() -> None:
    # App. B.2: "answers given exactly at the evidence onset (t_a = t_s) receive full credit"
    assert early_penalty(TS, TS, TAU) == 1.0
    assert ars_at(TS) == 1.0


def test_inside_window_scores_one() -> None:
    for t in (100.0, 100.001, 105.0, 119.999, 120.0):
        assert ars_at(t) == 1.0


def test_far_early_tends_to_zero_and_is_monotone() -> None:
    # Eq. 10 by hand: 2σ(6·(−5)/10) = 2/(1+e^3)
    assert ars_at(TS - 5) == pytest.approx(2 / (1 + math.exp(3)))
    assert ars_at(TS - 30) == pytest.approx(2 / (1 + math.exp(18)))
    assert ars_at(TS - 200) < 1e-50
    seq = [ars_at(TS - d) for d in range(0, 100, 5)]
    assert seq == sorted(seq, reverse=True)


def test_late_decays_gradually() -> None:
    # Eq. 11 with softmax temperature T = γ_ℓ/γ_e = 1/6: LP = min(1, T·log(1 + e^{(1 − d/τ)/T}))
    lp = [ars_at(TE + d) for d in (0, 1, 5, 10, 20, 40)]
    assert lp[0] == 1.0
    assert lp[1] == pytest.approx(math.log1p(math.exp(6 * 0.9)) / 6)  # ≈ 0.9008
    assert lp[2] == pytest.approx(0.508098, abs=1e-6)
    assert lp[3] == pytest.approx(math.log(2) / 6)  # t_e + τ: 0.1155, not a cliff to 0
    assert lp == sorted(lp, reverse=True) and all(x > 0 for x in lp)
    # no cliff: a 1 s step never drops LP by more than γ_ℓ·1/τ (+ rounding)
    steps = [ars_at(TE + d) - ars_at(TE + d + 1) for d in range(0, 60)]
    assert max(steps) <= 0.1 + 1e-9


def test_early_is_penalized_more_than_equally_late() -> None:
    for d in [0.01, 0.5, 1, 2, 5, 9.9, 10, 10.1, 15, 20, 40, 80]:
        early, late = ars_at(TS - d), ars_at(TE + d)
        assert early < late, (d, early, late)
    # why the soft inner max: with the literal hard clamp, LP hits 0 at t_e + τ/γ_ℓ
    hard = ARSParams(softmax_temperature=0.0)
    assert ars_at(TE + 10.5, hard) == 0.0 and ars_at(TS - 10.5, hard) > 0.0
    assert ars_at(TE + 5, hard) == pytest.approx(0.5)


def test_paper_gammas_are_defaults_and_sharper_gamma_e_is_harsher() -> None:
    p = ARSParams()
    assert (p.gamma_e, p.gamma_l, p.t_max) == (6.0, 1.0, pytest.approx(1 / 6))
    assert ars_at(TS - 2, ARSParams(gamma_e=12)) < ars_at(TS - 2)


def test_inverted_window_policies() -> None:
    q = Question(
        turns=(Turn(t_s=120, t_e=100, t_a=110, correct=True),), id="q7", source_file="proready/ego4d.json"
    )
    with pytest.raises(BadInput) as err:
        score([q], tau=TAU)
    assert (err.value.source_file, err.value.item_id) == ("proready/ego4d.json", "q7")
    assert err.value.field == "turns[0].evidence_window" and "t_s=120 > t_e=100" in err.value.reason
    swapped = ARSParams(inverted="swap")
    assert turn_ars(Turn(120, 100, 110), TAU, swapped) == 1.0  # scored against [100, 120]
    as_is = ARSParams(inverted="as_is")
    for t in range(60, 180):
        v = turn_ars(Turn(120, 100, float(t)), TAU, as_is)
        assert 0.0 <= v <= 1.0
        assert v <= turn_ars(Turn(120, 100, float(t)), TAU, swapped)  # never more generous
    # between t_e and t_s both penalties apply: early w.r.t. 120 and late w.r.t. 100
    v = turn_ars(Turn(120, 100, 110.0), TAU, as_is)
    assert v == pytest.approx(early_penalty(110, 120, TAU) * late_penalty(110, 100, TAU))


def test_score_per_turn_averaging_tau_and_effective_accuracy() -> None:
    qs = [
        Question(turns=(Turn(0, 10, 5.0, True),), id="a"),  # durations 10, 20, 30, 4
        Question(turns=(Turn(50, 70, 40.0, True), Turn(100, 130, 100.0, False)), id="b"),
        Question(turns=(Turn(10, 14, None, None),), id="c"),  # never answered
    ]
    assert median_evidence_duration(qs) == 15.0  # median of 10, 20, 30, 4
    r = score(qs, tau=15.0)
    early_b = 2 / (1 + math.exp(6 * 10 / (15 + 1e-6)))  # t_a 10 s before t_s, τ = 15
    assert r.per_question[0] == ("a", 1.0, 1.0)
    assert r.per_question[1][1] == pytest.approx((early_b + 1.0) / 2)
    assert r.per_question[1][2] == 0.5
    assert r.per_question[2] == ("c", 0.0, 0.0)
    assert r.ars == pytest.approx((1 + (early_b + 1) / 2 + 0) / 3)
    assert r.acc == pytest.approx(0.5)
    assert r.acc_e == pytest.approx(r.acc * r.ars)  # Eq. 9 as written
    assert r.acc_e_joint == pytest.approx((1 + early_b / 2 + 0) / 3)
    assert (r.tau, r.n_questions, r.n_turns) == (15.0, 3, 4)
    assert score(qs, tau=30.0).tau == 30.0


def test_tau_is_the_release_tau_whatever_subset_is_scored(tmp_path) -> None:
    # StreamReady §4.3: τ is "the median evidence duration", one scale for the benchmark. The
    # release records it (manifest ``ars_tau_s``); scoring one task must not re-derive it.
    qs = [Question(turns=(Turn(0, 10, 17.5),), id="a"),  # answered 7.5 s after t_e
          Question(turns=(Turn(50, 70, 60.0),), id="b"),
          Question(turns=(Turn(100, 130, 100.0),), id="c"),
          Question(turns=(Turn(10, 14, 12.0),), id="d")]  # durations 10, 20, 30, 4 → τ = 15
    (tmp_path / "manifest.json").write_text('{"version": "2.0.0", "ars_tau_s": 15.0}')
    tau = release_tau(tmp_path)
    assert tau == 15.0
    # LP = (1/6)·ln(1 + e^{6·(1 − 7.5/15)}) = ln(1 + e³)/6 = 0.5081 — with the release τ. The
    # subset {a, d} alone has median 7 and would give ln(1 + e^{6·(1 − 7.5/7)})/6 = 0.0836.
    subset = score([qs[0], qs[3]], tau=tau)
    assert subset.per_question[0][1] == pytest.approx(math.log1p(math.exp(3)) / 6, abs=1e-6)
    assert subset.per_question[0][1] == pytest.approx(0.5081, abs=1e-4)
    assert subset.per_question[0] == score(qs, tau=tau).per_question[0]
    with pytest.raises(TypeError):
        score([qs[0], qs[3]])  # no τ: the subset's own median is never used silently
    (tmp_path / "manifest.json").write_text('{"version": "2.0.0"}')
    with pytest.raises(ValueError, match="ars_tau_s"):
        release_tau(tmp_path)


def test_soft_outer_min_is_bounded_and_converges_to_hard() -> None:
    soft = ARSParams(softmin_temperature=0.05)
    for t in range(40, 200, 3):
        v = ars_at(float(t), soft)
        assert 0.0 <= v <= 1.0
    assert ars_at(TS, soft) == pytest.approx(1 - 0.05 * math.log(2))  # why T=0 is the default
    for t in (90.0, 100.0, 110.0, 125.0):
        assert ars_at(t, ARSParams(softmin_temperature=1e-4)) == pytest.approx(ars_at(t), abs=1e-3)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError):
        ARSParams(gamma_e=0)
    with pytest.raises(ValueError, match="no questions"):
        score([], tau=1.0)
    with pytest.raises(BadInput, match="no turns"):
        score([Question(turns=(), id="z")], tau=1.0)
    with pytest.raises(BadInput, match="finite"):
        turn_ars(Turn(0, 1, math.nan), 1.0)
