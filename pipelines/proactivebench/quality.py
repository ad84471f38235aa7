"""The data-quality suites of a ProactiveBench release (run by :mod:`exports.quality`).

CI runs this on every release. It validates the *whole* release as one pandas batch — a
per-file batch would miss a duplicate id spread over two shards (design.md §Environment) — and the manifest
counts (design.md §Conventions "Nothing lost": ``inputs = kept + filtered + rejected``, per environment).

Why derived columns: great_expectations' core expectations do not work on list columns (a
length check measures the string form, design.md §Environment), and the episode is mostly lists (options,
categories, the state graph). Each list rule is therefore computed here in plain Python into a
scalar column (a count or a boolean) and checked with a core expectation; the suite stays
loadable without custom expectation classes (a suite loaded without their module silently drops
them). The derived rules follow the episode definition (ProactiveBench §3.1, App. 0.A):

* four distinct categories, the answer among them (App. 0.A.*: "four possible categories");
* ``option_kinds``/``option_actions`` aligned with ``options``; kinds and actions valid;
* the number of options per environment as the prompts in App. 0.A show them: ROD 3, VSOD 3,
  MVP-N 2, ImageNet-C 5, QuickDraw 2, ChangeIt 3, COCO 2 (cardinal, zoom out) or 3 (ordinal);
* every state's frame in range, ``option_ids`` in range and aligned with ``next_states``,
  next states in range or -1; ``start_state``/``goal_states``/``reference_frame`` in range;
* every proactive option parses to its action under the official ``action_map`` rules and only
  abstain options contain "cannot"/"do not" (``pools.official_action``), so the authors'
  evaluator scores the episode as our graph does; ``first_turn_prompt`` is the start state
  rendered in the official MCQA format; ``frame_sources`` aligned with ``frames``;
* a non-void goal state reachable from the start within ``max_steps`` turns (the shortest path
  of proactive options plus the answering turn; §3.1: suggestions are allowed a finite number
  of times, after which the episode fails).

The frames themselves are not loaded into the batch (they are embedded image bytes); only their
count per row is, read in record batches so memory stays bounded.
"""

from __future__ import annotations

import glob
import json
import os
from collections import deque
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq

from exports.quality import Suite
from exports.release_files import read_batches
from pipelines.proactivebench.pools import (
    ACTIONS,
    coco_components,
    is_official_abstain,
    official_action,
    render_mcqa_prompt,
)
from schemas.proactivebench import ENVIRONMENTS, OPTION_KINDS

# Options shown per environment in App. 0.A.1–0.A.7 (proactive + invalid + abstain).
EXPECTED_OPTIONS = {"rod": 3, "vsod": 3, "mvpn": 2, "imagenet_c": 5, "quickdraw": 2,
                    "changeit": 3}
_SCALARS = ["id", "environment", "answer", "start_state", "reference_frame", "max_steps"]


# -- loading and deriving ----------------------------------------------------------------------------------
def _expected_options(env: str, metadata: str) -> int:
    if env == "coco":
        try:
            direction = json.loads(metadata or "{}").get("direction", "")
            return len(coco_components(direction)) + 1
        except (ValueError, TypeError):
            return -1  # unreadable direction: the option-count check fails and says so
    return EXPECTED_OPTIONS.get(env, -1)


def _shortest_turns(row: dict[str, Any]) -> int:
    """Turns an oracle needs: proactive moves to the nearest non-void goal + 1 answer (-1: none)."""
    states = row["states"]
    goals = set(row["goal_states"]) - set(row["void_states"])
    start = row["start_state"]
    if not 0 <= start < len(states):
        return -1
    dist = {start: 0}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        if s in goals:
            return dist[s] + 1
        st = states[s]
        for opt, nxt in zip(st["option_ids"], st["next_states"], strict=False):
            kind = row["option_kinds"][opt] if 0 <= opt < len(row["option_kinds"]) else ""
            if kind == "proactive" and 0 <= nxt < len(states) and nxt not in dist:
                dist[nxt] = dist[s] + 1
                queue.append(nxt)
    return -1


