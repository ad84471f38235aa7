"""The environment text pools: sizes from ProactiveBench App. 0.A, and parseability by the official
``proactivebench`` 0.1.1 evaluator (its action_map substring rules, abstain detection and answer
normalisation). The py312 test runs the authors' own environment classes on every option."""

from __future__ import annotations

import ast
import json
import random
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from pipelines.proactivebench import pools

META = {
    "rod": {"occluding_object": "red cardboard"},
    "vsod": {"question_type": "speaker"},
    "mvpn": {},
    "imagenet_c": {"action": "denoise"},
    "quickdraw": {},
    "changeit": {"question_type": "object"},
    "coco": {"direction": "up_left"},
}


def _all_option_groups() -> list[tuple[str, dict, list[tuple[str, str, str]]]]:
    """Every proactive/invalid option group the pools can produce (all pool members)."""
    groups = []
    for obj in ("red cardboard", "blue blocks", "green cup", "white paper sheet"):
        meta = {"occluding_object": obj}
        groups.append(("rod", meta, pools.proactive_options("rod", meta, random.Random(0))))
    for qt in ("speaker", "count", "event"):
        meta = {"question_type": qt}
        groups.append(("vsod", meta, pools.proactive_options("vsod", meta, random.Random(0))))
    for qt in ("object", "action"):
        meta = {"question_type": qt}
        groups.append(("changeit", meta, pools.proactive_options("changeit", meta,
                                                                  random.Random(0))))
    groups += [("mvpn", {}, [(t, "proactive", "rotate")]) for t in pools.MVPN_POOL]
    groups += [("quickdraw", {}, [(t, "proactive", "details")]) for t in pools.QUICKDRAW_POOL]
    for action in pools.CORRUPTION_ACTIONS:
        meta = {"action": action}
        groups.append(("imagenet_c", meta, pools.proactive_options("imagenet_c", meta,
                                                                   random.Random(action))))
    for direction in pools.COCO_DIRECTIONS:
        meta = {"direction": direction}
        groups.append(("coco", meta, pools.proactive_options("coco", meta, random.Random(0))))
    return groups


def test_pool_sizes_follow_the_paper():
    for env in pools.ENVIRONMENTS:
        if env in ("vsod", "changeit"):
            continue
        assert len(pools.question_pool(env, META[env])) == 15, env
    vsod = [pools.question_pool("vsod", {"question_type": t}) for t in ("speaker", "count", "event")]
    assert [len(p) for p in vsod] == [15, 15, 15]
    assert len({q for p in vsod for q in p}) == 45  # App. 0.A.2: 45 questions
    assert len(pools.question_pool("changeit", {"question_type": "object"})) == 15
    assert len(pools.question_pool("changeit", {"question_type": "action"})) == 11
    assert len(pools.abstain_pool()) == 3
    assert len(pools.MVPN_POOL) == 11
    assert len(pools.QUICKDRAW_POOL) == 13


def test_no_duplicates_even_after_official_normalisation():
    every = [pools.question_pool(e, META[e]) for e in pools.ENVIRONMENTS]
    every += [pools.question_pool("vsod", {"question_type": t}) for t in ("count", "event")]
    every += [pools.question_pool("changeit", {"question_type": "action"})]
    every += [pools.abstain_pool(), pools.MVPN_POOL, pools.QUICKDRAW_POOL,
              tuple(pools.QUALITY_OPTIONS.values())]
    for pool in every:
        assert len(set(pool)) == len(pool)
    option_texts = [*pools.abstain_pool(), *pools.MVPN_POOL, *pools.QUICKDRAW_POOL,
                    *pools.QUALITY_OPTIONS.values(), *pools.COCO_OPTIONS.values(), pools.REWIND,
                    pools.WAIT_OCCLUSION]
    std = [pools.standardize(t) for t in option_texts]
    assert len(set(std)) == len(std)
    # the official normaliser strips everything up to the last "<capital>." — none may have one
    assert not [t for t in option_texts if re.search(r"[A-Z]\.", t)]


def test_abstain_and_proactive_are_told_apart_like_the_official_evaluator():
    assert all(pools.is_official_abstain(t) for t in pools.abstain_pool())
    for env, _meta, group in _all_option_groups():
        for text, kind, _ in group:
            assert not pools.is_official_abstain(text), (env, text)
            assert kind in ("proactive", "invalid")
    for text in pools.abstain_pool():  # abstaining names no action at all
        assert not [k for k, _ in pools.OFFICIAL_ACTION_MAP if k in text.lower()]


