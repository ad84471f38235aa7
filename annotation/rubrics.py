"""Review rubrics: what a reviewer checks, and which parts of a candidate they are shown.

Why rubrics are data: the label config (``annotation.label_config``), the integrity check of
pulled decisions (only these values are legal) and the Gemini reviewer's prompt all derive from
one definition, so a criterion cannot exist in the UI but not in the checks.

Every rubric shares the decision scale of StreamVibe App. B.3 — approve / require revision /
reject (``schemas.review.DECISIONS``) — plus its own criteria. A reviewer approves only when
every criterion holds (App. B.3), so an approval with an unticked criterion is reported as a
violation and not counted (``annotation.pull``).
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
