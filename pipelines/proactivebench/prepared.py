"""What ProactiveBench's ``prepare`` resolves for the later steps of a build: the readers of the
evaluation (and training) sources, their label vocabularies, and the hard-negative settings,
read once in the driver before the pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipelines.common.sources import SourceReader


@dataclass
class Prepared:
    readers: dict[str, SourceReader]  # environment → its reader (the readable ones)
    vocab: dict[str, list[str]]  # environment → its label vocabulary (preflight)
    probes: str | None  # the probe pool: absolute, or a URL (the workers read it elsewhere)
    clip: dict[str, Any] | None  # the CLIP miner's settings (config negatives.clip)
    train_readers: dict[str, SourceReader] = field(default_factory=dict)  # with --split train
    train_vocab: dict[str, list[str]] = field(default_factory=dict)
