"""The export replayed in the authors' own classes under Python 3.12.

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

from pipelines.proactivebench.compat import (
    load_compat_records,
    official_check,
    policy_scripts,
    run_official,
)


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
