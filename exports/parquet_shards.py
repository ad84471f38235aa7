"""Deterministic, HF-named Parquet shards (SPEC §3 release layout).

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
from collections import Counter
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.common.seeding import id_hash
from schemas.core import RecordSchema

MAX_SHARD_BYTES = 450 * 1024 * 1024  # SPEC §3: shards <= 500 MB (encoded size is close to raw)
MAX_ROW_GROUP_BYTES = 90 * 1024 * 1024  # SPEC §3: row groups <= 100 MB
HASH_SPACE = 1 << 128


def record_bytes(record: dict[str, Any]) -> int:
    """Rough encoded size of a record: image bytes dominate; strings counted by length."""
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
        else:
            total += 8
    return total


def num_shards(total_bytes: int, max_shard_bytes: int = MAX_SHARD_BYTES) -> int:
    return max(1, math.ceil(total_bytes / max_shard_bytes))


def shard_of(key: str, shards: int) -> int:
    return id_hash(key) * shards // HASH_SPACE


def shard_name(split: str, index: int, shards: int) -> str:
    return f"{split}-{index:05d}-of-{shards:05d}.parquet"


def row_key(record: dict[str, Any], schema: RecordSchema) -> str:
    """The ordering key: the sample id, or every field joined for records without one."""
    if "id" in record:
        return str(record["id"])
    return "\x1f".join(str(record[name]) for name in schema.names)


def encode_table(
    records: Iterable[dict[str, Any]], schema: RecordSchema, unique: bool = True
) -> tuple[bytes, int]:
    """Encode records (sorted by the hash of their key) as Parquet bytes; return bytes, rows.

    With ``unique``, a duplicate id is an error (SPEC §3): two rows with one id would make "the
    sample with id X" ambiguous for every consumer.
    """
    keyed = sorted(
        (((id_hash(k), k), r) for r in records for k in [row_key(r, schema)]),
        key=lambda pair: pair[0],
    )
    if unique:
        counts = Counter(k for (_, k), _ in keyed)
        dupes = sorted(k for k, c in counts.items() if c > 1)
        if dupes:
            raise ValueError(f"duplicate id(s) {dupes[:5]} in {schema.name} records")
    rows = [r for _, r in keyed]
    arrow_schema = schema.arrow_schema()
    table = pa.Table.from_pylist(rows, schema=arrow_schema)
    per_row = max(1, sum(record_bytes(r) for r in rows) // max(1, len(rows)))
    row_group_rows = max(1, MAX_ROW_GROUP_BYTES // per_row)
    sink = io.BytesIO()
    pq.write_table(
        table,
        sink,
        row_group_size=row_group_rows,
        compression="zstd",
        write_statistics=True,
        store_schema=True,
    )
    return sink.getvalue(), len(rows)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