def test_each_proactive_option_maps_to_its_action():
    for env, meta, group in _all_option_groups():
        for text, kind, action in group:
            assert action in pools.ACTIONS
            if kind == "proactive":
                assert pools.official_action(text, env, meta) == action, (env, text)
    for action, text in pools.QUALITY_OPTIONS.items():  # invalid ones are valid elsewhere
        assert pools.official_action(text, "imagenet_c") == action


def test_parser_rejects_what_the_official_assertions_reject():
    with pytest.raises(ValueError, match="second action key"):
        pools.official_action("Add more details to the drawing.", "quickdraw")
    with pytest.raises(ValueError, match="second action key"):
        pools.official_action("Remove the compression artifacts.", "imagenet_c")
    with pytest.raises(ValueError, match="no action key"):
        pools.official_action("Move the camera left.", "coco", {"direction": "left"})  # paper text
    assert pools.official_action("Rotate the view to a different angle.", "mvpn") == "rotate"
    with pytest.raises(ValueError, match="occluding_object"):
        pools.proactive_options("rod", {"occluding_object": "box I do not know"}, random.Random(0))


def test_imagenet_c_has_one_valid_and_three_invalid_suggestions():
    for action in pools.CORRUPTION_ACTIONS:
        group = pools.proactive_options("imagenet_c", {"action": action}, random.Random(1))
        assert [g[1] for g in group] == ["proactive", "invalid", "invalid", "invalid"]
        assert group[0][2] == action
        assert len({g[2] for g in group}) == 4
    by_corruption = pools.proactive_options("imagenet_c", {"corruption": "motion_blur"},
                                            random.Random(1))
    assert by_corruption[0] == (pools.QUALITY_OPTIONS["deblur"], "proactive", "deblur")


def test_coco_options_per_direction_and_hints():
    opts = {d: pools.proactive_options("coco", {"direction": d}, random.Random(0))
            for d in pools.COCO_DIRECTIONS}
    assert [a for _, _, a in opts["up_left"]] == ["up", "left"]
    assert [a for _, _, a in opts["down"]] == ["down"]
    assert opts["zoom_out"] == [("Move farther from the object.", "proactive", "zoom_out")]
    assert pools.hint("coco", {"direction": "zoom_out"}) == pools.COCO_HINT_ZOOM
    assert pools.hint("coco", {"direction": "right"}) == pools.COCO_HINT_MOVE


def test_draws_are_deterministic_per_rng():
    a = pools.proactive_options("mvpn", {}, random.Random(42))
    b = pools.proactive_options("mvpn", {}, random.Random(42))
    assert a == b
    seen = {pools.proactive_options("quickdraw", {}, random.Random(s))[0][0] for s in range(200)}
    assert seen == set(pools.QUICKDRAW_POOL)


def test_rod_questions_name_the_occluder_and_reference_prompt():
    qs = pools.question_pool("rod", {"occluding_object": "blue blocks"})
    assert "Could you tell me what is behind the blue blocks?" in qs
    assert pools.reference_prompt("rod", {}) == "What type of object is in the image?"
    assert pools.reference_prompt("mvpn", {"question": "What is this item?"}) == \
        "What is this item?"
    with pytest.raises(ValueError, match="question"):
        pools.reference_prompt("mvpn", {})


def test_oeg_suggestions_match_official_thresholds():
    # PREDICTION_THR in open_ended_gen.py: number of leading suggestion entries per dataset
    thr = {"rod": 2, "vsod": 3, "mvpn": 2, "imagenet_c": 1, "quickdraw": 1, "changeit": 2,
           "coco": 2}
    for env, n in thr.items():
        assert len(pools.oeg_valid_suggestions(env, META[env])) == n, env


def test_changeit_wait_option_is_the_papers(official_source: Path):
    # ProactiveBench App. 0.A.6: "two valid proactive suggestions [...], i.e., wait for the
    # occlusion to disappear, and rewind the video"; its example prompt: "B. Wait for the
    # occlusion to disappear."
    for qt in ("object", "action"):
        meta = {"question_type": qt}
        assert pools.proactive_options("changeit", meta, random.Random(0)) == [
            ("Rewind the video.", "proactive", "rewind"),
            ("Wait for the occlusion to disappear.", "proactive", "forward")]
        assert pools.oeg_valid_suggestions("changeit", meta) == [
            "Wait for the occlusion to disappear", "Rewind the video"]
    # all the authors' ChangeItEnvironment asks of the wording: it finds the forward option (to
    # drop it at the last frame) by the substring "Wait for the"
    src = (official_source / "environment.py").read_text()
    changeit = src[src.index("class ChangeItEnvironment"):src.index("class COCO2014Environment")]
    assert changeit.count('"Wait for the" in opt') == 2


