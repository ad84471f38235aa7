"""First-turn view of an episode and answer parsing identical to the official environment.

Why a port instead of our own parser: the leak filter (ProactiveBench §3.3, App. 0.A.8) decides
whether a sample is answerable at the first turn *as the benchmark scores it*. If our parser were
more lenient or stricter than ``proactivebench.environment.BaseEnvironment._evaluate``, we would
filter samples the official evaluation would not count as correct (or keep ones it would). So
``_standardize_full_answer``, ``_standardize_letter_answer`` and ``_evaluate`` are reproduced
here line by line (the authors' package needs Python 3.12; this project runs on 3.11).

Scoring of one first-turn answer follows ``evaluate_generated_answer``: the answer is evaluated
once against the shown (valid) options with letters from ``A`` and once against the categories
with letters shifted by the number of shown options. A correct category in a *void* state (e.g.
ROD's fully occluded first frame, App. 0.A.1, where the environment's correct-category list is
empty) is scored wrong, exactly as the environment does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


def standardize_full_answer(answer: str) -> str:
    """``BaseEnvironment._standardize_full_answer``: drop a leading "X. ", lowercase, no spaces."""
    answer = re.sub(r"^.*[A-Z]\.\s*", "", answer)
    return answer.lower().strip().replace(" ", "")


def standardize_letter_answer(answer: str) -> str:
    """``BaseEnvironment._standardize_letter_answer``: the letter before a ".", else ``"#"``."""
    answer = answer.split(".")[0].lower().strip()
    if len(answer) > 1:
        return "#"
    return answer


def evaluate(
    generated_answer: str, correct_answers: list[str], options: list[str], shift_index: int
) -> tuple[str, str]:
    """``BaseEnvironment._evaluate``: ("correct" | "wrong" | "mismatch", matched option text)."""
    full_answer = standardize_full_answer(generated_answer)
    std_correct_answer = [standardize_full_answer(ans) for ans in correct_answers]
    std_options = [standardize_full_answer(option) for option in options]

    if full_answer in std_correct_answer:
        return "correct", options[std_options.index(full_answer)]
    if full_answer in std_options:
        return "wrong", options[std_options.index(full_answer)]

    letter_answer = standardize_letter_answer(generated_answer)
    std_correct_letters = [
        standardize_letter_answer(chr(65 + options.index(ans) + shift_index)) for ans in correct_answers
    ]
    std_options_letters = [standardize_letter_answer(chr(65 + i + shift_index)) for i in range(len(options))]
    if letter_answer in std_correct_letters:
        return "correct", options[std_options_letters.index(letter_answer)]
    if letter_answer in std_options_letters:
        return "wrong", options[std_options_letters.index(letter_answer)]
    return "mismatch", ""


@dataclass(frozen=True)
class FirstTurn:
    """Exactly what a model sees at the episode's first state (image, prompt, option order)."""

    episode_id: str
    environment: str
    image: bytes
    prompt: str
    shown_options: tuple[str, ...]  # valid (proactive/abstain/invalid) options at the start state
    categories: tuple[str, ...]
    answer: str
    category_void: bool  # start state voids category answers (scored wrong by the environment)

    @property
    def all_options(self) -> list[str]:
        """Options in letter order: shown options first, then the categories (A, B, ...)."""
        return list(self.shown_options) + list(self.categories)


@dataclass(frozen=True)
class ParsedAnswer:
    """A first-turn answer scored like ``evaluate_generated_answer`` scores it."""

    parsed: str  # option text the answer matched ('' if none)
    correct: bool  # the correct category, in a state where categories count
    category_evaluation: str  # correct | wrong | mismatch (categories, letters shifted)
    action_evaluation: str  # wrong | mismatch: matched a shown option or not (no correct set)


def first_turn(episode: dict[str, Any], hint: bool = False) -> FirstTurn:
    """The first state of an episode record (``schemas.proactivebench.EPISODE``).

    The prompt is ``first_turn_prompt``; with ``hint`` the hint is appended after a space, as
    ``BaseEnvironment.get_state(hint=True)`` does (``f"{prompt} {hint_prompt}"``).
    """
    # imported here so the parser itself needs only the standard library: the lmms-eval export
    # ships this module with its tasks (docs/exports.md), where Beam is not installed
    from core.blobs import resolve

    eid = episode.get("id", "<no id>")
    try:
        start = int(episode["start_state"])
        state = episode["states"][start]
        frame = episode["frames"][int(state["frame"])]
        image = resolve(frame["bytes"] if isinstance(frame, dict) else frame)
        shown = [episode["options"][int(i)] for i in state["option_ids"]]
        prompt = episode["first_turn_prompt"]
        categories = list(episode["categories"])
        answer = episode["answer"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"episode {eid}: cannot build the first state: {exc!r}") from exc
    if isinstance(image, memoryview):
        image = image.tobytes()
    if not isinstance(image, bytes | bytearray) or not image:
        raise ValueError(f"episode {eid}: first-state frame has no image bytes")
    if answer not in categories:
        raise ValueError(f"episode {eid}: answer {answer!r} not among categories {categories}")
    if hint and episode.get("hint"):
        prompt = f"{prompt} {episode['hint']}"
    return FirstTurn(
        episode_id=eid,
        environment=str(episode.get("environment", "")),
        image=bytes(image),
        prompt=prompt,
        shown_options=tuple(shown),
        categories=tuple(categories),
        answer=answer,
        category_void=start in set(episode.get("void_states") or []),
    )


def score_answer(turn: FirstTurn, raw_answer: str) -> ParsedAnswer:
    """Score a raw first-turn answer as the official environment would.

    Categories are evaluated with letters shifted by the number of shown options; the shown
    options with letters from A. The parsed text is the category if one matched, else the shown
    option, else ''.
    """
    correct_categories = [] if turn.category_void else [turn.answer]
    cat_eval, cat_text = evaluate(
        raw_answer, correct_categories, list(turn.categories), len(turn.shown_options)
    )
    act_eval, act_text = evaluate(raw_answer, [], list(turn.shown_options), 0)
    parsed = cat_text or act_text
    return ParsedAnswer(
        parsed=parsed,
        correct=cat_eval == "correct",
        category_evaluation=cat_eval,
        action_evaluation=act_eval,
    )
