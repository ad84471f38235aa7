"""ProReady-QA (seed 002 §4): long videos with future-dependent questions and evidence windows.

:mod:`pipelines.proready.ars` implements the Answer Readiness Score and effective accuracy
(seed 002 §4.3, Eq. 9–11, App. B.2).
"""
