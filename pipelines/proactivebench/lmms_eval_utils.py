"""lmms-eval hooks of the ProactiveBench tasks (copied as ``utils.py`` by ``benchforge export
lmms-eval``; docs/exports.md). It runs inside lmms-eval's environment: it imports only the
standard library, Pillow and the benchforge modules shipped in ``_vendor/`` next to it.

How a multi-turn episode runs in lmms-eval (``output_type: generate_until_agentic``): lmms-eval
asks the model with :func:`doc_to_visual` (the start state's frame) and the first prompt, then
calls :func:`doc_to_text` with the model's outputs so far. That call applies the last answer to
the episode exactly as the authors' package does (:func:`pipelines.proactivebench.scoring.step`):
a correct proactive suggestion moves along the episode's graph, and the next turn shows the new
state's frame and its prompt (its options change with the state); the correct category, a wrong
answer, or ``max_steps`` ends the episode, and the outcome goes to :func:`process_results` as
JSON. Turn k therefore sees only the frame and options of the state the model's own choices led
to — never the history (each turn is a fresh single-image question, as in ``tests/mcqa.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().with_name("_vendor")))

from pipelines.proactivebench.scoring import EpisodeResult, prompt, score, step  # noqa: E402


def _frame(doc: dict[str, Any], state: int) -> Any:
    return doc["frames"][int(doc["states"][state]["frame"])]


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The start state's frame (a PIL image, decoded by ``datasets``)."""
    return [_frame(doc, int(doc["start_state"]))]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None,
                previous_output: list[str] | None = None, round_idx: int | None = None,
                previous_round_info: dict[str, Any] | None = None) -> Any:
    """The first prompt (``round_idx`` None), else one environment step (module doc)."""
    hint = bool((lmms_eval_specific_kwargs or {}).get("hint", False))
    if round_idx is None:
        return prompt(doc, int(doc["start_state"]), hint)
    info = previous_round_info or {"state": int(doc["start_state"]), "turns": 0, "trace": []}
    turn = step(doc, info["state"], info["turns"], (previous_output or [""])[-1])
    info = {"state": turn.next_state, "turns": info["turns"] + 1,
            "trace": info["trace"] + [[turn.state, turn.answer, turn.outcome]]}
    if turn.next_state is None:
        result = {"id": doc["id"], "correct": turn.outcome == "correct", "turns": info["turns"],
                  "outcome": turn.outcome, "trace": info["trace"]}
        return None, None, True, [json.dumps(result)], info
    return [_frame(doc, turn.next_state)], prompt(doc, turn.next_state, hint), False, previous_output, info


def doc_to_target(doc: dict[str, Any]) -> str:
    return str(doc["answer"])


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    """The episode's outcome for both metrics (an unparsable result counts as a failed episode)."""
    try:
        out = json.loads(results[0])
        item = {"id": doc["id"], "correct": bool(out["correct"]), "turns": int(out["turns"])}
    except (ValueError, KeyError, IndexError, TypeError):
        item = {"id": doc["id"], "correct": False, "turns": 1}
    return {"acc": item, "ps": item}


def _results(items: list[dict[str, Any]]) -> list[EpisodeResult]:
    return [EpisodeResult(i["id"], i["correct"], i["turns"]) for i in items]


def aggregate_acc(items: list[dict[str, Any]]) -> float:
    """Fraction of episodes ended with the correct category."""
    return float(score(_results(items))["acc"])


def aggregate_ps(items: list[dict[str, Any]]) -> float:
    """Proactive suggestions per episode (``num_turns − 1``, as ``tests/mcqa.py``)."""
    return float(score(_results(items))["ps"])
