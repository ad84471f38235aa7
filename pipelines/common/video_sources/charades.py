"""Charades v1 (Sigurdsson et al., 2016, "Hollywood in Homes: Crowdsourcing Data Collection for
Activity Understanding") in its released layout: people at home acting out scripts, with timed
action classes.

Layout (the official README.txt "Relevant files"; ``Charades.zip`` unpacks into ``Charades/``,
``Charades_v1_480.zip`` into ``Charades_v1_480/``; docs/video_sources.md cites every field)::

    Charades/Charades_v1_train.csv     id,subject,scene,quality,relevance,verified,script,objects,
    Charades/Charades_v1_test.csv      descriptions,actions,length  (quoted CSV, a header row)
    Charades/Charades_v1_classes.txt   c000 Holding some clothes  (one class a line)
    Charades/Charades_v1_{objectclasses,verbclasses,mapping}.txt, *.m, test_submission_*.txt
                                       (part of the release, not read)
    README.txt, license.txt            (not read)
    Charades_v1_480/<id>.mp4           (the 480p videos)

The annotation files may also sit at the root. ``actions`` is ``c092 11.90 21.20;c147 0.00
12.60`` (class, start, end in seconds; empty when nobody marked an action) and ``length`` the
video's length in seconds. An action may end after ``length``: the maintainer's answer is "just
clip the labels into the defined interval" (gsig/charades-algorithms, the issue about video
42K3H, whose actions end at 5.00 s on a 3.5 s video), so such an end is clipped to ``length``
(its annotated end kept in the span's ``extra``); an action that starts at or after ``length``
lies wholly outside the video and is bad input. The test split's actions are released, so it is
read like the training split.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from core.errors import BadInput
from pipelines.common.video_sources.base import (
    NativeFiltered,
    NativeSpan,
    NativeVideo,
    VideoDataset,
    seconds,
    text_field,
)

SPLITS = {"Charades_v1_train.csv": "train", "Charades_v1_test.csv": "test"}
CLASSES = "Charades_v1_classes.txt"
HEADER = ["id", "subject", "scene", "quality", "relevance", "verified", "script", "objects",
          "descriptions", "actions", "length"]
NOT_READ = ("Charades_v1_objectclasses.txt", "Charades_v1_verbclasses.txt", "Charades_v1_mapping.txt",
            "Charades_v1_classify.m", "Charades_v1_localize.m", "test_submission_classify.txt",
            "test_submission_localize.txt", "README.txt", "license.txt")
VIDEO_ROOT = "Charades_v1_480"
ANNOTATIONS = "Charades"
_CLASS_ID = re.compile(r"c\d{3}")


def scene_place(scene: str) -> str:
    """Where a Charades scene puts the person, as a phrase: "Kitchen" → "in the kitchen",
    "Home Office / Study (A room in a house used for work)" → "in the home office", "Stairs" →
    "on the stairs"; ``""`` for "Other", which says only that it is none of the 15 named
    places."""
    name = scene.split("(", 1)[0].split("/", 1)[0].strip().lower()
    if name in ("", "other"):
        return ""
    return f"on the {name}" if name == "stairs" else f"in the {name}"


def action_clause(name: str) -> str:
    """A class name as the clause after "someone starts" / "someone is": the first letter
    lower-cased, and the "Someone is " that a few class names begin with dropped ("Someone is
    laughing" → "laughing"), so the phrases never read "someone starts someone is laughing"."""
    if name.lower().startswith("someone is "):
        name = name[len("someone is "):]
    return name[:1].lower() + name[1:]


class Charades(VideoDataset):
    name = "charades"
    title = "Charades"

    def _annotation(self, name: str) -> str | None:
        for rel in (f"{ANNOTATIONS}/{name}", name):
            if self.exists(rel):
                return rel
        return None

    def annotation_files(self) -> list[str]:
        return [f for f in (self._annotation(n) for n in (*SPLITS, CLASSES)) if f]

    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        known = (*SPLITS, CLASSES, *NOT_READ)
        if relative in known or (relative.startswith(f"{ANNOTATIONS}/")
                                 and relative[len(ANNOTATIONS) + 1:] in known):
            return None
        top = relative.split("/", 1)[0]
        if top == VIDEO_ROOT:
            if relative.count("/") == 1 and relative.endswith(".mp4"):
                return None
            return relative, f"not a video at {VIDEO_ROOT}/<id>.mp4"
        return (relative if "/" not in relative else f"{top}/",
                f"not part of the Charades layout ({ANNOTATIONS}/, {VIDEO_ROOT}/, README.txt, "
                "license.txt)")

    # -- whole-source files --------------------------------------------------------------------
    def check(self) -> None:
        self._classes()
        if not any(self._annotation(n) for n in SPLITS):
            raise BadInput(f"{ANNOTATIONS}/Charades_v1_train.csv", "file",
                           "missing: neither Charades_v1_train.csv nor Charades_v1_test.csv is "
                           f"in {ANNOTATIONS}/ or at the root")
        for name in SPLITS:
            rel = self._annotation(name)
            if rel:
                self.csv_table(rel, HEADER)

    def _classes(self) -> dict[str, str]:
        """Class id → class name (``c000 Holding some clothes``)."""
        rel = self._annotation(CLASSES)
        if rel is None:
            raise BadInput(f"{ANNOTATIONS}/{CLASSES}", "file", f"missing: the class list ({ANNOTATIONS}/ "
                                                             "or the root)")
        out: dict[str, str] = {}
        for n, line in enumerate(self.load_text(rel).splitlines(), start=1):
            if not line.strip():
                continue
            cid, _, name = line.strip().partition(" ")
            where = f"{rel}:{n}"
            if not _CLASS_ID.fullmatch(cid):
                raise BadInput(where, "class id", f"expected 'c<3 digits> <name>', got {line!r}")
            if cid in out:
                raise BadInput(where, "class id", f"{cid} listed twice")
            out[cid] = text_field(name, where, "name", "")
        if not out:
            raise BadInput(rel, "file", "no classes")
        return out

    # -- videos --------------------------------------------------------------------------------
    def videos(self) -> Iterator[NativeVideo | NativeFiltered | BadInput]:
        classes = self._classes()
        files = self.video_files(VIDEO_ROOT)
        found: dict[str, list[tuple[str, int, list[str]]]] = {}
        for name in SPLITS:
            rel = self._annotation(name)
            if rel is None:
                continue
            for line, cells in self.csv_table(rel, HEADER):
                vid = cells[0].strip() if cells else ""
                try:
                    text_field(vid, rel, "id", "")
                except BadInput:  # empty or not UTF-8: the row goes by its line (_video says why)
                    vid = ""
                found.setdefault(vid or f"{rel}:{line}", []).append((rel, line, cells))
        for vid in sorted(found):
            rows = found[vid]
            rel, line, cells = rows[0]
            if len(rows) > 1:
                other, n, _ = rows[1]
                yield BadInput(f"{other}:{n}", "id", f"video {vid} is also on {rel}:{line}; a video "
                                                     "has one row in one split", self.item(vid))
                continue
            try:
                yield self._video(vid, rel, line, cells, classes, files)
            except BadInput as err:
                yield err
        yield from self.unannotated(files, set(found))

    def _video(self, vid: str, rel: str, line: int, cells: list[str], classes: dict[str, str],
               files: dict[str, list[str]]) -> NativeVideo | NativeFiltered:
        item, where = self.item(vid), f"{rel}:{line}"
        if len(cells) != len(HEADER):
            raise BadInput(where, "row", f"{len(cells)} columns, the header has {len(HEADER)}", item)
        row = dict(zip(HEADER, cells, strict=True))
        # an empty id, or one holding a byte that is not UTF-8 (load_text keeps it as a lone
        # surrogate, which no release can write), rejects its row here, by line
        text_field(row["id"], where, "id", item)
        scene = text_field(row["scene"], where, "scene", item)
        length = seconds(row["length"], where, "length", item)
        actions = text_field(row["actions"], where, "actions", item, required=False)
        spans = []
        for k, action in enumerate(actions.split(";") if actions else []):
            field = f"actions[{k}]"
            parts = action.split()
            if len(parts) != 3:
                raise BadInput(where, field, f"expected '<class> <start> <end>', got {action!r}", item)
            cid, start, end = parts
            if cid not in classes:
                raise BadInput(where, field, f"class {cid} is not in {CLASSES}", item)
            s = seconds(start, where, f"{field}.start", item)
            e = seconds(end, where, f"{field}.end", item)
            if e < s:
                raise BadInput(where, field, f"end {e} s is before start {s} s", item)
            if s >= length:
                raise BadInput(where, field, f"span [{s}, {e}] s starts at or after the annotated "
                                             f"length ({length} s)", item)
            name = classes[cid]
            extra: tuple[tuple[str, str], ...] = (("state", f"someone is {action_clause(name).lower()}"),)
            if e > length:  # clipped, as the maintainer says (module doc)
                extra += (("annotated_end", f"{e}"),)
                e = length
            spans.append(NativeSpan("action", s, e, cid, name, f"someone starts {action_clause(name)}",
                                    f"{where}: {field}", extra))
        path = self.locate(files, vid, VIDEO_ROOT, where, "id")
        if not spans:
            return NativeFiltered(item, where, "no actions annotated",
                                  "the actions field is empty: nobody marked an action in this video")
        place = scene_place(scene)
        task = f"a person {place}" if place else "a person going about everyday activities"
        return NativeVideo(
            dataset=self.name, video_id=vid, video=path, split=SPLITS[rel.rsplit("/", 1)[-1]],
            environment="physical", task=task, topic=f"everyday activities {place}".strip(),
            annotated_duration_s=length, annotation_file=rel, spans=tuple(spans))
