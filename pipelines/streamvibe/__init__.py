"""StreamVibe-Bench (seed 001): causal 1 FPS streams with timestamped intents and evidence points.

:mod:`pipelines.streamvibe.scoring` implements the evaluation protocol of seed 001 §3.5 / App. B.5
(timing P/R/F1 at ±τ with chronological one-to-one matching, FPR_near, ANS, Content-F1).
"""
