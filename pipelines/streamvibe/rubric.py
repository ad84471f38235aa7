"""StreamVibe-Bench's review rubric: what each of the four reviewers checks of a candidate
(StreamVibe App. B.2, App. B.3 and Table 16) and which parts of it they are shown.

Why in this folder: everything about a benchmark lives in its folder; the review commands find
the rubric through the benchmark (:attr:`pipelines.common.benchmark.Review.rubrics`).
"""

from __future__ import annotations

from annotation.rubrics import Criterion, Display, Rubric

STREAMVIBE = Rubric(
    name="streamvibe",
    benchmark="streamvibe",
    title="StreamVibe-Bench candidate review",
    source="StreamVibe App. B.2 (annotation and provenance), App. B.3 and Table 16",
    summary=(
        "The review unit is the complete candidate: video, initial instruction, timestamped user "
        "turns, evidence windows, preferred response times and reference answers. Approve only "
        "when every criterion holds for this version; a required correction is a non-approval."
    ),
    definitions=(
        "StreamVibe §3.3: \u201cFour reviewers then independently verify the user requests and "
        "response timing, correcting or removing samples without sufficient evidence and retaining "
        "only those approved by all reviewers. The validated annotations are aligned to 1 FPS "
        "streams and converted into causal interaction sequences.\u201d"
    ),
    criteria=(
        Criterion("request_fidelity", "Request fidelity",
                  "The initial instruction and every timestamped user turn are represented "
                  "faithfully; for dynamic intents the active intent after each revision, "
                  "composition or interruption is the right one."),
        Criterion("visible_evidence", "Visible evidence",
                  "Each evidence point is supported by what is visible in the video; nothing is "
                  "guessed."),
        Criterion("timing", "Timing",
                  "Each acceptable window and preferred time is right: the evidence is visible by "
                  "then and it is still useful, using only frames and turns available by that "
                  "time (1 FPS causal)."),
        Criterion("assistance_content", "Assistance content",
                  "Each gold response is correct, helpful and consistent with the active request "
                  "and the visible evidence."),
    ),
    displays=(
        Display("video", "Video stream", media=0),
        Display("text", "Initial instruction", key="instruction"),
        Display("turns", "Timestamped user turns", key="turns", speaker_key="role"),
        Display("windows", "Evidence windows (▶ jumps the video to the window start; gold response)",
                key="evidence_points", start_key="window.0", end_key="window.1",
                text_key="gold_response"),
    ),
)

RUBRICS = (STREAMVIBE,)
