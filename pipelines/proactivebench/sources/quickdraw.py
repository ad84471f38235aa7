"""QuickDraw (ProactiveBench App. 0.A.5): recognized drawings, shown one stroke more per frame.

Native layout: the *simplified* ndjson files, ``<root>/<category>.ndjson`` or the download names
``<root>/full_simplified_<category>.ndjson`` (the prefix is stripped; the category is the rest
of the file name, spaces included, e.g. ``The Eiffel Tower``). Each line is
``{"word", "countrycode", "timestamp", "recognized", "key_id", "drawing": [[xs, ys], ...]}``.

Every non-blank line is an input. Drawings with ``recognized: false`` are *filtered* by that
rule ("we discarded all drawings not recognized by such a model"). Per class N drawings
(``config.per_class``, paper 10) are chosen deterministically: recognized drawings are ranked by
sha256(key_id) and taken in that order; a ranked drawing with fewer than two strokes is rejected
(no least-informative state to start from) and the next one taken; the drawings not taken are
filtered by the rule ``per-class sample``. ``extra["order"] = "descending"`` takes them from the
other end of the same order: the training split does (``configs/proactivebench/train.yaml``), so
when it reads the same class files as the evaluation split, the two take disjoint drawings of any
class holding more than both samples together (ProactiveBench §5: a QuickDraw subset "disjoint
from that used in ProactiveBench"; the build still checks it, ``heldout.py``). Lines that are not
UTF-8, malformed lines and every line of a ``key_id`` given twice in a file are rejections naming
``<file>:<line>`` and the field — a stroke ``[xs, ys, ts]`` of the *raw* format among them; a
file or folder in the root that is not ``<category>.ndjson`` (the raw download,
``full_raw_<category>.ndjson``, included) is rejected too. The drawing
travels in the ItemRef payload, so ``load`` never re-reads a (large) class file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from core.errors import BadInput, Rejection
from core.files import sha256_hex
from core.media.strokes import cumulative_pngs, strokes_sha256
from core.text import json_value, utf8_lines
from pipelines.common.sources import Filtered, Frame, ItemRef, SourceItem, SourceReader

FULL_PREFIX = "full_simplified_"
RAW_PREFIX = "full_raw_"  # the download name of the raw format ([xs, ys, ts], unscaled)
SUFFIX = ".ndjson"
DEFAULT_PER_CLASS = 10
ORDERS = ("ascending", "descending")  # which end of the sha256(key_id) order a sample takes


def category_of(filename: str) -> str:
    stem = filename[: -len(SUFFIX)]
    return stem[len(FULL_PREFIX):] if stem.startswith(FULL_PREFIX) else stem


def _check_drawing(drawing: Any, where: str) -> list[list[list[float]]]:
    """The simplified format's strokes, ``[xs, ys]`` in 0..255. A stroke ``[xs, ys, ts]`` is the
    *raw* format (screen coordinates, not scaled to 0..255, and timestamps): it was kept with its
    times dropped, so a raw file in the simplified set became drawings at the wrong scale."""
    if not isinstance(drawing, list) or not drawing:
        raise BadInput(where, "drawing", "must be a non-empty list of strokes")
    for i, stroke in enumerate(drawing):
        if isinstance(stroke, list) and len(stroke) == 3:
            raise BadInput(where, f"drawing[{i}]", "stroke is [xs, ys, ts]: the raw format "
                                                   "(unscaled, timed); the layout is the simplified "
                                                   "format, [xs, ys] in 0..255")
        if not isinstance(stroke, list) or len(stroke) != 2:
            raise BadInput(where, f"drawing[{i}]", "stroke must be [xs, ys]")
        xs, ys = stroke[0], stroke[1]
        if not (isinstance(xs, list) and isinstance(ys, list)) or len(xs) != len(ys) or not xs:
            raise BadInput(where, f"drawing[{i}]", "xs and ys must be equal-length, non-empty")
        for v in (*xs, *ys):
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 255:
                raise BadInput(where, f"drawing[{i}]", f"coordinate {v!r} not in 0..255")
    return [[list(s[0]), list(s[1])] for s in drawing]


def parse_line(line: str, where: str, category: str) -> dict[str, Any]:
    """Validate one ndjson line; BadInput names the field."""
    rec = json_value(line, where, one_line=True)
    if not isinstance(rec, dict):
        raise BadInput(where, "json", "line is not a JSON object")
    key_id = rec.get("key_id")
    if not isinstance(key_id, str | int) or isinstance(key_id, bool) or not str(key_id):
        raise BadInput(where, "key_id", f"missing or invalid: {key_id!r}")
    if not isinstance(rec.get("recognized"), bool):
        raise BadInput(where, "recognized", f"must be true/false, got {rec.get('recognized')!r}")
    if rec.get("word") != category:
        raise BadInput(where, "word", f"{rec.get('word')!r} differs from file category "
                                      f"{category!r}")
    country = rec.get("countrycode", "")
    if not isinstance(country, str):
        raise BadInput(where, "countrycode", f"must be a string, got {country!r}")
    drawing = _check_drawing(rec.get("drawing"), where)
    return {"key_id": str(key_id), "recognized": rec["recognized"], "countrycode": country,
            "drawing": drawing}


class QuickDrawReader(SourceReader):
    """Simplified QuickDraw ndjson, one file per category."""

    environment = "quickdraw"
    checks_layout = True

    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        top = relative.split("/")[0]
        if "/" in relative:
            return f"{top}/", "a folder in the root: the layout is <category>.ndjson files"
        if not relative.endswith(SUFFIX):
            return relative, f"not a simplified class file (<category>{SUFFIX})"
        if relative.startswith(RAW_PREFIX):
            return relative, (f"a raw-format class file ({RAW_PREFIX}<category>{SUFFIX}): the "
                              f"layout is the simplified files (<category>{SUFFIX})")
        return None

    def files(self) -> list[str]:
        names = [n for n in self.match(f"*{SUFFIX}") if not n.startswith(RAW_PREFIX)]
        cats = [category_of(n) for n in names]
        dupes = {c for c in cats if cats.count(c) > 1}
        if dupes:
            raise BadInput(names[cats.index(sorted(dupes)[0])], "file",
                           f"categories {sorted(dupes)} given by two files")
        return names

    def vocabulary(self) -> list[str]:
        return sorted(category_of(n) for n in self.files())

    def order(self) -> str:
        """``extra["order"]``: ``ascending`` (default, the evaluation split) or ``descending``."""
        order = self.config.extra.get("order", "ascending")
        if order not in ORDERS:
            raise ValueError(f"quickdraw: extra['order'] {order!r}: expected one of {ORDERS}")
        return str(order)

    def enumerate(self) -> Iterator[ItemRef | Rejection | Filtered]:
        per_class = self.config.per_class or DEFAULT_PER_CLASS
        for name in self.files():
            yield from self._enumerate_file(name, per_class)

    def partitions(self) -> list[str]:
        """One partition per class file: the full dataset has 345 files of ~150k drawings each,
        too much for one worker to list. A source-level problem (two files for one category)
        falls back to the whole source, whose enumeration reports it as a rejection."""
        try:
            return self.files()
        except BadInput:
            return [""]

    def enumerate_partition(self, partition: str) -> Iterator[ItemRef | Rejection | Filtered]:
        if not partition:
            yield from self.enumerate()
            return
        yield from self._enumerate_file(partition, self.config.per_class or DEFAULT_PER_CLASS)

    def _enumerate_file(self, name: str, per_class: int) -> Iterator[ItemRef | Rejection | Filtered]:
        category = category_of(name)
        try:
            data = self.read_bytes(name)
        except BadInput as err:  # a bad link or an unreadable file: the class file, rejected
            yield self.rejection(err, item_id=f"{category}/*")
            return
        digest = sha256_hex(data)
        parsed: list[tuple[int, dict[str, Any]]] = []
        lines_of: dict[str, list[int]] = {}
        for lineno, line in utf8_lines(data, name):
            where = f"{name}:{lineno}"
            try:
                if isinstance(line, BadInput):
                    raise line
                rec = parse_line(line, where, category)
            except BadInput as err:
                yield self.rejection(err, item_id=f"{category}/{where}")
                continue
            parsed.append((lineno, rec))
            lines_of.setdefault(rec["key_id"], []).append(lineno)
        ranked: list[tuple[str, int, dict[str, Any]]] = []
        for lineno, rec in parsed:
            sid = f"{category}/{rec['key_id']}"
            shared = lines_of[rec["key_id"]]
            if len(shared) > 1:  # which line is the drawing cannot be told: none is used
                yield self.rejection(BadInput(f"{name}:{lineno}", "key_id",
                                              f"key_id {rec['key_id']} is on lines {shared}: every "
                                              "line sharing it is rejected", item_id=sid))
            elif not rec["recognized"]:
                yield self.filtered(sid, f"{name}:{lineno}", "recognized: false",
                                    "not recognized by the game's classifier (App. 0.A.5 keeps "
                                    "recognized drawings)")
            else:
                ranked.append((hashlib.sha256(rec["key_id"].encode()).hexdigest(), lineno, rec))
        order = self.order()
        ranked.sort(key=lambda t: (t[0], t[1]), reverse=order == "descending")
        reverse = "descending " if order == "descending" else ""  # the evaluation's text unchanged
        taken = 0
        for i, (_rank, lineno, rec) in enumerate(ranked):
            sid = f"{category}/{rec['key_id']}"
            if taken >= per_class:  # the rest of the file: one summary row, counted per drawing
                left = len(ranked) - i
                yield self.filtered(f"{category}/*", name, "per-class sample",
                                    f"{left} recognized drawings of {category!r} not among the "
                                    f"{per_class} taken in {reverse}sha256(key_id) order",
                                    count=left)
                break
            if len(rec["drawing"]) < 2:
                err = BadInput(f"{name}:{lineno}", "drawing",
                               "only one stroke: no less-informative first frame", item_id=sid)
                yield self.rejection(err)
                continue
            taken += 1
            payload = {"file": name, "file_sha256": digest, "line": lineno,
                       "category": category, **rec}
            yield ItemRef(self.environment, sid, payload)

    def load(self, ref: ItemRef) -> SourceItem:
        p = ref.payload
        strokes = [(s[0], s[1]) for s in p["drawing"]]
        pngs = cumulative_pngs(strokes)
        frames = [Frame(png, f"{p['file']}:{p['line']}#strokes[0:{i + 1}]")
                  for i, png in enumerate(pngs)]
        last = len(frames) - 1
        return SourceItem(
            environment=self.environment, source_id=ref.source_id, frames=frames,
            category=p["category"], start_frame=0, reference_frame=last, goal_frames=[last],
            metadata={"key_id": p["key_id"], "countrycode": p["countrycode"],
                      "num_strokes": len(strokes)},
            source_files=[(p["file"], p["file_sha256"])],
            content_sha256=strokes_sha256(p["drawing"]),
        )
