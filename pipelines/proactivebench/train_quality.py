"""The quality suites of a ProactiveBench release's training split (ProactiveBench §5), run by the
gate with the evaluation suites on every build with ``--split train`` and by ``benchforge check``.

What must hold, computed here from the published files into scalar columns (great_expectations
core expectations do not work on list columns, ``quality.py``):

* **rows** — unique ids; one user message whose image parts match ``images`` (one frame) and
  whose text is the frame's options rendered in the evaluation's MCQA format; ``ground_truth``
  one of the four categories, the last four ``options``; ``proactive_actions`` among the options,
  present exactly in ambiguous frames (a valid suggestion exists where the answer is not yet
  visible, none where it is); the frame index in range; and the reward of
  :mod:`pipelines.proactivebench.rewards` paying r_c for ``ground_truth`` and r_p for each
  suggestion (so the rows work as the reward reads them);
* **held out** (``proactivebench_held_out``) — for every training source item: its source id
  matches no evaluation episode of the release (read from ``data/``), its content key matches
  none of the evaluation items of ``reports/train/held_out.json``, and none of its images has the
  bytes of an evaluation frame; and that list is complete: every evaluation episode of a
  training environment is in it (a list missing an item would hide a leak);
* **counts** — per ``train/<env>`` group ``inputs = kept + filtered + rejected`` and kept = the
  sequences that have rows; no sequence gives more rows of a kind than configured.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from exports.quality import Suite, training_flag_suites
from exports.release_files import read_batches
from pipelines.proactivebench.heldout import source_key
from pipelines.proactivebench.pools import render_mcqa_prompt
from pipelines.proactivebench.rewards import proactive_reward
from pipelines.proactivebench.train_release import HELD_OUT_REPORT, ROWS_FOLDER, read_rows
from schemas.proactivebench import TRAIN_ENVIRONMENTS, TRAIN_PREFIX

BOOL_COLUMNS = {
    "rows": ("one_user_message", "one_image_per_image_part", "prompt_renders_options",
             "ground_truth_is_a_category", "actions_among_options", "actions_iff_ambiguous",
             "frame_in_range", "known_environment", "reward_pays_answer", "reward_pays_actions"),
    "held_out": ("source_id_held_out", "content_held_out", "images_held_out",
                 "evaluation_item_listed"),
    "counts": ("inputs_accounted", "kept_equals_sequences", "rows_within_config"),
}
NUM_CATEGORIES = 4


def _row_flags(row: dict[str, Any], reward: Any, r_p: float) -> dict[str, bool]:
    """The row checks of one training row (``images``: its image paths only)."""
    msgs = row["prompt"]
    parts = msgs[0]["content"] if len(msgs) == 1 else []
    texts = [p["text"] for p in parts if p["type"] == "text"]
    options, gt, actions = row["options"], row["ground_truth"], row["proactive_actions"]
    try:
        rendered = render_mcqa_prompt(row["environment"], "", options, None)
    except ValueError:
        rendered = None
    tail = rendered.split(" Choose from the following options.", 1)[1] if rendered else None
    cols = {"ground_truth": [gt] * (1 + len(actions)), "proactive_actions": [actions] * (1 + len(actions)),
            "options": [options] * (1 + len(actions))}
    try:
        paid = reward(prompts=[msgs] * (1 + len(actions)), completions=[gt, *actions], **cols)
    except (ValueError, KeyError):
        paid = []
    return {
        "one_user_message": len(msgs) == 1 and msgs[0]["role"] == "user",
        "one_image_per_image_part": sum(p["type"] == "image" for p in parts) == len(row["images"]) == 1,
        "prompt_renders_options": len(texts) == 1 and tail is not None and texts[0].endswith(tail),
        "ground_truth_is_a_category": gt in options[-NUM_CATEGORIES:],
        "actions_among_options": all(a in options[:-NUM_CATEGORIES] for a in actions),
        "actions_iff_ambiguous": bool(actions) == bool(row["ambiguous"]),
        "frame_in_range": 0 <= row["frame"] < row["num_frames"],
        "known_environment": row["environment"] in TRAIN_ENVIRONMENTS,
        "reward_pays_answer": bool(paid) and paid[0] == 1.0,
        "reward_pays_actions": bool(paid) and all(p == r_p for p in paid[1:]),
    }


def _image_hashes(files: list[Path], column: str) -> dict[str, set[str]]:
    """id → sha256 of every embedded image of ``column``, read a few rows at a time."""
    out: dict[str, set[str]] = {}
    for f in files:
        for batch in read_batches(f, ["id", column]):
            for r in batch.to_pylist():
                out[r["id"]] = {hashlib.sha256(x["bytes"]).hexdigest() for x in r[column]}
    return out


def _evaluation_episodes(release: Path) -> list[dict[str, Any]]:
    return [r for f in sorted((release / "data").glob("*/*.parquet"))
            for r in pq.read_table(f, columns=["id", "environment", "source_id"]).to_pylist()
            if r["environment"] in TRAIN_ENVIRONMENTS]


def held_out_frame(release: Path, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per training source item and per evaluation episode (module doc)."""
    report = json.loads((release / HELD_OUT_REPORT).read_text())
    listed = report["evaluation"]
    episodes = _evaluation_episodes(release)
    test_keys = {source_key(e["environment"], e["source_id"]) for e in episodes}
    test_keys |= {e["source_key"] for e in listed}
    test_content = {e["content_sha256"] for e in listed if e["content_sha256"]}
    test_images = set().union(*_image_hashes(sorted((release / "data").glob("*/*.parquet")),
                                             "frames").values())
    train_images = _image_hashes(sorted((release / ROWS_FOLDER).glob("*/*.parquet")), "images")
    items: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        item = items.setdefault((r["environment"], r["source_id"]),
                                {"sha": r["source_sha256"], "images": set()})
        item["images"] |= train_images.get(r["id"], set())
    listed_ids = {(e["environment"], e["source_id"]) for e in listed}
    records = [{"id": f"train {env}/{sid}",
                "source_id_held_out": source_key(env, sid) not in test_keys,
                "content_held_out": bool(it["sha"]) and it["sha"] not in test_content,
                "images_held_out": not it["images"] & test_images,
                "evaluation_item_listed": True} for (env, sid), it in sorted(items.items())]
    records += [{"id": f"test {e['id']}", "source_id_held_out": True, "content_held_out": True,
                 "images_held_out": True,
                 "evaluation_item_listed": (e["environment"], e["source_id"]) in listed_ids}
                for e in episodes]
    return pd.DataFrame.from_records(records, columns=["id", *BOOL_COLUMNS["held_out"]])


