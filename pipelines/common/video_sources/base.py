"""What every video dataset's reader gives the video benchmarks: native videos with provenance.

StreamVibe §3.3 builds candidates "from the source video and task record" (App. B.2) and
StreamReady App. C anchors evidence windows on "native annotations (actions, interactions, scene
changes, or subtitle segments)". Those annotations come from the source datasets in their own
released layouts (YouCook2's ``database`` JSON, Charades' CSVs, Ego4D's ``narration.json``, …).
One module per dataset reads one layout into the same record, :class:`NativeVideo`: the video's
file, split and the native spans, each naming the file and field it came from
(``youcookii_annotations_trainval.json: database.GLd3aX16zBg.annotations[2].segment``). The
benchmarks then plan their own requests or questions from those spans
(:mod:`pipelines.streamvibe.planner`, :mod:`pipelines.proready.native`), so nobody writes a
converter per dataset, and a rejection always points at the line a person has to look at.

A reader lists every candidate video once: a :class:`NativeVideo`, or a :class:`BadInput`
naming file and field (a span past the annotated duration, an inverted span, a class id not in
the classes file, a video listed but not on disk, a video on disk that no annotation file
lists, the same id in two split files). Whole-source problems — an annotation file that is not
JSON or CSV — raise :class:`BadInput` from :meth:`VideoDataset.check`, before the build starts.
The video's *decoded* duration is checked later, once the benchmark has decoded it
(:func:`pipelines.streamvibe.planner.native_past_end`): headers and annotated durations of
real downloads often claim more than the file holds.

Every reader reads through :class:`~pipelines.common.sources.DatasetRoot` (links, ``..`` paths,
files outside the layout follow the same rules as the image readers').
"""

from __future__ import annotations

import math
import posixpath
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from core.errors import BadInput
from core.text import csv_rows, json_value
from pipelines.common.sources import DatasetRoot

VIDEO_EXTENSIONS = (".mp4", ".mkv", ".webm", ".avi", ".mov")
# the kinds of native span a reader may give; the benchmarks map them to their own records
SPAN_KINDS = ("step", "event", "action", "narration", "scene", "shot", "subtitle", "gui_action")
_SURROGATE = re.compile("[\udc80-\udcff]")


@dataclass(frozen=True)
class NativeSpan:
    """One native annotation: an interval (``start < end``) or a point (``start == end``).

    ``label`` tells repeats apart (a class id, a normalised narration), ``text`` is what a
    person reads (a step sentence, a class name), ``phrase`` the same as a clause that fits a
    request ("someone starts holding a laptop"), and ``field`` where it came from
    (``<file>: <path in the file>``)."""

    kind: str
    start: float
    end: float
    label: str
    text: str
    phrase: str
    field: str
    extra: tuple[tuple[str, str], ...] = ()  # e.g. (("target", "Save button"),) for GUI actions

    def get(self, key: str, default: str = "") -> str:
        return dict(self.extra).get(key, default)


@dataclass(frozen=True)
class NativeVideo:
    """A source video with its native spans; ``video`` is relative to the dataset's root."""

    dataset: str
    video_id: str
    video: str
    split: str
    environment: str  # physical | digital (StreamVibe §3.2)
    task: str  # what the video shows, as a person would say it ("making a BLT sandwich")
    topic: str  # the subject a learner asks about (the recipe, the activity)
    annotated_duration_s: float | None  # what the annotation file claims (None: it says nothing)
    annotation_file: str
    spans: tuple[NativeSpan, ...] = field(default=())

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.video_id}"

    def of_kind(self, *kinds: str) -> list[NativeSpan]:
        return sorted((s for s in self.spans if s.kind in kinds), key=lambda s: (s.start, s.end, s.label))


@dataclass(frozen=True)
class NativeFiltered:
    """A candidate video a named rule of the dataset leaves out (not bad input: counted and
    listed with the rule), e.g. YouCook2's test split, whose captions were withheld."""

    item_id: str
    source_file: str
    rule: str
    reason: str


