"""Evidence windows: dwell smoothing, App. C task rules, and the future-dependence validation."""

from __future__ import annotations

import pytest

from core.errors import BadInput
from pipelines.proready.evidence import (
    TASK_RULES,
    dwell_smooth,
    refine_window,
    temporal_iou,
    validate_item,
)
from pipelines.proready.templates import ask_before


def test_dwell_smoothing_bridges_short_dips_and_drops_flickers() -> None:
    # a one-frame flicker at 1, a run 4..8 with a one-frame dip at 6
    flags = [False, True, False, False, True, True, False, True, True, False]
    assert dwell_smooth(flags, 2) == [False, False, False, False, True, True, True, True, True, False]
    assert dwell_smooth(flags, 1) == flags
    # a two-frame dip is not bridged with dwell 2
    assert dwell_smooth([True, True, False, False, True, True], 2) == [True, True, False, False, True, True]


def test_refine_window_earliest_inferable_and_last_valid_cue() -> None:
    times = [float(t) for t in range(20, 31)]
    inf = [t >= 24 for t in range(20, 31)]
    cue = [24 <= t <= 28 for t in range(20, 31)]
    assert refine_window(times, inf, cue, "crr", (25.0, 27.0), dwell=2) == (24.0, 28.0)
    # SSR: the next step cannot be known before its transition (t_s >= native onset 25)
    assert refine_window(times, inf, cue, "ssr", (25.0, 27.0), dwell=2) == (25.0, 28.0)
    # CTD: effect visibility also bounds t_e by the effect's end
    assert refine_window(times, inf, cue, "ctd", (25.0, 27.0), dwell=2) == (25.0, 27.0)
    # never inferable -> None (the item is filtered as evidence_not_found)
    assert refine_window(times, [False] * 11, cue, "rec", (25.0, 27.0), dwell=2) is None
    # a single inferable frame is a flicker under dwell 2
    one = [t == 26 for t in range(20, 31)]
    assert refine_window(times, one, one, "gsd", (25.0, 27.0), dwell=2) is None
    assert set(TASK_RULES) == {"ssr", "rec", "crr", "ctd", "gsd"}


def test_ask_before_is_whole_seconds_and_strictly_before() -> None:
    assert ask_before(25.0, 23.0, 2.0) == 23.0
    assert ask_before(25.5, 20.0, 2.0) == 23.0
    assert ask_before(26.0, 25.0, 2.0) == 25.0  # not before the anchor scene
    assert ask_before(1.0, 0.0, 2.0) == 0.0
    assert ask_before(0.0, 0.0, 2.0) is None  # nothing can be asked before t=0


def _item(turns: list[dict]) -> dict:
    base = {"turn_index": 0, "task_type": "ssr", "question": "q", "answer": "a", "ask_time_s": 10.0,
            "t_s": 12.0, "t_e": 14.0, "refers_to": -1, "dependency": "none", "cue": "",
            "coarse_start_s": 12.0, "coarse_end_s": 14.0, "evidence_method": "native_cue",
            "generator": "template"}
    return {"id": "v.x", "video_duration_s": 30.0, "video_fps": 25.0,
            "turns": [dict(base, **t) for t in turns]}


def test_validate_item_accepts_a_future_dependent_chain() -> None:
    validate_item(_item([{}, {"turn_index": 1, "ask_time_s": 12.0, "t_s": 15.0, "t_e": 16.0,
                              "refers_to": 0, "dependency": "local"}]), "m.yaml")
    # decision times count from the first question's ask time (10.5 s): 12.5 lies in [12.2, 12.9]
    validate_item(_item([{"ask_time_s": 10.5, "t_s": 12.2, "t_e": 12.9}]), "m.yaml")


@pytest.mark.parametrize(
    ("turns", "field", "words"),
    [
        ([{"ask_time_s": 13.0}], "turns[0].t_s", "not future-dependent"),
        ([{"ask_time_s": 12.0}], "turns[0].t_s", "not future-dependent"),
        ([{"t_s": 15.0, "t_e": 14.0}], "turns[0].evidence_window", "t_s <= t_e"),
        ([{"t_e": 31.0}], "turns[0].evidence_window", "duration"),
        ([{}, {"turn_index": 1, "ask_time_s": 11.0, "t_s": 15.0, "t_e": 16.0, "refers_to": 0,
               "dependency": "local"}], "turns[1].ask_time_s", "before the answer it builds on"),
        ([{}, {"turn_index": 1, "ask_time_s": 12.0, "t_s": 15.0, "t_e": 16.0, "refers_to": 0,
               "dependency": "global"}], "turns[1].dependency", "local"),
        ([{}, {"turn_index": 1, "ask_time_s": 12.0, "t_s": 15.0, "t_e": 16.0, "refers_to": 1,
               "dependency": "local"}], "turns[1].refers_to", "earlier turn"),
        # asked at 10 s, the stream decides at 10, 11, …, 29 s: [12.2, 12.9] holds none of
        # them; [29.2, 30.0] ends the video after the last one (a narration at 29.2 s)
        ([{"t_s": 12.2, "t_e": 12.9}], "turns[0].evidence_window", "no decision time"),
        ([{"t_s": 29.2, "t_e": 30.0}], "turns[0].evidence_window", "no decision time"),
    ],
)
def test_validate_item_names_the_broken_field(turns: list[dict], field: str, words: str) -> None:
    with pytest.raises(BadInput) as exc:
        validate_item(_item(turns), "m.yaml")
    assert exc.value.field == field
    assert exc.value.source_file == "m.yaml"
    assert words in exc.value.reason


def test_temporal_iou() -> None:
    assert temporal_iou((0.0, 10.0), (5.0, 15.0)) == pytest.approx(5 / 15)
    assert temporal_iou((0.0, 1.0), (2.0, 3.0)) == 0.0
    assert temporal_iou((3.0, 3.0), (3.0, 3.0)) == 1.0
