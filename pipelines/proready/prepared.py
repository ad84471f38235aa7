"""What ProReady-QA's ``prepare`` resolves for the later steps of a build: the sources, the
generation settings and the review decisions, read once in the driver before the pipeline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipelines.proready.generation import GenerationConfig
from pipelines.proready.native import ProReadySources
from pipelines.proready.sources import ProReadyReader


@dataclass
class Prepared:
    root: str  # the custom manifest's folder
    reader: ProReadyReader  # the custom manifest
    sources: ProReadyReader | ProReadySources  # the manifest, or it and the listed video datasets
    roots: dict[str, str]  # every dataset root read ("" the manifest's), by dataset
    datasets: tuple[tuple[str, str], ...]  # the listed video datasets: (name, root)
    generation: GenerationConfig
    corrections: dict[str, Any]  # --corrections: sample id → its corrections
    n_corrections: int
    decisions: dict[str, list[dict[str, Any]]]  # review decisions by sample id
    violations_by_sample: dict[str, list[dict[str, Any]]]  # standing integrity violations
