"""StreamVibe scoring (StreamVibe App. B.5) on hand-computed cases."""

from __future__ import annotations

import itertools
import random

import pytest

from pipelines.streamvibe.scoring import (
    ContentJudge,
    EvidencePoint,
    Match,
    Prediction,
    ProbeCounts,
    SampleScore,
    StreamVibeScore,
    TimingCounts,
    aggregate,
    content_scores,
    fpr_near_pointwise,
    fpr_near_trajectory,
    match_chronological,
    per_sample_means,
    report,
    score_sample,
    timing_counts,
)


class KeywordJudge:
    """A real (if simple) content judge: r = round(4 × share of reference words in the reply)."""

    def __call__(self, evidence: EvidencePoint, prediction: Prediction) -> float:
        ref = set(evidence.reference.lower().split())
        got = set(prediction.text.lower().split())
        return round(4 * len(ref & got) / len(ref)) if ref else 0


EVIDENCE = [
    EvidencePoint(10, 12, preferred=11, reference="turn off the stove", id="g0"),
    EvidencePoint(30, 30, reference="water is boiling", id="g1"),
    EvidencePoint(50, 55, preferred=52, reference="add the pasta now", id="g2"),
]
PREDS = [
    Prediction(8.0, "turn off the stove"),  # g0 at τ=2 (10-2 ≤ 8), not at τ≤1
    Prediction(13.5, "turn off the stove"),  # g0 already taken -> FP
    Prediction(33.0, "water is boiling"),  # g1 ends 30, 30+2 < 33 -> FP
    Prediction(49.0, "add salt now"),  # g2 at τ≥1 (boundary 49 included)
]


def test_judge_satisfies_protocol() -> None:
    assert isinstance(KeywordJudge(), ContentJudge)


def test_hand_computed_timing_at_three_tolerances() -> None:
    # τ = 2: 8→g0, 49→g2; TP 2 of 4 predictions and 3 evidence points
    assert match_chronological(EVIDENCE, PREDS, 2.0) == [Match(0, 0), Match(2, 3)]
    c2 = timing_counts(EVIDENCE, PREDS, 2.0)
    assert (c2.tp, c2.n_pred, c2.n_gold) == (2, 4, 3)
    assert c2.precision == 0.5 and c2.recall == pytest.approx(2 / 3)
    assert c2.f1 == pytest.approx(4 / 7)  # 2·(1/2)(2/3)/(1/2+2/3)
    # τ = 1: only 49 (= 50 − 1, closed interval); τ = 0: nothing is inside a window
    assert match_chronological(EVIDENCE, PREDS, 1.0) == [Match(2, 3)]
    c0 = timing_counts(EVIDENCE, PREDS, 0.0)
    assert (c0.tp, c0.precision, c0.recall, c0.f1) == (0, 0.0, 0.0, 0.0)


def test_tighter_tolerance_never_adds_matches() -> None:
    # App. A.1: "tighter tolerances rescore the same predictions"
    rng = random.Random(1)
    for _ in range(200):
        ev = [EvidencePoint(s, s + rng.choice([0, 1, 3])) for s in rng.sample(range(60), 4)]
        pr = [Prediction(rng.uniform(0, 65)) for _ in range(5)]
        tps = [timing_counts(ev, pr, tau).tp for tau in (2.0, 1.0, 0.0)]
        assert tps == sorted(tps, reverse=True)


def test_prediction_inside_two_windows_takes_the_one_closing_first() -> None:
    ev = [EvidencePoint(10, 20, id="A"), EvidencePoint(15, 18, id="B")]
    preds = [Prediction(19.0), Prediction(16.0)]  # given out of order on purpose
    # chronological: 16 sees A (closes 20) and B (closes 18) -> B; then 19 -> A. TP = 2.
    # (taking the earlier-opening A at 16 would leave 19 with nothing: TP = 1)
    assert match_chronological(ev, preds, 0.0) == [Match(gold=1, pred=1), Match(gold=0, pred=0)]


def test_ties_are_deterministic() -> None:
    one = [EvidencePoint(10, 12)]
    same_time = [Prediction(11.0, "a"), Prediction(11.0, "b")]
    assert match_chronological(one, same_time, 0.0) == [Match(0, 0)]  # input order; b is FP
    c = timing_counts(one, same_time, 0.0)
    assert (c.precision, c.recall) == (0.5, 1.0)
    twins = [EvidencePoint(10, 12, id="x"), EvidencePoint(10, 12, id="y")]
    assert match_chronological(twins, [Prediction(11.0)], 0.0) == [Match(0, 0)]
    # equal deadline, different start: the earlier-opening one first
    ev = [EvidencePoint(9, 12), EvidencePoint(5, 12)]
    assert match_chronological(ev, [Prediction(10.0)], 0.0) == [Match(1, 0)]


