"""Label Studio label config generated from a rubric, and the encode/parse of its results.

Why generated: the choices a reviewer can click and the values ``pull`` accepts must be the same
set (Label Studio accepts *any* choice value or ``from_name`` through the API — docs/label_studio.md),
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

from annotation.rubrics import DECISION_HINTS, DECISION_HOTKEYS, DECISION_LABELS, Display, Rubric
from schemas.review import DECISIONS

CANDIDATE_TAG = "candidate"  # the <Text> every control points at (the full review unit)
CONTROL_NAMES = ("decision", "criteria", "comment")
_CONTROL_TYPES = {"decision": "choices", "criteria": "choices", "comment": "textarea"}

# Layout (our strings only, never candidate text): two columns that wrap on narrow windows, a
# video small enough that the decision stays on screen at 1280x800.
VIDEO_HEIGHT = 320
ROW_STYLE = "display: flex; flex-wrap: wrap; gap: 20px; align-items: flex-start"
LEFT_STYLE = "flex: 3 1 540px; min-width: 540px"  # the video's control bar needs 540 px
RIGHT_STYLE = "flex: 2 1 300px; min-width: 280px"
HELP_STYLE = "margin: 4px 0 12px 0; color: #555"
HELP_LINE_STYLE = "font-weight: normal; font-size: 13px; line-height: 1.35; margin: 2px 0"
SUMMARY_STYLE = "font-weight: normal; font-size: 14px; line-height: 1.4"


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
    """The ``<View>`` for ``rubric``: the candidate's media and evidence windows on the left, its
    text fields and the decision (approve / require revision / reject, keys 1-3) and the criteria
    checkboxes with their help texts on the right, a comment and the full candidate JSON below.

    Why this layout: at a normal window size (1280-1440 px wide) a reviewer sees the video, the
    windows and the decision without scrolling. A ``windows`` display is a ``<Paragraphs>``
    synced with its video (``sync`` both ways, the video as ``audioUrl``): each window's play
    button seeks the video to the window start — the one jump Label Studio 1.23 offers from a
    list of times (``<TimelineLabels>`` would store regions in the annotation result, which
    :func:`parse_result` rightly refuses).

    Choices carry ``alias`` = the stored value (``approve``, criterion keys), so the decision log
    is independent of wording shown to reviewers."""
    a = quoteattr
    synced = {d.media: _windows_name(i, d) for i, d in reversed(list(enumerate(rubric.displays)))
              if d.kind == "windows"}
    left: list[str] = []
    right: list[str] = []
    for i, d in enumerate(rubric.displays):
        col = left if d.kind in {"video", "image", "windows"} else right
        col.append(f"      <Header value={a(d.label)} size=\"5\"/>")
        if d.kind == "video":
            sync = f' sync="{synced[d.media]}"' if d.media in synced else ""
            col.append(f'      <Video name="media_{d.media}" value="$media_{d.media}" '
                       f'frameRate="$fps" height="{VIDEO_HEIGHT}"{sync}/>')
        elif d.kind == "image":
            col.append(f'      <Image name="media_{d.media}" value="$media_{d.media}" '
                       'zoom="true" zoomControl="true"/>')
        elif d.kind == "windows":
            col.append(f'      <Paragraphs name="{_windows_name(i, d)}" value="${_data_var(d)}" '
                       f'audioUrl="$media_{d.media}" sync="media_{d.media}" nameKey="speaker" '
                       'textKey="text" layout="dialogue"/>')
        elif d.kind == "paragraphs":
            col.append(f'      <Paragraphs name="p{i}_{_var(d.key)}" value="${_var(d.key)}" '
                       'nameKey="speaker" textKey="text" layout="dialogue"/>')
        else:  # text / json
            col.append(f'      <Text name="t{i}_{_var(d.key)}" value="${_var(d.key)}"/>')

    right.append('      <Header value="Decision (keys 1 / 2 / 3)" size="4"/>')
    right.append(f'      <Choices name="decision" toName="{CANDIDATE_TAG}" choice="single-radio" '
                 'required="true" showInline="true">')
    for value in DECISIONS:
        right.append(f"        <Choice value={a(DECISION_LABELS[value])} alias={a(value)} "
                     f"hint={a(DECISION_HINTS[value])} hotkey={a(DECISION_HOTKEYS[value])}/>")
    right.append("      </Choices>")
    right.append('      <Header value="Criteria that hold (tick each one; approve only if all hold)" '
                 'size="5"/>')
    right.append(f'      <Choices name="criteria" toName="{CANDIDATE_TAG}" choice="multiple">')
    for c in rubric.criteria:
        right.append(f"        <Choice value={a(c.label)} alias={a(c.key)} hint={a(c.hint)}/>")
    right.append("      </Choices>")
    right.append(f'      <View style="{HELP_STYLE}">')
    for c in rubric.criteria:
        right.append(f"        <Header value={a(c.label + ': ' + c.hint)} size=\"6\" "
                     f'style="{HELP_LINE_STYLE}"/>')
    right.append("      </View>")

    out = ["<View>", f"  <Header value={a(rubric.title)} size=\"3\"/>",
           '  <Text name="identity" value="$identity"/>']
    if rubric.summary:
        out.append(f"  <Header value={a(rubric.summary)} size=\"6\" style=\"{SUMMARY_STYLE}\"/>")
    out.append(f'  <View style="{ROW_STYLE}">')
    if left:
        out += [f'    <View style="{LEFT_STYLE}">', *left, "    </View>"]
    out += [f'    <View style="{RIGHT_STYLE}">', *right, "    </View>", "  </View>"]
    # full width under both columns, and a direct child of the root (as readers of the config
    # look for it)
    out.append(f'  <TextArea name="comment" toName="{CANDIDATE_TAG}" rows="3" editable="true" '
               'maxSubmissions="1" placeholder="Comment: what must change (required for '
               'revise/reject)"/>')
    out.append('  <Header value="Complete candidate (the review unit)" size="5"/>')
    out.append(f'  <Text name="{CANDIDATE_TAG}" value="$candidate"/>')
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
    other key appended as JSON so nothing of the review unit is hidden. A window without
    numeric times is still listed, just without a play button."""
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
            text += "  " + json.dumps(rest, sort_keys=True, ensure_ascii=False)
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
        elif d.kind == "paragraphs":
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
