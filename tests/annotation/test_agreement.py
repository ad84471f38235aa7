"""Agreement statistics (StreamVibe App. B.3) cross-checked against statsmodels and sklearn.

References: Fleiss (1971) ``diagnoses`` table with R irr's κ = 0.4302445, loaded from the table
statsmodels ships in its own tests; random tables in seeded loops against statsmodels
``fleiss_kappa`` / sklearn ``cohen_kappa_score``; hand-computed small cases; undefined cases.
"""

from __future__ import annotations

import json
import random
import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats import inter_rater

from annotation import agreement as ag
from annotation.agreement import Interval, Undefined, audit, cohen_kappa, fleiss_kappa

PANEL = ["r1", "r2", "r3", "r4"]
MODEL = "gemini:gemini-test"


def _row(sid, reviewer, decision, *, task_type="explicit", version=1, created="2026-11-01T10:00:00Z"):
    return {
        "benchmark": "streamvibe",
        "review_round": "round-1",
        "sample_id": sid,
        "version": version,
        "content_hash": "0" * 64,
        "task_type": task_type,
        "reviewer": reviewer,
        "rater_kind": "model" if reviewer.startswith("gemini:") else "human",
        "decision": decision,
        "criteria": [],
        "comment": "",
        "lead_time": 1.0,
        "created_at": created,
        "source_task_id": 1,
        "source_annotation_id": 1,
    }


def _synthetic(n: int, seed: int, types=("explicit", "implicit", "dynamic"), model=True):
    """Candidates with a latent truth; humans flip with p=0.08, the model with p=0.15."""
    rng = random.Random(seed)
    rows = []
    raters = [*PANEL, MODEL] if model else PANEL
    for i in range(n):
        truth = rng.random() < 0.6
        for r in raters:
            ok = truth != (rng.random() < (0.15 if r == MODEL else 0.08))
            d = "approve" if ok else rng.choice(["revise", "reject"])
            rows.append(_row(f"s{i:04d}", r, d, task_type=types[i % len(types)]))
    return rows


def _json_strict(obj) -> str:
    return json.dumps(obj, allow_nan=False)


# ----------------------------------------------------------------------------- references


def test_fleiss_1971_diagnoses_matches_r_irr():
    """Fleiss (1971) psychiatric diagnoses, 30 subjects x 6 raters; R irr kappam.fleiss."""
    from statsmodels.stats.tests.test_inter_rater import diagnoses  # the table statsmodels ships

    table, _ = inter_rater.aggregate_raters(diagnoses)
    assert table.shape == (30, 5)
    k = fleiss_kappa(table)
    assert k == pytest.approx(0.4302445, abs=1e-7)
    assert k == pytest.approx(inter_rater.fleiss_kappa(table, method="fleiss"), abs=1e-12)
    assert ag.landis_koch(k) == "moderate"


def test_fleiss_random_tables_match_statsmodels():
    rng = np.random.default_rng(20261129)
    defined = undefined = 0
    for _ in range(300):
        n_sub = int(rng.integers(1, 40))
        k_cat = int(rng.integers(2, 5))
        n_rat = int(rng.integers(2, 7))
        # Skewed category probabilities so some tables end up with a single class.
        p = rng.dirichlet(np.full(k_cat, 0.3))
        table = np.stack([rng.multinomial(n_rat, p) for _ in range(n_sub)])
        ours = fleiss_kappa(table)
        with np.errstate(invalid="ignore", divide="ignore"):  # statsmodels: nan on one class
            ref = inter_rater.fleiss_kappa(table, method="fleiss")
        if isinstance(ours, Undefined):
            undefined += 1
            assert np.isnan(ref) or table.sum(axis=0).max() == table.sum()
            assert ours.reason == ag.REASON_ONE_CLASS
        else:
            defined += 1
            assert ours == pytest.approx(ref, abs=1e-10)
            assert ag.raw_agreement(table) == pytest.approx(
                ((table * (table - 1)).sum(1) / (n_rat * (n_rat - 1))).mean()
            )
    assert defined > 200 and undefined > 0  # both branches exercised


