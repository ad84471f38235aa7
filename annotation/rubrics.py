"""Review rubrics: what a reviewer checks, and which parts of a candidate they are shown.

Why rubrics are data: the label config (``annotation.label_config``), the integrity check of
pulled decisions (only these values are legal) and the Gemini reviewer's prompt all derive from
one definition, so a criterion cannot exist in the UI but not in the checks.

Every rubric shares the decision scale of StreamVibe App. B.3 — approve / require revision /
reject (``schemas.review.DECISIONS``) — plus its own criteria. A reviewer approves only when
every criterion holds (App. B.3), so an approval with an unticked criterion is reported as a
violation and not counted (``annotation.routing``).
"""

from __future__ import annotations

import html
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
    "a reference (StreamVibe App. B.3).",
}
# Keyboard shortcut per decision (Label Studio ``<Choice hotkey>``): one key press decides, so a
# reviewer working through a round keeps the hands on the keyboard. Digits, because Label
# Studio's own shortcuts use letters with modifiers (ctrl+enter submits).
DECISION_HOTKEYS: dict[str, str] = {"approve": "1", "revise": "2", "reject": "3"}
assert tuple(DECISION_LABELS) == DECISIONS == tuple(DECISION_HOTKEYS)

# The acceptance rule every rubric shares (StreamVibe App. B.3), shown on the project page.
ACCEPTANCE_RULE = (
    "The review unit is the complete candidate sample. Approve only when every applicable "
    "criterion is satisfied; a required correction counts as non-approval of the current version. "
    "A sample is retained only if all four reviewers approve the same final version (three "
    "approvals are insufficient); any objection means it is corrected and reviewed again by all "
    "four, or discarded, and changing an annotation invalidates approval of its earlier version. "
    "Unresolvable ambiguity or insufficient visual evidence requires exclusion rather than a "
    "guessed reference answer (StreamVibe App. B.3)."
)


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
    ``<Text>``), ``turns`` (a list of turns shown one per line, ``speaker @ time s: text``;
    each turn a dict whose ``speaker_key`` and ``text_key`` are used, other keys appended) or
    ``windows`` (a list of time windows shown by ``<Paragraphs>`` synced with the video
    ``media``: each entry's ``start_key``/``end_key`` — a field name, or ``field.i`` for an item
    of a list field — give the window in seconds, ``text_key`` the gold response; each window
    gets a play button that seeks the video to its start).
    """

    kind: str
    label: str
    key: str = ""
    media: int = 0
    speaker_key: str = "role"
    text_key: str = "text"
    start_key: str = ""
    end_key: str = ""


@dataclass(frozen=True)
class Rubric:
    name: str
    benchmark: str
    title: str
    source: str
    criteria: tuple[Criterion, ...]
    displays: tuple[Display, ...]
    summary: str = ""
    default_fps: float = 1.0
    definitions: str = ""

    @property
    def criterion_keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.criteria)

    @property
    def instructions(self) -> str:
        """The reviewer instructions for the project page (Label Studio ``expert_instruction``,
        rendered as HTML and shown before labelling): what is reviewed, the acceptance rule, each
        criterion with its meaning, the decisions and their keys. Built from our own strings,
        each escaped, so the HTML cannot be broken by a rubric text."""
        e = html.escape
        parts = [f"<h3>{e(self.title)}</h3>"]
        if self.summary:
            parts.append(f"<p>{e(self.summary)}</p>")
        if self.definitions:
            parts.append(f"<p><i>{e(self.definitions)}</i></p>")
        parts.append(f"<p><b>Acceptance rule.</b> {e(ACCEPTANCE_RULE)}</p>")
        parts.append("<p><b>Criteria</b> (tick each one that holds; source: "
                     f"{e(self.source)}):</p><ul>")
        parts += [f"<li>\u2022 <b>{e(c.label)}</b>: {e(c.hint)}</li>" for c in self.criteria]
        parts.append("</ul><p><b>Decision</b> (keyboard shortcut in brackets):</p><ul>")
        parts += [f"<li>\u2022 <b>{e(DECISION_LABELS[d])}</b> [{DECISION_HOTKEYS[d]}]: "
                  f"{e(DECISION_HINTS[d])}</li>" for d in DECISIONS]
        parts.append("</ul><p>Write in the comment what must change (required for a revision or "
                     "a rejection). Submit with the Submit button or ctrl+enter. Click the play "
                     "button next to an evidence window to jump the video to its start.</p>")
        return "".join(parts)

    def __post_init__(self) -> None:
        keys = self.criterion_keys
        if len(set(keys)) != len(keys):
            raise ValueError(f"rubric {self.name}: duplicate criterion keys")
        for d in self.displays:
            if d.kind not in {"video", "image", "text", "json", "turns", "windows"}:
                raise ValueError(f"rubric {self.name}: unknown display kind {d.kind!r}")
            if d.kind == "windows" and not (d.start_key and d.end_key):
                raise ValueError(f"rubric {self.name}: windows display {d.label!r} needs "
                                 "start_key and end_key")


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

RUBRICS: dict[str, Rubric] = {r.name: r for r in (STREAMVIBE, PROREADY, PROACTIVEBENCH_VSOD)}


def get_rubric(name: str) -> Rubric:
    try:
        return RUBRICS[name]
    except KeyError:
        raise KeyError(f"unknown rubric {name!r}; known: {sorted(RUBRICS)}") from None