class VideoDataset(DatasetRoot, ABC):
    """One video dataset in its released layout (module doc). ``name`` is the folder under
    ``<RAW_DIR>/<benchmark>/`` and the collection name in ids, and the key of its licence and
    terms in ``configs/source_licences.yaml`` (the one place those live; every card lists them)."""

    name: str = ""
    title: str = ""
    checks_layout = True

    @abstractmethod
    def annotation_files(self) -> list[str]:
        """The annotation files this layout reads (relative), for the manifest's checksums."""

    @abstractmethod
    def check(self) -> None:
        """Read what the whole source depends on (its annotation files); raise BadInput naming
        the file and field when it cannot be used at all."""

    @abstractmethod
    def videos(self) -> Iterator[NativeVideo | NativeFiltered | BadInput]:
        """Every candidate video once: a native video, one a named rule leaves out, or bad input
        naming file, field and the video (``item_id``: ``<dataset>/<video id>``)."""

    # -- helpers shared by the readers ---------------------------------------------------------
    def item(self, video_id: str) -> str:
        return f"{self.name}/{video_id}"

    def load_json(self, rel: str) -> Any:
        """A JSON annotation file as Python objects. Bytes that are not UTF-8 are kept as lone
        surrogates (``surrogateescape``), so one bad byte in one sentence rejects that sentence's
        video (:func:`text_field`), not the whole dataset. An object that holds a key twice is
        marked (:func:`repeated_keys`), so the reader can reject that one record."""
        data = self.read_bytes(rel, field="file")
        return json_value(data.decode("utf-8", errors="surrogateescape"), rel, object_pairs_hook=_object)

    def load_text(self, rel: str) -> str:
        """A text annotation file (CSV, class lists), non-UTF-8 bytes kept as lone surrogates."""
        return self.read_bytes(rel, field="file").decode("utf-8", errors="surrogateescape")

    def csv_table(self, rel: str, header: list[str]) -> list[tuple[int, list[str]]]:
        """(first line, cells) of each row after the header of a CSV annotation file, blank rows
        left out; BadInput naming ``<file>:<line>`` when it is not CSV (a stray quote, a cell
        over the csv module's limit) or its header is not the released one. A UTF-8 byte order
        mark is dropped (spreadsheet programs write one); bytes that are not UTF-8 stay lone
        surrogates, rejected where a field holds one (:func:`text_field`)."""
        rows = list(csv_rows(self.load_text(rel).removeprefix("\ufeff"), rel, strict=True))
        if not rows or [c.strip() for c in rows[0][1]] != header:
            got = shown(",".join(rows[0][1]) if rows else "")
            raise BadInput(f"{rel}:1", "header", f"expected the released columns {','.join(header)}, "
                                                 f"got {got[:200]!r}")
        return [r for r in rows[1:] if any(c.strip() for c in r[1])]

    def video_files(self, folder: str = "") -> dict[str, list[str]]:
        """Video id (file stem) → the video files under ``folder`` (any depth), sorted."""
        out: dict[str, list[str]] = {}
        for rel in self.match(posixpath.join(folder, "**") if folder else "**"):
            if rel.lower().endswith(VIDEO_EXTENSIONS):
                stem = posixpath.splitext(posixpath.basename(rel))[0]
                out.setdefault(stem, []).append(rel)
        return out

    def locate(self, files: dict[str, list[str]], video_id: str, expected: str, file: str,
               where: str) -> str:
        """The one video file of ``video_id`` in folder ``expected``, else BadInput naming the
        annotation ``file`` and field ``where``: not downloaded, in another folder than its
        split and class say, or there twice (``x.mp4`` and ``x.mkv``)."""
        found = files.get(video_id, [])
        item = self.item(video_id)
        if not found:
            raise BadInput(file, where, f"video {video_id} is not on disk (looked for "
                                        f"{posixpath.join(expected, video_id)}.*)", item)
        if len(found) > 1:
            raise BadInput(found[1], "path", f"video {video_id} is on disk more than once: "
                                             f"{', '.join(found)}", item)
        if posixpath.dirname(found[0]) != expected:
            raise BadInput(found[0], "path", f"video {video_id} lies in {posixpath.dirname(found[0])}/"
                                             f", but {file}: {where} puts it in {expected}/", item)
        return found[0]

    def checked_id(self, video_id: str, file: str, where: str) -> None:
        """BadInput when a video id read from an annotation file (a JSON key, which
        :func:`text_field` never sees) holds a byte that is not UTF-8. The id, the field that
        names it and the item are shown with that byte as ``\\xNN`` (:func:`shown`): the lone
        surrogate :meth:`load_json` keeps could not be written into a release. Its video file,
        if on disk, is then a file no annotation lists (:meth:`unannotated`)."""
        bad = _SURROGATE.search(video_id)
        if bad:
            raise BadInput(file, shown(where), f"the video id is not valid UTF-8: byte "
                                               f"0x{ord(bad.group()) - 0xDC00:02x} at column "
                                               f"{bad.start() + 1}", self.item(shown(video_id)))

    def unannotated(self, files: dict[str, list[str]], annotated: set[str]) -> Iterator[BadInput]:
        """One bad input per video file on disk that no annotation file lists: an input counted
        and named, not silently ignored (it may be a misnamed download)."""
        for video_id in sorted(set(files) - annotated):
            for rel in files[video_id]:
                yield BadInput(rel, "path", "video file that no annotation file lists "
                                            "(unannotated input)", self.item(video_id))


