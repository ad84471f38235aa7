"""What StreamVibe-Bench's ``prepare`` resolves for the later steps of a build: the sources, the
model settings, the candidate ledger and the review states, read once in the driver before the
pipeline; the pipeline's candidates join them after it (``after_pipeline``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.streamvibe.gemini import GeminiSettings


@dataclass(frozen=True)
class TrainConfig:
    """The training split (configs/streamvibe/train.yaml, resolved by build.py)."""

    manifest: str
    sft_targets: dict[str, int] = field(hash=False)
    rl_targets: dict[str, int] = field(hash=False)
    before_s: float = 8.0
    after_s: float = 8.0


@dataclass
class Prepared:
    root: str  # the custom manifest's folder
    manifest: str  # its file name under root
    datasets: tuple[tuple[str, str, tuple[str, ...]], ...]  # (name, root, subtypes to plan)
    intents: str  # the intent specs file
    specs_version: str
    gemini: GeminiSettings
    ledger: dict[str, list[dict[str, Any]]]  # sample id → its versions (review/ledger.json)
    ledger_path: Path
    statuses: dict[str, dict[str, Any]] | None  # review states; None: built without decisions
    train: TrainConfig | None = None  # the training split, with --split train
    # evaluation candidates per source dataset and subtype (after_pipeline); the candidates
    # themselves stay in their build facts, read again only by the pending-review state
    candidate_counts: dict[str, Counter[str]] = field(default_factory=dict)