def _official_template(src: Path):
    tree = ast.parse((src / "data_utils.py").read_text())
    node = next(n for n in tree.body
                if isinstance(n, ast.FunctionDef) and n.name == "apply_multi_choice_template")
    ns: dict = {}
    exec(compile(ast.Module([node], []), "data_utils.py", "exec"), ns)
    return ns["apply_multi_choice_template"]


def test_render_mcqa_prompt_is_the_official_template(official_source: Path):
    template = _official_template(official_source)
    shown = ["Rewind the video.", "I do not know.", "Wait for the occlusion to disappear.",
             "Tom Hanks", "Emma Stone", "Brad Pitt", "Meryl Streep"]
    q = "Who is speaking in this video?"
    hint = pools.hint("vsod", META["vsod"])
    official = template(question=f"{pools.PRE_PROMPT_VIDEO} {q} {hint}", options=shown,
                        short_answer=True)
    assert pools.render_mcqa_prompt("vsod", q, shown, hint) == official
    assert pools.render_mcqa_prompt("mvpn", "What object is this?", shown[:2], None) == template(
        question="What object is this?", options=shown[:2], short_answer=True)


_PARSE_SCRIPT = textwrap.dedent(r'''
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import environment as E
    NAME = {"left": E.LEFT, "right": E.RIGHT, "rewind": E.REWIND, "forward": E.FORWARD,
            "rotate": E.ROTATE, "brightness": E.BRIGHTNESS, "contrast": E.CONTRAST,
            "saturate": E.SATURATE, "deblur": E.BLUR, "denoise": E.NOISE,
            "jpeg": E.JPEG_COMPRESSION, "pixelate": E.PIXELATE, "artifacts": E.ARTIFACTS,
            "details": E.DETAILS, "up": E.UP, "down": E.DOWN, "zoom_out": E.ZOOM}
    DATASET = {"rod": "Realistic-Occlusion-Dataset", "vsod": "OcclusionDataSet-MM20",
               "mvpn": "MVP-N", "imagenet_c": "ImageNet-C", "quickdraw": "QuickDraw",
               "changeit": "ChangeIt", "coco": "coco2014"}
    out = []
    for env, meta, group, abstain in json.load(open(sys.argv[2])):
        options = [g[0] for g in group] + [abstain]
        entry = {"id": 0, "image_template": "x/{image}.png", "first_image": 2, "num_images": 5,
                 "valid_images": [0, 1, 2, 3, 4], "reference_image": 0, "prompt": "q",
                 "options": options, "categories": ["cat a", "cat b", "cat c", "cat d"],
                 "answer": "cat a", "strong_occlusions": True, "step_size": 1, "max_steps": 5,
                 "quality_answer": group[0][0], "granularity": 3, "horizontal_step": 10,
                 "vertical_step": 10, "crop": {"top": 50, "left": 50, "height": 90, "width": 90},
                 "direction": "zoom" if meta.get("direction") == "zoom_out" else meta.get("direction")}
        cls = E.get_environment(DATASET[env])
        correct = sorted(cls(entry=dict(entry), data_dir="/nonexistent").index_correct_options)
        for i, (text, kind, action) in enumerate(group + [[abstain, "abstain", ""]]):
            e = cls(entry=dict(entry), data_dir="/nonexistent")
            e.evaluate_generated_answer(text)
            out.append({"env": env, "text": text, "kind": kind, "index": i, "correct": correct,
                        "evaluation": e.action_evaluation_history[-1],
                        "action_ok": kind != "proactive" or e.action_history[-1] == NAME[action],
                        "stopped": e.stop})
    print(json.dumps(out))
''')


@pytest.mark.py312
def test_official_environment_parses_every_option(tmp_path: Path, python312: str,
                                                   official_source: Path):
    python, src = python312, official_source
    jobs = [[env, meta, [list(g) for g in group], abstain]
            for env, meta, group in _all_option_groups() for abstain in pools.abstain_pool()]
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    (tmp_path / "run.py").write_text(_PARSE_SCRIPT)
    proc = subprocess.run([python, "run.py", str(src), "jobs.json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout)
    assert len(rows) > 100
    for r in rows:
        proactive = r["kind"] == "proactive"
        # the class's own index_correct_options marks exactly our proactive options
        assert (r["index"] in r["correct"]) == proactive, r
        assert r["evaluation"] == ("correct" if proactive else "wrong"), r
        assert r["action_ok"], r
        assert r["stopped"] != proactive, r  # proactive continues; abstain/invalid end
