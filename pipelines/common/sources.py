"""The contract every source-dataset reader implements.

A reader knows one dataset's native layout. It works in two steps so a Beam runner can spread
the expensive part: ``enumerate`` lists the items cheaply (parsing an annotation file, walking a
directory) and ``load`` turns one item reference into a :class:`SourceItem` with its frames
encoded. Anything wrong with an item raises :class:`~core.errors.BadInput` naming
the file and field; ``enumerate`` yields :class:`~core.errors.Rejection` for items
it can already tell are bad (malformed line, duplicate id, out-of-range box) and
:class:`Filtered` for items a named selection rule of the dataset leaves out (a multi-object
COCO image, an unrecognized QuickDraw drawing). Every candidate a reader considers is yielded
as exactly one of the three, so ``inputs = kept + filtered + rejected`` counts what the source
holds, not only what was used (design.md §Conventions "Nothing lost"). Files under the root that
belong to no candidate and are no part of the layout are reported by :meth:`SourceReader.unrecognized`.

Readers list and read files only through :meth:`SourceReader.match`, :meth:`SourceReader.exists`
and :meth:`SourceReader.read_bytes`, which hold the one rule for symbolic links (local roots;
object stores have none): a link to an existing file or folder is followed, a dangling link or a
loop is bad input. Why: Beam's local listing (``os.walk`` + ``getsize``) dropped dangling links
and loops without a word and never descended into a linked folder, so a QuickDraw class file or
an ImageNet-C class folder that was a broken link vanished from a published release, counted
nowhere.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import posixpath
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from apache_beam.io.filesystem import FileSystem
from apache_beam.io.filesystems import FileSystems
from apache_beam.io.localfilesystem import LocalFileSystem

from core.blobs import BlobRef
from core.errors import BadInput, Rejection
from core.media.images import passthrough_or_png


def safe_relative(path: Any, where: str, field: str) -> str:
    """``path`` normalised, when it is a relative path that stays under the source root; else
    BadInput (``where``, ``field``): an absolute path, ``..`` above the root or a URL would read
    a file that is no part of the dataset, and a release names its files relative to the root."""
    if not isinstance(path, str) or not path:
        raise BadInput(where, field, "must be a non-empty relative path")
    norm = posixpath.normpath(path)
    if norm.startswith("/"):  # not quoted whole: it names a folder of this machine (no release may)
        raise BadInput(where, field, f"absolute path '/.../{posixpath.basename(norm)}' escapes the "
                                     "dataset root")
    if norm.startswith("../") or norm == ".." or "://" in path:
        raise BadInput(where, field, f"path {path!r} escapes the dataset root")
    return norm


@dataclass(frozen=True)
class Frame:
    """One frame as it will be embedded in the release: encoded bytes + where it came from."""

    data: bytes | BlobRef  # PNG or JPEG bytes; a reference once stored (pipelines keep no bytes)
    source: str  # relative source path, plus the operation applied, e.g. "a.jpg#crop(0,0,10,10)"
    # these exact bytes were decoded in full already (a source file kept as it is, decoded by its
    # reader); the Load step decodes every other frame once (pipelines.common.transforms._Load),
    # and the release gate decodes neither again (core.blobs.BlobStore.put)
    decoded: bool = False

    @classmethod
    def of_source_image(cls, data: bytes, rel: str, field: str) -> Frame:
        """A source image file as a frame: its own bytes when it is PNG / JPEG (decoded in full
        to check it, so ``decoded``), else re-encoded as PNG (``<rel>#png``)."""
        out, op = passthrough_or_png(data, rel, field=field)
        return cls(out, f"{rel}#{op}" if op else rel, decoded=not op)


@dataclass(frozen=True)
class ItemRef:
    """A cheap pointer to one input item; ``payload`` is reader-specific and JSON-serialisable."""

    environment: str
    source_id: str
    payload: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass
class SourceItem:
    """A source item with everything the episode builder needs.

    ``goal_frames`` are the frames where the question is answerable (informative frames); the
    builder turns them into goal states. ``metadata`` holds the per-dataset fields documented in
    ``docs/sources.md`` (e.g. ROD's ``occluding_object``, ImageNet-C's ``corruption``).
    ``source_files`` lists (relative path, sha256) of every file read, for the manifest;
    ``notes`` (relative path, note) what is odd but not wrong about them (a video whose header
    counts more frames than decode over a complete timeline), listed in the manifest too.
    ``content_sha256`` is the sha256 of the item's decoded source content (an image's pixels, a
    drawing's strokes) where a reader computes it: unlike a file's sha256 it is the same for a
    renamed copy or one stored in another file format with the same decoded content, which is
    what proves a training split held out (``docs/proactivebench.md`` §Training split); ``""``
    where a reader does not compute it.
    """

    environment: str
    source_id: str
    frames: list[Frame]
    category: str
    start_frame: int
    reference_frame: int
    goal_frames: list[int]
    metadata: dict[str, Any] = field(default_factory=dict)
    source_files: list[tuple[str, str]] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)
    content_sha256: str = ""