class _Repeats(dict):  # type: ignore[type-arg]
    """A JSON object that held a key more than once (JSON allows it; ``json`` keeps the last
    value without a word, so which annotation the file meant is unknown)."""

    repeated: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out  # the common case: a plain dict, as before
    seen: set[str] = set()
    repeated = [k for k, _ in pairs if k in seen or seen.add(k)]
    marked = _Repeats(out)
    marked.repeated = tuple(dict.fromkeys(repeated))
    return marked


def repeated_keys(value: Any) -> tuple[str, ...]:
    """The keys a JSON object read by :meth:`VideoDataset.load_json` held more than once."""
    return value.repeated if isinstance(value, _Repeats) else ()


def listed_once(doc: Any, key: str, file: str, item: str, what: str = "annotation is") -> None:
    """BadInput when the JSON object ``doc`` of ``file`` held the video ``key`` more than once:
    ``json`` keeps the last entry without a word, so which ``what`` the file meant is unknown."""
    if key in repeated_keys(doc):
        raise BadInput(file, key, f"the video is listed twice in this file (JSON keeps only the last, "
                                  f"so which {what} meant is unknown)", item)


def repeated_key(value: Any, where: str) -> str | None:
    """The path (``<where>.<key>``) of the first key held twice in ``value`` or any object
    inside it, else ``None``: a reader rejects that record instead of using whichever value
    ``json`` happened to keep."""
    if isinstance(value, dict):
        for key in repeated_keys(value):
            return f"{where}.{key}"
        for key, item in value.items():
            found = repeated_key(item, f"{where}.{key}")
            if found:
                return found
    elif isinstance(value, list):
        for k, item in enumerate(value):
            found = repeated_key(item, f"{where}[{k}]")
            if found:
                return found
    return None


def shown(text: str) -> str:
    """``text`` as a rejection may name it: each byte that is not UTF-8 (a lone surrogate, as
    :meth:`VideoDataset.load_json` / ``load_text`` keep it) written ``\\xNN``."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def text_field(value: Any, file: str, where: str, item: str, *, required: bool = True) -> str:
    """A string field, stripped: BadInput naming file and field when it is missing, empty (if
    ``required``), not a string, or holds a byte that is not UTF-8."""
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise BadInput(file, where, f"must be a string, got {type(value).__name__}", item)
    bad = _SURROGATE.search(value)
    if bad:
        byte = ord(bad.group()) - 0xDC00
        raise BadInput(file, where, f"not valid UTF-8: byte 0x{byte:02x} at column {bad.start() + 1}",
                       item)
    if required and not value.strip():
        raise BadInput(file, where, "empty", item)
    return value.strip()


def seconds(value: Any, file: str, where: str, item: str) -> float:
    """A finite, non-negative number of seconds (a number or a numeric string), else BadInput."""
    if isinstance(value, bool):
        raise BadInput(file, where, f"must be a number of seconds, got {value!r}", item)
    try:
        x = float(value)
    except OverflowError:  # an integer past the float range (JSON allows any number of digits)
        raise BadInput(file, where, "a number of seconds too large to be a time", item) from None
    except (TypeError, ValueError):
        raise BadInput(file, where, f"must be a number of seconds, got {value!r}", item) from None
    if not math.isfinite(x):
        raise BadInput(file, where, f"not finite: {value!r}", item)
    if x < 0:
        raise BadInput(file, where, f"negative time {x} s", item)
    return round(x, 3)


def interval(start: Any, end: Any, file: str, where: str, item: str,
             duration: float | None) -> tuple[float, float]:
    """``(start, end)`` of an annotated interval: both finite and non-negative, ``end >= start``
    (never swapped: an inverted span is an annotation error a person must see), inside the
    annotated ``duration`` when the file states one."""
    s = seconds(start, file, f"{where}[0]", item)
    e = seconds(end, file, f"{where}[1]", item)
    if e < s:
        raise BadInput(file, where, f"end {e} s is before start {s} s", item)
    if duration is not None and e > duration + 0.5:
        raise BadInput(file, where, f"span [{s}, {e}] s ends past the annotated duration "
                                    f"({duration} s)", item)
    return s, e


def sentence_phrase(text: str) -> str:
    """A sentence as a clause inside a request: first letter lower-cased unless it starts an
    acronym or a name is likely ("I"), final punctuation dropped."""
    t = text.strip().rstrip(".!?;: ")
    if len(t) > 1 and t[0].isupper() and not t[1].isupper() and t.split(" ", 1)[0] != "I":
        t = t[0].lower() + t[1:]
    return t
