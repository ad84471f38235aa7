"""lmms-eval hooks of the ProReady-QA tasks (copied as ``utils.py`` by ``benchforge export
lmms-eval``; docs/exports.md). It runs inside lmms-eval's environment with the standard library,
OpenCV and Pillow (lmms-eval's dependencies) and the benchforge modules shipped in ``_vendor/``.

How an item runs (``output_type: generate_until_agentic``), "answer whenever you are ready"
(StreamReady §4): one round per decision time t = first ask time, then every
``decision_stride_s`` seconds while t < the video's duration. At t the model is shown the video's
frames up to t (1 FPS, the frame on screen at each second: :func:`core.media.video.causal_frames`,
the sampler the build uses; at most ``max_frames``, evenly spaced, the newest last) and the
questions asked by t (the released ``questions``, never ``gold_turns``) that it has not answered.
It replies ``Q<k>: <answer>`` for each question it answers now, or ``WAIT``; an answer's time t_a
is the decision time. The round after the last question is answered, or the end of the video,
ends the item.

Scoring (:mod:`pipelines.proready.ars`): per turn EP · LP at the release's τ (``ars_tau_s`` of the
manifest, written into the task) and correctness, then ARS, Acc, Acc × ARS (Eq. 9) and the joint
effective accuracy. Correctness needs a judge: ``exact_reference`` counts an answer correct when it
equals the reference after case and space folding (a strict stand-in; the paper's judge is an
LLM), ``none`` leaves every answer unjudged, which ARS counts as incorrect. An unanswered turn
scores ARS 0. τ and the judge travel in each item's result.
"""

from __future__ import annotations

import io
import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().with_name("_vendor")))

from PIL import Image  # noqa: E402

from core.media.video import causal_frames  # noqa: E402
from pipelines.proready.ars import Question, Turn, score  # noqa: E402

WAIT = "WAIT"
ANSWER = re.compile(r"^\s*Q(\d+)\s*:\s*(.+?)\s*$")


@lru_cache(maxsize=4)
def _frames(path: str) -> tuple[tuple[float, bytes], ...]:
    """(t, JPEG) of every second of a video, decoded once per video."""
    return tuple((f.t, f.image) for f in causal_frames(path, fps=1.0, max_side=448).frames)


def _visible(doc: dict[str, Any], t: float, kw: dict[str, Any]) -> list[Any]:
    root = kw.get("video_root")
    if not root:
        raise ValueError("the task has no video_root: export it with --video-root")
    shown = [jpeg for ft, jpeg in _frames(str(Path(root) / doc["video_file"])) if ft <= t]
    m = int(kw.get("max_frames", 16))
    if len(shown) > m:
        shown = [shown[round(i * (len(shown) - 1) / (m - 1))] for i in range(m)]
    return [Image.open(io.BytesIO(jpeg)).convert("RGB") for jpeg in shown]


def _times(doc: dict[str, Any], stride: float) -> list[float]:
    first = min(float(q["ask_time_s"]) for q in doc["questions"])
    n = int((float(doc["video_duration_s"]) - first) / stride - 1e-9) + 1
    return [first + k * stride for k in range(max(n, 1))]


def _prompt(doc: dict[str, Any], t: float, answered: dict[str, Any]) -> str:
    open_q = [q for q in doc["questions"]
              if float(q["ask_time_s"]) <= t and str(q["turn_index"]) not in answered]
    lines = [f"You are watching a video as it plays; the frames shown are the ones seen so far, the "
             f"last one is now, t = {t:g} s. Questions you have not answered yet:"]
    lines += [f"Q{q['turn_index']} (asked at {float(q['ask_time_s']):g} s): {q['question']}" for q in open_q]
    lines.append(f"Answer a question only once the video lets you. For each question you answer now, "
                 f"reply with a line 'Q<number>: <answer>'; otherwise reply exactly {WAIT}.")
    return "\n".join(lines)


@lru_cache(maxsize=1)
def _export_settings() -> dict[str, Any]:
    """The settings the export wrote into ``export.json`` next to this file (the video root, the
    release's τ): :func:`doc_to_visual` gets no task arguments from lmms-eval."""
    path = Path(__file__).resolve().with_name("export.json")
    return json.loads(path.read_text())["settings"] if path.exists() else {}


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The frames up to the first decision time (the export's settings: video root, max_frames)."""
    kw = _export_settings()
    return _visible(doc, _times(doc, float(kw.get("decision_stride_s", 1.0)))[0], kw)


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None,
                previous_output: list[str] | None = None, round_idx: int | None = None,
                previous_round_info: dict[str, Any] | None = None) -> Any:
    """The prompt of the first decision time (``round_idx`` None), else record the answers of the
    previous one and show the next (module doc)."""
    kw = {**_export_settings(), **(lmms_eval_specific_kwargs or {})}
    times = _times(doc, float(kw.get("decision_stride_s", 1.0)))
    if round_idx is None:
        return _prompt(doc, times[0], {})
    info = previous_round_info or {"answered": {}}
    answered = dict(info["answered"])
    t = times[round_idx - 1]  # the decision time the last reply answered
    asked = {str(q["turn_index"]) for q in doc["questions"] if float(q["ask_time_s"]) <= t}
    for line in (previous_output or [""])[-1].splitlines():
        match = ANSWER.match(line)
        if match and match.group(1) in asked and match.group(1) not in answered:
            answered[match.group(1)] = [t, match.group(2)]
    info = {"answered": answered}
    k = round_idx  # the decision time to show now
    if k >= len(times) or len(answered) == len(doc["questions"]):
        result = {"id": doc["id"], "answers": answered, "tau": float(kw["ars_tau_s"]),
                  "content_judge": str(kw.get("content_judge", "none"))}
        return None, None, True, [json.dumps(result)], info
    return _visible(doc, times[k], kw), _prompt(doc, times[k], answered), False, previous_output, info


def doc_to_target(doc: dict[str, Any]) -> str:
    return json.dumps([t["answer"] for t in doc["gold_turns"]])


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().strip(".!").lower()


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    """Per gold turn: the window, the answer time and whether the answer is right (module doc)."""
    try:
        out = json.loads(results[0])
        answers, tau, judge = out["answers"], float(out["tau"]), out["content_judge"]
    except (ValueError, KeyError, IndexError, TypeError):
        answers, tau, judge = {}, float("nan"), "none"
    turns = []
    for gold in doc["gold_turns"]:
        given = answers.get(str(gold["turn_index"]))
        t_a = float(given[0]) if given else None
        correct = (_norm(given[1]) == _norm(gold["answer"])) if given and judge == "exact_reference" else None
        turns.append([float(gold["t_s"]), float(gold["t_e"]), t_a, correct])
    item = {"id": doc["id"], "turns": turns, "tau": tau}
    return {m: item for m in ("ars", "acc", "acc_e", "acc_e_joint")}


def _score(items: list[dict[str, Any]]) -> Any:
    taus = {i["tau"] for i in items}
    if len(taus) != 1:
        raise ValueError(f"items scored with different τ {sorted(taus)}: one release, one τ")
    questions = [Question(turns=tuple(Turn(*t) for t in i["turns"]), id=i["id"]) for i in items]
    return score(questions, tau=taus.pop())


def aggregate_ars(items: list[dict[str, Any]]) -> float:
    return _score(items).ars


def aggregate_acc(items: list[dict[str, Any]]) -> float:
    return _score(items).acc


def aggregate_acc_e(items: list[dict[str, Any]]) -> float:
    return _score(items).acc_e


def aggregate_acc_e_joint(items: list[dict[str, Any]]) -> float:
    return _score(items).acc_e_joint
