"""Template QA generator from native annotations: the offline path (StreamReady §4.2, App. C).

App. C generates questions with an LLM from scene summaries. This generator writes the same kind
of question directly from a video's native annotations, one rule per task type (§4.1), so the
pipeline runs without any model and every question is traceable to the annotation it came from:

* **SSR** (step transitions) ← consecutive ``steps``: asked during step *i*, "what is the next
  step?"; evidence = step *i+1* (onset to end: "for tasks with extended events (SSR, REC), we
  define onset and end times to cover the full target evidence duration", §4.2).
* **REC** (count) ← an ``actions`` label that repeats: asked before its first occurrence, "how many
  times will it happen?"; evidence = the final occurrence (count completion, App. C).
* **CRR** (clue reveal) ← manually authored ``clues`` (App. C: complex tasks "include manually
  authored questions") and consecutive ``scenes`` ("what does the next shot reveal?").
* **CTD** (cause → effect) ← ``causal`` pairs: asked once the cause is visible, "what will it lead
  to?"; evidence = the effect (causal effect visibility).
* **GSD** (goal state) ← the ``goal`` segment: "tell me when the goal is reached"; evidence = the
  goal-completion segment (goal realization).

Every question is asked strictly before its evidence: at the last whole second at least
``min_lead_s`` before the cue, but not before the scene it belongs to ("a question a viewer
might ask at the end of Scene A whose answer is knowable only in Scene B", App. C). Whole seconds
because the benchmark streams are 1 FPS (App. D).

Multi-turn chains (§4.2 "local and global multi-turn dependencies"): a video with at least three
steps gets one SSR chain — turn 1 follows up on the previous answer (*local*), turn 2 goes back to
the step of the first question (*global*) — each follow-up asked once the previous answer's
evidence has appeared, and each still needing new future evidence.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from pipelines.proready.sources import Span, VideoSource


@dataclass(frozen=True)
class TemplateConfig:
    """Knobs of the template generator (``generation.template`` in configs/proready.yaml)."""

    min_lead_s: float = 2.0
    min_repeats: int = 2  # REC: a label must occur at least this often
    chain_max_turns: int = 3  # SSR chain length (1 disables chains)
    scene_clues: bool = True  # CRR from consecutive scenes


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "x"


def ask_before(t: float, anchor_start: float, min_lead_s: float) -> float | None:
    """Whole-second ask time ≤ t − lead, not before the anchor scene; None if none fits."""
    ask = float(math.floor(max(anchor_start, t - min_lead_s) + 1e-9))
    if ask < 0 or ask >= t:
        return None
    return ask


def turn(
    task: str, question: str, answer: str, ask: float, span: Span, *, index: int = 0,
    refers_to: int = -1, dependency: str = "none", generator: str = "template",
) -> dict[str, Any]:
    """A turn dict (schema ``TURN``) whose window is still the coarse native span."""
    return {
        "turn_index": index,
        "task_type": task,
        "question": question,
        "answer": answer,
        "ask_time_s": ask,
        "t_s": span.start,
        "t_e": span.end,
        "refers_to": refers_to,
        "dependency": dependency,
        "cue": f"{span.field}: {span.label}",
        "coarse_start_s": span.start,
        "coarse_end_s": span.end,
        "evidence_method": "native_cue",
        "generator": generator,
    }


def _ssr(video: VideoSource, cfg: TemplateConfig) -> list[tuple[str, list[dict[str, Any]]]]:
    steps = video.span_list("steps")
    out: list[tuple[str, list[dict[str, Any]]]] = []
    first_single = 0
    if cfg.chain_max_turns >= 2 and len(steps) >= 3:
        turns: list[dict[str, Any]] = []
        ask0 = ask_before(steps[1].start, steps[0].start, cfg.min_lead_s)
        if ask0 is not None:
            turns.append(turn("ssr", f"The current step is '{steps[0].label}'. What will the next "
                              "step be?", steps[1].label, ask0, steps[1]))
            for j in range(1, min(cfg.chain_max_turns, len(steps) - 1)):
                nxt = steps[j + 1]
                # asked once the previous answer is visible, before the new evidence
                ask = ask_before(nxt.start, turns[-1]["coarse_start_s"], cfg.min_lead_s)
                if ask is None or ask < turns[-1]["coarse_start_s"]:
                    break
                if j == 1:
                    q, ref, dep = "And which step will come after that one?", j - 1, "local"
                else:
                    q = (f"Going back to '{steps[0].label}', the step of my first question: which "
                         f"step will be number {j + 1} after it?")
                    ref, dep = 0, "global"
                turns.append(turn("ssr", q, nxt.label, ask, nxt, index=j, refers_to=ref,
                                  dependency=dep))
            if len(turns) >= 2:
                out.append(("ssr-chain-1", turns))
                first_single = len(turns)
    for i in range(first_single, len(steps) - 1):
        a, b = steps[i], steps[i + 1]
        ask = ask_before(b.start, a.start, cfg.min_lead_s)
        if ask is None:
            continue
        q = f"The current step is '{a.label}'. What will the next step be?"
        out.append((f"ssr-{i + 1}", [turn("ssr", q, b.label, ask, b)]))
    return out


def _rec(video: VideoSource, cfg: TemplateConfig) -> list[tuple[str, list[dict[str, Any]]]]:
    by_label: dict[str, list[Span]] = defaultdict(list)
    for s in video.span_list("actions"):
        by_label[s.label].append(s)
    out = []
    for label, spans in sorted(by_label.items()):
        if len(spans) < cfg.min_repeats:
            continue
        spans = sorted(spans, key=lambda s: s.start)
        ask = ask_before(spans[0].start, 0.0, cfg.min_lead_s)
        if ask is None:
            continue
        last = spans[-1]
        q = (f"Keep count from now on: how many times will this happen before the video ends — "
             f"'{label}'?")
        out.append((f"rec-{slug(label)}", [turn("rec", q, str(len(spans)), ask, last)]))
    return out


def _crr(video: VideoSource, cfg: TemplateConfig) -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    for j, clue in enumerate(video.clues):
        ask = clue.ask_time
        if ask is None:
            ask = ask_before(clue.span.start, 0.0, cfg.min_lead_s)
            if ask is None:
                continue
        # a manual ask_time is kept as written: validation rejects it if it is not before t_s
        out.append((f"{clue.task}-clue-{j}", [
            turn(clue.task, clue.question, clue.answer, ask, clue.span, generator="manual")
        ]))
    if cfg.scene_clues:
        scenes = video.span_list("scenes")
        for i in range(len(scenes) - 1):
            a, b = scenes[i], scenes[i + 1]
            ask = ask_before(b.start, a.start, cfg.min_lead_s)
            if ask is None:
                continue
            q = f"Right now the video shows '{a.label}'. Once the shot changes, what will it show?"
            out.append((f"crr-scene-{i + 1}", [turn("crr", q, b.label, ask, b)]))
    return out


def _ctd(video: VideoSource, cfg: TemplateConfig) -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    for j, (cause, effect) in enumerate(video.causal):
        ask = ask_before(effect.start, cause.start, cfg.min_lead_s)
        if ask is None:
            continue
        q = f"'{cause.label}' is happening. What effect will this lead to?"
        out.append((f"ctd-{j}", [turn("ctd", q, effect.label, ask, effect)]))
    return out


def _gsd(video: VideoSource, cfg: TemplateConfig) -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    for j, goal in enumerate(video.goals):
        ask = ask_before(goal.start, 0.0, cfg.min_lead_s)
        if ask is None:
            continue
        q = f"Tell me as soon as this goal is reached: {goal.label}. What is the final state?"
        out.append((f"gsd-{j}", [turn("gsd", q, goal.label, ask, goal)]))
    return out


GENERATORS = {"ssr": _ssr, "rec": _rec, "crr": _crr, "ctd": _ctd, "gsd": _gsd}


def item_id(video_id: str, key: str) -> str:
    return f"{video_id}.{key}"


def template_candidates(video: VideoSource, cfg: TemplateConfig) -> list[tuple[str, list[dict]]]:
    """(item id, turns) for every template question of ``video``, in a fixed order."""
    out = []
    for task in GENERATORS:
        for key, turns in GENERATORS[task](video, cfg):
            out.append((item_id(video.video_id, key), turns))
    return out
