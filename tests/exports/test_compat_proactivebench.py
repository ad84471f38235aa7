"""Compat export to the authors' ``proactivebench`` layout, checked with their own classes.

The py312 tests copy the official ``environment.py`` into a temp dir and run it under Python
3.12 (it uses 3.12-only syntax) on our export: an oracle policy must succeed, always-abstain
must fail, the first state must show our options and categories, and every image the class
opens must be our frame (COCO: after the class's own crop).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from exports.compat_proactivebench import (
    export,
    load_compat_records,
    main,
    official_check,
    policy_scripts,
    run_official,
)
from schemas.proactivebench import OFFICIAL_DATASET_NAMES
from tests.exports.proactivebench_fixtures import (
    all_environment_episodes,
    episode,
    rounded_zoom_episode,
    sliding_coco_episode,
    write_release,
)

# fields every official class reads in __init__ (BaseEnvironment + per-dataset extras)
REQUIRED = {"id", "image_template", "first_image", "num_images", "reference_image", "prompt",
            "options", "categories", "answer"}
EXTRAS = {
    "OcclusionDataSet-MM20": {"strong_occlusions"},
    "MVP-N": {"valid_images"},
    "ImageNet-C": {"quality_answer"},
    "ChangeIt": {"step_size", "max_steps"},
    "coco2014": {"direction", "granularity", "horizontal_step", "vertical_step", "crop"},
}


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    eps = [*all_environment_episodes(), rounded_zoom_episode(), sliding_coco_episode()]
    root = tmp_path_factory.mktemp("release")
    return write_release(root, eps), eps


@pytest.fixture(scope="module")
def exported(release, tmp_path_factory: pytest.TempPathFactory):
    root, _ = release
    out = tmp_path_factory.mktemp("compat") / "proactivebench"
    return out, export(root, out)


@pytest.fixture(scope="module")
def official(python312: str, official_source: Path):
    return {"python": python312, "source": official_source}


def test_export_writes_every_field_the_classes_read(exported):
    out, result = exported
    assert result.exported == {name: (4 if name == "coco2014" else 1)
                               for name in OFFICIAL_DATASET_NAMES.values()}
    for name in OFFICIAL_DATASET_NAMES.values():
        for rec in load_compat_records(out, name):
            missing = (REQUIRED | EXTRAS.get(name, set())) - set(rec)
            assert not missing, (name, missing)
            assert rec["answer"] in rec["categories"]
    coco = load_compat_records(out, "coco2014")
    assert {r["direction"] for r in coco} == {"zoom", "right", "up_left"}  # "zoom_out" renamed
    zoom = next(r for r in coco if r["id"] == "coco/zoom_out-13")
    assert zoom["horizontal_step"] == pytest.approx(22 / 3)  # PIL rounds the float box as we did
    report = json.loads((out / "compat_report.json").read_text())
    assert report["official_package"] == "proactivebench==0.1.1"
    assert "FILTER" in (out / "README.md").read_text()


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


def test_export_refuses_to_overwrite_silently(release, tmp_path: Path):
    root, _ = release
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError):
        export(root, tmp_path / "out")
    assert (tmp_path / "out" / "keep.txt").exists()


@pytest.mark.py312
def test_official_classes_replay_the_export(release, exported, official):
    root, eps = release
    out, result = exported
    by_id = {e["id"]: e for e in eps}
    jobs: dict = {}
    for name in result.exported:
        for rec in load_compat_records(out, name):
            for policy, answers in policy_scripts(by_id[rec["id"]]).items():
                jobs.setdefault(name, {}).setdefault(policy, {})[rec["id"]] = answers
    results = run_official(out, jobs, **official)
    n = 0
    for policies in results.values():
        for sid, res in policies["oracle"].items():
            ep = by_id[sid]
            assert res["error"] is None, (sid, res["error"])
            assert res["correct"] is True, sid
            first = res["trace"][0]
            shown = [ep["options"][i] for i in ep["states"][ep["start_state"]]["option_ids"]]
            assert first["options"] == shown + ep["categories"], sid
            assert first["mcqa"] == ep["first_turn_prompt"], sid
            assert all(step["exists"] for step in res["trace"]), sid
            n += 1
        for sid, res in policies["abstain"].items():
            assert res["error"] is None and res["correct"] is False and res["turns"] == 1, sid
    assert n == 10
    # full check: path lengths and that every visited state shows our frame (COCO: the crop)
    counts, problems = official_check(root, out, **official)
    assert problems == []
    assert counts == {"oracle_ok": 10, "abstain_ok": 10, "episodes": 10}


@pytest.mark.py312
def test_cli_exports_and_verifies(release, official, tmp_path: Path, capsys):
    root, _ = release
    assert main([str(root), str(tmp_path / "out"), "--verify"]) == 0
    out = capsys.readouterr().out
    assert "rejected 1" in out and "'oracle_ok': 10" in out


@pytest.mark.py312
def test_official_check_catches_a_wrong_export(release, exported, official, tmp_path: Path):
    root, _ = release
    out, _ = exported
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    path = broken / "Realistic-Occlusion-Dataset_preprocessed.jsonl"
    recs = load_compat_records(broken, "Realistic-Occlusion-Dataset")
    recs[0]["first_image"] += 1  # starts one frame off: a different image and path length
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    _, problems = official_check(root, broken, **official)
    assert any(p.startswith("rod/") for p in problems), problems


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
