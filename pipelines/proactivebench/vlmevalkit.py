"""ProactiveBench in VLMEvalKit's image-MCQ TSV: the first turn of every episode, one TSV per
environment (``benchforge export vlmevalkit``; the TSV layout is :mod:`exports.vlmevalkit`).

Which configs are single-turn. None of the seven environments is, as an episode: an episode is
a multi-turn MDP (ProactiveBench §3.1) whose budget ``max_steps`` is the number of frames (ROD 14,
VSOD and ChangeIt the clip length, MVP-N, ImageNet-C, QuickDraw ≥ 4) or K + 1 ≥ 4 crops (COCO).
VLMEvalKit scores one answer per question, so what it can hold is the **first turn**: the start
state's frame and its MCQA prompt, exactly as the episode shows it (the options shown there,
then the four categories, lettered A, B, … in that order, as the official evaluation letters
them — ImageNet-C shows 9 options, A–I). Its answer is the correct category; a proactive
option counts as wrong there, because the suggestion cannot be followed. That is first-turn
(reactive) accuracy — what the leak filter asks of its probes (App. 0.A.8) — not the
benchmark's multi-turn accuracy, for which use the lmms-eval export or the compat export.

ROD has no first-turn question with a right answer: every episode starts in its fully occluded
frame, a *void* state where even the right category is scored wrong (App. 0.A.1), so VLMEvalKit's
single correct letter would be a lie; such episodes are left out and listed with the reason
(a config whose episodes are all left out gets no TSV).

Hints are off, as in the benchmark's default setting (§4.3 studies them separately);
``hints=True`` fills VLMEvalKit's ``hint`` column with the environment's hint.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from exports.release_files import iter_rows, read_release
from exports.vlmevalkit import McqRow, write_tsv
from filtering.parsing import first_turn

SUFFIX = " Choose from the following options."  # where the official MCQA template begins


def first_turn_row(episode: dict[str, Any], split: str, hints: bool) -> McqRow | str:
    """The VLMEvalKit row of an episode's first turn, or why it has none."""
    turn = first_turn(episode)
    if turn.category_void:
        return "the start state is void: no option is correct at the first turn (App. 0.A.1)"
    return McqRow(sample_id=turn.episode_id, image=turn.image,
                  question=turn.prompt.split(SUFFIX)[0], hint=episode["hint"] if hints else "",
                  options=tuple(turn.all_options), answer=turn.answer,
                  category=turn.environment, split=split)


def export(release_dir: str | Path, out_dir: str | Path, *, hints: bool = False) -> dict[str, Any]:
    """One ``ProactiveBench_<environment>.tsv`` (+ ``.json``) per environment with a first-turn
    question; returns the report written to ``vlmevalkit.json``."""
    release, out = read_release(release_dir), Path(out_dir)
    if release.benchmark != "proactivebench":
        raise ValueError(f"{release.benchmark} has no single-image multiple-choice config")
    report: dict[str, Any] = {"release": release.stamp(), "hints": hints, "datasets": {},
                              "left_out": {}}
    for config in release.configs():
        rows: list[McqRow] = []
        for episode in iter_rows(release.files(config)):
            row = first_turn_row(episode, release.split, hints)
            if isinstance(row, str):
                report["left_out"][episode["id"]] = row
            else:
                rows.append(row)
        if rows:
            name = f"ProactiveBench_{config}"
            report["datasets"][name] = write_tsv(
                rows, out / f"{name}.tsv", release.stamp(),
                {"view": "first turn of each episode (docs/exports.md)", "hints": hints})
    out.mkdir(parents=True, exist_ok=True)
    (out / "vlmevalkit.json").write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return report
