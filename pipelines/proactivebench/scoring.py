"""Scoring a model on ProactiveBench episodes turn by turn, as the authors' package does
(ProactiveBench §3.1; ``proactivebench`` 0.1.1: ``BaseEnvironment.evaluate_generated_answer``,
``tests/mcqa.py``).

Why a second runner next to :mod:`pipelines.proactivebench.selfcheck`: the self-check plays
scripted *option ids*; a model answers in *text* (an option, or its letter), which must be parsed
exactly as the official evaluation parses it (:func:`filtering.parsing.evaluate`, the port of
``_evaluate``). Each turn, as ``evaluate_generated_answer`` does:

1. the answer is evaluated against the categories (letters shifted by the number of shown
   options; no category is correct in a void state, App. 0.A.1) and against the shown options
   (letters from A; the correct ones are the proactive options that lead to another state);
2. both wrong or unmatched → the episode ends, wrong; the correct category → it ends, correct;
   a correct proactive option → the environment moves along the episode's graph
   (``states[s].next_states``) and the next turn shows that state's frame and options;
3. after ``max_steps`` turns the episode ends, wrong unless already correct.

Metrics, as ``tests/mcqa.py`` reports them: **acc** — the fraction of episodes ended with the
correct category; **ps** — proactive suggestions per episode, ``num_turns − 1`` averaged over
episodes (the authors' "ps rate"; every turn but the last is a suggestion that was followed).

Everything here needs the standard library only (with :mod:`filtering.parsing` and
:mod:`pipelines.proactivebench.pools`), because the lmms-eval export ships it with its tasks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from filtering.parsing import evaluate
from pipelines.proactivebench.pools import render_mcqa_prompt

END = -1  # next state of an option that ends the episode as wrong (schemas/proactivebench.py)


def shown_options(episode: Mapping[str, Any], state: int) -> list[str]:
    """The options state ``state`` shows, in their fixed order (categories follow them)."""
    return [episode["options"][i] for i in episode["states"][state]["option_ids"]]


def prompt(episode: Mapping[str, Any], state: int, hint: bool = False) -> str:
    """The MCQA prompt of ``state``, as the official evaluation builds it (the first state's is
    the release's ``first_turn_prompt``)."""
    return render_mcqa_prompt(episode["environment"], episode["question"],
                              shown_options(episode, state) + list(episode["categories"]),
                              episode["hint"] if hint else None)


@dataclass(frozen=True)
class Turn:
    """One answered turn: where it was, what was said, what it did."""

    state: int
    answer: str
    outcome: str  # correct | moved | wrong | max_steps
    next_state: int | None  # the state shown next (None: the episode ended)


def step(episode: Mapping[str, Any], state: int, turns_before: int, answer: str) -> Turn:
    """Apply one answer in ``state`` (``turns_before`` turns already taken): module doc, 1–3."""
    st = episode["states"][state]
    shown = shown_options(episode, state)
    correct_options = [episode["options"][i] for i, nxt in zip(st["option_ids"], st["next_states"],
                                                                strict=True)
                       if episode["option_kinds"][i] == "proactive" and nxt != END]
    void = state in set(episode["void_states"])
    cat_eval, _ = evaluate(answer, [] if void else [episode["answer"]], list(episode["categories"]),
                           len(shown))
    act_eval, act_text = evaluate(answer, correct_options, shown, 0)
    if cat_eval == "correct":
        return Turn(state, answer, "correct", None)
    if act_eval != "correct":
        return Turn(state, answer, "wrong", None)
    if turns_before + 1 >= int(episode["max_steps"]):
        return Turn(state, answer, "max_steps", None)
    option = st["option_ids"][shown.index(act_text)]
    return Turn(state, answer, "moved", st["next_states"][st["option_ids"].index(option)])


@dataclass(frozen=True)
class EpisodeResult:
    id: str
    correct: bool
    turns: int

    @property
    def suggestions(self) -> int:
        """Proactive suggestions the way ``tests/mcqa.py`` counts them: ``num_turns − 1``."""
        return self.turns - 1


def play(episode: Mapping[str, Any], answers: Iterable[str]) -> tuple[EpisodeResult, list[Turn]]:
    """Run scripted answers through an episode (stops when the episode ends; answers left over
    are ignored, running out of answers before the end is an error)."""
    state, trace = int(episode["start_state"]), []
    for answer in answers:
        turn = step(episode, state, len(trace), answer)
        trace.append(turn)
        if turn.next_state is None:
            return EpisodeResult(str(episode["id"]), turn.outcome == "correct", len(trace)), trace
        state = turn.next_state
    raise ValueError(f"episode {episode['id']}: answers ran out after {len(trace)} turns")


def score(results: Iterable[EpisodeResult]) -> dict[str, float | int]:
    """acc and ps over episodes (module doc); ``n`` episodes."""
    items = list(results)
    if not items:
        raise ValueError("no episodes to score")
    return {"acc": sum(r.correct for r in items) / len(items),
            "ps": sum(r.suggestions for r in items) / len(items), "n": len(items)}
