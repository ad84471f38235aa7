"""Deterministic, HF-named Parquet shards (design.md §Conventions release layout).

Rows are assigned to shards by ranges of a 128-bit hash of the sample id and ordered inside a
shard by that hash (as TFDS does). Shard count comes from the total encoded size, so the same
records always give the same files, byte for byte, whatever runner or worker count produced
them. Images are embedded as ``{bytes, path}`` structs and the HF features travel in the schema
metadata, so ``datasets`` decodes ``Image`` columns without a cast.
"""

from __future__ import annotations

import hashlib
import io
import math
import pickle
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from core.blobs import BlobReader, BlobRef
from core.memory import release_memory, trim_periodically
from core.seeding import id_hash
from schemas.core import RecordSchema

MAX_SHARD_BYTES = 450 * 1024 * 1024  # shards <= 500 MB (encoded size is close to raw)
# a row group's frames: the writer holds a few copies of one row group at a time (Python bytes,
# the Arrow table, its encoded pages), and two workers write at once; 16 MB cost each writer
# ~110 MB, 8 MB ~60 MB (docs/scaling.md, "Arenas and row groups")
MAX_ROW_GROUP_BYTES = 8 * 1024 * 1024
HASH_SPACE = 1 << 128


def record_bytes(record: dict[str, Any]) -> int:
    """Rough encoded size of a record: image bytes dominate; strings counted by length. A frame
    already in the blob store counts as its size, so sharding does not depend on where the bytes
    are."""
    total = 0
    stack: list[Any] = [record]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        elif isinstance(value, bytes | str):
            total += len(value)
        elif isinstance(value, BlobRef):
            total += value.size
        else:
            total += 8
    return total


def num_shards(total_bytes: int, max_shard_bytes: int = MAX_SHARD_BYTES) -> int:
    return max(1, math.ceil(total_bytes / max_shard_bytes))


def spread_shards(sizes: dict[str, int], writers: int, max_shard_bytes: int = MAX_SHARD_BYTES
                  ) -> dict[tuple[str, int, int], int]:
    """The writer (0 … ``writers``-1) of every shard ``(group, index, shards)`` of groups of
    ``sizes`` bytes: the largest shard first, each onto the writer with the fewest bytes so far
    (ties: the lowest writer), a shard's size taken as its group's share. A pure function of
    ``sizes``, so every worker that computes it gets the same plan; it moves work, not bytes:
    which process writes a shard does not change the shard."""
    shards = [(size / n, group, index, n) for group, size in sorted(sizes.items())
              for n in [num_shards(size, max_shard_bytes)] for index in range(n)]
    load = [0.0] * max(1, writers)
    plan = {}
    for share, group, index, n in sorted(shards, key=lambda s: (-s[0], s[1], s[2])):
        writer = min(range(len(load)), key=lambda w: (load[w], w))
        plan[(group, index, n)] = writer
        load[writer] += share
    return plan


def shard_of(key: str, shards: int) -> int:
    return id_hash(key) * shards // HASH_SPACE


def shard_name(split: str, index: int, shards: int) -> str:
    return f"{split}-{index:05d}-of-{shards:05d}.parquet"


def row_key(record: dict[str, Any], schema: RecordSchema) -> str:
    """The ordering key: the sample id, or every field joined for records without one."""
    if "id" in record:
        return str(record["id"])
    return "\x1f".join(str(record[name]) for name in schema.names)


# A record as a shuffle carries it: (row key, record_bytes, the pickled record). Why not the
# record itself: the embedded runner's GroupByKey decodes every value it groups into Python
# objects and holds them all in the driver (``GroupingBuffer``), and a worker decodes a whole
# shard's rows before it writes the first row group. A record of nested dicts and blob
# references takes several times its encoded size as objects; as one ``bytes`` value it takes
# its encoded size, and the writer unpickles only the rows of the row group it is writing
# (100x ProactiveBench, two workers: the driver grew by 90 MB while writing, was 157 MB).
Packed = tuple[str, int, bytes]


def pack(record: dict[str, Any], schema: RecordSchema) -> Packed:
    return (row_key(record, schema), record_bytes(record),
            pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))


def unpack(packed: Packed) -> dict[str, Any]:
    return pickle.loads(packed[2])