def test_cohen_random_labels_match_sklearn():
    rng = random.Random(7)
    cats = ["approve", "revise", "reject"]
    defined = undefined = 0
    for _ in range(300):
        n = rng.randint(1, 30)
        k = rng.randint(1, 3)
        a = [rng.choice(cats[:k]) for _ in range(n)]
        b = [x if rng.random() < 0.7 else rng.choice(cats[:k]) for x in a]
        ours = cohen_kappa(a, b)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # sklearn warns before returning nan
            ref = cohen_kappa_score(a, b)
        if isinstance(ours, Undefined):
            undefined += 1
            assert np.isnan(ref)
        else:
            defined += 1
            assert ours == pytest.approx(ref, abs=1e-10)
    assert defined > 150 and undefined > 0


# ----------------------------------------------------------------------------- hand cases


def test_hand_computed_fleiss_and_cohen():
    # Two candidates, four raters: (4,0) and (2,2).
    # P_1 = 1, P_2 = (2*1 + 2*1)/(4*3) = 1/3 -> P̄ = 2/3; p = (6/8, 2/8) -> Pe = 0.625.
    # κ = (2/3 - 0.625) / 0.375 = 1/9.
    t = [[4, 0], [2, 2]]
    assert ag.raw_agreement(t) == pytest.approx(2 / 3)
    assert fleiss_kappa(t) == pytest.approx(1 / 9)
    assert ag.unanimous_fraction(t) == pytest.approx(0.5)
    # Perfect agreement with both classes used: κ = 1.
    assert fleiss_kappa([[4, 0], [0, 4]]) == pytest.approx(1.0)
    # Cohen: p_o = 3/4, marginals (1/2, 1/2) and (1/4, 3/4) -> p_e = 1/2 -> κ = 1/2.
    assert cohen_kappa(["a", "a", "n", "n"], ["a", "n", "n", "n"]) == pytest.approx(0.5)
    # One rater constant, the other not: p_e = p_o -> κ = 0 (defined, as in sklearn).
    assert cohen_kappa(["a", "a", "a", "a"], ["a", "n", "a", "n"]) == pytest.approx(0.0)


def test_landis_koch_bands():
    cases = {-0.1: "poor", 0.0: "slight", 0.2: "slight", 0.21: "fair", 0.4: "fair",
             0.55: "moderate", 0.61: "substantial", 0.8: "substantial", 0.82: "almost perfect",
             1.0: "almost perfect"}
    for k, band in cases.items():
        assert ag.landis_koch(k) == band
    u = Undefined("x")
    assert ag.landis_koch(u) is u


def test_unequal_rater_counts_are_an_error():
    with pytest.raises(ValueError, match="same number of raters"):
        fleiss_kappa([[3, 1], [2, 1]])


# ----------------------------------------------------------------------------- undefined


def test_undefined_cases_have_reasons_not_nan():
    assert fleiss_kappa(np.zeros((0, 2))) == Undefined(ag.REASON_NO_CANDIDATES)
    assert fleiss_kappa([[1, 0], [0, 1]]) == Undefined(ag.REASON_FEW_RATERS)
    assert fleiss_kappa([[4, 0], [4, 0]]) == Undefined(ag.REASON_ONE_CLASS)
    assert cohen_kappa([], []) == Undefined(ag.REASON_NO_CANDIDATES)
    assert cohen_kappa(["a", "a"], ["a", "a"]) == Undefined(ag.REASON_COHEN_ONE_CLASS)
    assert Undefined("why").to_dict() == {"undefined": True, "reason": "why"}
    assert str(Undefined("why")) == "undefined (why)"


