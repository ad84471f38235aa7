"""Training rows of one sequence (ProactiveBench §5): single-turn prompts of ambiguous and
unambiguous frames, drawn per sequence with seeded generators, each row what the evaluation shows
in that state."""

from __future__ import annotations

from pipelines.proactivebench import pools
from pipelines.proactivebench.rewards import proactive_reward
from pipelines.proactivebench.training import (
    RowsConfig,
    chosen_states,
    frame_kinds,
    training_row,
    training_rows,
    valid_suggestions,
)
from tests.pipelines.proactivebench.fixtures import coco_episode, episode, expanding_boxes

QD = episode("quickdraw", 5, sid="quickdraw/cat/42", seed=3)  # linear, goal: the full drawing
COCO = coco_episode("left", 3, expanding_boxes("left", 3, (300, 100, 360, 180), 30, 0), seed=4)


def test_frame_kinds_and_valid_suggestions() -> None:
    assert frame_kinds(QD) == ([0, 1, 2, 3], [4])
    details = next(o for o, k in zip(QD["options"], QD["option_kinds"], strict=True) if k == "proactive")
    # a suggestion is valid where it leads to a more informative frame; at the full drawing it
    # ends the episode (App. 0.A.5), and COCO hides its move at the last crop (App. 0.A.7)
    assert [valid_suggestions(QD, s) for s in range(5)] == [[details]] * 4 + [[]]
    assert frame_kinds(COCO) == ([0, 1, 2], [3])
    assert valid_suggestions(COCO, 3) == []
    assert len(valid_suggestions(COCO, 0)) == 1


def test_rows_show_what_the_evaluation_shows_in_that_state() -> None:
    row = training_row(QD, 2, True, "ab" * 32)
    state = QD["states"][2]
    shown = [QD["options"][i] for i in state["option_ids"]]
    assert row["options"] == shown + QD["categories"]
    text = pools.render_mcqa_prompt("quickdraw", QD["question"], row["options"], None)
    assert row["prompt"] == [{"role": "user", "content": [{"type": "image", "text": None},
                                                          {"type": "text", "text": text}]}]
    assert row["images"] == [QD["frames"][2]]
    assert (row["id"], row["frame"], row["num_frames"], row["ambiguous"]) == \
        ("quickdraw/cat/42#2", 2, 5, True)
    assert row["ground_truth"] == QD["answer"] and row["source_sha256"] == "ab" * 32
    assert row["frame_source"] == QD["frame_sources"][2]
    # the same frame with the environment's hint appended (the paper's MCQA has none: off by default)
    hinted = training_row(QD, 2, True, "", hint=True)["prompt"][0]["content"][1]["text"]
    assert hinted == pools.render_mcqa_prompt("quickdraw", QD["question"], row["options"], QD["hint"])
    # the reward reads the row as its columns say: answer → 1, the suggestion → r_p
    cols = {k: [row[k]] * 3 for k in ("ground_truth", "proactive_actions", "options")}
    answers = [QD["answer"], row["proactive_actions"][0], "I cannot tell."]
    assert proactive_reward(0.5)(prompts=[row["prompt"]] * 3, completions=answers, **cols) == \
        [1.0, 0.5, 0.0]


def test_the_configured_ratio_is_drawn_per_sequence_and_seeded() -> None:
    rows, summary = training_rows(QD, "", RowsConfig(ambiguous=2, unambiguous=1))
    assert [r["ambiguous"] for r in rows] == [True, True, False]
    assert rows == sorted(rows, key=lambda r: r["frame"])
    assert summary == {"environment": "quickdraw", "sequence_id": "quickdraw/cat/42", "frames": 5,
                       "ambiguous_available": 4, "unambiguous_available": 1, "ambiguous": 2,
                       "unambiguous": 1}
    # same seed, same frames; another global seed draws again; one count never moves the other draw
    assert chosen_states(QD, RowsConfig(2, 1)) == chosen_states(QD, RowsConfig(2, 1))
    draws = {tuple(chosen_states(QD, RowsConfig(2, 1, global_seed=s))[0]) for s in range(20)}
    assert len(draws) > 1
    assert chosen_states(QD, RowsConfig(2, 0))[0] == chosen_states(QD, RowsConfig(2, 1))[0]


def test_a_sequence_short_of_frames_gives_what_it_has() -> None:
    rows, summary = training_rows(QD, "", RowsConfig(ambiguous=9, unambiguous=3))
    assert [r["frame"] for r in rows] == [0, 1, 2, 3, 4]
    assert (summary["ambiguous"], summary["unambiguous"]) == (4, 1)
    rows, _ = training_rows(COCO, "", RowsConfig(ambiguous=0, unambiguous=1))
    assert [(r["frame"], r["proactive_actions"]) for r in rows] == [(3, [])]