def test_preferred_anchor_and_intents() -> None:
    g = [EvidencePoint(10, 20, preferred=12)]
    assert timing_counts(g, [Prediction(14.0)], 1.0).tp == 1  # inside the window
    assert timing_counts(g, [Prediction(14.0)], 1.0, anchor="preferred").tp == 0  # 12 ± 1
    assert timing_counts(g, [Prediction(13.0)], 1.0, anchor="preferred").tp == 1
    two = [EvidencePoint(10, 12, intent="stove"), EvidencePoint(10, 12, intent="timer")]
    m = match_chronological(two, [Prediction(11.0, intent="timer")], 0.0)
    assert m == [Match(1, 0)]  # same window, but only the timer point serves this intent
    assert match_chronological(two, [Prediction(11.0)], 0.0) == [Match(0, 0)]  # wildcard


def _max_matching(ev: list[EvidencePoint], pr: list[Prediction], tau: float) -> int:
    best = 0
    for k in range(min(len(ev), len(pr)), 0, -1):
        for gs in itertools.permutations(range(len(ev)), k):
            for ps in itertools.combinations(range(len(pr)), k):
                if all(ev[g].start - tau <= pr[p].t <= ev[g].end + tau for g, p in zip(gs, ps, strict=True)):
                    return k
    return best


def test_chronological_greedy_is_a_maximum_matching() -> None:
    rng = random.Random(7)
    for _ in range(300):
        ev = []
        for _ in range(rng.randint(1, 4)):
            s = rng.randint(0, 20)
            ev.append(EvidencePoint(s, s + rng.randint(0, 8)))
        pr = [Prediction(float(rng.randint(0, 30))) for _ in range(rng.randint(1, 5))]
        tau = rng.choice([0.0, 1.0, 2.0])
        m = match_chronological(ev, pr, tau)
        assert len({x.gold for x in m}) == len(m) == len({x.pred for x in m})  # one-to-one
        assert len(m) == _max_matching(ev, pr, tau)


def test_content_ans_and_content_f1() -> None:
    s = score_sample(EVIDENCE, PREDS, tau=2.0, judge=KeywordJudge())
    # matched: g0←"turn off the stove" r=4 → 1.0 ; g2←"add salt now" shares {add, now} of 4 → r=2
    assert (s.content_matched, s.content_sum) == (2, 1.5)
    score = StreamVibeScore.from_counts(s)
    assert score.ans == 0.75
    assert score.content_f1 == pytest.approx(2 * 1.5 / (4 + 3))
    assert content_scores(EVIDENCE, PREDS, [Match(1, 2)], KeywordJudge()) == [1.0]


def test_content_counts_proactive_responses_only() -> None:
    ev = [EvidencePoint(10, 12, reference="turn off the stove")]
    preds = [
        Prediction(10.0, "it is noon", proactive=False),  # reactive answer to a user turn
        Prediction(11.0, "turn off the stove"),
    ]
    s = score_sample(ev, preds, tau=0.0, judge=KeywordJudge())
    # timing uses every response: the reactive one (earlier) takes the point, 11 is extra
    assert (s.timing.tp, s.timing.n_pred) == (1, 2)
    # content re-matches proactive responses only: 11 → g, r = 4
    assert (s.content_matched, s.content_sum, s.content_n_pred) == (1, 1.0, 1)
    score = StreamVibeScore.from_counts(s)
    assert (score.precision, score.ans, score.content_f1) == (0.5, 1.0, 1.0)


def test_dynamic_content_scores_proactive_gold_points_only() -> None:
    # StreamVibe App. B.5: "For Dynamic Intents, ANS and Content-F1 score proactive responses
    # only". Proactive point [10, 12], reactive (interruption) point [30, 35]; one proactive
    # response at 11 judged r = 4 → s = 1. Content-F1 = 2·1 / (N_pred 1 + N_gold 1) = 1.0
    # (counting the reactive point too would give 2·1 / (1 + 2) = 0.667).
    ev = [EvidencePoint(10, 12, reference="turn off the stove"),
          EvidencePoint(30, 35, reference="it is noon", proactive=False)]
    s = score_sample(ev, [Prediction(11.0, "turn off the stove")], tau=2.0, judge=KeywordJudge())
    assert (s.content_sum, s.content_matched, s.content_n_pred, s.content_n_gold) == (1.0, 1, 1, 1)
    score = StreamVibeScore.from_counts(s)
    assert (score.ans, score.content_f1) == (1.0, 1.0)
    # timing is not restricted (App. B.5 restricts ANS and Content-F1 only): R = 1/2
    assert (score.precision, score.recall) == (1.0, 0.5)


def test_a_proactive_response_never_takes_a_reactive_gold_point_for_content() -> None:
    # a proactive response inside the reactive point's window: a timing TP, but no content match
    ev = [EvidencePoint(10, 12, reference="a"), EvidencePoint(30, 35, reference="b", proactive=False)]
    s = score_sample(ev, [Prediction(32.0, "b")], tau=0.0, judge=KeywordJudge())
    assert (s.timing.tp, s.content_matched, s.content_n_pred, s.content_n_gold) == (1, 0, 1, 1)
    assert StreamVibeScore.from_counts(s).content_f1 == 0.0  # 2·0 / (1 + 1)