@dataclass(frozen=True)
class Filtered:
    """A candidate left out by a named selection rule of the dataset — not bad input, but counted
    and listed like a rejection (``filtered_inputs/`` of a release, schema
    :data:`schemas.outcomes.FILTERED_INPUT`), so nothing a reader considered vanishes."""

    item_id: str
    benchmark: str
    environment: str
    source_file: str  # relative to the source root (``<file>:<line>`` for line-oriented files)
    rule: str  # the selection rule, e.g. "multi-object image", "recognized: false"
    reason: str
    stage: str = "enumerate"
    # how many source items this stands for: a rule that leaves out most of a file (per-class
    # sampling of 10 of ~150K QuickDraw drawings) is one row per file, not one per item —
    # millions of rows and shuffle elements would undo the build's flat memory
    count: int = 1

    def to_record(self) -> dict[str, Any]:
        return {"item_id": self.item_id, "benchmark": self.benchmark,
                "environment": self.environment, "stage": self.stage,
                "source_file": self.source_file, "rule": self.rule, "reason": self.reason,
                "count": self.count}


@dataclass(frozen=True)
class ReaderConfig:
    """Options shared by readers; per-dataset ones go in ``extra``."""

    per_class: int | None = None  # N items per class (QuickDraw 10, ImageNet-C 5 in the paper)
    global_seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


