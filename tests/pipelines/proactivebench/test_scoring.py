"""Turn-by-turn scoring of model answers on ProactiveBench episodes
(pipelines/proactivebench/scoring.py): the official parser's rules, the graph's transitions,
acc and ps as the authors' ``tests/mcqa.py`` computes them."""

from __future__ import annotations

import pytest

from pipelines.proactivebench.scoring import EpisodeResult, play, prompt, score, shown_options, step
from pipelines.proactivebench.selfcheck import Replay
from tests.pipelines.proactivebench.fixtures import all_environment_episodes, episode


@pytest.mark.parametrize("ep", all_environment_episodes(), ids=lambda e: e["id"])
def test_the_oracle_path_succeeds_and_counts_its_suggestions(ep: dict) -> None:
    assert prompt(ep, ep["start_state"]) == ep["first_turn_prompt"]
    path = Replay(ep).shortest_path()
    result, trace = play(ep, [ep["options"][i] for i in path] + [ep["answer"]])
    assert result.correct and result.turns == len(path) + 1 and result.suggestions == len(path)
    assert [t.outcome for t in trace] == ["moved"] * len(path) + ["correct"]


def test_letters_are_read_as_the_official_evaluation_letters_them() -> None:
    ep = episode("mvpn", 4, goals=[2, 3])
    shown = shown_options(ep, 0)
    proactive = next(o for o in shown if ep["option_kinds"][ep["options"].index(o)] == "proactive")
    assert step(ep, 0, 0, f"{chr(65 + shown.index(proactive))}.").outcome == "moved"
    answer_letter = chr(65 + len(shown) + ep["categories"].index(ep["answer"]))
    assert step(ep, 0, 0, answer_letter).outcome == "correct"
    assert step(ep, 0, 0, "Z").outcome == "wrong"  # matches nothing: the episode ends


def test_void_start_scores_the_right_category_wrong_and_abstain_ends_at_once() -> None:
    rod = episode("rod", 14, start=7, goals=[0, 13], meta={"occluding_object": "blue blocks"})
    assert step(rod, 7, 0, rod["answer"]).outcome == "wrong"  # App. 0.A.1: fully occluded start
    abstain = next(o for o, k in zip(rod["options"], rod["option_kinds"], strict=True) if k == "abstain")
    result, _ = play(rod, [abstain])
    assert (result.correct, result.turns, result.suggestions) == (False, 1, 0)


def test_suggesting_forever_ends_at_max_steps() -> None:
    ep = episode("vsod", 6, start=1, goals=[4], meta={"question_type": "speaker",
                                                      "strong_occlusions": [0, 1]})
    wait = next(o for o in ep["options"] if o.startswith("Wait"))
    result, trace = play(ep, [wait] * 10)
    assert not result.correct and result.turns == ep["max_steps"] == 6 and trace[-1].outcome == "max_steps"


def test_acc_and_ps_average_over_episodes() -> None:
    results = [EpisodeResult("a", True, 3), EpisodeResult("b", False, 1), EpisodeResult("c", True, 1)]
    assert score(results) == {"acc": 2 / 3, "ps": (2 + 0 + 0) / 3, "n": 3}
    with pytest.raises(ValueError):
        score([])
