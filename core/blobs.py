"""Large bytes live in files; records carry small references to them.

Why: a Beam runner keeps the elements of a PCollection in memory wherever it has to hold them
(shuffles, side inputs, buffers between worker processes). Records that carry their frames make
a build's memory grow with the benchmark (10 GB at a fifth of ProactiveBench), and with worker
processes such large elements were seen to lose records. So a frame is written once, as soon as
it is produced, to a content-addressed file under the build's staging folder, and the record
carries a :class:`BlobRef` (a few dozen bytes) in place of the bytes. The Parquet writer reads
the bytes back when it writes a row group (``exports.parquet_shards``); anything that needs the
pixels before that (a model probe, a review copy) calls :func:`resolve`.

The store also keeps the proof that stored bytes decode: a frame whose exact bytes were decoded
in full (by its reader, or by the Load step that stores what a reader encoded —
``pipelines.common.transforms._Load``) is stored with ``decoded=True``, each bundle's such
digests are written as one list file, and the release gate (``exports.integrity``) checks a
frame whose sha256 is in :func:`decoded_digests` without decoding it a second time.

Files go through Beam's file systems, so the store works wherever the staging folder is
(local disk, GCS, S3, HDFS) for every runner that can reach it.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

from apache_beam.io.filesystem import CompressionTypes, FileSystem
from apache_beam.io.filesystems import FileSystems

HEAD_BYTES = 16  # kept in the reference: enough to tell the format (PNG / JPEG magic)
DECODED_LIST = "decoded-{}.txt"  # one per bundle: sha256 digests of bytes decoded in full


def blob_root(staging: str) -> str:
    """Where a build keeps its blobs: inside the staging folder's ``_build``, which the driver
    removes before it publishes."""
    return f"{staging}/_build/blobs"


@dataclass(frozen=True)
class BlobRef:
    """Where a blob is, how big it is and how it starts; ``read()`` returns the bytes."""

    root: str
    sha256: str
    size: int
    head: bytes

    @property
    def path(self) -> str:
        return blob_path(self.root, self.sha256)

    def read(self) -> bytes:
        return BlobReader().read(self)


def blob_folder(root: str, sha256: str, fs: FileSystem | type[FileSystems] = FileSystems) -> str:
    """The folder of a blob: its digest's first two hex digits (at most 256 per store). ``fs``: a
    file system already resolved for ``root`` (see :class:`BlobReader`)."""
    return fs.join(root, sha256[:2])


def blob_path(root: str, sha256: str, fs: FileSystem | type[FileSystems] = FileSystems) -> str:
    return fs.join(blob_folder(root, sha256, fs), sha256)


# Blobs have no file extension, so there is nothing to detect: every blob is stored as is.
RAW = CompressionTypes.UNCOMPRESSED


class BlobReader:
    """Reads many blobs, resolving each root's file system once.

    Why: ``FileSystems.open`` / ``join`` find the file system of a path anew on every call (a
    scan of every registered file system class); for a frame of a few kB that was ~18 µs of a
    ~40 µs read here, and a 100× ProactiveBench release reads ~40K frames back. One reader lives
    as long as one shard's writing, so pipeline options set on a worker before it are seen.
    """

    def __init__(self) -> None:
        self._filesystems: dict[str, FileSystem] = {}

    def read(self, ref: BlobRef) -> bytes:
        fs = self._filesystems.get(ref.root)
        if fs is None:
            fs = self._filesystems[ref.root] = FileSystems.get_filesystem(ref.root)
        path = blob_path(ref.root, ref.sha256, fs)
        with fs.open(path, compression_type=RAW) as fh:
            data = fh.read()
        if len(data) != ref.size:
            raise OSError(f"blob {path} has {len(data)} bytes, expected {ref.size}")
        return data


class BlobStore:
    """Content-addressed files under ``root``: the same bytes are stored once."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._fs = FileSystems.get_filesystem(root)  # resolved once (see BlobReader)
        self._made: set[str] = set()
        self._decoded: set[str] = set()

    def put(self, data: bytes, *, decoded: bool = False) -> BlobRef:
        """Store ``data`` once; ``decoded`` says these exact bytes were just decoded in full, which
        :meth:`flush_decoded` records for the release gate."""
        digest = hashlib.sha256(data).hexdigest()
        if decoded:
            self._decoded.add(digest)
        ref = BlobRef(self.root, digest, len(data), bytes(data[:HEAD_BYTES]))
        folder = blob_folder(self.root, digest, self._fs)
        path = blob_path(self.root, digest, self._fs)
        if not self._fs.exists(path):
            self.make_folder(folder)
            write_whole(self._fs, path, data)
        return ref

    def make_folder(self, folder: str) -> None:
        """Make ``folder`` (once per store), also when another worker makes it at the same time."""
        if folder in self._made:
            return
        try:
            self._fs.mkdirs(folder)
        except OSError:  # Beam's error when it exists (another worker made it first)
            if not self._fs.exists(folder):
                raise
        self._made.add(folder)

    def flush_decoded(self) -> None:
        """Write the digests put with ``decoded=True`` since the last flush as one list file
        (called at the end of each bundle: one small file per bundle, not one per frame). A
        retried bundle writes its list again under another name; the union is the same."""
        if not self._decoded:
            return
        self.make_folder(self.root)
        path = FileSystems.join(self.root, DECODED_LIST.format(uuid.uuid4().hex))
        with FileSystems.create(f"{path}.tmp") as fh:
            fh.write("".join(f"{d}\n" for d in sorted(self._decoded)).encode())
        FileSystems.rename([f"{path}.tmp"], [path])
        self._decoded.clear()


def write_whole(fs: FileSystem, path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` under a unique name, then rename it: a retried or concurrent
    writer of the same file never exposes a half-written one."""
    tmp = f"{path}.{uuid.uuid4().hex}.tmp"
    with fs.create(tmp, compression_type=RAW) as fh:
        fh.write(data)
    fs.rename([tmp], [path])


def decoded_digests(root: str) -> frozenset[str]:
    """sha256 digests of every blob stored under ``root`` with ``decoded=True``."""
    pattern = FileSystems.join(root, DECODED_LIST.format("*"))
    digests: set[str] = set()
    for meta in FileSystems.match([pattern])[0].metadata_list:
        with FileSystems.open(meta.path) as fh:
            digests.update(fh.read().decode().split())
    return frozenset(digests)


def resolve(value: bytes | BlobRef) -> bytes:
    """The bytes of a frame, whether it is still inline or already in the store."""
    return value.read() if isinstance(value, BlobRef) else value


def head(value: bytes | BlobRef) -> bytes:
    """The first bytes of a frame (format detection) without reading a stored blob."""
    return value.head if isinstance(value, BlobRef) else value[:HEAD_BYTES]


def size(value: bytes | BlobRef) -> int:
    return value.size if isinstance(value, BlobRef) else len(value)