def test_audit_all_approve_is_undefined():
    rows = [_row(f"s{i}", r, "approve") for i in range(5) for r in [*PANEL, MODEL]]
    a = audit(rows, PANEL, MODEL, n_boot=50)
    s = a.overall
    assert s.n_candidates == 5
    assert s.fleiss_kappa == Undefined(ag.REASON_ONE_CLASS)
    assert s.fleiss_interval == Undefined(ag.REASON_ONE_CLASS)
    assert s.fleiss_band == Undefined(ag.REASON_ONE_CLASS)
    assert s.p_bar == 1.0 and s.unanimous_fraction == 1.0
    assert all(p.kappa == Undefined(ag.REASON_COHEN_ONE_CLASS) for p in s.cohen)
    assert isinstance(s.cohen_mean, Undefined) and "vs r1" in s.cohen_mean.reason
    _json_strict(a.to_dict())


def test_audit_no_candidates_and_few_raters():
    a = audit([], PANEL, MODEL, n_boot=10)
    assert a.per_type == {}
    assert a.overall.n_candidates == 0
    assert a.overall.fleiss_kappa == Undefined(ag.REASON_NO_CANDIDATES)
    assert a.overall.p_bar == Undefined(ag.REASON_NO_CANDIDATES)
    assert a.overall.cohen_mean == Undefined(ag.REASON_NO_CANDIDATES)

    rows = [_row("s1", "r1", "approve"), _row("s2", "r1", "reject")]
    one = audit(rows, ["r1"], None, n_boot=10)
    assert one.overall.n_candidates == 2
    assert one.overall.fleiss_kappa == Undefined(ag.REASON_FEW_RATERS)
    assert one.overall.unanimous_fraction == Undefined(ag.REASON_FEW_RATERS)
    assert one.overall.cohen_mean == Undefined(ag.REASON_NO_MODEL)
    _json_strict(one.to_dict())


def test_retained_only_population_is_undefined_with_reason():
    """App. B.3: κ on retained samples alone is invalid — even when it would compute."""
    rows = _synthetic(60, seed=3)
    a = audit(rows, PANEL, MODEL, population="retained_only", n_boot=20)
    for s in [a.overall, *a.per_type.values()]:
        assert s.fleiss_kappa == Undefined(ag.REASON_RETAINED)
        assert s.cohen_mean == Undefined(ag.REASON_RETAINED)
        assert all(p.kappa == Undefined(ag.REASON_RETAINED) for p in s.cohen)
        assert s.n_candidates > 0  # counts are still reported
    assert "retained" in ag.REASON_RETAINED and "App. B.3" in ag.REASON_RETAINED
    d = a.to_dict()
    assert d["overall"]["fleiss_kappa"] == {"undefined": True, "reason": ag.REASON_RETAINED}
    with pytest.raises(ValueError, match="population"):
        audit(rows, PANEL, MODEL, population="retained")  # type: ignore[arg-type]


def test_model_without_decisions_and_partial_undefined_mean():
    rows = [_row("s1", r, d) for r, d in zip(PANEL, ["approve", "approve", "reject", "approve"],
                                              strict=True)]
    rows += [_row("s2", r, "reject") for r in PANEL]
    a = audit(rows, PANEL, MODEL, n_boot=10)
    assert a.overall.n_model == 0 and a.overall.n_model_missing == 2
    assert a.overall.cohen_mean == Undefined(ag.REASON_NO_MODEL_DECISIONS)
    # Model rejects both. r1 (approve, reject) vs constant model: p_e = p_o -> κ = 0, defined.
    # r3 rejects both too: both raters constant in the same class -> undefined, and so the mean.
    rows2 = rows + [_row("s1", MODEL, "reject"), _row("s2", MODEL, "reject")]
    b = audit(rows2, PANEL, MODEL, n_boot=10)
    by = {p.reviewer: p.kappa for p in b.overall.cohen}
    assert by["r3"] == Undefined(ag.REASON_COHEN_ONE_CLASS)  # both raters constant "reject"
    assert by["r1"] == pytest.approx(0.0)
    assert isinstance(b.overall.cohen_mean, Undefined)
    assert "vs r3" in b.overall.cohen_mean.reason


