"""StreamVibe-Bench (StreamVibe paper): causal 1 FPS streams with timestamped intents and evidence points.

Construction (StreamVibe §3.3, App. B.2-B.3; ``python -m pipelines.streamvibe``, docs/streamvibe.md):
:mod:`~pipelines.streamvibe.sources` (manifest of task videos, task records, intent specs) →
:mod:`~pipelines.streamvibe.normalize` (real decodable duration, causal 1 FPS frames) →
:mod:`~pipelines.streamvibe.candidates` / :mod:`~pipelines.streamvibe.gemini` (rule-based and Gemini
candidate generators) → :mod:`~pipelines.streamvibe.validate` → :mod:`~pipelines.streamvibe.negatives`
→ :mod:`~pipelines.streamvibe.review` (versions, review gate) → :mod:`~pipelines.streamvibe.serialize`
(trajectory + pointwise records, allocation) → :mod:`~pipelines.streamvibe.quality` (great-expectations
suite); :mod:`~pipelines.streamvibe.pipeline` wires them in Beam, :mod:`~pipelines.streamvibe.build`
drives a build to the pending-review state or a release.

The training split (``--split train``; StreamVibe §3.4, App. B.4, docs/streamvibe.md §Training split):
:mod:`~pipelines.streamvibe.training` (SFT labels, RL rollout windows, Table 18 allocation),
:mod:`~pipelines.streamvibe.heldout` (source id and decoded-stream keys),
:mod:`~pipelines.streamvibe.mixture` (the external general-streaming sources, by reference) and
:mod:`~pipelines.streamvibe.train_release` (its manifest, reports and card).

:mod:`pipelines.streamvibe.scoring` implements the evaluation protocol of StreamVibe §3.5 / App. B.5
(timing P/R/F1 at ±τ with chronological one-to-one matching, FPR_near, ANS, Content-F1).
"""
