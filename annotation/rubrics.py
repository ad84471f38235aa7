"""Review rubrics: what a reviewer checks, and which parts of a candidate they are shown.

Why rubrics are data: the label config (``annotation.label_config``), the integrity check of
pulled decisions (only these values are legal) and the Gemini reviewer's prompt all derive from
one definition, so a criterion cannot exist in the UI but not in the checks.

Every rubric shares the decision scale of seed 001 App. B.3 — approve / require revision /
reject (``schemas.review.DECISIONS``) — plus its own criteria. A reviewer approves only when
every criterion holds (App. B.3), so an approval with an unticked criterion is reported as a
violation and not counted (``annotation.routing``).
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.review import DECISIONS

# Shown label for each decision value stored in the decision log (schemas.review.DECISIONS).
DECISION_LABELS: dict[str, str] = {
    "approve": "Approve",
    "revise": "Require revision",
    "reject": "Reject (exclude)",
}
DECISION_HINTS: dict[str, str] = {
    "approve": "Every criterion below holds for this exact version.",
    "revise": "Fixable: say what to correct in the comment; all four reviewers re-review the "
    "corrected version.",
    "reject": "Unresolvable ambiguity or insufficient visual evidence: exclude, never guess "
    "a reference (seed 001 App. B.3).",
}
assert tuple(DECISION_LABELS) == DECISIONS


@dataclass(frozen=True)
class Criterion:
    """One rubric criterion; ``key`` is what the decision log stores, ``label``/``hint`` what the
    reviewer reads."""

    key: str
    label: str
    hint: str


@dataclass(frozen=True)
class Display:
    """One part of the candidate shown to the reviewer.

    kind: ``video`` / ``image`` (``media`` index into ``Candidate.media``), ``text`` (a string
    content field, escaped by ``<Text>``), ``json`` (any content field, pretty-printed into a
    ``<Text>``) or ``paragraphs`` (a list of turns shown by ``<Paragraphs>``; each turn a dict
    whose ``speaker_key`` and ``text_key`` are used, other keys prefixed to the text).
    """

    kind: str
    label: str
    key: str = ""
    media: int = 0
    speaker_key: str = "role"
    text_key: str = "text"


@dataclass(frozen=True)
class Rubric:
    name: str
    benchmark: str
    title: str
    source: str
    criteria: tuple[Criterion, ...]
    displays: tuple[Display, ...]
    instructions: str = ""
    default_fps: float = 1.0

    @property
    def criterion_keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.criteria)

    def __post_init__(self) -> None:
        keys = self.criterion_keys
        if len(set(keys)) != len(keys):
            raise ValueError(f"rubric {self.name}: duplicate criterion keys")
        for d in self.displays:
            if d.kind not in {"video", "image", "text", "json", "paragraphs"}:
                raise ValueError(f"rubric {self.name}: unknown display kind {d.kind!r}")


STREAMVIBE = Rubric(
    name="streamvibe",
    benchmark="streamvibe",
    title="StreamVibe-Bench candidate review",
    source="seed 001 App. B.2 (annotation and provenance), App. B.3 and Table 16",
    instructions=(
        "The review unit is the complete candidate: video, initial instruction, timestamped user "
        "turns, evidence windows, preferred response times and reference answers. Approve only "
        "when every criterion holds for this version; a required correction is a non-approval."
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
        Display("paragraphs", "Timestamped user turns", key="turns", speaker_key="role"),
        Display("json", "Evidence points (window, preferred time, gold response)",
                key="evidence_points"),
    ),
)

PROREADY = Rubric(
    name="proready",
    benchmark="proready",
    title="ProReady-QA item review",
    source="seed 002 App. C (Human Refinement)",
    instructions=(
        "Check each question-answer pair against its evidence window [t_s, t_e]. Ambiguous or "
        "trivial items, hallucinated cues and windows that do not match the evidence must be "
        "corrected (require revision) or removed (reject)."
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
        Display("paragraphs", "Questions and answers (multi-turn)", key="turns",
                speaker_key="role"),
        Display("json", "Evidence windows [t_s, t_e] per question", key="evidence"),
    ),
)

PROACTIVEBENCH_VSOD = Rubric(
    name="proactivebench_vsod",
    benchmark="proactivebench",
    title="ProactiveBench VSOD episode review (manual annotations)",
    source="seed 000 §3.2 (annotation process) and App. 0.A.2 (VSOD environment)",
    instructions=(
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

RUBRICS: dict[str, Rubric] = {r.name: r for r in (STREAMVIBE, PROREADY, PROACTIVEBENCH_VSOD)}


def get_rubric(name: str) -> Rubric:
    try:
        return RUBRICS[name]
    except KeyError:
        raise KeyError(f"unknown rubric {name!r}; known: {sorted(RUBRICS)}") from None
