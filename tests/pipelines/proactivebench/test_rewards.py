"""The GRPO reward of ProactiveBench §5 scores hand-made completions as the paper's rule says:
r_c = 1 for the correct category, r_p for a valid proactive suggestion of the frame, r_w = 0
otherwise — called the way TRL's ``GRPOTrainer`` calls a reward function."""

from __future__ import annotations

import pytest

from pipelines.proactivebench.rewards import completion_text, proactive_reward, score

# a QuickDraw frame before the last stroke: options A, B, then the four categories C–F
OPTIONS = ["Add more details to the drawing.", "I do not know.", "house", "cat", "sun",
           "The Eiffel Tower"]
ROW = {"ground_truth": "cat", "proactive_actions": ["Add more details to the drawing."],
       "options": OPTIONS}
# the same drawing complete: no suggestion is valid any more
DONE = {"ground_truth": "cat", "proactive_actions": [], "options": OPTIONS}


def trl_call(reward, rows: list[dict], completions: list) -> list[float]:
    """As GRPOTrainer calls it: keyword lists, one value per completion, extra TRL columns."""
    columns = {k: [r[k] for r in rows] for k in ("ground_truth", "proactive_actions", "options")}
    return reward(prompts=[[{"role": "user", "content": "…"}]] * len(rows), completions=completions,
                  completion_ids=[[1, 2]] * len(rows), **columns)


@pytest.mark.parametrize("answer, expected", [
    ("cat", 1.0), ("D", 1.0), ("D. cat", 1.0), ("  CAT ", 1.0),        # the category, any form
    ("Add more details to the drawing.", 0.75), ("A", 0.75),         # the valid suggestion
    ("house", 0.0), ("C", 0.0),                                      # a wrong category
    ("I do not know.", 0.0), ("B", 0.0),                             # abstaining
    ("a cat, I think", 0.0), ("", 0.0), ("Z", 0.0),                  # no option
])
def test_scores_of_hand_made_answers(answer: str, expected: float) -> None:
    assert trl_call(proactive_reward(0.75), [ROW], [answer]) == [expected]


def test_a_suggestion_where_the_answer_is_visible_is_worth_nothing() -> None:
    reward = proactive_reward(1.0)
    assert trl_call(reward, [DONE, DONE, DONE], ["A", "cat", "Add more details to the drawing."]) == \
        [0.0, 1.0, 0.0]


@pytest.mark.parametrize("r_p", [0.5, 0.75, 1.0])
def test_r_p_is_configurable_and_named(r_p: float) -> None:
    reward = proactive_reward(r_p)
    assert trl_call(reward, [ROW] * 3, ["A", "cat", "sun"]) == [r_p, 1.0, 0.0]
    assert reward.__name__ == f"proactive_reward_rp{r_p:g}"  # TRL logs rewards by __name__


def test_conversational_completions() -> None:
    completions = [[{"role": "assistant", "content": "cat"}],
                   [{"role": "assistant", "content": [{"type": "text", "text": "A"}]}]]
    assert trl_call(proactive_reward(0.5), [ROW, ROW], completions) == [1.0, 0.5]
    with pytest.raises(TypeError, match="a string or a list of messages"):
        completion_text(42)


def test_bad_calls_are_refused_with_what_is_wrong() -> None:
    reward = proactive_reward()
    with pytest.raises(KeyError, match="missing \\['proactive_actions'\\]"):
        reward(prompts=["p"], completions=["cat"], ground_truth=["cat"], options=[OPTIONS])
    with pytest.raises(ValueError, match="options: 2 values for 1 completions"):
        reward(prompts=["p"], completions=["cat"], ground_truth=["cat"], proactive_actions=[[]],
               options=[OPTIONS, OPTIONS])
    with pytest.raises(ValueError, match="not among the options"):
        score("cat", "dog", [], OPTIONS, 0.75)
    for bad in (-0.1, 1.5, True, "0.75"):
        with pytest.raises(ValueError, match="r_p must be a number in"):
            proactive_reward(bad)  # type: ignore[arg-type]
