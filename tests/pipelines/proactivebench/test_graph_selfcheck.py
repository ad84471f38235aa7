"""The environment graphs and the scripted-policy self-check (ProactiveBench App. 0.A)."""

import pytest

from pipelines.proactivebench.graph import END, build_graph
from pipelines.proactivebench.selfcheck import Replay, self_check


def episode(env, n, kinds, actions, meta=None, start=0, goals=None, void=()):
    g = build_graph(env, n, kinds, actions, meta or {})
    return {
        "states": [{"frame": s, "option_ids": i, "next_states": x}
                   for s, (i, x) in enumerate(zip(g.option_ids, g.next_states, strict=True))],
        "option_kinds": kinds, "option_actions": actions, "answer": "cat",
        "start_state": start, "goal_states": goals if goals is not None else [n - 1],
        "void_states": list(void), "max_steps": g.max_steps,
    }


def test_rod_is_circular_and_voids_the_start():
    kinds, actions = ["proactive", "abstain", "proactive"], ["right", "", "left"]
    ep = episode("rod", 14, kinds, actions, start=7, goals=[0, 13], void=[7])
    # from the most occluded frame 7: left goes to 6, right to 8; wrap-around at both ends
    assert ep["states"][7]["next_states"] == [8, END, 6]
    assert ep["states"][0]["next_states"][2] == 13
    assert ep["states"][13]["next_states"][0] == 0
    assert ep["max_steps"] == 14
    assert Replay(ep).shortest_path() == [0] * 6  # 6 rights reach frame 13
    # answering at the fully occluded start counts as wrong even if it is the right category
    assert not Replay(ep).run(lambda s, shown: ("category", "cat")).correct
    assert self_check(ep) is None


def test_changeit_rewind_hidden_at_first_frame_and_wait_at_last():
    kinds, actions = ["proactive", "proactive", "abstain"], ["rewind", "forward", ""]
    ep = episode("changeit", 5, kinds, actions, goals=[3])
    assert ep["states"][0]["option_ids"] == [1, 2]
    assert ep["states"][4]["option_ids"] == [0, 2]
    assert ep["states"][2]["next_states"] == [1, 3, END]
    assert self_check(ep) is None


def test_imagenet_c_invalid_suggestions_end_and_extra_suggestion_terminates():
    kinds = ["invalid", "proactive", "abstain", "invalid", "invalid"]
    actions = ["deblur", "denoise", "", "jpeg", "pixelate"]
    ep = episode("imagenet_c", 5, kinds, actions)
    assert ep["states"][0]["next_states"] == [END, 1, END, END, END]
    assert ep["states"][4]["next_states"][1] == END  # past the reference: terminate (App. 0.A.4)
    assert ep["max_steps"] == 5
    assert self_check(ep) is None


def test_coco_grid_removes_exhausted_direction():
    meta = {"direction": "up_left", "steps": 3, "layout": "grid"}
    kinds, actions = ["proactive", "proactive", "abstain"], ["left", "up", ""]
    ep = episode("coco", 16, kinds, actions, meta)
    # frame = a*(K+1)+b, a = moves up, b = moves left
    assert ep["states"][0]["next_states"] == [1, 4, END]
    assert ep["states"][3]["option_ids"] == [1, 2]  # left exhausted at b = 3
    assert ep["states"][12]["option_ids"] == [0, 2]  # up exhausted at a = 3
    assert ep["states"][15]["option_ids"] == [2]
    assert ep["max_steps"] == 7
    assert len(Replay(ep).shortest_path()) == 6
    assert self_check(ep) is None


@pytest.mark.parametrize(("direction", "action"), [("zoom_out", "zoom_out"), ("left", "left")])
def test_coco_line_hides_the_move_at_the_last_crop(direction, action):
    """As the authors' COCO2014Environment: K moves, then only abstain and categories remain."""
    meta = {"direction": direction, "steps": 4, "layout": "line"}
    ep = episode("coco", 5, ["abstain", "proactive"], ["", action], meta)
    assert [s["next_states"] for s in ep["states"][:4]] == [[END, k + 1] for k in range(4)]
    assert ep["states"][4]["option_ids"] == [0] and ep["states"][4]["next_states"] == [END]
    assert ep["max_steps"] == 5
    assert len(Replay(ep).shortest_path()) == 4
    # always-proactive: 4 moves, then abstains at the last crop on turn 5 = max_steps
    assert self_check(ep) is None
    ep["max_steps"] = 6
    assert self_check(ep).startswith("always-proactive: ended after 5 turns, expected 6")


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda ep: ep.update(max_steps=3), "oracle: needs"),
        (lambda ep: ep.update(goal_states=[]), "oracle: no goal state"),
        (lambda ep: ep.update(max_steps=6), "always-proactive: ended after 5 turns, expected 6"),
        (lambda ep: ep.update(option_kinds=["invalid", "proactive"]), "always-abstain"),
    ],
)
def test_self_check_rejects_broken_episodes(mutate, expected):
    ep = episode("quickdraw", 5, ["abstain", "proactive"], ["", "details"])
    assert self_check(ep) is None
    mutate(ep)
    assert self_check(ep).startswith(expected)
