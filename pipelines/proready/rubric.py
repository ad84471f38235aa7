"""ProReady-QA's review rubric: what a reviewer checks of a QA pair and its evidence window
(StreamReady App. C, Human Refinement) and which parts of it they are shown.

Why in this folder: everything about a benchmark lives in its folder; the review commands find
the rubric through the benchmark (:attr:`pipelines.common.benchmark.Review.rubrics`).
"""

from __future__ import annotations

from annotation.rubrics import Criterion, Display, Rubric

PROREADY = Rubric(
    name="proready",
    benchmark="proready",
    title="ProReady-QA item review",
    source="StreamReady App. C (Human Refinement)",
    summary=(
        "Check each question-answer pair against its evidence window [t_s, t_e]. Ambiguous or "
        "trivial items, hallucinated cues and windows that do not match the evidence must be "
        "corrected (require revision) or removed (reject)."
    ),
    definitions=(
        "StreamReady App. C (Human Refinement): \u201cannotators review each QA pair and its proposed "
        "evidence window. They verify that the answer is not inferable before t_s, that the "
        "supporting cue truly disappears at t_e, and that the QA instance is strictly "
        "future-dependent. Ambiguous or trivial cases, hallucinated cues, or QA pairs whose "
        "evidence does not align with the timestamps are corrected or removed.\u201d"
    ),
    criteria=(
        Criterion("not_inferable_before_ts", "Not inferable before t_s",
                  "Nothing shown before t_s (including earlier turns) lets one infer the answer."),
        Criterion("cue_gone_at_te", "Cue gone at t_e",
                  "The supporting cue stays valid up to t_e and truly disappears at t_e."),
        Criterion("strictly_future_dependent", "Strictly future-dependent",
                  "When asked, the answer is not yet knowable; it needs evidence that appears "
                  "later in the video."),
    ),
    displays=(
        Display("video", "Long video", media=0),
        Display("turns", "Questions and answers (multi-turn)", key="turns", speaker_key="role"),
        Display("windows", "Evidence windows [t_s, t_e] per question (▶ jumps the video to t_s)",
                key="full_turns", start_key="t_s", end_key="t_e", text_key="answer"),
    ),
)

RUBRICS = (PROREADY,)