def test_matching_rule_is_explicit_when_windows_nest() -> None:
    # windows [0, 10] and [2, 3], responses at 2.5 and 8, τ = 0
    ev = [EvidencePoint(0, 10, id="outer"), EvidencePoint(2, 3, id="inner")]
    preds = [Prediction(2.5), Prediction(8.0)]
    # earliest deadline (default, a maximum matching): 2.5 → inner, 8 → outer: TP 2, F1 = 1.0
    assert match_chronological(ev, preds, 0.0) == [Match(1, 0), Match(0, 1)]
    assert timing_counts(ev, preds, 0.0, rule="earliest_deadline").f1 == 1.0
    # earliest opening: 2.5 → outer, 8 finds nothing: TP 1, P = R = 1/2, F1 = 0.5
    assert match_chronological(ev, preds, 0.0, rule="earliest_start") == [Match(0, 0)]
    assert timing_counts(ev, preds, 0.0, rule="earliest_start").f1 == 0.5
    with pytest.raises(ValueError, match="rule"):
        match_chronological(ev, preds, 0.0, rule="latest")  # type: ignore[arg-type]


def test_micro_and_per_sample_means_are_both_reported() -> None:
    a = score_sample(EVIDENCE, PREDS, tau=2.0, probes=ProbeCounts(1, 4))  # TP 2 / 4 pred / 3 gold
    b = score_sample([EvidencePoint(0, 1), EvidencePoint(5, 6)], [Prediction(0.5)],
                     probes=ProbeCounts(0, 4))  # TP 1 / 1 pred / 2 gold
    r = report([a, b])
    assert (r.micro.precision, r.micro.recall, r.micro.fpr_near) == (0.6, 0.6, 1 / 8)  # 3/5, 3/5, 1/8
    m = r.per_sample
    assert m.precision == 0.75  # (1/2 + 1) / 2
    assert m.recall == pytest.approx(7 / 12)  # (2/3 + 1/2) / 2
    assert m.f1 == pytest.approx(13 / 21)  # (4/7 + 2/3) / 2
    assert m.fpr_near == 0.125  # (1/4 + 0) / 2
    assert (m.ans, m.content_f1) == (None, None) and m.n["ans"] == 0  # no judge was run
    # a sample without predictions has no precision: left out of that mean, and counted
    silent = score_sample([EvidencePoint(0, 1)], [])
    m3 = per_sample_means([a, b, silent])
    assert (m3.precision, m3.n["precision"]) == (0.75, 2)
    assert (m3.recall, m3.n["recall"]) == (pytest.approx(7 / 18), 3)  # (2/3 + 1/2 + 0) / 3


def test_judge_out_of_range_is_an_error() -> None:
    def bad(evidence: EvidencePoint, prediction: Prediction) -> float:
        return 5

    with pytest.raises(ValueError, match=r"must be in \[0, 4.0\]"):
        score_sample([EvidencePoint(0, 1)], [Prediction(0.5)], judge=bad)


def test_fpr_near() -> None:
    c = fpr_near_trajectory([5, 20, 40], [5.4, 21.0, 39.99])
    assert (c.fp, c.n, c.fpr) == (1, 3, pytest.approx(1 / 3))  # only 5.4 is in probe 5's step
    p = fpr_near_pointwise([True, False, False, True])
    assert (p.fp, p.n, p.fpr) == (2, 4, 0.5)
    assert ProbeCounts().fpr is None


def test_pooled_aggregation_and_undefined_values() -> None:
    a = score_sample(EVIDENCE, PREDS, tau=2.0, probes=ProbeCounts(1, 4))
    b = score_sample([EvidencePoint(0, 1), EvidencePoint(5, 6)], [Prediction(0.5)], probes=ProbeCounts(0, 4))
    total = aggregate([a, b])
    # pooled: TP 3, N_pred 5, N_gold 5 -> P = R = F1 = 0.6 (a per-sample mean would give 0.75 P)
    assert (total.precision, total.recall, total.f1) == (0.6, 0.6, pytest.approx(0.6))
    assert total.fpr_near == 1 / 8
    assert total.ans is None and total.content_f1 is None  # no judge was run
    silent = TimingCounts(tp=0, n_pred=0, n_gold=2)
    assert (silent.precision, silent.recall, silent.f1) == (None, 0.0, 0.0)
    assert TimingCounts().f1 is None
    empty = aggregate([SampleScore()])
    assert (empty.precision, empty.recall, empty.f1, empty.fpr_near) == (None,) * 4


def test_invalid_inputs() -> None:
    with pytest.raises(ValueError, match="start 5 > end 3"):
        EvidencePoint(5, 3)
    with pytest.raises(ValueError, match="preferred time 9"):
        EvidencePoint(10, 12, preferred=9)
    with pytest.raises(ValueError, match="tau"):
        match_chronological(EVIDENCE, PREDS, -1.0)
    with pytest.raises(ValueError, match="needs a preferred time"):
        match_chronological([EvidencePoint(1, 2)], PREDS, 1.0, anchor="preferred")
