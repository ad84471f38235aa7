"""Released ProReady-QA items: what a model may see is kept apart from gold, and at every t it is
what the item truncated at t gives (StreamReady §4: questions come before their evidence)."""

from __future__ import annotations

import random

from pipelines.proready.released import (
    check_times,
    question_violations,
    release_record,
    reviewed_item,
    truncate,
)
from schemas.proready import RELEASED_ITEM


def _turn(k: int, ask: float, t_s: float, t_e: float, refers_to: int = -1) -> dict:
    return {"turn_index": k, "task_type": "ssr", "question": f"q{k}", "answer": f"a{k}", "ask_time_s": ask,
            "t_s": t_s, "t_e": t_e, "refers_to": refers_to, "dependency": "none" if k == 0 else "local",
            "cue": f"steps[{k}]", "coarse_start_s": t_s, "coarse_end_s": t_e,
            "evidence_method": "native_cue", "generator": "template"}


def _item(turns: list[dict], duration: float = 30.0) -> dict:
    return {"id": "v.ssr-chain-0", "version": 1, "video_id": "v", "video_file": "video/v.avi",
            "video_sha256": "0" * 64, "video_duration_s": duration, "video_fps": 25.0, "source": "demo",
            "task_type": "ssr", "num_turns": len(turns), "turns": turns, "generator": "template",
            "content_hash": "h", "approvals": ["r1", "r2", "r3", "r4"], "review_round": "r"}


CHAIN = [_turn(0, 10.0, 12.0, 14.0), _turn(1, 13.0, 20.0, 25.0, refers_to=0)]


def test_model_input_is_the_questions_alone_in_ask_order():
    rec = release_record(_item(CHAIN))
    assert rec["questions"] == [{"turn_index": 0, "ask_time_s": 10.0, "question": "q0"},
                                {"turn_index": 1, "ask_time_s": 13.0, "question": "q1"}]
    assert rec["gold_turns"] == CHAIN and "turns" not in rec
    assert [n for n in RELEASED_ITEM.names if n.startswith("gold_")] == ["gold_turns"]
    assert reviewed_item(rec) == _item(CHAIN)  # the QC reports read the reviewed shape


def test_truncation_at_t_keeps_only_what_is_known_at_t():
    rec = release_record(_item(CHAIN))
    cut = truncate(rec, 12.5)
    # turn 1 (asked at 13 s) does not exist yet; turn 0's answer is on screen since 12 s, but its
    # window has not closed: t_e and the coarse end are unknown
    assert [t["turn_index"] for t in cut["gold_turns"]] == [0] and cut["num_turns"] == 1
    assert (cut["gold_turns"][0]["answer"], cut["gold_turns"][0]["t_s"], cut["gold_turns"][0]["t_e"],
            cut["gold_turns"][0]["coarse_end_s"]) == ("a0", 12.0, -1.0, -1.0)
    early = truncate(rec, 11.0)["gold_turns"][0]  # asked, evidence not on screen yet
    assert (early["answer"], early["t_s"], early["cue"]) == ("", -1.0, "")
    # the item's own times, 0, its end and the midpoints: every t is covered
    assert check_times(rec) == [0.0, 5.0, 10.0, 11.0, 12.0, 12.5, 13.0, 13.5, 14.0, 17.0, 20.0,
                                22.5, 25.0, 27.5, 30.0]
    assert question_violations(rec) == []


def test_a_question_shown_early_or_with_gold_is_caught():
    early = release_record(_item(CHAIN))
    early["questions"] = [early["questions"][0], dict(early["questions"][1], ask_time_s=10.0)]
    v = question_violations(early)
    assert v[0].startswith("t=10 questions: released [{'turn_index': 0, 'ask_time_s': 10.0, "
                           "'question': 'q0'}, {'turn_index': 1, 'ask_time_s': 10.0")
    assert len(v) == 13  # every checked t from 10 s on (and its ask time is wrong after 13 s)
    answered = release_record(_item(CHAIN))
    answered["questions"][0]["question"] = "q0 (a0)"
    assert len(question_violations(answered)) == len(check_times(answered)) - 2  # from 10 s on


def test_generated_chains_are_truncation_invariant():
    rng = random.Random(5)
    for _ in range(200):
        turns, ask = [], float(rng.randint(0, 20))
        for k in range(rng.randint(1, 3)):
            t_s = ask + rng.randint(1, 10)
            t_e = t_s + rng.choice([0.0, 0.5, 3.0])
            turns.append(_turn(k, ask, t_s, t_e, refers_to=k - 1))
            ask = t_s + rng.choice([0.0, 1.5])  # a follow-up once the referenced evidence appeared
        rec = release_record(_item(turns, duration=ask + 20))
        assert question_violations(rec) == []
