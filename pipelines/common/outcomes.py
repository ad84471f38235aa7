"""Where every input of a build went: a pipeline's stages hand their outcomes to one
:class:`Outcomes` bundle, which counts, writes and (in the driver) balances them the same way for
every benchmark.

Why a bundle: each pipeline used to collect its own lists of rejected and filtered PCollections
and count tags and wire them to the writers by hand, four times over, and a stage whose outcome
was written but not counted (or counted twice) broke ``inputs = kept + filtered + rejected`` in
one benchmark only. As a datatrove filter returns keep or a reason and its exclusion writer does
the rest, a stage here says only what its outcomes are:

* :meth:`Outcomes.inputs` — what a stage listed (counted ``enumerated``);
* :meth:`Outcomes.kept` — what is released (counted ``kept``; the benchmark writes its records,
  whose folders and record types are its own);
* :meth:`Outcomes.filtered` — records left out with their reason (``filtered/``, the benchmark's
  filtered record type, counted ``filtered`` or ``<stage>_filtered``);
* :meth:`Outcomes.filtered_inputs` — inputs left out before they became records
  (``filtered_inputs/``);
* :meth:`Outcomes.rejected` — :class:`~core.errors.Rejection` s naming file and field
  (``rejected/``, counted ``<stage>_rejected``);
* :meth:`Outcomes.pending` — candidates waiting for review (counted ``pending``);
* :meth:`Outcomes.counted` — ``((group, stage), n)`` tags a stage counted itself (a reader
  counts what it listed and dropped as it lists).

:meth:`Outcomes.write` then writes every folder once and the counts (``_build/counts*.json``),
which the driver turns into the balance it checks (:mod:`pipelines.common.checks`). A training
split keeps its outcomes under ``<folder>/<split>`` (``folder=`` of each call).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import apache_beam as beam

from pipelines.common.transforms import (
    FILTERED_INPUTS,
    CountAs,
    CountOutcomes,
    WriteFilteredInputs,
    WriteRejections,
    WriteShardedParquet,
    outcome_group,
)
from schemas.core import RecordSchema


class Outcomes:
    """The outcomes of one pipeline (or one part of it that counts its own groups apart: ``part``,
    see :class:`~pipelines.common.transforms.CountOutcomes`); see the module doc."""

    def __init__(self, staging: str, filtered_schema: RecordSchema | None = None,
                 group_fn: Callable[[Any], str] = outcome_group, part: str = "",
                 label: str = "") -> None:
        self.staging = staging
        self.filtered_schema = filtered_schema
        self.group_fn = group_fn
        self.part = part
        self.label = label  # prefixes every step this bundle adds (two bundles in one pipeline)
        self._tags: list[Any] = []
        self._folders: dict[tuple[str, str], list[Any]] = {}  # (kind, folder) → PCollections
        self._labels: set[str] = set()

    def _step(self, name: str) -> str:
        label = f"{self.label}{name}"
        n = 2
        while label in self._labels:  # a second call for the same stage gets its own step
            label = f"{self.label}{name}{n}"
            n += 1
        self._labels.add(label)
        return label

    def _count(self, pcoll: Any, stage: str, group_fn: Callable[[Any], str] | None) -> None:
        title = "".join(part.capitalize() for part in stage.split("_"))
        self._tags.append(pcoll | self._step(f"Count{title}") >> CountAs(stage, group_fn or self.group_fn))

    def counted(self, tags: Any) -> None:
        self._tags.append(tags)

    def inputs(self, pcoll: Any, group_fn: Callable[[Any], str] | None = None) -> None:
        self._count(pcoll, "enumerated", group_fn)

    def kept(self, pcoll: Any, group_fn: Callable[[Any], str] | None = None) -> None:
        self._count(pcoll, "kept", group_fn)

    def pending(self, pcoll: Any, group_fn: Callable[[Any], str] | None = None) -> None:
        self._count(pcoll, "pending", group_fn)

    def rejected(self, pcoll: Any, stage: str | None, folder: str = "rejected",
                 group_fn: Callable[[Any], str] | None = None) -> None:
        """Rejections written to ``folder``; counted as ``<stage>_rejected`` (``stage`` None: the
        stage counted them itself, through :meth:`counted`)."""
        self._folders.setdefault(("rejected", folder), []).append(pcoll)
        if stage is not None:
            self._count(pcoll, f"{stage}_rejected", group_fn)

    def filtered(self, pcoll: Any, stage: str | None = "filtered", folder: str = "filtered",
                 group_fn: Callable[[Any], str] | None = None) -> None:
        """Records left out with their reason, written to ``folder`` as the benchmark's filtered
        record type; counted as ``stage`` (``filtered`` or ``<step>_filtered``; None: counted by
        the stage itself)."""
        self._folders.setdefault(("filtered", folder), []).append(pcoll)
        if stage is not None:
            self._count(pcoll, stage, group_fn)

    def filtered_inputs(self, pcoll: Any, stage: str | None = None, folder: str = FILTERED_INPUTS,
                        group_fn: Callable[[Any], str] | None = None) -> None:
        """Inputs left out before they became records (:class:`~pipelines.common.sources.Filtered`),
        written to ``folder``; counted as ``stage`` (None: by the stage that listed them)."""
        self._folders.setdefault(("filtered_inputs", folder), []).append(pcoll)
        if stage is not None:
            self._count(pcoll, stage, group_fn)

    def write(self) -> None:
        """Write every outcome folder and the counts; call once, after the last stage."""
        for (kind, folder), pcolls in sorted(self._folders.items()):
            title = "".join(p.capitalize() for p in folder.replace("/", "_").split("_"))
            merged = tuple(pcolls) if len(pcolls) > 1 else pcolls[0]
            if kind == "rejected":
                merged | self._step(f"Write{title}Rejections") >> WriteRejections(self.staging, folder)
            elif kind == "filtered_inputs":
                merged | self._step(f"Write{title}Inputs") >> WriteFilteredInputs(self.staging, folder)
            else:
                if self.filtered_schema is None:
                    raise ValueError("Outcomes: filtered records need the benchmark's filtered_schema")
                flat = merged if len(pcolls) == 1 else merged | self._step(f"All{title}") >> beam.Flatten()
                flat | self._step(f"Write{title}") >> WriteShardedParquet(
                    self.staging, lambda r, folder=folder: folder, self.filtered_schema, "filtered")
        tags = tuple(self._tags) if len(self._tags) > 1 else self._tags[0]
        tags | self._step("CountOutcomes") >> CountOutcomes(self.staging, self.part)
