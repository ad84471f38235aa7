"""ProactiveBench training rows: one frame of a sequence as a single-turn MCQA prompt (ProactiveBench
§5: "we limit the training set to single-turn interactions, sampling both ambiguous and
unambiguous frames. These allow the model to learn which situations require proactiveness and
which direct prediction").

A training sequence is built exactly as an evaluation episode (:func:`episodes.build_episode`:
"we follow a procedure similar to that described in Sec. 3 for constructing the MCQA setting")
and must pass the same self-check; each chosen frame (= state) of its graph then becomes one row:

* **ambiguous** frames — states that are not a goal state: the answer is not visible yet and a
  proactive suggestion leads to a more informative frame;
* **unambiguous** frames — the goal (reference) states: the answer is visible.

Per sequence, ``rows_per_sequence.ambiguous`` ambiguous and ``rows_per_sequence.unambiguous``
unambiguous frames are drawn with ``rng_for(global_seed, sequence id, purpose)`` (design.md
§Conventions), so the ratio is exactly the configured one wherever a sequence has enough frames of
each kind; a sequence with fewer gives all it has, and the manifest reports the shortfall (never
padded). Every row shows what the evaluation shows in that state: the frame, this state's options
(its proactive suggestions and the abstain option) and the four categories, lettered in that
order, in the evaluation's MCQA template (:func:`pools.render_mcqa_prompt`); its
``proactive_actions`` are the options of this state that lead to another state — the valid
suggestions the reward pays ``r_p`` for (:mod:`pipelines.proactivebench.rewards`). Where the
answer is visible there is none: COCO hides the move at the last crop, and QuickDraw's "add more
details" at the full drawing ends the episode (App. 0.A.5, 0.A.7).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.seeding import rng_for
from pipelines.proactivebench.graph import END
from pipelines.proactivebench.pools import render_mcqa_prompt
from schemas.proactivebench import TRAIN_ROW


@dataclass(frozen=True)
class RowsConfig:
    """How rows are drawn from a sequence (``configs/proactivebench/train.yaml``)."""

    ambiguous: int = 1  # ambiguous frames per sequence
    unambiguous: int = 1  # unambiguous (reference) frames per sequence
    hint: bool = False  # append the environment's hint to the prompt (§4.3); the paper's MCQA has none
    global_seed: int = 0


def frame_kinds(episode: dict[str, Any]) -> tuple[list[int], list[int]]:
    """(ambiguous states, unambiguous states) of an episode. A void state (a correct category
    counts as wrong there, App. 0.A.1) is never unambiguous."""
    goals = set(episode["goal_states"]) - set(episode["void_states"])
    states = range(len(episode["states"]))
    return [s for s in states if s not in goals], [s for s in states if s in goals]


def chosen_states(episode: dict[str, Any], cfg: RowsConfig) -> tuple[list[int], list[int]]:
    """The (ambiguous, unambiguous) states that become rows, each drawn with its own seeded
    generator (changing one count never changes the other draw)."""
    ambiguous, unambiguous = frame_kinds(episode)
    sid = episode["id"]
    amb = rng_for(cfg.global_seed, sid, "train_ambiguous_frames").sample(
        ambiguous, min(cfg.ambiguous, len(ambiguous)))
    una = rng_for(cfg.global_seed, sid, "train_unambiguous_frames").sample(
        unambiguous, min(cfg.unambiguous, len(unambiguous)))
    return sorted(amb), sorted(una)


def valid_suggestions(episode: dict[str, Any], state: int) -> list[str]:
    """Options of ``state`` that are proactive and lead to another state (as the official
    evaluation's correct options: ``scoring.step``)."""
    st = episode["states"][state]
    return [episode["options"][i] for i, nxt in zip(st["option_ids"], st["next_states"], strict=True)
            if episode["option_kinds"][i] == "proactive" and nxt != END]


def training_row(episode: dict[str, Any], state: int, ambiguous: bool, content_sha256: str,
                 hint: bool = False) -> dict[str, Any]:
    """The TRAIN_ROW of one state of an episode (module doc)."""
    st = episode["states"][state]
    options = [episode["options"][i] for i in st["option_ids"]] + list(episode["categories"])
    text = render_mcqa_prompt(episode["environment"], episode["question"], options,
                              episode["hint"] if hint else None)
    frame = episode["frames"][st["frame"]]
    row = {
        "prompt": [{"content": [{"type": "image", "text": None}, {"type": "text", "text": text}],
                    "role": "user"}],
        "ground_truth": episode["answer"],
        "proactive_actions": valid_suggestions(episode, state),
        "options": options,
        "images": [{"bytes": frame["bytes"], "path": frame["path"]}],
        "id": f"{episode['id']}#{state}",
        "sequence_id": episode["id"],
        "environment": episode["environment"],
        "source_id": episode["source_id"],
        "frame": st["frame"],
        "num_frames": len(episode["frames"]),
        "ambiguous": ambiguous,
        "source_sha256": content_sha256,
        "frame_source": episode["frame_sources"][st["frame"]],
    }
    TRAIN_ROW.validate(row)
    return row


def training_rows(episode: dict[str, Any], content_sha256: str, cfg: RowsConfig
                  ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows of one sequence and its summary (frames of each kind available and taken: the
    manifest's ratio and shortfall)."""
    amb, una = chosen_states(episode, cfg)
    rows = [training_row(episode, s, True, content_sha256, cfg.hint) for s in amb]
    rows += [training_row(episode, s, False, content_sha256, cfg.hint) for s in una]
    available = frame_kinds(episode)
    summary = {"environment": episode["environment"], "sequence_id": episode["id"],
               "frames": len(episode["frames"]),
               "ambiguous_available": len(available[0]), "unambiguous_available": len(available[1]),
               "ambiguous": len(amb), "unambiguous": len(una)}
    return sorted(rows, key=lambda r: r["frame"]), summary
