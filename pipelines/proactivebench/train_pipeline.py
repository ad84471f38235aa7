"""The training split's Beam steps (ProactiveBench §5), added beside the evaluation pipeline.

```
evaluation items ─→ HeldOutKeys (id + content key → evaluation item) ─┐ side input
ReadTrainSources (ReadSources) → HeldOut ───────────────────────────→ TrainRows → WriteTrainRows
                                   └─ filtered_inputs/train (rule "held out")     grpo/<env>/train-*.parquet
```

Why a PTransform of its own over the evaluation items, not steps inside
:func:`pipeline.build_pipeline`: the training split reads its own sources with the same reader
contract (:class:`~pipelines.common.transforms.ReadSources`), needs from the evaluation pipeline
only the items it loaded (their held-out keys), and writes its own outcomes — so the evaluation
pipeline stays as it is (its files keep their bytes) and either side can change its reading
without touching the other.

Outcomes of the training split are counted in groups ``train/<environment>`` (``_build/
counts-train.json``; ``ReadSources(group_prefix="train/")`` groups what the readers yield) and
written under ``rejected/train/`` and ``filtered_inputs/train/``. The training sources are read
in a stage of their own: their readers share environment names with the evaluation's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.pvalue import AsDict, TaggedOutput

from core.blobs import blob_root
from core.errors import BadInput, Rejection
from pipelines.common.outcomes import Outcomes
from pipelines.common.sources import SourceItem, SourceReader
from pipelines.common.transforms import (
    FILTERED_INPUTS,
    REJECTED,
    ReadSources,
    WriteShardedParquet,
)
from pipelines.proactivebench import heldout
from pipelines.proactivebench.build_facts import (
    TRAIN_EVALUATION_SOURCES,
    TRAIN_HELD_OUT,
    TRAIN_SEQUENCES,
    TRAIN_SOURCES,
)
from pipelines.proactivebench.episodes import BuildConfig, build_episode
from pipelines.proactivebench.pipeline import miner_function, vocabulary_for
from pipelines.proactivebench.selfcheck import self_check
from pipelines.proactivebench.training import RowsConfig, training_rows
from schemas.proactivebench import TRAIN_PREFIX, TRAIN_ROW, TRAIN_SPLIT

BENCHMARK = "proactivebench"
ROWS_FOLDER = "grpo"  # grpo/<environment>/train-*.parquet: the card's config `grpo`
SEQUENCES = "sequences"
MATCHES = "matches"


@dataclass(frozen=True)
class TrainPipelineConfig:
    staging: str
    build: BuildConfig
    rows: RowsConfig
    clip: dict[str, Any] | None = None  # the evaluation's CLIP miner settings (COCO negatives)


class HoldOut(beam.DoFn):
    """A training item that matches an evaluation item by source id or content → filtered input
    (rule ``held out``, :mod:`pipelines.proactivebench.heldout`); the others pass."""

    def process(self, item: SourceItem, held: dict[str, str]):
        found = heldout.match(item, held)
        if found is None:
            yield item
            return
        filtered, matches = found
        yield TaggedOutput(FILTERED_INPUTS, filtered)
        for m in matches:
            yield TaggedOutput(MATCHES, m)


class BuildTrainingRows(beam.DoFn):
    """SourceItem → its sequence, built and self-checked as an evaluation episode → rows;
    unusable items become rejections of the training group (stage ``build`` / ``self_check``)."""

    def __init__(self, build: BuildConfig, rows: RowsConfig, clip: dict[str, Any] | None) -> None:
        self.build = build
        self.rows = rows
        self.clip = clip
        self.miner = None

    def setup(self) -> None:
        self.miner = miner_function(self.clip)

    def process(self, item: SourceItem, base_vocab: dict):
        group = TRAIN_PREFIX + item.environment
        try:
            episode = build_episode(item, vocabulary_for(item, base_vocab), self.build, self.miner)
        except BadInput as err:
            yield TaggedOutput(REJECTED, Rejection.from_bad_input(
                err, benchmark=BENCHMARK, environment=group, stage="build", item_id=item.source_id))
            return
        reason = self_check(episode)
        if reason is not None:
            yield TaggedOutput(REJECTED, Rejection(
                item_id=item.source_id, benchmark=BENCHMARK, environment=group, stage="self_check",
                source_file=episode["frame_sources"][0].split("#")[0], field="states", reason=reason))
            return
        rows, summary = training_rows(episode, item.content_sha256, self.rows)
        yield from rows
        yield TaggedOutput(SEQUENCES, dict(summary, environment=group))


def _evaluation_keys(item: SourceItem, envs: frozenset[str]) -> list[tuple[str, str]]:
    """(held-out key, evaluation item) pairs of an evaluation item of a training environment."""
    if item.environment not in envs:
        return []
    return [(k, f"{item.environment}/{item.source_id}") for k in heldout.keys(item)]


class BuildTrainingSplit(beam.PTransform):
    """Evaluation items (the PCollection :func:`pipeline.build_pipeline` returns) → the training
    split under ``staging`` (module doc)."""

    def __init__(self, readers: dict[str, SourceReader], vocab: dict[str, list[str]],
                 cfg: TrainPipelineConfig) -> None:
        super().__init__()
        self.readers = readers
        self.vocab = vocab
        self.cfg = cfg

    def expand(self, evaluation_items):
        cfg, p = self.cfg, evaluation_items.pipeline
        staging, blobs = cfg.staging, blob_root(cfg.staging)
        envs = frozenset(self.readers)
        held = (
            evaluation_items
            | "HeldOutKeys" >> beam.FlatMap(_evaluation_keys, envs)
            | "OneItemPerKey" >> beam.CombinePerKey(min)  # deterministic if two items share a key
        )
        (
            evaluation_items
            | "EvaluationSources" >> beam.Filter(lambda it: it.environment in envs)
            | "EvaluationRecords" >> beam.Map(heldout.evaluation_record)
            | "WriteEvaluationSources" >> TRAIN_EVALUATION_SOURCES.write(staging)
        )
        read = p | "ReadTrainSources" >> ReadSources(self.readers, blobs, group_prefix=TRAIN_PREFIX)
        outcomes = Outcomes(staging, part=TRAIN_SPLIT, label="Train")
        outcomes.counted(read["counts"])  # what the readers listed, left out and could not load
        outcomes.rejected(read["listing_rejected"], None, f"{REJECTED}/{TRAIN_SPLIT}")
        outcomes.rejected(read["load_rejected"], None, f"{REJECTED}/{TRAIN_SPLIT}")
        outcomes.filtered_inputs(read["listing_filtered"], folder=f"{FILTERED_INPUTS}/{TRAIN_SPLIT}")
        train_items = read["items"]
        checked = train_items | "HeldOut" >> beam.ParDo(HoldOut(), held=AsDict(held)).with_outputs(
            FILTERED_INPUTS, MATCHES, main="items")
        vocabularies = p | "TrainVocabularies" >> beam.Create(sorted(self.vocab.items()), reshuffle=False)
        built = checked.items | "TrainRows" >> beam.ParDo(
            BuildTrainingRows(cfg.build, cfg.rows, cfg.clip), base_vocab=AsDict(vocabularies)
        ).with_outputs(REJECTED, SEQUENCES, main="rows")
        outcomes.filtered_inputs(checked[FILTERED_INPUTS], "held_out_filtered",
                                 folder=f"{FILTERED_INPUTS}/{TRAIN_SPLIT}")
        outcomes.rejected(built[REJECTED], None, f"{REJECTED}/{TRAIN_SPLIT}")
        outcomes.counted(built[REJECTED] | "CountTrainRejected" >> beam.Map(
            lambda r: ((r.environment, f"{r.stage}_rejected"), 1)))  # its stage: build / self_check
        outcomes.kept(built[SEQUENCES])  # a sequence is the unit; it gives several rows
        _ = built.rows | "WriteTrainRows" >> WriteShardedParquet(
            staging, lambda r: f"{ROWS_FOLDER}/{r['environment']}", TRAIN_ROW, TRAIN_SPLIT)
        outcomes.write()
        _ = built[SEQUENCES] | "WriteSequences" >> TRAIN_SEQUENCES.write(staging)
        _ = checked[MATCHES] | "WriteMatches" >> TRAIN_HELD_OUT.write(staging)
        _ = (
            train_items
            | "TrainSourceFiles" >> beam.FlatMap(
                lambda it: [f"{it.environment}\t{path}\t{sha}" for path, sha in it.source_files])
            | "DistinctTrainSourceFiles" >> beam.Distinct()
            | "TrainSourceRecords" >> beam.Map(lambda line: dict(zip(
                ("environment", "file", "sha256"), line.split("\t"), strict=True)))
            | "WriteTrainSources" >> TRAIN_SOURCES.write(staging)
        )
        return built.rows
