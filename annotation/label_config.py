"""Label Studio label config generated from a rubric, and the encode/parse of its results.

Why generated: the choices a reviewer can click and the values ``pull`` accepts must be the same
set (Label Studio accepts *any* choice value or ``from_name`` through the API — docs/label_studio.md),
so both come from :mod:`annotation.rubrics`.

Safety: candidate text never enters the XML. It is passed as task data and shown with
``<Text>`` (which escapes HTML; ``<HyperText>`` would keep ``<img>``/``<form>``), JSON as a
pretty-printed string (``<Text>`` rejects a dict), turns as lines of text, evidence windows via
``<Paragraphs>``; only rubric strings — ours — are written into attributes, through
``quoteattr``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import quoteattr

from annotation.rubrics import DECISION_HINTS, DECISION_HOTKEYS, DECISION_LABELS, Display, Rubric
from schemas.review import DECISIONS

CANDIDATE_TAG = "candidate"  # the <Text> every control points at (the full review unit)
CONTROL_NAMES = ("decision", "criteria", "comment")
_CONTROL_TYPES = {"decision": "choices", "criteria": "choices", "comment": "textarea"}

# Layout (our strings only, never candidate text). Measured in Chromium against Label Studio
# 1.23 at 1366x768 with its task list and side panel open, which leave ~775 px for the task:
# the video's control bar needs 520 px, so the media column is 520 px and the decision column
# 220 px; both fit side by side and the decision and criteria sit above the fold.
VIDEO_HEIGHT = 240
ROW_STYLE = "display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start"
LEFT_STYLE = "flex: 1 1 520px; min-width: 520px"
RIGHT_STYLE = "flex: 1 1 230px; min-width: 220px"
HELP_STYLE = "margin: 4px 0 12px 0; color: #555"
HELP_LINE_STYLE = "font-weight: normal; font-size: 13px; line-height: 1.35; margin: 2px 0"
# <Text> collapses white space; the turns (one per line) and JSON (indented) need it kept.
PRE_STYLE = "white-space: pre-wrap"
JSON_STYLE = "white-space: pre-wrap; font-family: monospace; font-size: 12px"


class InvalidDecision(ValueError):
    """An annotation result that is not a legal decision under the rubric."""


def _var(display_key: str, prefix: str = "show_") -> str:
    return prefix + re.sub(r"[^A-Za-z0-9_]", "_", display_key)


def _data_var(d: Display) -> str:
    """Task-data key of a display. Windows get their own prefix: they are a list, where a
    ``json`` display of the same key is a string, and one key must never change type."""
    return _var(d.key, "win_" if d.kind == "windows" else "show_")


def _windows_name(i: int, d: Display) -> str:
    return f"w{i}_{_data_var(d)}"


def build_label_config(rubric: Rubric) -> str:
    """The ``<View>`` for ``rubric``: a top row with the candidate's media and evidence windows on
    the left and the decision (approve / require revision / reject, keys 1-3), the criteria
    checkboxes and the comment on the right; below, the candidate's text fields, what each
    criterion means, and the complete candidate JSON.

    Why this layout: at 1366x768 (a common laptop) a reviewer sees the video, the first windows,
    the decision and the criteria without scrolling. Why no ``<Paragraphs>`` below the fold:
    Label Studio focuses the first phrase of every ``<Paragraphs>`` when the task opens, and the
    browser scrolls the page to the last one focused — turns are therefore ``<Text>`` lines, and
    the only ``<Paragraphs>`` are the windows, which sit in the top row. A ``windows`` display is
    a ``<Paragraphs>`` synced with its video (the video as ``audioUrl``, one sync group): each
    window's play button seeks the video to the window start — the one jump Label Studio 1.23
    offers from a list of times (``<TimelineLabels>`` would store regions in the annotation
    result, which :func:`parse_result` rightly refuses).

    Choices carry ``alias`` = the stored value (``approve``, criterion keys), so the decision log
    is independent of wording shown to reviewers."""
    a = quoteattr
    synced = {d.media for d in rubric.displays if d.kind == "windows"}
    left: list[str] = []
    below: list[str] = []
    for i, d in enumerate(rubric.displays):
        if d.kind == "video":
            sync = f' sync="sync_media_{d.media}"' if d.media in synced else ""
            left.append(f'      <Video name="media_{d.media}" value="$media_{d.media}" '
                        f'frameRate="$fps" height="{VIDEO_HEIGHT}"{sync}/>')
        elif d.kind == "image":
            left.append(f"      <Header value={a(d.label)} size=\"6\"/>")
            left.append(f'      <Image name="media_{d.media}" value="$media_{d.media}" '
                        'zoom="true" zoomControl="true"/>')
        elif d.kind == "windows":
            left.append(f"      <Header value={a(d.label)} size=\"6\"/>")
            left.append(f'      <Paragraphs name="{_windows_name(i, d)}" value="${_data_var(d)}" '
                        f'audioUrl="$media_{d.media}" sync="sync_media_{d.media}" '
                        'nameKey="speaker" textKey="text" layout="dialogue"/>')
        else:  # text / turns / json, full width below the top row
            below.append(f"  <Header value={a(d.label)} size=\"5\"/>")
            text = f'<Text name="t{i}_{_var(d.key)}" value="${_var(d.key)}"/>'
            style = {"turns": PRE_STYLE, "json": JSON_STYLE}.get(d.kind)
            below.append(f'  <View style="{style}">{text}</View>' if style else f"  {text}")

    right = ['      <Header value="Decision (keys 1 / 2 / 3)" size="5"/>',
             f'      <Choices name="decision" toName="{CANDIDATE_TAG}" choice="single-radio" '
             'required="true">']
    for value in DECISIONS:
        right.append(f"        <Choice value={a(DECISION_LABELS[value])} alias={a(value)} "
                     f"hint={a(DECISION_HINTS[value])} hotkey={a(DECISION_HOTKEYS[value])}/>")
    right.append("      </Choices>")
    right.append('      <Header value="Criteria that hold (approve only if all hold)" size="6"/>')
    right.append(f'      <Choices name="criteria" toName="{CANDIDATE_TAG}" choice="multiple">')
    for c in rubric.criteria:
        right.append(f"        <Choice value={a(c.label)} alias={a(c.key)} hint={a(c.hint)}/>")
    right.append("      </Choices>")
    right.append(f'      <TextArea name="comment" toName="{CANDIDATE_TAG}" rows="3" editable="true" '
                 'maxSubmissions="1" showSubmitButton="false" placeholder="Comment: what must '
                 'change (required for revise/reject)"/>')

    out = ["<View>", f"  <Header value={a(rubric.title)} size=\"4\"/>",
           '  <Text name="identity" value="$identity"/>', f'  <View style="{ROW_STYLE}">']
    if left:
        out += [f'    <View style="{LEFT_STYLE}">', *left, "    </View>"]
    out += [f'    <View style="{RIGHT_STYLE}">', *right, "    </View>", "  </View>", *below]
    out.append('  <Header value="What the criteria mean" size="5"/>')
    out.append(f'  <View style="{HELP_STYLE}">')
    if rubric.summary:
        out.append(f"    <Header value={a(rubric.summary)} size=\"6\" style=\"{HELP_LINE_STYLE}\"/>")
    for c in rubric.criteria:
        out.append(f"    <Header value={a(c.label + ': ' + c.hint)} size=\"6\" "
                   f'style="{HELP_LINE_STYLE}"/>')
    out.append("  </View>")
    out.append('  <Header value="Complete candidate (the review unit)" size="5"/>')
    out.append(f'  <View style="{JSON_STYLE}"><Text name="{CANDIDATE_TAG}" value="$candidate"/></View>')
    out.append("</View>")
    return "\n".join(out)


def _value(v: Any) -> str:
    """One field value as a reader writes it: numbers plain, booleans yes/no, text as is, lists
    and mappings compact."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float, str)):
        return str(v)
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