def _options_parse(row: dict[str, Any]) -> bool:
    """Every proactive option maps to its action under the official ``action_map`` rules and no
    option is misread as abstaining (or abstaining options as suggestions) — else the authors'
    evaluator would score this episode differently from our graph."""
    try:
        direction = json.loads(row["source_metadata"] or "{}").get("direction", "")
        for text, kind, action in zip(row["options"], row["option_kinds"], row["option_actions"],
                                      strict=True):
            if (kind == "abstain") != is_official_abstain(text):
                return False
            if kind == "proactive" and official_action(
                    text, row["environment"], {"direction": direction}) != action:
                return False
    except (ValueError, TypeError, AttributeError):
        return False
    return True


def derive(row: dict[str, Any], num_frames: int) -> dict[str, Any]:
    """The scalar columns the suite checks, for one EPISODE row (lists as plain Python)."""
    options, kinds, actions = row["options"], row["option_kinds"], row["option_actions"]
    cats = row["categories"]
    states = row["states"]
    n_states = len(states)
    n_opts = len(options)
    aligned = len(kinds) == n_opts and len(actions) == n_opts
    actions_ok = aligned and all(
        (a == "") if k == "abstain" else (a in ACTIONS) for k, a in zip(kinds, actions, strict=True)
    )
    turns = _shortest_turns(row)
    start = row["start_state"]
    start_ok = 0 <= start < n_states
    shown = [options[i] for i in states[start]["option_ids"] if 0 <= i < n_opts] if start_ok else []
    try:
        prompt_ok = start_ok and row["first_turn_prompt"] == render_mcqa_prompt(
            row["environment"], row["question"], shown + list(cats), None)
    except ValueError:
        prompt_ok = False
    return {
        "num_frames": num_frames,
        "num_states": n_states,
        "num_options": n_opts,
        "expected_options": _expected_options(row["environment"], row["source_metadata"]),
        "num_categories": len(cats),
        "categories_distinct": len(set(cats)) == len(cats),
        "answer_in_categories": row["answer"] in cats,
        "option_lists_aligned": aligned,
        "option_kinds_valid": all(k in OPTION_KINDS for k in kinds),
        "option_actions_valid": actions_ok,
        "state_frames_in_range": all(0 <= s["frame"] < num_frames for s in states),
        "option_ids_in_range": all(
            len(s["option_ids"]) == len(s["next_states"])
            and all(0 <= i < n_opts for i in s["option_ids"]) for s in states),
        "next_states_in_range": all(-1 <= t < n_states for s in states for t in s["next_states"]),
        "goal_states_in_range": bool(row["goal_states"])
        and all(0 <= g < n_states for g in row["goal_states"]),
        "reference_frame_in_range": 0 <= row["reference_frame"] < num_frames,
        "void_states_in_range": all(0 <= g < n_states for g in row["void_states"]),
        "frame_sources_aligned": len(row["frame_sources"]) == num_frames,
        "proactive_options_parse": _options_parse(row),
        "first_turn_prompt_consistent": bool(prompt_ok),
        "oracle_turns": turns,
        "goal_reachable_within_max_steps": 0 < turns <= row["max_steps"],
    }


def release_files(release_dir: str | os.PathLike[str]) -> list[str]:
    """The release's episode files; none in a release whose sources yielded no episode (built
    with --allow-empty-sources): its counts are still checked."""
    return sorted(glob.glob(os.path.join(os.fspath(release_dir), "data", "**", "*.parquet"),
                            recursive=True))


