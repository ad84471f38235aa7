"""The training split's part of a ProactiveBench release: manifest facts, the held-out report and
the card (ProactiveBench §5; ``docs/proactivebench.md`` §Training split).

How the two splits sit in one release: the evaluation split keeps its layout (``data/<env>/
test-*.parquet``, ``filtered/``, ``filtered_inputs/``, ``rejected/``, split ``test``); the
training split sits beside it — ``grpo/<env>/train-*.parquet`` (config ``grpo``, split
``train``), ``filtered_inputs/train/``, ``rejected/train/``, ``reports/train/held_out.json`` —
with counts groups ``train/<env>`` in the same manifest (``splits`` sums each split) and one
gate over both, whose ``proactivebench_held_out`` suite proves the training split held out
(:mod:`pipelines.proactivebench.train_quality`).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pyarrow.parquet as pq

from exports.release import source_digest
from pipelines.common.benchmark import BuildContext, Finalized
from pipelines.proactivebench.build_facts import (
    TRAIN_EVALUATION_SOURCES,
    TRAIN_HELD_OUT,
    TRAIN_SEQUENCES,
    TRAIN_SOURCES,
)
from pipelines.proactivebench.prepared import Prepared
from pipelines.proactivebench.train_pipeline import ROWS_FOLDER
from schemas.proactivebench import TRAIN_PREFIX, TRAIN_ROW, TRAIN_SPLIT

HELD_OUT_REPORT = "reports/train/held_out.json"
CONFIG = "grpo"  # the card's config of the training rows
ROW_COLUMNS = ["id", "sequence_id", "environment", "ambiguous"]


def read_rows(release: Any, columns: list[str]) -> list[dict[str, Any]]:
    """Training rows of a (staged) release, ``columns`` only (``images.list.element.path``: the
    images' paths without their bytes)."""
    return [r for f in sorted((release / ROWS_FOLDER).glob(f"*/{TRAIN_SPLIT}-*.parquet"))
            for r in pq.ParquetFile(f).read(columns=columns).to_pylist()]


def row_facts(rows: list[dict[str, Any]], sequences: list[dict[str, Any]], wanted: dict[str, int]
              ) -> dict[str, Any]:
    """Rows per environment and frame kind, the configured ratio and the sequences that gave
    fewer frames of a kind than configured (their shortfall is reported, never padded)."""
    per = Counter((r["environment"], "ambiguous" if r["ambiguous"] else "unambiguous") for r in rows)
    envs = sorted({r["environment"] for r in rows} | {s["environment"].removeprefix(TRAIN_PREFIX)
                                                       for s in sequences})
    short = Counter((s["environment"].removeprefix(TRAIN_PREFIX), kind) for s in sequences
                    for kind in ("ambiguous", "unambiguous") if s[kind] < wanted[kind])
    return {
        "rows": len(rows),
        "sequences": len(sequences),
        "rows_per_sequence": dict(wanted),
        "ratio": {"configured": f"{wanted['ambiguous']}:{wanted['unambiguous']}",
                  "released": f"{sum(r['ambiguous'] for r in rows)}:"
                              f"{sum(not r['ambiguous'] for r in rows)}"},
        "per_environment": {env: {"sequences": sum(s["environment"] == TRAIN_PREFIX + env
                                                   for s in sequences),
                                  "ambiguous": per[(env, "ambiguous")],
                                  "unambiguous": per[(env, "unambiguous")],
                                  "sequences_short": {k: short[(env, k)]
                                                      for k in ("ambiguous", "unambiguous")}}
                            for env in envs},
    }


def held_out_facts(ctx: BuildContext[Prepared], evaluation: list[dict[str, Any]]) -> dict[str, Any]:
    """What the held-out report and the manifest say: the evaluation items the training split is
    held out from, and the training items left out because they matched one."""
    matches = TRAIN_HELD_OUT.read(ctx.staging)
    return {
        "keys": ["source_id", "content_sha256"],
        "evaluation_items": dict(sorted(Counter(e["environment"] for e in evaluation).items())),
        "filtered_items": len({(m["environment"], m["item"]) for m in matches}),
        "matches_by": dict(sorted(Counter(m["by"] for m in matches).items())),
        "report": HELD_OUT_REPORT,
        "gate": "proactivebench_held_out",
    }


def train_finalize(ctx: BuildContext[Prepared], counts: dict[str, dict[str, int]], fin: Finalized) -> None:
    """Add the training split to ``fin``: manifest ``train``, ``reports/train/held_out.json``,
    the ``grpo`` config, warnings, card text and a summary line."""
    cfg = ctx.config["train"]
    staging = ctx.staging
    evaluation = sorted(TRAIN_EVALUATION_SOURCES.read(ctx.staging),
                        key=lambda e: (e["environment"], e["source_id"]))
    matches = sorted(TRAIN_HELD_OUT.read(ctx.staging),
                     key=lambda m: (m["environment"], m["item"], m["by"]))
    report = staging / HELD_OUT_REPORT
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps({"evaluation": evaluation, "matches": matches}, indent=1,
                                 sort_keys=True) + "\n")
    sources: dict[str, list[dict[str, str]]] = {}
    for row in TRAIN_SOURCES.read(ctx.staging):
        sources.setdefault(row["environment"], []).append({"file": row["file"], "sha256": row["sha256"]})
    readers = ctx.prepared.train_readers
    rows = read_rows(staging, ROW_COLUMNS)
    facts = row_facts(rows, TRAIN_SEQUENCES.read(ctx.staging), cfg["rows_per_sequence"])
    held = held_out_facts(ctx, evaluation)
    fin.manifest["train"] = {
        "split": TRAIN_SPLIT,
        "record": {"record": TRAIN_ROW.name, "version": TRAIN_ROW.version},
        "config": CONFIG,
        "sources": {env: {"root": ctx.recorded_root(readers[env].root, f"--train-source / --source {env}"),
                          **source_digest(sources.get(env, []))}
                    for env in sorted(readers)},
        **facts,
        "reward": cfg["reward"],
        "held_out": held,
    }
    short = {f"{env} {kind}": n for env, f in facts["per_environment"].items()
             for kind, n in f["sequences_short"].items() if n}
    if short:
        fin.warnings.append(
            "Training sequences with fewer frames of a kind than rows_per_sequence asks "
            f"({facts['rows_per_sequence']}): {short} sequences; they give all they have, the "
            "missing rows were NOT padded.")
    if rows:  # datasets cannot read a zero-row file: no rows, no config
        fin.extra_configs.append({"config_name": CONFIG, "data_files": [
            {"split": TRAIN_SPLIT, "path": f"{ROWS_FOLDER}/*/{TRAIN_SPLIT}-*.parquet"}]})
    fin.card_sections += card_lines(counts, fin.manifest["train"])
    fin.summary_lines.append(
        f"train: {facts['rows']} rows from {facts['sequences']} sequences (ambiguous:unambiguous "
        f"{facts['ratio']['released']}), held-out items filtered {held['filtered_items']}")


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    return [f"| {' | '.join(head)} |", "|" + "---|" * len(head)] + [
        f"| {' | '.join(str(x) for x in r)} |" for r in rows]