class DatasetRoot:
    """One dataset's folder and the one way readers list and read it (module doc): ``root`` is
    the dataset directory (any Beam file system path). Image readers extend it as
    :class:`SourceReader`; the video benchmarks' dataset readers extend it too, so every reader
    follows the same rules for links, ``..`` paths and files nobody listed."""

    environment: str = ""
    benchmark: str = "proactivebench"
    checks_layout: bool = False  # True: every file under the root is checked (unrecognized())

    def __init__(self, root: str) -> None:
        self.root = root.rstrip("/")

    def path(self, relative: str) -> str:
        return FileSystems.join(self.root, relative) if relative else self.root

    @cached_property
    def _real_root(self) -> str | None:
        """The root with its links resolved on a local file system (the root itself may be a
        link, e.g. ``quickdraw_train -> quickdraw``); ``None`` on an object store."""
        if not isinstance(FileSystems.get_filesystem(self.root or "."), LocalFileSystem):
            return None
        return os.path.realpath(self.root or ".")

    def unreadable_link(self, relative: str) -> str | None:
        """Why ``relative`` cannot be read — a link whose target does not exist, a link loop, a
        ``..`` path leading outside the root — or ``None`` (readable, simply missing, or on an
        object store). A link to an existing file or folder is followed wherever it leads: the
        user made it on their machine (``raw/coco/val2014 -> /datasets/coco/val2014`` is how a
        raw-dir is assembled from shared storage), unlike a path inside an annotation file; the
        manifest's checksums say what was read, and no reason names where it lay."""
        real_root = self._real_root
        full = self.path(relative)
        if real_root is None or not os.path.lexists(full):
            return None
        try:
            real = os.path.realpath(full, strict=True)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return "a symbolic link loop (it never reaches a file)"
            return "a symbolic link whose target does not exist"
        if posixpath.normpath(relative).startswith("../") and \
                os.path.commonpath([real, real_root]) != real_root:
            return "a path that leads outside the dataset root"
        return None

    def exists(self, relative: str) -> bool:
        """Whether ``relative`` is there — a bad link counts as there, so that reading it
        (:meth:`read_bytes`) says what is wrong instead of the file being taken as absent."""
        full = self.path(relative)
        return os.path.lexists(full) if self._real_root is not None else FileSystems.exists(full)

    def match(self, pattern: str) -> list[str]:
        """Sorted paths, relative to the root, of the files matching ``pattern`` (a Beam glob
        relative to the root: ``*`` within a name, ``**`` across folders). Dot-files and
        dot-folders are never data and are left out. On a local root, links inside the root are
        followed; a bad link (:meth:`unreadable_link`) where the pattern names a file is
        returned, so reading it rejects what needs it, and one where the pattern needs a folder
        is not (the layout check, :meth:`unrecognized`, reports it)."""
        if self._real_root is None:
            found = FileSystems.match([self.path(pattern)])[0].metadata_list
            rels = (posixpath.relpath(m.path, self.root) for m in found)
            return sorted(r for r in rels if not any(p.startswith(".") for p in r.split("/")))
        return sorted(rel for rel, _why in self._walk(pattern))

    def _walk(self, pattern: str) -> Iterator[tuple[str, str | None]]:
        """``(relative path, why it cannot be read or None)`` of the local files matching
        ``pattern``, one folder level per part of the pattern (all levels for ``**``). A linked
        folder is entered unless it leads back to a folder above it: that link is a loop. A
        folder that cannot be listed is an entry that cannot be read (Beam's listing skipped it);
        a root that cannot be listed holds nothing, as it did for Beam."""
        parts = pattern.split("/")
        deep = re.compile(FileSystem.translate_pattern(pattern)) if "**" in pattern else None

        def visit(rel_dir: str, depth: int, above: tuple[str, ...]) -> Iterator[tuple[str, str | None]]:
            last = deep is None and depth == len(parts) - 1
            try:
                with os.scandir(self.path(rel_dir)) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError as exc:
                if rel_dir and deep is not None:
                    yield rel_dir, f"a folder that cannot be listed ({exc.strerror})"
                return
            for entry in entries:
                if entry.name.startswith(".") or not (deep or fnmatch.fnmatchcase(entry.name, parts[depth])):
                    continue
                rel = posixpath.join(rel_dir, entry.name)
                why = self.unreadable_link(rel) if entry.is_symlink() else None
                if why is None and entry.is_dir():
                    real = os.path.realpath(entry.path)
                    if real not in above:
                        if not last:
                            yield from visit(rel, depth + 1, (*above, real))
                        continue
                    why = f"a symbolic link loop (it leads back to {self._shown(real)})"
                if last if deep is None else deep.fullmatch(rel):
                    yield rel, why  # a file, or a bad link standing where a file may be

        if self._real_root is not None and os.path.isdir(self.root or "."):
            yield from visit("", 0, (self._real_root,))

    def _shown(self, real: str) -> str:
        """A folder inside the root as a release may name it: relative, never a host path."""
        rel = os.path.relpath(real, self._real_root)
        return "the root" if rel == "." else f"{rel}/"

    def read_bytes(self, relative: str, *, field: str = "file") -> bytes:
        """Read a file through Beam's file systems; a missing file or a bad link
        (:meth:`unreadable_link`) is a BadInput, not a crash or a read outside the root.
        The reason names the file relative to the root: a release must not carry host paths."""
        full = self.path(relative)
        why = self.unreadable_link(relative)
        if why is not None:
            raise BadInput(relative, field, why)
        try:
            with FileSystems.open(full) as fh:
                return fh.read()
        except Exception as exc:  # noqa: BLE001 - any I/O failure is bad input for this item
            text = str(exc).replace(full, relative)
            text = text.replace(self.root, "<root>") if self.root else text
            raise BadInput(relative, field, f"cannot read: {type(exc).__name__}: {text}") from exc

    def rejection(self, err: BadInput, *, item_id: str = "", stage: str = "read") -> Rejection:
        return Rejection.from_bad_input(
            err, benchmark=self.benchmark, environment=self.environment, stage=stage,
            item_id=item_id,
        )

    def filtered(self, item_id: str, source_file: str, rule: str, reason: str, count: int = 1
                 ) -> Filtered:
        return Filtered(item_id=item_id, benchmark=self.benchmark, environment=self.environment,
                        source_file=source_file, rule=rule, reason=reason, count=count)

    # -- files that belong to no candidate -------------------------------------------------------
    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        """For a file under the root: ``None`` if it is part of the layout (a candidate's file
        or a known companion such as a label list), else ``(entry, why)`` — the topmost folder
        or file that breaks the layout (``"imagenet_c/"`` when the root is one folder too high)
        and why. The default knows no layout: readers of a manifest read only what it names."""
        return None

    def unrecognized(self) -> Iterator[Rejection]:
        """One rejection per entry (folder or file) under the root that is no part of the layout,
        counting the files below it. Why: a misplaced folder or a root one level too high used to
        vanish without a word (inputs = 0); now it is an input, rejected with what is wrong.
        Dot-files (``.DS_Store``, ``.git``) are never data and are skipped. A bad link (or a
        folder that cannot be listed) that is itself the offending entry — a dangling class
        folder sits where the layout sees "a file" — is rejected with what is wrong with it; one
        at a file's place in the layout is read, and rejected, by whatever needs it
        (:meth:`match`)."""
        if not self.checks_layout:
            return
        local = self._real_root is not None
        found = self._walk("**") if local else ((rel, None) for rel in self.match("**"))
        entries: Counter[tuple[str, str]] = Counter()
        for rel, unreadable in found:
            problem = self.layout_problem(rel)
            if problem is not None and unreadable is not None and problem[0].rstrip("/") == rel:
                problem = (rel, unreadable)
            if problem is not None:
                entries[problem] += 1
        for (entry, why), n in sorted(entries.items()):
            files = f"{n} file{'s' if n > 1 else ''}"
            yield self.rejection(BadInput(entry, "path", f"{why} ({files})"), item_id=entry,
                                 stage="enumerate")