def load_episode_frame(release_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """The whole release as ONE dataframe of scalar + derived columns (plus ``source_file``)."""
    records: list[dict[str, Any]] = []
    root = Path(release_dir)
    for path in release_files(root):
        pf = pq.ParquetFile(path)
        rel = os.path.relpath(path, root)
        # every column but the frame bytes: the frame count comes from the paths' list lengths
        columns = [c for c in pf.schema_arrow.names if c != "frames"] + ["frames.list.element.path"]
        for batch in read_batches(path, columns, rows=256):
            lengths = pc.list_value_length(batch.column("frames")).to_pylist()
            table = batch.drop_columns(["frames"]).to_pylist()
            for row, n in zip(table, lengths, strict=True):
                rec = {k: row[k] for k in _SCALARS}
                rec.update(derive(row, int(n or 0)))
                rec["source_file"] = rel
                records.append(rec)
    return pd.DataFrame.from_records(records)


def manifest_counts(counts: dict[str, dict[str, int]], episodes: pd.DataFrame) -> pd.DataFrame:
    """One row per environment: the counts and the rows actually in the release.

    Missing numbers become -1 so the balance checks fail and name the environment.
    """
    in_release = episodes["environment"].value_counts().to_dict() if len(episodes) else {}
    rows = []
    for env in sorted(set(counts) | set(in_release)):
        c = counts.get(env, {})
        vals = {k: int(c[k]) if isinstance(c.get(k), int) else -1
                for k in ("inputs", "kept", "filtered", "rejected")}
        rows.append({"environment": env, **vals,
                     "accounted": vals["kept"] + vals["filtered"] + vals["rejected"]
                     if min(vals.values()) >= 0 else -2,
                     "rows_in_release": int(in_release.get(env, 0))})
    return pd.DataFrame.from_records(rows, columns=["environment", "inputs", "kept", "filtered",
                                                    "rejected", "accounted", "rows_in_release"])


# -- the suites --------------------------------------------------------------------------------------------
def episode_expectations() -> list[Any]:
    """(check name, expectation) pairs for the episode batch."""
    import great_expectations.expectations as gxe

    true = [True]

    def flag(column: str, check: str) -> Any:
        return gxe.ExpectColumnValuesToBeInSet(column=column, value_set=true, meta={"check": check})

    return [
        gxe.ExpectColumnValuesToNotBeNull(column="id", meta={"check": "ids present"}),
        gxe.ExpectColumnValuesToBeUnique(column="id", meta={"check": "unique ids"}),
        gxe.ExpectColumnValuesToBeInSet(column="environment", value_set=list(ENVIRONMENTS),
                                        meta={"check": "known environment"}),
        flag("answer_in_categories", "answer among categories"),
        gxe.ExpectColumnValuesToBeBetween(column="num_categories", min_value=4, max_value=4,
                                          meta={"check": "exactly 4 categories"}),
        flag("categories_distinct", "categories distinct"),
        flag("option_lists_aligned", "option kinds/actions aligned with options"),
        flag("option_kinds_valid", "option kinds valid"),
        flag("option_actions_valid", "option actions valid for their kind"),
        gxe.ExpectColumnPairValuesToBeEqual(column_A="num_options", column_B="expected_options",
                                            meta={"check": "option count per environment "
                                                           "(App. 0.A)"}),
        flag("state_frames_in_range", "state frame index in range"),
        flag("option_ids_in_range", "state option ids in range and aligned"),
        flag("next_states_in_range", "next states in range or -1"),
        gxe.ExpectColumnValuesToBeBetween(column="start_state", min_value=0,
                                          meta={"check": "start state in range"}),
        gxe.ExpectColumnPairValuesAToBeGreaterThanB(column_A="num_states", column_B="start_state",
                                                    meta={"check": "start state in range"}),
        flag("goal_states_in_range", "goal states in range"),
        flag("reference_frame_in_range", "reference frame in range"),
        flag("void_states_in_range", "void states in range"),
        flag("frame_sources_aligned", "frame_sources aligned with frames"),
        flag("proactive_options_parse", "options parse as their actions in the official evaluator"),
        flag("first_turn_prompt_consistent", "first_turn_prompt renders the start state"),
        flag("goal_reachable_within_max_steps", "goal reachable from start within max_steps"),
    ]


def manifest_expectations() -> list[Any]:
    import great_expectations.expectations as gxe

    return [
        gxe.ExpectColumnValuesToBeBetween(column="inputs", min_value=0,
                                          meta={"check": "manifest counts present"}),
        gxe.ExpectColumnPairValuesToBeEqual(column_A="inputs", column_B="accounted",
                                            meta={"check": "inputs = kept + filtered + rejected"}),
        gxe.ExpectColumnPairValuesToBeEqual(column_A="kept", column_B="rows_in_release",
                                            meta={"check": "kept = rows in the release"}),
    ]




def suites(release: Path, counts: dict[str, dict[str, int]]) -> list[Suite]:
    """The episode batch and the manifest-counts batch of a (staged) release."""
    episodes = load_episode_frame(release)
    return [Suite("proactivebench_episodes", episodes, episode_expectations(), "id"),
            Suite("proactivebench_manifest_counts", manifest_counts(counts, episodes),
                  manifest_expectations(), "environment")]
