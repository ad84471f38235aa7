"""The training split's part of a StreamVibe release: its settings, manifest, reports and card
(StreamVibe §3.4, App. B.4, Table 18; docs/streamvibe.md §Training split).

How the two splits relate in one release: the evaluation split keeps the root layout it always
had (``data/``, ``pointwise/``, ``filtered/``, ``rejected/``, ``reports/``, split ``test``), and
the training split sits beside it — ``sft/<subtype>/train-*.parquet`` (SFT streams),
``rl_seed/<group>/train-*.parquet`` (RL seed rows), ``sft/general_mixture.json`` (the external
sources, by reference), ``filtered/train/``, ``rejected/train/``, ``reports/train/`` — with HF
configs ``sft`` and ``rl_seed`` of split ``train`` in the same card, counts groups
``train/<subtype>`` in the same manifest (``splits`` sums each split), and one quality gate over
both, whose ``streamvibe_held_out`` suite proves the training split held out from the evaluation
split it is published with.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

from core.files import sha256_hex
from pipelines.common.benchmark import BuildContext, Finalized
from pipelines.streamvibe.build_facts import VIDEOS
from pipelines.streamvibe.heldout import HELD_OUT
from pipelines.streamvibe.mixture import load_general_mixture, mixture_card_lines
from pipelines.streamvibe.prepared import Prepared
from pipelines.streamvibe.training import decision_balance, is_train
from schemas.streamvibe import (
    GENERAL,
    LABELED_STEP,
    RL_SEED,
    SFT_STREAM,
    TABLE18_RL_TARGETS,
    TABLE18_SFT_TARGETS,
    TRAIN_PREFIX,
    TRAIN_SPLIT,
)

MIXTURE_FILE = "sft/general_mixture.json"


def _targets(given: Any, defaults: dict[str, int], where: str) -> dict[str, int]:
    """Targets per group: Table 18 when not given; a given mapping names every group it wants
    (missing ones get 0, as ``targets:`` of the evaluation config)."""
    if given is None:
        return dict(defaults)
    unknown = sorted(set(given) - set(defaults))
    if unknown or any(not isinstance(v, int) or isinstance(v, bool) or v < 0 for v in given.values()):
        raise SystemExit(f"{where}: groups {list(defaults)}, each a whole number >= 0 (got {given})")
    return {k: int(given.get(k, 0)) for k in defaults}


def load_train_config(path: Path, repo: Path) -> dict[str, Any]:
    """``configs/streamvibe/train.yaml`` checked and resolved (what the manifest records)."""
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"cannot read the training config {path}: {exc}") from exc
    rl = raw.get("rl_seed") or {}
    span = {k: rl.get(k, 8) for k in ("before_s", "after_s")}
    if any(isinstance(v, bool) or not isinstance(v, int | float) or v < 0 for v in span.values()):
        raise SystemExit(f"{path}: rl_seed.before_s / after_s must be seconds >= 0 (got {span})")
    mixture = Path(str(raw.get("general_mixture", "configs/streamvibe/general_mixture.yaml")))
    load_general_mixture(mixture if mixture.is_absolute() else repo / mixture)  # fail early
    return {
        "version": raw.get("version"),
        "source": {"manifest": str((raw.get("source") or {}).get("manifest", "train_manifest.jsonl"))},
        "sft_targets": _targets(raw.get("sft_targets"), TABLE18_SFT_TARGETS, f"{path}: sft_targets"),
        "rl_seed": {"targets": _targets(rl.get("targets"), TABLE18_RL_TARGETS, f"{path}: rl_seed.targets"),
                    **{k: float(v) for k, v in span.items()}},
        "general_mixture": str(mixture),
    }


def _read(staging: Path, sub: str, columns: list[str]) -> list[dict[str, Any]]:
    return [r for f in sorted((staging / sub).glob("*/*.parquet"))
            for r in pq.read_table(f, columns=columns).to_pylist()]


def _held_out(staging: Path) -> dict[str, Any]:
    """How many training pairs were filtered as held out, by which key."""
    rows = [r for f in sorted((staging / "filtered" / "train").glob("*.parquet"))
            for r in pq.read_table(f).to_pylist() if r["filter_name"] == HELD_OUT]
    by = Counter(m["by"] for r in rows for m in json.loads(r["filter_evidence"])["matches"])
    videos = {json.loads(r["filter_evidence"])["source_id"] for r in rows}
    return {"filtered_pairs": len(rows), "filtered_videos": len(videos),
            "matches_by": dict(sorted(by.items()))}


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    return [f"| {' | '.join(head)} |", "|" + "---|" * len(head)] + [
        f"| {' | '.join(str(x) for x in r)} |" for r in rows]


def train_finalize(ctx: BuildContext[Prepared], counts: dict[str, dict[str, int]], fin: Finalized,
                   sources: dict[str, Any], videos: list[dict[str, Any]], repo: Path) -> None:
    """Add the training split to ``fin``: manifest ``train``, reports under ``reports/train/``,
    ``sft/general_mixture.json``, the ``sft`` / ``rl_seed`` configs, warnings and card text."""
    cfg = ctx.config["train"]
    staging = ctx.staging
    sft = _read(staging, "sft", ["id", "subtype", "category", "source_collection", "steps"])
    rl = _read(staging, "rl_seed", ["id", "sample_id", "category"])
    sft_rows = Counter(r["category"] for r in sft)
    rl_rows = Counter(r["category"] for r in rl)
    sft_alloc = {c: {"target": t, "released": sft_rows[c], "shortfall": max(0, t - sft_rows[c])}
                 for c, t in cfg["sft_targets"].items()}
    rl_alloc = {g: {"target": t, "released": rl_rows[g], "shortfall": max(0, t - rl_rows[g])}
                for g, t in cfg["rl_seed"]["targets"].items()}
    rl_alloc[GENERAL]["note"] = ("external general-streaming data: not built by benchforge "
                                 f"({MIXTURE_FILE})")
    reports = staging / "reports" / "train"
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "allocation.json").write_text(json.dumps(
        {"sft": sft_alloc, "rl_seed": rl_alloc}, indent=1, sort_keys=True) + "\n")
    mixture_path = Path(cfg["general_mixture"])
    mixture = load_general_mixture(mixture_path if mixture_path.is_absolute() else repo / mixture_path)
    text = json.dumps(mixture, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    (staging / MIXTURE_FILE).parent.mkdir(parents=True, exist_ok=True)
    (staging / MIXTURE_FILE).write_text(text)
    held = _held_out(staging)
    decisions = decision_balance(sft)
    states = Counter(s["state"] for sid, s in ctx.prepared.statuses.items() if is_train(sid))
    groups = {g: c for g, c in counts.items() if g.startswith(TRAIN_PREFIX)}
    fin.manifest["train"] = {
        "split": TRAIN_SPLIT,
        "records": {"sft": {"record": SFT_STREAM.name, "version": SFT_STREAM.version},
                    "rl_seed": {"record": RL_SEED.name, "version": RL_SEED.version}},
        "sources": sources,
        "videos": videos,
        "review": {"rule": "four approvals of the same version (App. B.3), as the evaluation split",
                   "states": dict(sorted(states.items()))},
        "sft": {
            "examples": len(sft),
            "per_subtype": dict(sorted(Counter(r["subtype"] for r in sft).items())),
            "allocation": sft_alloc,
            "decisions_per_source": decisions,
            "general_mixture": {"file": MIXTURE_FILE, "sha256": sha256_hex(text.encode()),
                                "examples": mixture["examples"], "downloaded_by_benchforge": False},
            "mixture_total": {"task_aligned": len(sft), "general_external": mixture["examples"],
                              "all": len(sft) + mixture["examples"]},
        },
        "rl_seed": {"rows": len(rl), "samples": len({r["sample_id"] for r in rl}),
                    "allocation": rl_alloc,
                    "window": {k: cfg["rl_seed"][k] for k in ("before_s", "after_s")}},
        "held_out": {"test_videos": len(VIDEOS.read(staging)),
                     "train_videos": len(videos), **held,
                     "keys": ["source_id", "stream_sha256"], "gate": "streamvibe_held_out"},
    }
    short = {**{f"sft {c}": a["shortfall"] for c, a in sft_alloc.items() if a["shortfall"]},
             **{f"rl_seed {g}": a["shortfall"] for g, a in rl_alloc.items() if a["shortfall"]}}
    if short:
        fin.warnings.append("Training allocation shortfall against the Table 18 targets (unless "
                            f"configured): {short}. Missing samples were NOT padded.")
    fin.warnings.append(
        f"The general-streaming SFT data ({mixture['examples']:,} examples, Table 18) and the "
        "general-streaming RL seeds are NOT in this release: benchforge does not download them; "
        f"{MIXTURE_FILE} lists them by reference.")
    for name, rows, folder in (("sft", len(sft), "sft"), ("rl_seed", len(rl), "rl_seed")):
        if rows:  # datasets cannot read a zero-row file: no rows, no config
            fin.extra_configs.append({"config_name": name, "data_files": [
                {"split": TRAIN_SPLIT, "path": f"{folder}/*/{TRAIN_SPLIT}-*.parquet"}]})
    fin.card_sections += _card(counts, groups, fin.manifest["train"], mixture)
    fin.summary_lines.append(f"train: sft streams {len(sft)}, rl seed rows {len(rl)}, "
                             f"held-out pairs filtered {held['filtered_pairs']}")


def _card(counts: dict[str, dict[str, int]], groups: dict[str, dict[str, int]], train: dict[str, Any],
          mixture: dict[str, Any]) -> list[str]:
    test = {g: c for g, c in counts.items() if not g.startswith(TRAIN_PREFIX)}

    def total(cs: dict[str, dict[str, int]]) -> list[int]:
        return [sum(c[k] for c in cs.values()) for k in ("inputs", "kept", "filtered", "rejected")]

    held, sft, rl = train["held_out"], train["sft"], train["rl_seed"]
    lines = ["", "## Splits", ""]
    lines += _table(["split", "configs", "what", "inputs", "kept", "filtered", "rejected"], [
        ["test", "one per subtype, `all`, `pointwise`", "evaluation (StreamVibe-Bench)", *total(test)],
        ["train", "`sft`, `rl_seed`", "training (StreamVibe App. B.4)", *total(groups)]])
    lines += ["", "Both splits come from one run of the same construction and review pipeline "
              "(§3.3): every training sample was approved by all four reviewers on its current "
              "version, like every evaluation sample. The training split is **held out**: no "
              "training source video matches a video of the evaluation split by source id or by "
              "its decoded 1 FPS stream (the `streamvibe_held_out` suite checks the published "
              f"rows on every build). {held['filtered_pairs']} training video-request pairs of "
              f"{held['filtered_videos']} videos the evaluation manifest holds were filtered "
              "(`filtered/train/`, filter `held_out`). Counts groups `train/<subtype>` are the "
              "training split's (table above).", "",
              "## Training split (StreamVibe §3.4, App. B.4, Table 18)", "",
              f"### SFT streams (`sft`, record `{SFT_STREAM.name}` {SFT_STREAM.version})", "",
              "The evaluation stream with a decision label on every step: `gold_decision` "
              "(silence / response) and `gold_responses` (the responses due at that step) — "
              "the decision and response tokens of the SFT objective (§4.2 Eq. 1).", ""]
    lines += _table(["category", "target", "released", "shortfall"],
                    [[c, a["target"], a["released"], a["shortfall"]] for c, a in sft["allocation"].items()])
    lines += ["", "Silence / response steps per source (the ratios the adaptive SFT weights follow):", ""]
    lines += _table(["source", "samples", "silence", "response", "silence per response"],
                    [[s, d["samples"], d["silence"], d["response"], d["silence_per_response"]]
                     for s, d in sft["decisions_per_source"].items()])
    lines += ["", f"### RL seed pool (`rl_seed`, record `{RL_SEED.name}` {RL_SEED.version})", "",
              f"One row per help point: the rollout window from {rl['window']['before_s']:g} s before "
              f"its evidence window to {rl['window']['after_s']:g} s after it, the stream's frames "
              "and steps in the window, the Gold History before it and the evidence due inside it "
              "(the point-level reward's gold, Eq. 2). A sample feeds SFT or RL, never both.", ""]
    lines += _table(["group", "target", "released", "shortfall", "note"],
                    [[g, a["target"], a["released"], a["shortfall"], a.get("note", "")]
                     for g, a in rl["allocation"].items()])
    lines += mixture_card_lines(mixture)
    lines += ["", "### Loading the training split", "", "```python",
              "import datasets",
              "sft = datasets.load_dataset('/abs/path/to/this/release', 'sft', split='train')",
              "sft[0]['steps'][t]['gold_decision']  # 'silence' or 'response' at second t",
              "rl = datasets.load_dataset('/abs/path/to/this/release', 'rl_seed', split='train')",
              "```", "",
              "An SFT stream has the fields of an evaluation sample (above), `stream_sha256`, and "
              "two more fields in each step:", "", "| field | description |", "|---|---|"]
    lines += [f"| `{f.name}` | {f.doc} |" for f in SFT_STREAM.fields if f.name == "stream_sha256"]
    lines += [f"| `steps[].{f.name}` | {f.doc} |" for f in LABELED_STEP.fields
              if f.name.startswith("gold_")]
    lines += ["", "| RL seed field | description |", "|---|---|"]
    lines += [f"| `{f.name}` | {f.doc} |" for f in RL_SEED.fields
              if f.name not in {p.name for p in SFT_STREAM.fields} or f.name in ("frames", "steps")]
    return lines