def ordered_packed(packed: Iterable[Packed], schema: RecordSchema, unique: bool = True
                   ) -> list[Packed]:
    """Packed records sorted by the hash of their key (the order inside a shard).

    With ``unique``, a duplicate id is an error (design.md §Conventions): two rows with one id
    would make "the sample with id X" ambiguous for every consumer.
    """
    keyed = sorted((((id_hash(p[0]), p[0]), p) for p in packed), key=lambda pair: pair[0])
    if unique:
        counts = Counter(k for (_, k), _ in keyed)
        dupes = sorted(k for k, c in counts.items() if c > 1)
        if dupes:
            raise ValueError(f"duplicate id(s) {dupes[:5]} in {schema.name} records")
    return [p for _, p in keyed]


def ordered(records: Iterable[dict[str, Any]], schema: RecordSchema, unique: bool = True
            ) -> list[dict[str, Any]]:
    """Records in shard order (see :func:`ordered_packed`)."""
    return [unpack(p) for p in ordered_packed((pack(r, schema) for r in records), schema, unique)]


def _with_bytes(value: Any, reader: BlobReader) -> Any:
    """A copy of a record with every blob reference replaced by its bytes."""
    if isinstance(value, BlobRef):
        return reader.read(value)
    if isinstance(value, dict):
        return {k: _with_bytes(v, reader) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_with_bytes(v, reader) for v in value]
    return value


class _HashingSink:
    """A write-only file that hashes and counts what passes through (no second read)."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.digest = hashlib.sha256()
        self.size = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        self.size += len(data)
        return self.fh.write(data)

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        self.fh.flush()

    def writable(self) -> bool:
        return True

    def close(self) -> None:  # the owner of ``fh`` closes it
        self.closed = True


def write_rows(rows: list[Packed], schema: RecordSchema, fh: BinaryIO,
               finish: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> dict[str, Any]:
    """Stream ordered packed rows into one Parquet file, one row group at a time.

    Memory holds one row group (≤ ``MAX_ROW_GROUP_BYTES`` of frames), not the shard: a row is
    unpickled, completed by ``finish`` and its blob references read back only when its row group
    is written. The row-group size comes from the average row size of the whole shard, so the
    bytes equal those of writing the table at once. Returns rows, bytes and sha256 of what was
    written.
    """
    arrow_schema = schema.arrow_schema()
    per_row = max(1, sum(p[1] for p in rows) // max(1, len(rows)))
    group = max(1, MAX_ROW_GROUP_BYTES // per_row)
    complete = finish or (lambda record: record)
    sink = _HashingSink(fh)
    reader = BlobReader()
    trim_periodically()  # a worker that only writes shards gives freed heap back too
    release_memory()  # what the process freed before (the data-plane buffers of its input)
    writer = pq.ParquetWriter(sink, arrow_schema, compression="zstd", write_statistics=True,
                              store_schema=True)
    try:
        for start in range(0, max(len(rows), 1), group):  # an empty table is one empty row group
            # the frames' Python bytes are dropped as soon as Arrow holds them, before encoding
            table = pa.Table.from_pylist(
                [_with_bytes(complete(unpack(p)), reader) for p in rows[start:start + group]],
                schema=arrow_schema)
            writer.write_table(table, row_group_size=group)
            del table
            release_memory()  # its copies of the frames (core/memory.py)
    finally:
        writer.close()
    return {"rows": len(rows), "bytes": sink.size, "sha256": sink.digest.hexdigest()}


def encode_table(
    records: Iterable[dict[str, Any]], schema: RecordSchema, unique: bool = True
) -> tuple[bytes, int]:
    """Records (sorted by the hash of their key) as Parquet bytes in memory; return bytes, rows.
    For small tables (tests, reports); releases stream with :func:`write_shard`."""
    sink = io.BytesIO()
    packed = ordered_packed((pack(r, schema) for r in records), schema, unique)
    facts = write_rows(packed, schema, sink)
    return sink.getvalue(), facts["rows"]


def write_shard(path: str, records: Iterable[dict[str, Any]], schema: RecordSchema,
                unique: bool = True) -> dict[str, Any]:
    """Write one shard file of records (see :func:`write_packed_shard`)."""
    return write_packed_shard(path, (pack(r, schema) for r in records), schema, unique)


def write_packed_shard(path: str, packed: Iterable[Packed], schema: RecordSchema,
                       unique: bool = True,
                       finish: Callable[[dict[str, Any]], dict[str, Any]] | None = None
                       ) -> dict[str, Any]:
    """Write one shard file through Beam's file systems (any runner's shared storage), streamed;
    returns rows, bytes and sha256."""
    parent = path.rsplit("/", 1)[0]
    if not FileSystems.exists(parent):
        FileSystems.mkdirs(parent)
    with FileSystems.create(path) as fh:
        return write_rows(ordered_packed(packed, schema, unique), schema, fh, finish)
