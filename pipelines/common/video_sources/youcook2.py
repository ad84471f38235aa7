"""YouCook2 (Zhou et al., 2018) in its released layout: recipe videos with timed procedure steps.

Layout (the official download: ``scripts/download_youcookii_videos.py``; docs/sources.md cites
every field)::

    annotations/youcookii_annotations_trainval.json   {"database": {<id>: {duration, subset,
                                                        recipe_type, annotations[{segment, id,
                                                        sentence}], video_url}}}
    annotations/youcookii_annotations_test_segments_only.json   (optional; no sentences)
    label_foodtype.csv                                 <recipe_type>,<dish> (no header)
    splits/{train,val,test}_list.txt                   <recipe_type>/<id> per line (optional)
    splits/{train,val,test}_duration_totalframe.csv    (optional, not read)
    scripts/, README*                                  (part of the release, not read)
    raw_videos/<training|validation|testing>/<recipe_type>/<id>.{mp4,mkv,webm}

The annotation JSON may also sit at the root (loaders keep it in either place). Each step's
``segment`` is ``[start, end]`` in whole seconds. The test split's captions are withheld by the
authors, so its videos are inputs filtered by that rule, not bad input.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from core.errors import BadInput
from core.text import csv_rows, utf8_text
from pipelines.common.video_sources.base import (
    NativeFiltered,
    NativeSpan,
    NativeVideo,
    VideoDataset,
    interval,
    seconds,
    text_field,
)

TRAINVAL = "youcookii_annotations_trainval.json"
TEST = "youcookii_annotations_test_segments_only.json"
FOODTYPES = "label_foodtype.csv"
SUBSETS = {"training": "train", "validation": "val", "testing": "test"}
VIDEO_ROOT = "raw_videos"


class YouCook2(VideoDataset):
    name = "youcook2"
    title = "YouCook2"

    def _annotation(self, name: str) -> str | None:
        for rel in (f"annotations/{name}", name):
            if self.exists(rel):
                return rel
        return None

    def annotation_files(self) -> list[str]:
        files = [self._annotation(TRAINVAL), self._annotation(TEST), FOODTYPES]
        files += [f"splits/{s}_list.txt" for s in SUBSETS.values() if self.exists(f"splits/{s}_list.txt")]
        return [f for f in files if f]

    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        top = relative.split("/", 1)[0]
        if relative in (FOODTYPES, TRAINVAL, TEST) or top.lower().startswith("readme") \
                or top in ("scripts", "splits") or relative.startswith("annotations/youcookii_"):
            return None
        if top == VIDEO_ROOT:
            parts = relative.split("/")
            if len(parts) == 4 and parts[1] in SUBSETS:
                return None
            return (relative, f"not a video at {VIDEO_ROOT}/<training|validation|testing>/"
                              "<recipe_type>/<id>.<ext>")
        return (relative if "/" not in relative else f"{top}/",
                "not part of the YouCook2 layout (annotations/, label_foodtype.csv, splits/, "
                "scripts/, raw_videos/)")

    # -- whole-source files --------------------------------------------------------------------
    def check(self) -> None:
        """Every file :meth:`videos` reads as a whole — the optional test-split annotation and
        split lists too: one of them unreadable (a link to nothing, a folder in its place, not
        JSON) is a whole-source problem, so it stops the build here, naming the file, instead of
        escaping from the listing halfway through."""
        self._database(TRAINVAL, required=True)
        self._database(TEST, required=False)
        self._foodtypes()
        self._split_lists()

    def _database(self, name: str, required: bool) -> tuple[str, dict[str, Any]] | None:
        rel = self._annotation(name)
        if rel is None:
            if required:
                raise BadInput(f"annotations/{name}", "file", "missing: the YouCook2 annotation file "
                               "(annotations/ or the dataset root)")
            return None
        doc = self.load_json(rel)
        if not isinstance(doc, dict) or not isinstance(doc.get("database"), dict):
            raise BadInput(rel, "database", "must be an object {\"database\": {<video id>: {...}}}")
        return rel, doc["database"]

    def _foodtypes(self) -> dict[str, str]:
        text = self.load_text(FOODTYPES)
        out: dict[str, str] = {}
        for n, row in csv_rows(text, FOODTYPES):
            if not row or not any(c.strip() for c in row):
                continue
            if n == 1 and not row[0].strip().isdigit():
                continue  # a header row
            if len(row) != 2 or not row[0].strip().isdigit():
                raise BadInput(f"{FOODTYPES}:{n}", "row", f"expected '<recipe_type id>,<dish>', got {row!r}")
            dish = text_field(row[1], f"{FOODTYPES}:{n}", "dish", "")
            if row[0].strip() in out:
                raise BadInput(f"{FOODTYPES}:{n}", "recipe_type", f"id {row[0].strip()} listed twice")
            out[row[0].strip()] = dish
        if not out:
            raise BadInput(FOODTYPES, "file", "no recipe types")
        return out

    def _split_lists(self) -> dict[str, list[tuple[str, int, str]]]:
        """Video id → every (split, line, recipe type) that lists it. Read as strict UTF-8: an id
        is compared with the annotation's and quoted in reasons, so a byte that is not UTF-8
        names its file and line here rather than travelling on as a lone surrogate."""
        out: dict[str, list[tuple[str, int, str]]] = {}
        for split in SUBSETS.values():
            rel = f"splits/{split}_list.txt"
            if not self.exists(rel):
                continue
            text = utf8_text(self.read_bytes(rel, field="file"), rel)
            for n, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    rcp, _, vid = line.strip().partition("/")
                    out.setdefault(vid, []).append((split, n, rcp))
        return out

    # -- videos --------------------------------------------------------------------------------
    def videos(self) -> Iterator[NativeVideo | NativeFiltered | BadInput]:
        foods = self._foodtypes()
        lists = self._split_lists()
        files = self.video_files(VIDEO_ROOT)
        seen: dict[str, str] = {}
        for name in (TRAINVAL, TEST):
            found = self._database(name, required=name == TRAINVAL)
            if found is None:
                continue
            rel, database = found
            for vid in sorted(database):
                try:
                    self.checked_id(vid, rel, f"database.{vid}")
                except BadInput as err:
                    yield err
                    continue
                item = self.item(vid)
                if vid in seen:
                    yield BadInput(rel, f"database.{vid}", f"video id also in {seen[vid]}: an id "
                                                           "belongs to one split", item)
                    continue
                seen[vid] = rel
                try:
                    video = self._video(rel, vid, database[vid], foods, lists, files)
                except BadInput as err:
                    yield err
                    continue
                if video.split == "test":
                    yield NativeFiltered(item, rel, "test split: captions withheld",
                                         "the authors withhold the test split's step sentences")
                else:
                    yield video
        yield from self.unannotated(files, set(seen))

    def _video(self, rel: str, vid: str, entry: Any, foods: dict[str, str],
               lists: dict[str, list[tuple[str, int, str]]], files: dict[str, list[str]]) -> NativeVideo:
        item, where = self.item(vid), f"database.{vid}"
        if not isinstance(entry, dict):
            raise BadInput(rel, where, "must be an object", item)
        subset = entry.get("subset")
        if not isinstance(subset, str) or subset not in SUBSETS:  # a list is no key of SUBSETS
            raise BadInput(rel, f"{where}.subset", f"{subset!r} is not one of {sorted(SUBSETS)}", item)
        recipe = str(entry.get("recipe_type", ""))
        if recipe not in foods:
            raise BadInput(rel, f"{where}.recipe_type", f"recipe type {recipe!r} is not in {FOODTYPES}",
                           item)
        listed = lists.get(vid, [])
        if len(listed) > 1:
            raise BadInput(f"splits/{listed[1][0]}_list.txt:{listed[1][1]}", "video id",
                           f"{vid} is also on splits/{listed[0][0]}_list.txt:{listed[0][1]}", item)
        if listed and (listed[0][0], listed[0][2]) != (SUBSETS[subset], recipe):
            split, n, rcp = listed[0]
            raise BadInput(f"splits/{split}_list.txt:{n}", "video id",
                           f"lists {rcp}/{vid} in {split}, but {rel}: {where} says {subset} / {recipe}",
                           item)
        duration = seconds(entry.get("duration"), rel, f"{where}.duration", item)
        path = self.locate(files, vid, f"{VIDEO_ROOT}/{subset}/{recipe}", rel, where)
        steps = entry.get("annotations")
        if not isinstance(steps, list):
            raise BadInput(rel, f"{where}.annotations", "must be a list of steps", item)
        spans = []
        for k, step in enumerate(steps):
            f = f"{where}.annotations[{k}]"
            if not isinstance(step, dict):
                raise BadInput(rel, f, "must be an object {segment, id, sentence}", item)
            seg = step.get("segment")
            if not isinstance(seg, list) or len(seg) != 2:
                raise BadInput(rel, f"{f}.segment", f"must be [start, end] in seconds, got {seg!r}", item)
            s, e = interval(seg[0], seg[1], rel, f"{f}.segment", item, duration)
            if subset == "testing":
                continue
            sentence = text_field(step.get("sentence"), rel, f"{f}.sentence", item)
            spans.append(NativeSpan("step", s, e, sentence.lower(), sentence,
                                    f"the step \"{sentence.rstrip('.')}\" begins", f"{rel}: {f}.segment"))
        dish = foods[recipe]
        return NativeVideo(
            dataset=self.name, video_id=vid, video=path, split=SUBSETS[subset],
            environment="physical", task=f"cooking {dish}", topic=f"how to make {dish}",
            annotated_duration_s=duration, annotation_file=rel, spans=tuple(spans))