# ----------------------------------------------------------------------------- population


def test_first_round_selection_rules():
    rows = [
        # s1: r1 first said revise (earlier timestamp), later approve on the same version.
        _row("s1", "r1", "approve", created="2026-11-02T10:00:00Z"),
        _row("s1", "r1", "revise", created="2026-11-01T09:00:00Z"),
        _row("s1", "r2", "approve"), _row("s1", "r3", "approve"), _row("s1", "r4", "approve"),
        # s1 version 2 after correction: not a new sample.
        *[_row("s1", r, "approve", version=2) for r in PANEL],
        # s2: dropped later (all reject) — still audited.
        *[_row("s2", r, "reject", task_type="implicit") for r in PANEL],
        # s3: r4 never reviewed -> incomplete, excluded and listed.
        *[_row("s3", r, "approve") for r in PANEL[:3]],
        # a fifth human outside the panel is ignored, not mixed in.
        _row("s1", "r9", "reject"),
    ]
    fr = ag.first_round(rows, PANEL, MODEL)
    assert fr.human["s1"]["r1"] == "revise"
    assert fr.ignored["later_version"] == 4
    assert fr.ignored["repeat_decision"] == 1
    assert fr.ignored["rater_not_audited"] == 1
    assert fr.complete() == ["s1", "s2"] and fr.incomplete() == ["s3"]

    a = audit(rows, PANEL, None, n_boot=10)
    assert a.overall.n_candidates == 2 and a.overall.n_incomplete == 1
    assert a.incomplete_ids == ["s3"]
    assert a.per_type["implicit"].n_candidates == 1
    assert a.overall.decision_distribution == {"approve": 3, "revise": 1, "reject": 4}
    # Binary table: s1 = (3 approve, 1 not), s2 = (0, 4).
    assert a.overall.fleiss_kappa == pytest.approx(fleiss_kappa([[3, 1], [0, 4]]))
    assert a.ignored == {"later_version": 4, "rater_not_audited": 1, "repeat_decision": 1}


def test_bad_rows_are_clear_errors():
    with pytest.raises(ValueError, match="not one of"):
        audit([_row("s1", "r1", "maybe")], PANEL, None)
    with pytest.raises(ValueError, match="ISO-8601"):
        audit([_row("s1", "r1", "approve", created="yesterday")], PANEL, None)
    with pytest.raises(ValueError, match="task_type"):
        audit([_row("s1", "r1", "approve"), _row("s1", "r2", "approve", task_type="dynamic")],
              PANEL, None)
    with pytest.raises(ValueError, match="duplicate"):
        audit([], ["r1", "r1"], None)
    with pytest.raises(ValueError, match="also listed"):
        audit([], [*PANEL, MODEL], MODEL)


def test_scheme_binary_folds_revise_and_reject():
    rows = [_row("s1", r, d) for r, d in zip(PANEL, ["revise", "reject", "revise", "reject"],
                                              strict=True)]
    rows += [_row("s2", r, "approve") for r in PANEL]
    b = audit(rows, PANEL, None, n_boot=10)
    assert b.overall.unanimous_fraction == 1.0 and b.overall.fleiss_kappa == pytest.approx(1.0)
    d = audit(rows, PANEL, None, scheme="decision", n_boot=10)
    assert d.overall.unanimous_fraction == 0.5
    assert d.overall.fleiss_kappa == pytest.approx(fleiss_kappa([[0, 2, 2], [4, 0, 0]]))
    assert d.categories == ["approve", "revise", "reject"]


# ----------------------------------------------------------------------------- audit values


