"""Assembly101 (Sener et al., CVPR 2022, "Assembly101: A Large-Scale Multi-View Video Dataset for
Understanding Procedural Activities") in its released layout: people taking apart and putting
back together take-apart toy vehicles, filmed by 8 fixed RGB and 4 egocentric monochrome cameras,
with coarse (procedure) and fine-grained (hand-object action) segments.

Layout (assembly-101/assembly101-annotations ``README.md``, ``fine-grained-annotations/README.md``,
``coarse-annotations/README.md``; the videos as assembly-101/assembly101-download-scripts
``README.md`` and ``download.py`` write them; docs/video_sources.md cites every field)::

    fine-grained-annotations/{train,validation}.csv   id,video,start_frame,end_frame,action_id,
                                                      verb_id,noun_id,action_cls,verb_cls,noun_cls,
                                                      toy_id,toy_name,is_shared,is_RGB
    fine-grained-annotations/test.csv                 id,video,start_frame,end_frame,is_shared,is_RGB
    fine-grained-annotations/actions.csv              id,action_id,verb_id,noun_id,action_cls,
                                                      verb_cls,noun_cls (1380 actions)
    fine-grained-annotations/{head_actions.txt,test_challenge.csv,README.md}   (not read)
    coarse-annotations/actions.csv                    action_id,verb_id,noun_id,action_cls,verb_cls,
                                                      noun_cls (202 actions)
    coarse-annotations/coarse_splits/{train,val,test}_coarse_{assembly,disassembly}.txt
                                                      <part>_<sequence>.txt<TAB>is_shared[<TAB>toy_id
                                                      <TAB>toy_name] per line
    coarse-annotations/coarse_labels/<assembly|disassembly>_<sequence>.txt
                                                      <start_frame><TAB><end_frame><TAB><action_cls>
    coarse-annotations/{coarse_seq_views.txt,tail_actions.txt,README.md}       (not read)
    recordings/<sequence>/<view>.mp4                  12 views: C10095_rgb … C10404_rgb (fixed),
                                                      HMC_<id>_mono10bit (egocentric)
    AssemblyPoses.zip, DINOv2_features.zip, poses@60fps/, TSM_features/, README.md, LICENSE
                                                      (part of the release, not read)

Every frame number is "after extracting them from the raw video at 30fps" (annotations
``README.md``), so a frame ``f`` is ``f / 30`` s. A fine-grained row names one view's video
(``<sequence>/<view>.mp4``); the release repeats each segment for every view (the TSM baseline's
``combined`` = "all the 12 views"). Coarse labels are per sequence and part (assembly or
disassembly), on the frame numbers shared by all views (the official segmentation loader reads
every view's features with the same coarse frames).

What a video is here: one *recording* (sequence), read from one view, so a benchmark never holds
the same footage twelve times. The view read is the first of :data:`VIEWS` on disk — by default
``C10118_rgb`` (v3; a third-party viewer of the release labels it "Center"), then the other fixed
RGB views, then the egocentric ones — so a download of any view subset
(``download.py --views v1``) is read. Other views of a recording on disk are filtered inputs
(rule ``another view of the recording``). Assembly101 states no video duration, so
``annotated_duration_s`` is ``None``: a span past the video's end is caught once the benchmark has
decoded it (``native_past_end``). The test split's labels are withheld by the authors: its
recordings are filtered inputs.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from core.errors import BadInput
from pipelines.common.video_sources.base import (
    NativeFiltered,
    NativeSpan,
    NativeVideo,
    VideoDataset,
    shown,
    text_field,
)

FPS = 30.0  # annotations README: "Frame numbers ... extracting them from the raw video at 30fps"
FINE = "fine-grained-annotations"
COARSE = "coarse-annotations"
VIDEO_ROOT = "recordings"
FINE_SPLITS = {"train.csv": "train", "validation.csv": "val", "test.csv": "test"}
FINE_HEADER = ["id", "video", "start_frame", "end_frame", "action_id", "verb_id", "noun_id",
               "action_cls", "verb_cls", "noun_cls", "toy_id", "toy_name", "is_shared", "is_RGB"]
TEST_HEADER = ["id", "video", "start_frame", "end_frame", "is_shared", "is_RGB"]
FINE_ACTIONS_HEADER = ["id", "action_id", "verb_id", "noun_id", "action_cls", "verb_cls", "noun_cls"]
COARSE_ACTIONS_HEADER = ["action_id", "verb_id", "noun_id", "action_cls", "verb_cls", "noun_cls"]
FINE_NOT_READ = ("head_actions.txt", "test_challenge.csv", "README.md")
COARSE_NOT_READ = ("coarse_seq_views.txt", "tail_actions.txt", "README.md")
RELEASE_NOT_READ = ("AssemblyPoses.zip", "DINOv2_features.zip", "README.md", "LICENSE")
RELEASE_FOLDERS_NOT_READ = ("poses@60fps", "TSM_features")
COARSE_SPLITS = {"train": "train", "val": "val", "test": "test"}
PARTS = ("assembly", "disassembly")
# the views, in the order they are tried (module doc); the download script's view_dict names them
VIEWS = ("C10118_rgb", "C10095_rgb", "C10115_rgb", "C10119_rgb", "C10379_rgb", "C10390_rgb",
         "C10395_rgb", "C10404_rgb",
         "HMC_84346135_mono10bit", "HMC_21176875_mono10bit", "HMC_84347414_mono10bit",
         "HMC_21176623_mono10bit", "HMC_84355350_mono10bit", "HMC_21110305_mono10bit",
         "HMC_84358933_mono10bit", "HMC_21179183_mono10bit")
_FRAME = re.compile(r"\d{1,12}")
_ID = re.compile(r"\d{1,9}")
_LABEL_FILE = re.compile(r"(assembly|disassembly)_(.+)\.txt")
GERUND = {"assembly": "assembling", "disassembly": "disassembling"}
INFINITIVE = {"assembly": "assemble", "disassembly": "disassemble"}


def coarse_split_file(split: str, part: str) -> str:
    return f"{COARSE}/coarse_splits/{split}_coarse_{part}.txt"


def coarse_label_file(part: str, sequence: str) -> str:
    return f"{COARSE}/coarse_labels/{part}_{sequence}.txt"


def action_clause(action: str, verb: str, noun: str) -> str:
    """A class name as a clause with the object's article: "pick up screw" (verb "pick up", noun
    "screw") → "pick up the screw", "remove screw from second wheel" → "remove screw from the
    second wheel", "pass screw to other hand" → "pass the screw to other hand". A name that does
    not start with its verb and noun, or whose noun is a hand ("clap hand"), is kept as it is."""
    head = f"{verb} {noun}"
    if noun and noun != "hand" and (action == head or action.startswith(head + " ")):
        return f"{verb} the {noun}{action[len(head):]}"
    return action


def _short(text: str, n: int = 40) -> str:
    """A value as a reason may quote it: bytes that are not UTF-8 shown ``\\xNN``, cut short."""
    text = shown(text)
    return repr(text if len(text) <= n else text[:n] + "…")


@dataclass(frozen=True)
class FineClass:
    action_id: int
    verb_id: int
    noun_id: int
    action: str
    verb: str
    noun: str


@dataclass(frozen=True)
class CoarseClass:
    action_id: int
    verb: str
    noun: str


@dataclass
class _Recording:
    """Everything the annotation files say about one sequence, gathered before it is read."""

    fine_files: dict[str, int] = field(default_factory=dict)  # split file → first line naming it
    rows: dict[str, list[tuple[str, int, list[str]]]] = field(default_factory=dict)  # view → rows
    coarse: dict[str, list[tuple[str, int, list[str]]]] = field(default_factory=dict)  # part → lines
    labels: dict[str, str] = field(default_factory=dict)  # part → coarse label file on disk


class Assembly101(VideoDataset):
    name = "assembly101"
    title = "Assembly101"

    def __init__(self, root: str, views: tuple[str, ...] | None = None) -> None:
        super().__init__(root)
        self.views = tuple(views) if views else VIEWS
        unknown = [v for v in self.views if v not in VIEWS]
        if unknown:
            raise ValueError(f"unknown Assembly101 views {unknown}: the views are {list(VIEWS)}")

    def _order(self) -> str:
        """The views tried, as a reason names them."""
        if self.views == VIEWS:
            return f"{VIEWS[0]}, then the other fixed RGB views, then the egocentric ones"
        return ", ".join(self.views)

    # -- the files --------------------------------------------------------------------------------
    def _fine_files(self) -> list[str]:
        return [f"{FINE}/{n}" for n in FINE_SPLITS if self.exists(f"{FINE}/{n}")]

    def _coarse_split_files(self) -> list[tuple[str, str, str]]:
        return [(coarse_split_file(s, p), COARSE_SPLITS[s], p) for s in COARSE_SPLITS for p in PARTS
                if self.exists(coarse_split_file(s, p))]

    def _label_files(self) -> dict[str, dict[str, str]]:
        """Sequence → part → its coarse label file on disk."""
        out: dict[str, dict[str, str]] = {}
        for rel in self.match(f"{COARSE}/coarse_labels/*"):
            m = _LABEL_FILE.fullmatch(posixpath.basename(rel))
            if m:
                out.setdefault(m.group(2), {})[m.group(1)] = rel
        return out

    def _recording_files(self) -> dict[str, dict[str, str]]:
        """Sequence → view → its video file (``recordings/<sequence>/<view>.mp4``)."""
        out: dict[str, dict[str, str]] = {}
        for rel in self.match(f"{VIDEO_ROOT}/*/*"):
            _, seq, name = rel.split("/")
            stem, ext = posixpath.splitext(name)
            if ext == ".mp4" and stem in VIEWS:
                out.setdefault(seq, {})[stem] = rel
        return out

    def annotation_files(self) -> list[str]:
        files = self._fine_files()
        files += [f for f in (f"{FINE}/actions.csv", f"{COARSE}/actions.csv") if self.exists(f)]
        files += [rel for rel, _, _ in self._coarse_split_files()]
        files += sorted(rel for parts in self._label_files().values() for rel in parts.values())
        return files

    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        parts = relative.split("/")
        top = parts[0]
        if len(parts) == 1 and relative in RELEASE_NOT_READ:
            return None
        if top in RELEASE_FOLDERS_NOT_READ and len(parts) > 1:
            return None
        if top == FINE:
            if len(parts) == 2 and parts[1] in (*FINE_SPLITS, "actions.csv", *FINE_NOT_READ):
                return None
            return relative, (f"not a file of {FINE}/ ({', '.join(FINE_SPLITS)}, actions.csv, "
                              f"{', '.join(FINE_NOT_READ)})")
        if top == COARSE:
            if len(parts) == 2 and parts[1] in ("actions.csv", *COARSE_NOT_READ):
                return None
            if len(parts) == 3 and parts[1] == "coarse_splits" and relative in {
                    coarse_split_file(s, p) for s in COARSE_SPLITS for p in PARTS}:
                return None
            if len(parts) == 3 and parts[1] == "coarse_labels" and _LABEL_FILE.fullmatch(parts[2]):
                return None
            return relative, (f"not a file of {COARSE}/ (actions.csv, coarse_splits/<train|val|test>"
                              "_coarse_<assembly|disassembly>.txt, coarse_labels/<assembly|"
                              "disassembly>_<sequence>.txt, coarse_seq_views.txt, tail_actions.txt)")
        if top == VIDEO_ROOT:
            if len(parts) == 3 and parts[2].endswith(".mp4") and parts[2][:-4] in VIEWS:
                return None
            return relative, (f"not a video at {VIDEO_ROOT}/<sequence>/<view>.mp4 (a view the "
                              "download script names: C10095_rgb … HMC_<id>_mono10bit)")
        return (relative if len(parts) == 1 else f"{top}/",
                f"not part of the Assembly101 layout ({FINE}/, {COARSE}/, {VIDEO_ROOT}/, the "
                "release's poses and features)")

    # -- whole-source files --------------------------------------------------------------------
    def check(self) -> None:
        """Every file the listing reads whole: the class lists, the fine-grained split CSVs, the
        coarse split lists. One that cannot be read stops the build naming it."""
        fine, coarse = self._fine_files(), self._coarse_split_files()
        if not fine and not coarse:
            raise BadInput(f"{FINE}/train.csv", "file", f"missing: no fine-grained split CSV "
                           f"({FINE}/train.csv, validation.csv, test.csv) and no coarse split list "
                           f"({COARSE}/coarse_splits/*_coarse_*.txt)")
        if fine:
            self._fine_classes()
            for rel in fine:
                self.csv_table(rel, TEST_HEADER if rel.endswith("/test.csv") else FINE_HEADER)
        if coarse:
            self._coarse_classes()
            for rel, _, _ in coarse:
                self._text(rel)

    def _text(self, rel: str) -> str:
        """A text file, bytes that are not UTF-8 kept as lone surrogates (each is rejected where a
        field holds it), a UTF-8 byte order mark dropped (spreadsheet programs write one)."""
        return self.load_text(rel).removeprefix("\ufeff")

    def _class_rows(self, rel: str, header: list[str]) -> Iterator[tuple[str, dict[str, str]]]:
        if not self.exists(rel):
            raise BadInput(rel, "file", "missing: the action classes this granularity's labels "
                                        "name")
        rows = self.csv_table(rel, header)
        if not rows:
            raise BadInput(rel, "file", "no actions")
        for line, cells in rows:
            where = f"{rel}:{line}"
            if len(cells) != len(header):
                raise BadInput(where, "row", f"{len(cells)} columns, the header has {len(header)}")
            yield where, dict(zip(header, cells, strict=True))

    def _fine_classes(self) -> dict[int, FineClass]:
        """``action_id`` → the fine-grained class (verb, noun and their ids)."""
        out: dict[int, FineClass] = {}
        for where, row in self._class_rows(f"{FINE}/actions.csv", FINE_ACTIONS_HEADER):
            ids = [_number(row[k], where, k, "") for k in ("action_id", "verb_id", "noun_id")]
            texts = [text_field(row[k], where, k, "") for k in ("action_cls", "verb_cls", "noun_cls")]
            if ids[0] in out:
                raise BadInput(where, "action_id", f"action {ids[0]} listed twice")
            out[ids[0]] = FineClass(*ids, *texts)
        return out

    def _coarse_classes(self) -> dict[str, CoarseClass]:
        """``action_cls`` → the coarse class (coarse label files name a class by its name)."""
        out: dict[str, CoarseClass] = {}
        seen: set[int] = set()
        for where, row in self._class_rows(f"{COARSE}/actions.csv", COARSE_ACTIONS_HEADER):
            aid = _number(row["action_id"], where, "action_id", "")
            name, verb, noun = (text_field(row[k], where, k, "") for k in ("action_cls", "verb_cls",
                                                                           "noun_cls"))
            if aid in seen or name in out:
                raise BadInput(where, "action_id" if aid in seen else "action_cls",
                               f"action {aid if aid in seen else name!r} listed twice")
            seen.add(aid)
            out[name] = CoarseClass(aid, verb, noun)
        return out

    # -- videos --------------------------------------------------------------------------------
    def videos(self) -> Iterator[NativeVideo | NativeFiltered | BadInput]:
        fine_classes = self._fine_classes() if self._fine_files() else {}
        coarse_classes = self._coarse_classes() if self._coarse_split_files() else {}
        recordings: dict[str, _Recording] = {}
        yield from self._gather_fine(recordings)
        yield from self._gather_coarse(recordings)
        for seq, parts in self._label_files().items():
            recordings.setdefault(seq, _Recording()).labels.update(parts)
        files = self._recording_files()
        for seq in sorted(recordings):
            rec = recordings[seq]
            on_disk = files.get(seq, {})
            view = next((v for v in self.views if v in on_disk), None)
            try:
                yield self._recording(seq, rec, view, on_disk.get(view or ""), fine_classes,
                                      coarse_classes)
            except BadInput as err:  # a label file that cannot be read names no item: this one
                err.item_id = err.item_id or self.item(shown(seq))
                yield err
            for other in sorted(v for v in on_disk if v != view):
                yield NativeFiltered(
                    self.item(f"{shown(seq)}/{other}"), shown(on_disk[other]),
                    "another view of the recording",
                    f"one view per recording is read, the first on disk in the view order "
                    f"({self._order()}): {view or 'none'}, not {other}")
        yield from self.unannotated(
            {seq: sorted(views.values()) for seq, views in files.items()}, set(recordings))

    def unannotated(self, files: dict[str, list[str]], annotated: set[str]) -> Iterator[BadInput]:
        for err in super().unannotated(files, annotated):
            # a folder name with a byte that is not UTF-8 (the file system keeps it as a surrogate)
            err.item_id, err.source_file = shown(err.item_id), shown(err.source_file)
            yield err

    def _gather_fine(self, recordings: dict[str, _Recording]) -> Iterator[BadInput]:
        """Each fine-grained row under its sequence and view; a row whose ``video`` names no
        ``<sequence>/<view>.mp4`` is rejected by its line."""
        for rel in self._fine_files():
            test = rel.endswith("/test.csv")
            for line, cells in self.csv_table(rel, TEST_HEADER if test else FINE_HEADER):
                where = f"{rel}:{line}"
                try:
                    seq, view = self._video_cell(cells[1] if len(cells) > 1 else None, where)
                except BadInput as err:
                    yield err
                    continue
                rec = recordings.setdefault(seq, _Recording())
                rec.fine_files.setdefault(rel, line)
                rec.rows.setdefault(view, []).append((rel, line, cells))

    def _video_cell(self, value: str | None, where: str) -> tuple[str, str]:
        item = self.item(where)
        text = text_field(value, where, "video", item)
        seq, slash, name = text.partition("/")
        stem, ext = posixpath.splitext(name)
        if not slash or "/" in name or ext != ".mp4" or seq in ("", ".", ".."):
            raise BadInput(where, "video", f"expected <sequence>/<view>.mp4, got {_short(text)}", item)
        if stem not in VIEWS:
            raise BadInput(where, "video", f"{_short(stem)} is not an Assembly101 view "
                                           f"({', '.join(VIEWS)})", item)
        return seq, stem

    def _gather_coarse(self, recordings: dict[str, _Recording]) -> Iterator[BadInput]:
        """Each line of the coarse split lists under its sequence and part."""
        for rel, _split, part in self._coarse_split_files():
            for n, line in enumerate(self._text(rel).splitlines(), start=1):
                if not line.strip():
                    continue
                where = f"{rel}:{n}"
                cells = line.split("\t")
                try:
                    name = text_field(cells[0], where, "sequence", self.item(where))
                    m = _LABEL_FILE.fullmatch(name)
                    if not m or m.group(1) != part:
                        raise BadInput(where, "sequence", f"expected {part}_<sequence>.txt, got "
                                                          f"{_short(name)}", self.item(where))
                except BadInput as err:
                    yield err
                    continue
                recordings.setdefault(m.group(2), _Recording()).coarse.setdefault(part, []).append(
                    (rel, n, cells))

    def _recording(self, seq: str, rec: _Recording, view: str | None, path: str | None,
                   fine_classes: dict[int, FineClass], coarse_classes: dict[str, CoarseClass]
                   ) -> NativeVideo | NativeFiltered:
        item = self.item(shown(seq))
        self.checked_id(seq, *self._named_at(seq, rec))
        split, listed_in = self._split(seq, rec, item)
        if split == "test":
            return NativeFiltered(item, listed_in, "test split: labels withheld",
                                  "the authors withhold the test split's labels (challenge)")
        if path is None or view is None:
            file, where = self._named_at(seq, rec)
            raise BadInput(file, where, f"recording {shown(seq)} is not on disk: no "
                                        f"{VIDEO_ROOT}/{shown(seq)}/<view>.mp4 of the views read "
                                        f"({self._order()})", item)
        toys: list[tuple[str, str, str]] = []  # (toy_name, file, field)
        steps, parts = self._steps(seq, rec, coarse_classes, toys, item)
        actions = [self._action(rel, line, cells, view, fine_classes, toys, item)
                   for rel, line, cells in rec.rows.get(view, [])]
        names = {t[0] for t in toys}
        if len(names) > 1:
            first, other = toys[0], next(t for t in toys if t[0] != toys[0][0])
            raise BadInput(other[1], other[2], f"toy {other[0]!r}, but {first[1]}: {first[2]} names "
                                               f"{first[0]!r}: a recording shows one toy", item)
        if not steps and not actions:
            return NativeFiltered(item, listed_in, "no segments for the view read",
                                  f"neither a coarse label file nor a fine-grained row for {view}")
        toy = names.pop() if names else "vehicle"
        if parts:
            task = f"{' and '.join(GERUND[p] for p in parts)} a toy {toy}"
            topic = f"how to {' and '.join(INFINITIVE[p] for p in parts)} a toy {toy}"
        else:
            task, topic = f"working on a take-apart toy {toy}", f"how a take-apart toy {toy} is built"
        annotation = next(iter(rec.fine_files), None) or listed_in.rsplit(":", 1)[0]
        return NativeVideo(
            dataset=self.name, video_id=seq, video=path, split=split, environment="physical",
            task=task, topic=topic, annotated_duration_s=None, annotation_file=annotation,
            spans=tuple(steps + actions))

    def _named_at(self, seq: str, rec: _Recording) -> tuple[str, str]:
        """The first annotation that names the recording: (file, field)."""
        for rel, line in rec.fine_files.items():
            return f"{rel}:{line}", "video"
        for part in PARTS:
            for rel, n, _ in rec.coarse.get(part, []):
                return f"{rel}:{n}", "sequence"
        for part in PARTS:
            if part in rec.labels:
                return rec.labels[part], "path"
        return VIDEO_ROOT, "path"  # pragma: no cover - a recording is gathered from a file

    def _split(self, seq: str, rec: _Recording, item: str) -> tuple[str, str]:
        """The recording's split and the file it is read from: one fine-grained split file, one
        coarse split per part, and both the same; else BadInput naming both places."""
        places: list[tuple[str, str, str]] = []  # (split, file:line, field)
        fine = list(rec.fine_files.items())
        if len(fine) > 1:
            (a, la), (b, lb) = fine[:2]
            raise BadInput(f"{b}:{lb}", "video", f"recording {shown(seq)} is also in {a}:{la}: a "
                                                 "recording belongs to one split", item)
        for rel, line in fine:
            places.append((FINE_SPLITS[posixpath.basename(rel)], f"{rel}:{line}", "video"))
        for part in PARTS:
            lines = rec.coarse.get(part, [])
            if len(lines) > 1:
                (a, na, _), (b, nb, _) = lines[:2]
                raise BadInput(f"{b}:{nb}", "sequence", f"{part}_{shown(seq)}.txt is also listed on "
                                                        f"{a}:{na}: a recording belongs to one split",
                               item)
            for rel, n, _ in lines:
                split = COARSE_SPLITS[posixpath.basename(rel).split("_coarse_", 1)[0]]
                places.append((split, f"{rel}:{n}", "sequence"))
        for part, rel in sorted(rec.labels.items()):
            if part not in rec.coarse:
                raise BadInput(rel, "path", "coarse label file that no coarse_splits list names "
                                            "(its split is unknown)", item)
        if not places:
            raise BadInput(*self._named_at(seq, rec), "no split file lists the recording", item)
        split, where, _ = places[0]
        for other, at, fld in places[1:]:
            if other != split:
                raise BadInput(at, fld, f"puts recording {shown(seq)} in {other}, but {where} puts "
                                        f"it in {split}: a recording belongs to one split", item)
        return split, where

    def _steps(self, seq: str, rec: _Recording, classes: dict[str, CoarseClass],
               toys: list[tuple[str, str, str]], item: str) -> tuple[list[NativeSpan], list[str]]:
        """The coarse segments of each listed part as ``step`` spans, and the parts in the order
        they happen."""
        spans: list[NativeSpan] = []
        first: dict[str, float] = {}
        for part in PARTS:
            for rel, n, cells in rec.coarse.get(part, []):
                where = f"{rel}:{n}"
                if len(cells) >= 4:  # train / val lists: is_shared, toy_id, toy_name (test: is_shared)
                    toys.append((text_field(cells[3], where, "toy_name", item), where, "toy_name"))
                label_rel = rec.labels.get(part)
                if label_rel is None:
                    raise BadInput(where, "sequence", f"its label file {coarse_label_file(part, shown(seq))}"
                                                      " is not there", item)
                for k, line in enumerate(self._text(label_rel).splitlines(), start=1):
                    if not line.strip():
                        continue
                    span = self._step(label_rel, k, line, part, classes, item)
                    spans.append(span)
                    first[part] = min(first.get(part, span.start), span.start)
        return spans, sorted(first, key=lambda p: (first[p], p))

    def _step(self, rel: str, n: int, line: str, part: str, classes: dict[str, CoarseClass],
              item: str) -> NativeSpan:
        where = f"{rel}:{n}"
        cells = line.rstrip("\r\n").split("\t")
        if len(cells) < 3:  # no tab: the columns as the README shows them, space separated
            cells = line.strip().split(None, 2)
        if len(cells) < 3:
            raise BadInput(where, "line", f"expected <start_frame><TAB><end_frame><TAB><action_cls>, "
                                          f"got {_short(line)}", item)
        s, e = _frames(cells[0], cells[1], where, item)
        name = text_field(cells[2], where, "action_cls", item)
        if name not in classes:
            raise BadInput(where, "action_cls", f"coarse action {_short(name)} is not in "
                                                f"{COARSE}/actions.csv", item)
        cls = classes[name]
        clause = action_clause(name, cls.verb, cls.noun)
        return NativeSpan("step", s, e, f"coarse: {name}", clause, f"the step \"{clause}\" begins",
                          f"{where}: start_frame", (("part", part), ("action_id", str(cls.action_id))))

    def _action(self, rel: str, line: int, cells: list[str], view: str,
                classes: dict[int, FineClass], toys: list[tuple[str, str, str]], item: str
                ) -> NativeSpan:
        where = f"{rel}:{line}"
        if len(cells) != len(FINE_HEADER):
            raise BadInput(where, "row", f"{len(cells)} columns, the header has {len(FINE_HEADER)}",
                           item)
        row = dict(zip(FINE_HEADER, cells, strict=True))
        s, e = _frames(row["start_frame"], row["end_frame"], where, item)
        aid = _number(row["action_id"], where, "action_id", item)
        if aid not in classes:
            raise BadInput(where, "action_id", f"action {aid} is not in {FINE}/actions.csv", item)
        cls = classes[aid]
        for k, want in (("verb_id", cls.verb_id), ("noun_id", cls.noun_id)):
            got = _number(row[k], where, k, item)
            if got != want:
                raise BadInput(where, k, f"{got}, but {FINE}/actions.csv gives action {aid} {k} {want}",
                               item)
        for k, want in (("action_cls", cls.action), ("verb_cls", cls.verb), ("noun_cls", cls.noun)):
            got = text_field(row[k], where, k, item)
            if got != want:
                raise BadInput(where, k, f"{_short(got)}, but {FINE}/actions.csv gives action {aid} "
                                         f"{k} {want!r}", item)
        toys.append((text_field(row["toy_name"], where, "toy_name", item), where, "toy_name"))
        text_field(row["toy_id"], where, "toy_id", item)
        rgb = row["is_RGB"].strip()
        want_rgb = "1" if view.endswith("_rgb") else "0"
        if rgb != want_rgb:
            kind = "a fixed RGB" if want_rgb == "1" else "an egocentric monochrome"
            raise BadInput(where, "is_RGB", f"{_short(rgb)}, but view {view} is {kind} view "
                                            f"({want_rgb})", item)
        clause = action_clause(cls.action, cls.verb, cls.noun)
        return NativeSpan("action", s, e, cls.action, clause, f"someone starts to {clause}",
                          f"{where}: start_frame",
                          (("state", f"the current action is to {clause}"), ("action_id", str(aid)),
                           ("verb", cls.verb), ("noun", cls.noun), ("view", view)))


def _number(value: str, where: str, fld: str, item: str) -> int:
    """A class id (``0010`` in the split CSVs, ``10`` in actions.csv), else BadInput."""
    text = text_field(value, where, fld, item)
    if not _ID.fullmatch(text):
        raise BadInput(where, fld, f"must be a class id (a non-negative integer), got {_short(text)}",
                       item)
    return int(text)


def _frame(value: str, where: str, fld: str, item: str) -> int:
    text = text_field(value, where, fld, item)
    if re.fullmatch(r"-\d+(\.\d*)?", text):
        raise BadInput(where, fld, f"negative frame {_short(text)}", item)
    if not _FRAME.fullmatch(text):
        raise BadInput(where, fld, f"must be a frame number (a non-negative integer at 30 fps), got "
                                   f"{_short(text)}", item)
    return int(text)


def _frames(start: str, end: str, where: str, item: str) -> tuple[float, float]:
    """``(start, end)`` in seconds of a segment's frames at 30 fps; ``end`` before ``start`` is
    bad input (never swapped: an inverted segment is an annotation error a person must see)."""
    s, e = _frame(start, where, "start_frame", item), _frame(end, where, "end_frame", item)
    if e < s:
        raise BadInput(where, "end_frame", f"end frame {e} is before start frame {s}", item)
    return round(s / FPS, 3), round(e / FPS, 3)