def count_frame(rows: list[dict[str, Any]], counts: dict[str, dict[str, int]], wanted: dict[str, int]
                ) -> pd.DataFrame:
    sequences = Counter(r["environment"] for r in {(r["environment"], r["sequence_id"]): r
                                                   for r in rows}.values())
    per_seq = Counter((r["sequence_id"], bool(r["ambiguous"])) for r in rows)
    over = Counter(seq.split("/", 1)[0] for (seq, amb), n in per_seq.items()
                   if n > wanted["ambiguous" if amb else "unambiguous"])
    return pd.DataFrame.from_records(
        [{"id": g, "inputs_accounted": c["inputs"] == c["kept"] + c["filtered"] + c["rejected"],
          "kept_equals_sequences": c["kept"] == sequences.get(g.removeprefix(TRAIN_PREFIX), 0),
          "rows_within_config": not over.get(g.removeprefix(TRAIN_PREFIX), 0)}
         for g, c in sorted(counts.items()) if g.startswith(TRAIN_PREFIX)],
        columns=["id", *BOOL_COLUMNS["counts"]])


def training_frames(release: Path, train: dict[str, Any], counts: dict[str, dict[str, int]]
                    ) -> dict[str, pd.DataFrame]:
    """The training split's batches; ``train`` is the manifest's ``train`` section."""
    columns = ["id", "prompt", "ground_truth", "proactive_actions", "options", "sequence_id",
               "environment", "source_id", "frame", "num_frames", "ambiguous", "source_sha256"]
    rows = read_rows(release, columns + ["images.list.element.path"])
    r_p = float(train["reward"]["r_p"])
    reward = proactive_reward(r_p)
    flags = [{"id": r["id"], **_row_flags(r, reward, r_p)} for r in rows]
    return {
        "rows": pd.DataFrame.from_records(flags, columns=["id", *BOOL_COLUMNS["rows"]]),
        "held_out": held_out_frame(release, rows),
        "counts": count_frame(rows, counts, train["rows_per_sequence"]),
    }


def training_suites(release: Path, train: dict[str, Any], counts: dict[str, dict[str, int]]
                    ) -> list[Suite]:
    """The suites of a release's training split (module doc)."""
    return training_flag_suites("proactivebench", training_frames(release, train, counts), BOOL_COLUMNS)