def _details(fields: dict[str, Any]) -> str:
    """The fields of a turn or window not shown elsewhere, as ``key: value`` pairs — readable,
    and nothing of the review unit is hidden."""
    return " · ".join(f"{k}: {_value(v)}" for k, v in sorted(fields.items()))


def _turns(value: Any, d: Display) -> str:
    """Turns as lines of text: ``speaker @ t s: text``, then the turn's other fields."""
    if not isinstance(value, list) or not value:
        return "(none)"
    lines = []
    for turn in value:
        if not isinstance(turn, dict):
            lines.append(str(turn))
            continue
        speaker = str(turn.get(d.speaker_key, ""))
        for tkey in ("time", "t", "timestamp"):
            if tkey in turn:
                speaker = f"{speaker} @ {_value(turn[tkey])} s".strip()
                break
        rest = {k: v for k, v in turn.items()
                if k not in {d.speaker_key, d.text_key, "time", "t", "timestamp"}}
        line = f"{speaker}: {turn.get(d.text_key, '')}"
        lines.append(line + (f"  ({_details(rest)})" if rest else ""))
    return "\n".join(lines)


def _field(entry: dict[str, Any], path: str) -> Any:
    """``entry[path]``, or ``entry[name][i]`` for ``name.i`` (e.g. ``window.0``); None if absent."""
    name, _, idx = path.partition(".")
    v = entry.get(name)
    if idx:
        try:
            return v[int(idx)]  # type: ignore[index]
        except (TypeError, IndexError, ValueError):
            return None
    return v


def _seconds(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def _windows(value: Any, d: Display) -> list[dict[str, Any]]:
    """Windows for a synced ``<Paragraphs>``: ``start``/``end`` in seconds (Label Studio seeks
    the synced video to ``start`` from the window's play button), the window's times in the
    speaker line so they are readable without playing, the gold response as text and every
    other key appended as ``key: value`` pairs so nothing of the review unit is hidden. A window
    without numeric times is still listed, just without a play button."""
    if not isinstance(value, list) or not value:
        return [{"speaker": "-", "text": "(none)"}]
    used = {d.start_key.partition(".")[0], d.end_key.partition(".")[0], d.text_key, "id"}
    out: list[dict[str, Any]] = []
    for n, entry in enumerate(value, start=1):
        if not isinstance(entry, dict):
            out.append({"speaker": f"#{n}", "text": str(entry)})
            continue
        start, end = _seconds(_field(entry, d.start_key)), _seconds(_field(entry, d.end_key))
        label = str(entry.get("id", f"#{n}"))
        when = (f"{start:.1f} s \u2013 {end:.1f} s" if start is not None and end is not None
                else "no valid window")
        text = str(entry.get(d.text_key, ""))
        rest = {k: v for k, v in entry.items() if k not in used}
        if rest:
            text += f"  ({_details(rest)})"
        row: dict[str, Any] = {"speaker": f"{label}  [{when}]", "text": text}
        if start is not None and end is not None:
            row.update(start=start, end=max(end, start))
        out.append(row)
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
        elif d.kind == "turns":
            data[_var(d.key)] = _turns(content.get(d.key), d)
        elif d.kind == "windows":
            data[_data_var(d)] = _windows(content.get(d.key), d)
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
