"""``configs/proactivebench/train.yaml`` checked, and the training split's source readers
(ProactiveBench §5; ``docs/proactivebench.md`` §Training split).

Why a file of its own, read only with ``--split train``: it is recorded in that release's
manifest (``config.train``, so the config sha256 covers it) and kept out of
``configs/proactivebench.yaml``, so an evaluation-only build's config — and its sha256 — stays as
it was.

Sources are read with the evaluation's readers in their native layouts: COCO's ``train2014``
split (``annotations/instances_train2014.json`` + ``train2014/``) and QuickDraw class files
sampled from the other end of the sha256(key_id) order (``order: descending``,
:mod:`pipelines.proactivebench.sources.quickdraw`) — read from ``quickdraw_train/``, which on
the real dataset may be the evaluation's own class files (a symlink to ``quickdraw/``, or
``QUICKDRAW_TRAIN_DIR``), and in the demo corpus holds drawings of its own, since the evaluation
split takes every recognized demo drawing. A training source configured at the same
path as its evaluation source follows that source's override (``COCO_DIR=…`` / ``--source``);
``--train-source ENV=PATH`` (make: ``COCO_TRAIN_DIR`` / ``QUICKDRAW_TRAIN_DIR``) points one
elsewhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pipelines.common.sources import ReaderConfig, SourceReader
from pipelines.proactivebench.rewards import PAPER_R_P, R_C, R_W
from pipelines.proactivebench.sources import READERS
from pipelines.proactivebench.sources.quickdraw import ORDERS
from schemas.proactivebench import TRAIN_ENVIRONMENTS

# the options each training source takes besides `path` (those of its evaluation reader)
SOURCE_KEYS = {"coco": {"split", "directions", "max_initial_iou"},
               "quickdraw": {"per_class", "order"}}
# the shipped config's values (a source given without them gets these)
DEFAULTS = {"coco": {"path": "coco", "split": "train2014"},
            "quickdraw": {"path": "quickdraw_train", "per_class": 20, "order": "descending"}}
TOP_KEYS = {"version", "sources", "rows_per_sequence", "hint", "reward"}


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SystemExit(f"{where}: a whole number >= 0, got {value!r}")
    return int(value)


def _source(env: str, spec: Any, where: str) -> dict[str, Any]:
    if env not in TRAIN_ENVIRONMENTS:
        raise SystemExit(f"{where}: unknown training source {env!r}; ProactiveBench §5 trains on "
                         f"{list(TRAIN_ENVIRONMENTS)}")
    if not isinstance(spec, dict):
        raise SystemExit(f"{where}.{env}: a mapping (path: …, …), got {spec!r}")
    unknown = sorted(set(spec) - SOURCE_KEYS[env] - {"path"})
    if unknown:
        raise SystemExit(f"{where}.{env}: unknown keys {unknown}; known: "
                         f"{sorted(SOURCE_KEYS[env] | {'path'})}")
    out = dict(DEFAULTS[env], **spec)
    if not isinstance(out["path"], str) or not out["path"]:
        raise SystemExit(f"{where}.{env}.path: a folder under RAW_DIR, got {out['path']!r}")
    if env == "quickdraw":
        if _count(out["per_class"], f"{where}.quickdraw.per_class") < 1:
            raise SystemExit(f"{where}.quickdraw.per_class: at least 1")
        if out["order"] not in ORDERS:
            raise SystemExit(f"{where}.quickdraw.order: one of {list(ORDERS)}, got {out['order']!r}")
    if env == "coco" and not (isinstance(out["split"], str) and out["split"]):
        raise SystemExit(f"{where}.coco.split: the COCO split to read (train2014), got {out['split']!r}")
    return out


def load_train_config(path: Path) -> dict[str, Any]:
    """The checked, normalised training config (what the manifest records as ``config.train``);
    SystemExit naming the file and key otherwise."""
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"cannot read the training config {path}: {exc}") from exc
    if not isinstance(raw, dict):
        raise SystemExit(f"{path}: a mapping")
    unknown = sorted(set(raw) - TOP_KEYS)
    if unknown:
        raise SystemExit(f"{path}: unknown keys {unknown}; known: {sorted(TOP_KEYS)}")
    sources = raw.get("sources") or {env: {} for env in TRAIN_ENVIRONMENTS}
    if not isinstance(sources, dict):
        raise SystemExit(f"{path}: sources: a mapping of {list(TRAIN_ENVIRONMENTS)}")
    per = raw.get("rows_per_sequence") or {}
    if not isinstance(per, dict) or set(per) - {"ambiguous", "unambiguous"}:
        raise SystemExit(f"{path}: rows_per_sequence: {{ambiguous: n, unambiguous: m}}, got {per!r}")
    rows = {k: _count(per.get(k, 1), f"{path}: rows_per_sequence.{k}") for k in ("ambiguous", "unambiguous")}
    if not sum(rows.values()):
        raise SystemExit(f"{path}: rows_per_sequence: ambiguous and unambiguous are both 0 (no rows)")
    hint = raw.get("hint", False)
    if not isinstance(hint, bool):
        raise SystemExit(f"{path}: hint: true or false, got {hint!r}")
    reward = raw.get("reward") or {}
    if not isinstance(reward, dict) or set(reward) - {"r_p"}:
        raise SystemExit(f"{path}: reward: {{r_p: …}} (r_c = {R_C:g} and r_w = {R_W:g} are the paper's), "
                         f"got {reward!r}")
    r_p = reward.get("r_p", 0.75)
    if isinstance(r_p, bool) or not isinstance(r_p, int | float) or not R_W <= r_p <= R_C:
        raise SystemExit(f"{path}: reward.r_p: a number in [{R_W:g}, {R_C:g}] (the paper: "
                         f"{list(PAPER_R_P)}), got {r_p!r}")
    return {
        "version": raw.get("version"),
        "sources": {env: _source(env, spec, f"{path}: sources")
                    for env, spec in sorted(sources.items())},
        "rows_per_sequence": rows,
        "hint": hint,
        "reward": {"r_c": R_C, "r_p": float(r_p), "r_w": R_W},
    }


def make_train_readers(train: dict[str, Any], evaluation: dict[str, Any], raw_dir: Path, seed: int,
                       overrides: dict[str, str], train_overrides: dict[str, str]
                       ) -> dict[str, SourceReader]:
    """One reader per training source (module doc); ``evaluation`` is the evaluation config's
    ``environments``. A missing folder stops the build with what to type."""
    readers: dict[str, SourceReader] = {}
    for env, spec in sorted(train["sources"].items()):
        spec = dict(spec)
        rel = spec.pop("path")
        same = rel == str((evaluation.get(env) or {}).get("path", env))
        root = train_overrides.get(env) or (overrides.get(env) if same else None) or str(raw_dir / rel)
        if not Path(root).exists() and "://" not in root:
            raise SystemExit(
                f"training source directory for {env} not found: {root} — point RAW_DIR at the "
                f"folder holding {rel}/, or this source elsewhere with {env.upper()}_TRAIN_DIR=/path "
                f"(make) or --train-source {env}=/path; or build the evaluation split only "
                "(PB_SPLIT=test / no --split train)"
                + (". The evaluation split's own class files are fine (the training split takes "
                   "other drawings and drops any it shares): QUICKDRAW_TRAIN_DIR=<the quickdraw "
                   "folder>" if env == "quickdraw" else ""))
        per_class = spec.pop("per_class", None)
        readers[env] = READERS[env](root, ReaderConfig(per_class=per_class, global_seed=seed,
                                                       extra=spec))
    return readers