def card_lines(counts: dict[str, dict[str, int]], train: dict[str, Any]) -> list[str]:
    """The card's Splits table and training-split sections."""

    def total(split_train: bool) -> list[int]:
        groups = [c for g, c in counts.items() if g.startswith(TRAIN_PREFIX) == split_train]
        return [sum(c[k] for c in groups) for k in ("inputs", "kept", "filtered", "rejected")]

    held, reward = train["held_out"], train["reward"]
    lines = ["", "## Splits", ""]
    lines += _table(["split", "configs", "what", "inputs", "kept", "filtered", "rejected"], [
        ["test", "one per environment, `all`", "evaluation episodes (ProactiveBench §3)", *total(False)],
        ["train", f"`{CONFIG}`", "single-turn GRPO rows (ProactiveBench §5)", *total(True)]])
    lines += [
        "", "Counts groups `train/<environment>` are the training split's: its inputs are the "
        "training sources' items, kept are the sequences that gave rows.", "",
        "## Training split (ProactiveBench §5)", "",
        "Sources as in §5: COCO's training split (train2014) and a QuickDraw subset disjoint from "
        "the drawings of the evaluation split. Each sequence is built and self-checked exactly as "
        "an evaluation episode; each row is one frame of it as a single-turn MCQA prompt "
        "(`prompt`, the options of that frame and the four categories, lettered as in the "
        "evaluation), sampling both ambiguous frames (the answer needs a proactive step first) "
        "and unambiguous ones (the answer is visible).", "",
        f"**Held out, proven.** No source image or drawing of the evaluation split is in the "
        f"training split, by source id (COCO image id, QuickDraw `key_id`) and by content (sha256 "
        f"of the decoded pixels / of the stroke data). The build left out "
        f"{held['filtered_items']} training items that matched an evaluation item "
        "(`filtered_inputs/train/`, rule `held out`); the `proactivebench_held_out` suite of the "
        "quality gate checks the published rows against the evaluation split on every build "
        f"(`{held['report']}` lists the evaluation items and their keys).", ""]
    lines += _table(["environment", "sequences", "ambiguous rows", "unambiguous rows"],
                    [[env, f["sequences"], f["ambiguous"], f["unambiguous"]]
                     for env, f in train["per_environment"].items()])
    lines += [
        "", f"Rows per sequence: {train['rows_per_sequence']['ambiguous']} ambiguous, "
        f"{train['rows_per_sequence']['unambiguous']} unambiguous (configured ratio "
        f"{train['ratio']['configured']}; released {train['ratio']['released']}).", "",
        "### Reward (ProactiveBench §5)", "",
        f"r_c = {reward['r_c']:g} for the correct category (`ground_truth`), r_p ∈ {{0.5, 0.75, "
        f"1.0}} for a valid proactive suggestion of that frame (`proactive_actions`; this "
        f"release's config: r_p = {reward['r_p']:g}), r_w = {reward['r_w']:g} otherwise. "
        "Answers are read as the official evaluation reads them (option text or letter).", "",
        "```python",
        "import datasets",
        "from trl import GRPOConfig, GRPOTrainer",
        "from pipelines.proactivebench.rewards import proactive_reward  # benchforge",
        "",
        f"train = datasets.load_dataset('/abs/path/to/this/release', '{CONFIG}', split='train')",
        "trainer = GRPOTrainer(",
        "    model='Qwen/Qwen2.5-VL-3B-Instruct',",
        f"    reward_funcs=proactive_reward(r_p={reward['r_p']:g}),  # (prompts, completions, **columns)",
        "    args=GRPOConfig(output_dir='grpo-proactive'),",
        "    train_dataset=train,  # prompt (chat messages) + images; other columns reach the reward",
        ")",
        "trainer.train()",
        "```", "",
        f"### Training row (`{CONFIG}`, record `{TRAIN_ROW.name}` {TRAIN_ROW.version})", "",
        "The first five fields carry the names and types of the authors' released training set; "
        "its per-model confidence columns are not built (no model is run); `docs/proactivebench.md` "
        "§Training split lists every difference.", "",
        "| field | description |", "|---|---|"]
    lines += [f"| `{f.name}` | {f.doc} |" for f in TRAIN_ROW.fields]
    return lines
