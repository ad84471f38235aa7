"""Answer parsing must match the authors' environment exactly (ProactiveBench §3.1 evaluation).

The expected table below was produced by running ``proactivebench==0.1.1``'s
``BaseEnvironment._evaluate`` under Python 3.12 on the same inputs (shown options
["Move the occluding object to the left.", "I do not know."], categories
["dog", "cat", "hot dog", "toaster"], answer "cat"): columns are the category evaluation
(letters shifted by 2), the shown-option evaluation, and the category evaluation in a void state.
"""

from __future__ import annotations

import pytest

from filtering.parsing import FirstTurn, evaluate, first_turn, score_answer
from tests.filtering.conftest import letter_of, make_episode

OPTS = ["Move the occluding object to the left.", "I do not know."]
CATS = ["dog", "cat", "hot dog", "toaster"]
MOVE = OPTS[0]
OFFICIAL = [
    ("E", ("wrong", "hot dog"), ("mismatch", ""), ("wrong", "hot dog")),
    ("E.", ("wrong", "hot dog"), ("mismatch", ""), ("wrong", "hot dog")),
    ("e", ("wrong", "hot dog"), ("mismatch", ""), ("wrong", "hot dog")),
    ("D", ("correct", "cat"), ("mismatch", ""), ("wrong", "cat")),
    ("F. hot dog", ("wrong", "hot dog"), ("mismatch", ""), ("wrong", "hot dog")),
    ("hot dog", ("wrong", "hot dog"), ("mismatch", ""), ("wrong", "hot dog")),
    ("Hot Dog", ("wrong", "hot dog"), ("mismatch", ""), ("wrong", "hot dog")),
    ("hotdog", ("wrong", "hot dog"), ("mismatch", ""), ("wrong", "hot dog")),
    ("C. cat", ("correct", "cat"), ("mismatch", ""), ("wrong", "cat")),
    ("D. cat", ("correct", "cat"), ("mismatch", ""), ("wrong", "cat")),
    ("cat", ("correct", "cat"), ("mismatch", ""), ("wrong", "cat")),
    ("A", ("mismatch", ""), ("wrong", MOVE), ("mismatch", "")),
    ("A. " + MOVE, ("mismatch", ""), ("wrong", MOVE), ("mismatch", "")),
    (MOVE, ("mismatch", ""), ("wrong", MOVE), ("mismatch", "")),
    ("Z", ("mismatch", ""), ("mismatch", ""), ("mismatch", "")),
    ("The answer is D. cat", ("correct", "cat"), ("mismatch", ""), ("wrong", "cat")),
    ("  c ", ("wrong", "dog"), ("mismatch", ""), ("wrong", "dog")),
    ("B", ("mismatch", ""), ("wrong", "I do not know."), ("mismatch", "")),
    ("dog.", ("mismatch", ""), ("mismatch", ""), ("mismatch", "")),
    ("D. Cat", ("correct", "cat"), ("mismatch", ""), ("wrong", "cat")),
    ("cat cat", ("mismatch", ""), ("mismatch", ""), ("mismatch", "")),
    ("", ("mismatch", ""), ("mismatch", ""), ("mismatch", "")),
]


@pytest.mark.parametrize("answer,cat,act,void", OFFICIAL)
def test_evaluate_matches_official_package(answer: str, cat: tuple, act: tuple, void: tuple) -> None:
    assert evaluate(answer, ["cat"], CATS, len(OPTS)) == cat
    assert evaluate(answer, [], OPTS, 0) == act
    assert evaluate(answer, [], CATS, len(OPTS)) == void


def _turn(void: bool = False) -> FirstTurn:
    return FirstTurn("x/1", "rod", b"img", "p", tuple(OPTS), tuple(CATS), "cat", void)


def test_score_answer_correct_only_for_answer_category() -> None:
    assert score_answer(_turn(), "D").correct
    assert score_answer(_turn(), "D").parsed == "cat"
    wrong = score_answer(_turn(), "C")
    assert (wrong.correct, wrong.parsed) == (False, "dog")
    action = score_answer(_turn(), "A")
    assert (action.correct, action.parsed) == (False, MOVE)
    assert score_answer(_turn(), "Z").parsed == ""


def test_void_start_state_scores_correct_category_wrong() -> None:
    """ROD's fully occluded first frame voids category answers (App. 0.A.1)."""
    s = score_answer(_turn(void=True), "D")
    assert (s.correct, s.parsed, s.category_evaluation) == (False, "cat", "wrong")


def test_first_turn_uses_start_state_frame_options_and_hint() -> None:
    ep = make_episode("a")
    t = first_turn(ep)
    assert t.image == ep["frames"][1]["bytes"]
    assert t.shown_options == ("I cannot answer.", "Move the camera left.")
    assert t.all_options[2:] == ep["categories"]
    assert t.prompt == ep["first_turn_prompt"]
    assert letter_of(ep, "cat") == "D"
    assert score_answer(t, "D").correct
    hinted = first_turn(ep, hint=True)
    assert hinted.prompt == f"{ep['first_turn_prompt']} {ep['hint']}"


def test_first_turn_bad_episode_names_it() -> None:
    ep = make_episode("bad")
    ep["answer"] = "zebra"
    with pytest.raises(ValueError, match="coco/bad.*zebra"):
        first_turn(ep)
    ep = make_episode("bad2")
    ep["frames"][1]["bytes"] = b""
    with pytest.raises(ValueError, match="coco/bad2.*no image bytes"):
        first_turn(ep)
