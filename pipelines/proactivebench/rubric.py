"""ProactiveBench's review rubric for the VSOD episodes, whose occluded frame and answer were
chosen by hand (ProactiveBench §3.2 and App. 0.A.2).

Why in this folder: everything about a benchmark lives in its folder; the review commands find
the rubric through the benchmark (:attr:`pipelines.common.benchmark.Review.rubrics`).
"""

from __future__ import annotations

from annotation.rubrics import Criterion, Display, Rubric

PROACTIVEBENCH_VSOD = Rubric(
    name="proactivebench_vsod",
    benchmark="proactivebench",
    title="ProactiveBench VSOD episode review (manual annotations)",
    source="ProactiveBench §3.2 (annotation process) and App. 0.A.2 (VSOD environment)",
    summary=(
        "VSOD has no category annotations: the fully occluded frame and the answer were chosen "
        "by hand. Reject items whose subject cannot be recognised (the paper discards them)."
    ),
    criteria=(
        Criterion("subject_fully_occluded", "Subject fully occluded in the first frame",
                  "In the initial frame the target subject is fully occluded, so the question is "
                  "unanswerable from it."),
        Criterion("reference_frame_answers", "Reference frame answers the question",
                  "Waiting for the occlusion to disappear or rewinding reaches the reference "
                  "frame, which shows the subject clearly."),
        Criterion("category_correct", "Correct category",
                  "The correct option (speaker name, number of people or event type) matches "
                  "the reference frame; a name only if the person is clearly recognisable."),
        Criterion("options_valid", "Options valid",
                  "Exactly one category option is correct, the distractors are wrong, and the "
                  "proactive suggestions (wait, rewind) are valid for this clip."),
    ),
    displays=(
        Display("image", "Initial frame (should be occluded)", media=0),
        Display("image", "Reference frame", media=1),
        Display("text", "Question", key="question"),
        Display("json", "Options and answer", key="options"),
    ),
)

RUBRICS = (PROACTIVEBENCH_VSOD,)