class SourceReader(DatasetRoot, ABC):
    """An image dataset's reader: ``enumerate`` lists items, ``load`` reads one (module doc)."""

    def __init__(self, root: str, config: ReaderConfig | None = None) -> None:
        super().__init__(root)
        self.config = config or ReaderConfig()

    @abstractmethod
    def enumerate(self) -> Iterator[ItemRef | Rejection | Filtered]:
        """Yield one ref per candidate item, a rejection for an item already known bad, or a
        :class:`Filtered` for one a selection rule leaves out."""

    def partitions(self) -> list[str]:
        """Parts of the source that can be listed independently, so a Beam runner enumerates them
        in parallel (e.g. one QuickDraw class file each). ``""`` is the whole source."""
        return [""]

    def enumerate_partition(self, partition: str) -> Iterator[ItemRef | Rejection | Filtered]:
        """Enumerate one part from :meth:`partitions` (default: the whole source)."""
        yield from self.enumerate()

    @abstractmethod
    def load(self, ref: ItemRef) -> SourceItem:
        """Read one item; raise BadInput naming file and field when it cannot be used."""

    @abstractmethod
    def vocabulary(self) -> list[str]:
        """The dataset's full label set, sorted (wrong options are drawn from it)."""


def preflight(readers: dict[str, SourceReader]) -> tuple[dict[str, list[str]], dict[str, BadInput]]:
    """Read what each source depends on as a whole — its vocabulary, and with it the annotation
    file, manifest or label list every item needs — before the pipeline starts.

    Why before: inside a Beam step, a malformed COCO instances file raised from the vocabulary
    step and the build died with a traceback. Here it becomes one error per source, which the
    build reports (or, asked to, skips the source and says so in the manifest); the vocabularies
    read here are the ones the pipeline uses. Returns (vocabulary per source, error per
    unreadable source)."""
    vocab: dict[str, list[str]] = {}
    broken: dict[str, BadInput] = {}
    for name, reader in sorted(readers.items()):
        try:
            vocab[name] = reader.vocabulary()
        except BadInput as err:
            broken[name] = err
    return vocab, broken