def test_audit_matches_references_per_type_and_overall():
    rows = _synthetic(240, seed=11)
    a = audit(rows, PANEL, MODEL, n_boot=400)
    fr = ag.first_round(rows, PANEL, MODEL)
    assert set(a.per_type) == {"explicit", "implicit", "dynamic"}
    for scope, s in [*a.per_type.items(), ("overall", a.overall)]:
        ids = [x for x in sorted(fr.human) if scope == "overall" or fr.task_type[x] == scope]
        labels = [["approve" if fr.human[x][r] == "approve" else "not" for r in PANEL]
                  for x in ids]
        table = ag.count_table(labels, ["approve", "not"])
        assert s.n_candidates == len(ids)
        assert s.fleiss_kappa == pytest.approx(inter_rater.fleiss_kappa(table), abs=1e-12)
        assert s.unanimous_fraction == pytest.approx(
            np.mean([len(set(row)) == 1 for row in labels]))
        assert sum(s.decision_distribution.values()) == 4 * len(ids)
        m = ["approve" if fr.model[x] == "approve" else "not" for x in ids]
        ks = []
        for p in s.cohen:
            h = ["approve" if fr.human[x][p.reviewer] == "approve" else "not" for x in ids]
            ref = cohen_kappa_score(m, h)
            assert p.kappa == pytest.approx(ref, abs=1e-12)
            assert isinstance(p.interval, Interval) and p.interval.low <= ref <= p.interval.high
            ks.append(ref)
        assert s.cohen_mean == pytest.approx(np.mean(ks))
        assert (s.cohen_min, s.cohen_max) == (pytest.approx(min(ks)), pytest.approx(max(ks)))
        assert isinstance(s.fleiss_interval, Interval)
        assert s.fleiss_interval.low <= s.fleiss_kappa <= s.fleiss_interval.high
        assert s.fleiss_interval.n_boot == 400
    _json_strict(a.to_dict())


def test_bootstrap_is_deterministic_and_seeded_per_scope():
    rows = _synthetic(120, seed=5)
    a1 = audit(rows, PANEL, MODEL, n_boot=300, global_seed=1)
    a2 = audit(list(reversed(rows)), PANEL, MODEL, n_boot=300, global_seed=1)
    assert _json_strict(a1.to_dict()) == _json_strict(a2.to_dict())
    a3 = audit(rows, PANEL, MODEL, n_boot=300, global_seed=2)
    assert a3.overall.fleiss_interval != a1.overall.fleiss_interval
    assert a3.overall.fleiss_kappa == a1.overall.fleiss_kappa
    # Adding candidates of another type leaves this type's intervals untouched (seeding per
    # sample and purpose, design.md §Conventions).
    extra = [_row(f"x{i}", r, "approve" if (i + j) % 3 else "reject", task_type="other")
             for i in range(10) for j, r in enumerate([*PANEL, MODEL])]
    a4 = audit(rows + extra, PANEL, MODEL, n_boot=300, global_seed=1)
    assert a4.per_type["explicit"].to_dict() == a1.per_type["explicit"].to_dict()
    assert a4.overall.to_dict() != a1.overall.to_dict()


def test_vectorised_bootstrap_equals_scalar_statistics():
    rows = _synthetic(50, seed=9, types=("t",))
    fr = ag.first_round(rows, PANEL, MODEL)
    ids = fr.complete()
    cats = list(ag.BINARY_CATEGORIES)
    table = ag.count_table([[ag._map(fr.human[x][r], "binary") for r in PANEL] for x in ids], cats)
    idx = ag._boot_indices(0, "t", "check", len(ids), 25)
    boot = ag._fleiss_boot(table, idx)
    for b in range(25):
        ref = fleiss_kappa(table[idx[b]])
        assert (np.isnan(boot[b]) and isinstance(ref, Undefined)) or boot[b] == pytest.approx(ref)
    m = np.array([cats.index(ag._map(fr.model[x], "binary")) for x in ids])
    h = np.array([cats.index(ag._map(fr.human[x]["r2"], "binary")) for x in ids])
    cb = ag._cohen_boot(m, h, 2, idx)
    for b in range(25):
        ref = cohen_kappa_score(m[idx[b]], h[idx[b]])
        assert cb[b] == pytest.approx(ref)
