"""The lmms-eval export end to end: the pinned lmms-eval, in its own venv, lists the exported
tasks with its own task registry and runs a scripted model through them; the scores it reports
must be the ones our metric functions give for the same answers (exports/lmms_eval.py,
pipelines/*/lmms_eval*.py).

The scripted model (tests/support/kit_scripts/lmms_eval_run.py) says what the test decides:

* ProactiveBench — per environment, the oracle path with option texts, the same path with
  letters, or the abstain option at once; every turn's image must be the frame of the state the
  answers led to (the episode follows its transitions);
* StreamVibe — the gold response at each evidence point's preferred second, or a remark at each
  negative probe (false positives);
* ProReady-QA — each gold answer at the first decision second ≥ t_s, or a wrong answer as soon as
  each question is asked (early, wrong).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from exports.release_files import iter_rows, read_release
from pipelines.cli import main as cli
from pipelines.proactivebench.scoring import play, score, shown_options
from pipelines.proactivebench.selfcheck import Replay
from pipelines.proready import ars
from pipelines.streamvibe.scoring import (
    Prediction,
    aggregate,
    evidence_points,
    fpr_near_trajectory,
    score_sample,
)
from tests.support.demo import DemoReleases
from tests.support.kits import kit_python

RUNNER = Path(__file__).resolve().parents[1] / "support" / "kit_scripts" / "lmms_eval_run.py"


def _pixels(data: bytes) -> str:
    return hashlib.sha256(Image.open(io.BytesIO(data)).convert("RGB").tobytes()).hexdigest()


def _proactivebench(release: Path) -> tuple[dict, dict, dict]:
    scripts: dict[str, dict[str, list[str]]] = {}
    expected: dict[str, dict[str, float]] = {}
    frames: dict[str, list[str]] = {}
    rel = read_release(release)
    for config in rel.configs():
        task, results = f"proactivebench_{config}", []
        for i, ep in enumerate(iter_rows(rel.files(config))):
            path = Replay(ep).shortest_path() or []
            state, answers = ep["start_state"], []
            for option in path:
                st = ep["states"][state]
                text = ep["options"][option]
                answers.append(text if i % 3 == 0 else chr(65 + shown_options(ep, state).index(text)))
                state = st["next_states"][st["option_ids"].index(option)]
            answers.append(ep["answer"])
            if i % 3 == 2:
                answers = [next(o for o, k in zip(ep["options"], ep["option_kinds"], strict=True)
                                if k == "abstain")]
            result, trace = play(ep, answers)
            assert result.correct == (i % 3 != 2)
            results.append(result)
            scripts.setdefault(task, {})[ep["id"]] = answers
            frames[f"{task}|{ep['id']}"] = [_pixels(ep["frames"][ep["states"][t.state]["frame"]]["bytes"])
                                           for t in trace]
        expected[task] = {k: float(v) for k, v in score(results).items() if k != "n"}
    return scripts, expected, frames


def _reactive_flags(sample: dict[str, Any], times: list[float]) -> list[bool]:
    """Proactive flag of each response, by the export's rule: the first response after an
    interrupt turn arrives answers it (pipelines/streamvibe/lmms_eval_utils.py)."""
    interrupts = sorted(t["t"] for step in sample["steps"] for t in step["new_turns"]
                        if t["kind"] == "interrupt")
    flags, pending = [], 0
    for t in times:
        arrived = sum(1 for x in interrupts if x <= t)
        flags.append(not arrived > pending)
        pending = max(pending, arrived)
    return flags


def _streamvibe(release: Path) -> tuple[dict, dict]:
    scripts: dict[str, dict[str, list[str]]] = {}
    expected: dict[str, dict[str, float | None]] = {}
    rel = read_release(release)
    judge = lambda g, p: 4.0 if p.text.strip().lower() == g.reference.strip().lower() else 0.0  # noqa: E731
    for config in rel.configs():
        if config == "pointwise":
            continue
        task, samples = f"streamvibe_{config}", []
        for i, s in enumerate(iter_rows(rel.files(config))):
            step_t = [float(x["t"]) for x in s["steps"]]
            said = {math.floor(p["preferred"]): p["response"] for p in s["gold_evidence"]} if i % 2 == 0 \
                else {math.floor(p["t"]): "Look at that." for p in s["gold_negative_probes"]}
            scripts.setdefault(task, {})[s["id"]] = [said.get(int(t), "SILENT") for t in step_t]
            times = [t for t in step_t if int(t) in said]
            preds = [Prediction(t=t, text=said[int(t)], proactive=f)
                     for t, f in zip(times, _reactive_flags(s, times), strict=True)]
            probes = fpr_near_trajectory([p["t"] for p in s["gold_negative_probes"]], times)
            samples.append(score_sample(evidence_points(s), preds, tau=2.0, judge=judge, probes=probes))
        total = aggregate(samples)
        expected[task] = {m: getattr(total, m) for m in ("precision", "recall", "f1", "fpr_near", "ans",
                                                         "content_f1")}
    return scripts, expected


def _proready(release: Path) -> tuple[dict, dict]:
    scripts: dict[str, dict[str, list[str]]] = {}
    expected: dict[str, dict[str, float]] = {}
    rel = read_release(release)
    tau = ars.release_tau(rel.path)
    for config in rel.configs():
        task, questions = f"proready_{config}", []
        for i, item in enumerate(iter_rows(rel.files(config))):
            first = min(q["ask_time_s"] for q in item["questions"])
            times = [first + k for k in range(int(item["video_duration_s"] - first - 1e-9) + 1)]
            replies = {k: [] for k in range(len(times))}
            turns = []
            for g in item["gold_turns"]:
                when = g["t_s"] if i % 2 == 0 else g["ask_time_s"]
                k = next(k for k, t in enumerate(times) if t >= when)
                replies[k].append(f"Q{g['turn_index']}: " + (g["answer"] if i % 2 == 0 else "no idea"))
                turns.append(ars.Turn(g["t_s"], g["t_e"], times[k], i % 2 == 0))
            last = max(k for k, r in replies.items() if r)
            scripts.setdefault(task, {})[item["id"]] = ["\n".join(replies[k]) or "WAIT"
                                                        for k in range(last + 1)]
            questions.append(ars.Question(turns=tuple(turns), id=item["id"]))
        r = ars.score(questions, tau=tau)
        expected[task] = {"ars": r.ars, "acc": r.acc, "acc_e": r.acc_e, "acc_e_joint": r.acc_e_joint}
    return scripts, expected


@pytest.mark.kits
def test_lmms_eval_lists_the_tasks_and_scores_a_scripted_model_with_our_metrics(
        demo_releases: DemoReleases, tmp_path: Path) -> None:
    python = kit_python("lmms-eval")
    out = tmp_path / "tasks"
    raw = demo_releases.paths["proready"].parents[2] / "raw"
    paths = demo_releases.paths
    assert cli(["export", "lmms-eval", str(paths["proactivebench"]), str(out)]) == 0
    assert cli(["export", "lmms-eval", str(paths["streamvibe"]), str(out),
                "--content-judge", "exact_reference"]) == 0
    assert cli(["export", "lmms-eval", str(paths["proready"]), str(out), "--content-judge",
                "exact_reference", "--video-root", str(raw / "proready")]) == 0
    for bench in paths:  # the tasks carry the release's identity and byte-identical scoring code
        report = json.loads((out / bench / "export.json").read_text())
        assert report["release"]["manifest_sha256"] == read_release(paths[bench]).manifest_sha256
        for rel, digest in report["files"].items():
            if rel.startswith("_vendor/"):
                source = Path(__file__).resolve().parents[2] / rel.removeprefix("_vendor/")
                assert hashlib.sha256(source.read_bytes()).hexdigest() == digest, rel

    pb_scripts, pb_expected, pb_frames = _proactivebench(paths["proactivebench"])
    sv_scripts, sv_expected = _streamvibe(paths["streamvibe"])
    pr_scripts, pr_expected = _proready(paths["proready"])
    scripts = {**pb_scripts, **sv_scripts, **pr_scripts}
    (tmp_path / "scripts.json").write_text(json.dumps(scripts))
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1",
               HF_HOME=str(tmp_path / "hf"), LMMS_EVAL_DATASETS_CACHE=str(tmp_path / "hf-datasets"))
    proc = subprocess.run([str(python), str(RUNNER), str(out), str(tmp_path / "scripts.json"),
                           str(tmp_path / "out.json")], capture_output=True, text=True, env=env,
                          timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads((tmp_path / "out.json").read_text())

    assert set(scripts) | {"proactivebench", "streamvibe", "proready"} <= set(got["listed"])
    for task, metrics in {**pb_expected, **sv_expected, **pr_expected}.items():
        for metric, value in metrics.items():
            reported = got["results"][task][f"{metric},none"]
            if value is None:
                assert math.isnan(reported), (task, metric)
            else:
                assert reported == pytest.approx(value, abs=1e-12), (task, metric, reported, value)
    assert pb_expected["proactivebench_coco"]["acc"] == pytest.approx(4 / 5)  # episode 2 of 0–4 abstains
    # one of the two P samples answers at its points (content exact: ANS 1), the other at its probes
    assert sv_expected["streamvibe_p"]["ans"] == 1.0 and sv_expected["streamvibe_p"]["fpr_near"] > 0

    for key, hashes in pb_frames.items():  # turn k shows the frame of the state the answers led to
        assert [turn["visuals"] for turn in got["log"][key]] == [[h] for h in hashes], key
    for key, turns in got["log"].items():
        if key.startswith("streamvibe_"):
            assert all(1 <= len(turn["visuals"]) <= 16 for turn in turns), key
            assert "gold" not in " ".join(turn["prompt"] for turn in turns)
