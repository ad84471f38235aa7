"""Label Studio label config generated from a rubric, and the encode/parse of its results.

Why generated: the choices a reviewer can click and the values ``pull`` accepts must be the same
set (Label Studio accepts *any* choice value or ``from_name`` through the API — LABEL_STUDIO.md),
so both come from :mod:`annotation.rubrics`.

Safety: candidate text never enters the XML. It is passed as task data and shown with
``<Text>`` (which escapes HTML; ``<HyperText>`` would keep ``<img>``/``<form>``), JSON as a
pretty-printed string (``<Text>`` rejects a dict), multi-turn lists via ``<Paragraphs>``; only
rubric strings — ours — are written into attributes, through ``quoteattr``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import quoteattr

from annotation.rubrics import DECISION_HINTS, DECISION_LABELS, Rubric
from schemas.review import DECISIONS

CANDIDATE_TAG = "candidate"  # the <Text> every control points at (the full review unit)
CONTROL_NAMES = ("decision", "criteria", "comment")
_CONTROL_TYPES = {"decision": "choices", "criteria": "choices", "comment": "textarea"}


class InvalidDecision(ValueError):
    """An annotation result that is not a legal decision under the rubric."""


def _var(display_key: str) -> str:
    return "show_" + re.sub(r"[^A-Za-z0-9_]", "_", display_key)


def build_label_config(rubric: Rubric) -> str:
    """The ``<View>`` for ``rubric``: the candidate's media and fields, the full candidate JSON,
    then decision (approve / require revision / reject), criteria checkboxes and a comment.

    Choices carry ``alias`` = the stored value (``approve``, criterion keys), so the decision log
    is independent of wording shown to reviewers."""
    a = quoteattr
    out = ["<View>", f"  <Header value={a(rubric.title)} size=\"3\"/>"]
    if rubric.instructions:
        out.append(f"  <Header value={a(rubric.instructions)} size=\"6\"/>")
    out.append('  <Text name="identity" value="$identity"/>')
    for i, d in enumerate(rubric.displays):
        out.append(f"  <Header value={a(d.label)} size=\"5\"/>")
        if d.kind == "video":
            out.append(f'  <Video name="media_{d.media}" value="$media_{d.media}" '
                       'frameRate="$fps"/>')
        elif d.kind == "image":
            out.append(f'  <Image name="media_{d.media}" value="$media_{d.media}" '
                       'zoom="true" zoomControl="true"/>')
        elif d.kind == "paragraphs":
            out.append(f'  <Paragraphs name="p{i}_{_var(d.key)}" value="${_var(d.key)}" '
                       'nameKey="speaker" textKey="text" layout="dialogue"/>')
        else:  # text / json
            out.append(f'  <Text name="t{i}_{_var(d.key)}" value="${_var(d.key)}"/>')
    out.append('  <Header value="Complete candidate (the review unit)" size="5"/>')
    out.append(f'  <Text name="{CANDIDATE_TAG}" value="$candidate"/>')
    out.append('  <Header value="Decision" size="4"/>')
    out.append(f'  <Choices name="decision" toName="{CANDIDATE_TAG}" choice="single-radio" '
               'required="true" showInline="true">')
    for value in DECISIONS:
        out.append(f"    <Choice value={a(DECISION_LABELS[value])} alias={a(value)} "
                   f"hint={a(DECISION_HINTS[value])}/>")
    out.append("  </Choices>")
    out.append('  <Header value="Criteria that hold (tick each one; approve only if all hold)" '
               'size="5"/>')
    out.append(f'  <Choices name="criteria" toName="{CANDIDATE_TAG}" choice="multiple">')
    for c in rubric.criteria:
        out.append(f"    <Choice value={a(c.label)} alias={a(c.key)} hint={a(c.hint)}/>")
    out.append("  </Choices>")
    out.append(f'  <TextArea name="comment" toName="{CANDIDATE_TAG}" rows="3" editable="true" '
               'maxSubmissions="1" placeholder="What must change (required for revise/reject)"/>')
    out.append("</View>")
    return "\n".join(out)


def _turns(value: Any, d: Any) -> list[dict[str, str]]:
    """Turns for ``<Paragraphs>``: speaker (with time when present) and text; other keys are
    appended as JSON so nothing in the review unit is hidden."""
    if not isinstance(value, list) or not value:
        return [{"speaker": "-", "text": "(none)"}]
    out = []
    for turn in value:
        if not isinstance(turn, dict):
            out.append({"speaker": "", "text": str(turn)})
            continue
        speaker = str(turn.get(d.speaker_key, ""))
        for tkey in ("time", "t", "timestamp"):
            if tkey in turn:
                speaker = f"{speaker} @ {turn[tkey]}s".strip()
                break
        rest = {k: v for k, v in turn.items()
                if k not in {d.speaker_key, d.text_key, "time", "t", "timestamp"}}
        text = str(turn.get(d.text_key, ""))
        if rest:
            text += "  " + json.dumps(rest, sort_keys=True, ensure_ascii=False)
        out.append({"speaker": speaker, "text": text})
    return out


def display_data(content: dict[str, Any], media_urls: list[str], rubric: Rubric) -> dict[str, Any]:
    """The task-data values the label config's ``$variables`` read (every one must exist, or the
    import is a 400)."""
    data: dict[str, Any] = {}
    for d in rubric.displays:
        if d.kind in {"video", "image"}:
            if d.media >= len(media_urls):
                raise ValueError(f"rubric {rubric.name} shows media #{d.media} "
                                 f"({d.label}) but the candidate has {len(media_urls)} media")
            data[f"media_{d.media}"] = media_urls[d.media]
        elif d.kind == "paragraphs":
            data[_var(d.key)] = _turns(content.get(d.key), d)
        elif d.kind == "json":
            v = content.get(d.key)
            data[_var(d.key)] = ("(none)" if v is None
                                 else json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False))
        else:
            v = content.get(d.key)
            data[_var(d.key)] = "(none)" if v is None else str(v)
    if any(d.kind == "video" for d in rubric.displays):
        fps = content.get("fps", rubric.default_fps)
        data["fps"] = float(fps)
    return data


def build_result(decision: str, criteria: list[str] | tuple[str, ...] = (), comment: str = ""
                 ) -> list[dict[str, Any]]:
    """The annotation ``result`` the UI produces for this decision (used by scripted reviewers
    and the benchmark; the UI itself stores the same shape)."""
    out: list[dict[str, Any]] = [
        {"from_name": "decision", "to_name": CANDIDATE_TAG, "type": "choices",
         "value": {"choices": [decision]}},
    ]
    if criteria:
        out.append({"from_name": "criteria", "to_name": CANDIDATE_TAG, "type": "choices",
                    "value": {"choices": list(criteria)}})
    if comment:
        out.append({"from_name": "comment", "to_name": CANDIDATE_TAG, "type": "textarea",
                    "value": {"text": [comment]}})
    return out


@dataclass(frozen=True)
class ParsedDecision:
    decision: str
    criteria: tuple[str, ...]
    comment: str


def parse_result(result: Any, rubric: Rubric) -> ParsedDecision:
    """Strictly parse one annotation result; raise :class:`InvalidDecision` naming the problem.

    Only the three controls of the generated config are legal, each at most once, with rubric
    values only — Label Studio itself would store anything."""
    if not isinstance(result, list):
        raise InvalidDecision("result is not a list")
    seen: dict[str, dict[str, Any]] = {}
    for item in result:
        if not isinstance(item, dict):
            raise InvalidDecision("result item is not an object")
        name = item.get("from_name")
        if name not in CONTROL_NAMES:
            raise InvalidDecision(f"unknown control {str(name)[:40]!r}")
        if name in seen:
            raise InvalidDecision(f"control {name!r} appears twice")
        if item.get("to_name") != CANDIDATE_TAG or item.get("type") != _CONTROL_TYPES[name]:
            raise InvalidDecision(f"control {name!r} has wrong to_name/type")
        if not isinstance(item.get("value"), dict):
            raise InvalidDecision(f"control {name!r} has no value")
        seen[name] = item["value"]
    if "decision" not in seen:
        raise InvalidDecision("no decision")
    choices = seen["decision"].get("choices")
    if not isinstance(choices, list) or len(choices) != 1 or choices[0] not in DECISIONS:
        raise InvalidDecision(f"decision {str(choices)[:60]} is not one of {list(DECISIONS)}")
    crit = seen.get("criteria", {}).get("choices", [])
    if not isinstance(crit, list) or not all(isinstance(c, str) for c in crit):
        raise InvalidDecision("criteria are not a list of strings")
    unknown = [c for c in crit if c not in rubric.criterion_keys]
    if unknown:
        raise InvalidDecision(f"criteria {[u[:40] for u in unknown]} not in rubric {rubric.name}")
    if len(set(crit)) != len(crit):
        raise InvalidDecision("a criterion is ticked twice")
    text = seen.get("comment", {}).get("text", [])
    if isinstance(text, str):
        text = [text]
    if not isinstance(text, list) or not all(isinstance(t, str) for t in text):
        raise InvalidDecision("comment is not text")
    ordered = tuple(k for k in rubric.criterion_keys if k in crit)  # rubric order, stable
    return ParsedDecision(choices[0], ordered, "\n".join(text))
