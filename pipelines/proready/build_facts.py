"""The fact files ProReady-QA's pipeline hands to the steps after it (``_build/``: see
:class:`~pipelines.common.transforms.BuildFacts`)."""

from __future__ import annotations

from pipelines.common.transforms import BuildFacts

CANDIDATES = BuildFacts("candidates")  # every candidate (the pending-review state)
REVIEW_STATES = BuildFacts("review")  # each candidate's review state (the release's review report)
SOURCES = BuildFacts("sources")  # every source file read and its sha256 (the manifest)
