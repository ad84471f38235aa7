"""The contract every source-dataset reader implements.

A reader knows one dataset's native layout. It works in two steps so a Beam runner can spread
the expensive part: ``enumerate`` lists the items cheaply (parsing an annotation file, walking a
directory) and ``load`` turns one item reference into a :class:`SourceItem` with its frames
encoded. Anything wrong with an item raises :class:`~core.errors.BadInput` naming
the file and field; ``enumerate`` yields :class:`~core.errors.Rejection` for items
it can already tell are bad (malformed line, duplicate id, out-of-range box).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from apache_beam.io.filesystems import FileSystems

from core.blobs import BlobRef
from core.errors import BadInput, Rejection


@dataclass(frozen=True)
class Frame:
    """One frame as it will be embedded in the release: encoded bytes + where it came from."""

    data: bytes | BlobRef  # PNG or JPEG bytes; a reference once stored (pipelines keep no bytes)
    source: str  # relative source path, plus the operation applied, e.g. "a.jpg#crop(0,0,10,10)"


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
    ``source_files`` lists (relative path, sha256) of every file read, for the manifest.
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


@dataclass(frozen=True)
class ReaderConfig:
    """Options shared by readers; per-dataset ones go in ``extra``."""

    per_class: int | None = None  # N items per class (QuickDraw 10, ImageNet-C 5 in the paper)
    global_seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


class SourceReader(ABC):
    """Base class: ``root`` is the dataset directory (any Beam file system path)."""

    environment: str = ""
    benchmark: str = "proactivebench"

    def __init__(self, root: str, config: ReaderConfig | None = None) -> None:
        self.root = root.rstrip("/")
        self.config = config or ReaderConfig()

    @abstractmethod
    def enumerate(self) -> Iterator[ItemRef | Rejection]:
        """Yield one ref per candidate item (or a rejection for an item already known bad)."""

    def partitions(self) -> list[str]:
        """Parts of the source that can be listed independently, so a Beam runner enumerates them
        in parallel (e.g. one QuickDraw class file each). ``""`` is the whole source."""
        return [""]

    def enumerate_partition(self, partition: str) -> Iterator[ItemRef | Rejection]:
        """Enumerate one part from :meth:`partitions` (default: the whole source)."""
        yield from self.enumerate()

    @abstractmethod
    def load(self, ref: ItemRef) -> SourceItem:
        """Read one item; raise BadInput naming file and field when it cannot be used."""

    @abstractmethod
    def vocabulary(self) -> list[str]:
        """The dataset's full label set, sorted (wrong options are drawn from it)."""

    # -- helpers shared by readers -------------------------------------------------------------
    def path(self, relative: str) -> str:
        return FileSystems.join(self.root, relative) if relative else self.root

    def read_bytes(self, relative: str, *, field: str = "file") -> bytes:
        """Read a file through Beam's file systems; a missing file is a BadInput, not a crash."""
        full = self.path(relative)
        try:
            with FileSystems.open(full) as fh:
                return fh.read()
        except Exception as exc:  # noqa: BLE001 - any I/O failure is bad input for this item
            raise BadInput(relative, field, f"cannot read: {type(exc).__name__}: {exc}") from exc

    def rejection(self, err: BadInput, *, item_id: str = "", stage: str = "read") -> Rejection:
        return Rejection.from_bad_input(
            err, benchmark=self.benchmark, environment=self.environment, stage=stage,
            item_id=item_id,
        )


def relpath(root: str, full: str) -> str:
    return os.path.relpath(full, root) if not full.startswith(("gs://", "s3://")) else full
