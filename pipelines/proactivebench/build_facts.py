"""The fact files ProactiveBench's pipeline hands to the steps after it (``_build/``: see
:class:`~pipelines.common.transforms.BuildFacts`)."""

from __future__ import annotations

from pipelines.common.transforms import BuildFacts

NOTES = BuildFacts("notes")  # notes per source file (the manifest)
SOURCES = BuildFacts("sources")  # every source file read and its sha256 (the manifest)
NEGATIVES = BuildFacts("negatives")  # the negative strategies used (the manifest)
# the evaluation items a training split is held out from
TRAIN_EVALUATION_SOURCES = BuildFacts("train_evaluation_sources")
TRAIN_SEQUENCES = BuildFacts("train_sequences")  # the training sequences' facts
TRAIN_HELD_OUT = BuildFacts("train_held_out")  # training items that matched an evaluation item
TRAIN_SOURCES = BuildFacts("train_sources")  # every training source file read and its sha256
