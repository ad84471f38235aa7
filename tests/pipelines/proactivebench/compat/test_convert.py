"""Episodes the official classes cannot show as built are rejected with the reason, never
written half-right; documented, outcome-neutral differences pass with a note."""

from __future__ import annotations

from pathlib import Path

from pipelines.proactivebench.compat import export
from tests.pipelines.proactivebench.fixtures import all_environment_episodes, episode, write_release


def test_sliding_coco_window_is_rejected_with_the_reason(exported):
    _, result = exported
    assert [r.id for r in result.rejected] == ["coco/left-10"]
    reason = result.rejected[0].reason
    assert "slide a fixed-size window" in reason and "grows the view" in reason


def test_unrepresentable_episodes_are_rejected_not_written(tmp_path: Path):
    long_inc = episode("imagenet_c", 6, meta={"action": "deblur"}, sid="imagenet_c/six", seed=11)
    bad_abstain = episode("quickdraw", 4, sid="quickdraw/bad", seed=12)
    i = bad_abstain["option_kinds"].index("abstain")
    bad_abstain["options"][i] = "No idea."  # lacks "cannot"/"do not": official would accept it
    rel = write_release(tmp_path / "rel", [long_inc, bad_abstain])
    result = export(rel, tmp_path / "out")
    reasons = {r.id: r.reason for r in result.rejected}
    assert "valid_images = 1..5" in reasons["imagenet_c/six"]
    assert "cannot" in reasons["quickdraw/bad"]
    assert result.exported == {}
    assert not list((tmp_path / "out").glob("*.jsonl"))


def test_older_release_showing_the_move_at_the_last_crop_still_exports(tmp_path: Path):
    """Releases built before our graph hid the cardinal/zoom move at the last crop (as the
    official class does) show it there as episode-ending: tolerated, with a note."""
    ep = next(e for e in all_environment_episodes() if e["id"].startswith("coco/right"))
    move = ep["option_actions"].index("right")
    last = ep["states"][-1]
    assert move not in last["option_ids"]  # current graph: hidden, as in the official class
    last["option_ids"] = sorted([*last["option_ids"], move])
    last["next_states"] = [-1] * len(last["option_ids"])
    result = export(write_release(tmp_path / "rel", [ep]), tmp_path / "out")
    assert result.rejected == [] and result.exported == {"coco2014": 1}
    assert any("hides the move option" in n for n in result.notes[ep["id"]])
