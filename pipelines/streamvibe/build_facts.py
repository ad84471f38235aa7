"""The fact files StreamVibe-Bench's pipeline hands to the steps after it (``_build/``: see
:class:`~pipelines.common.transforms.BuildFacts`)."""

from __future__ import annotations

from pipelines.common.transforms import BuildFacts

CANDIDATES = BuildFacts("candidates")  # every candidate, versioned (the ledger, the pending-review state)
VIDEOS = BuildFacts("videos")  # the evaluation videos' facts (release sources, held-out check)
TRAIN_VIDEOS = BuildFacts("train_videos")  # the training videos' facts (its release sources)
