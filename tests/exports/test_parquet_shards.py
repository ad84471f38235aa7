"""Deterministic shards: same records in any order give the same bytes; duplicates refused."""

import io
import random

import pyarrow.parquet as pq
import pytest

from exports.parquet_shards import encode_table, num_shards, shard_name, shard_of
from pipelines.common.seeding import id_hash
from schemas.outcomes import REJECTION


def rejection(i):
    return {"item_id": str(i), "benchmark": "b", "environment": "e", "stage": "read",
            "source_file": f"f{i}", "field": "x", "reason": "bad"}


def test_same_records_any_order_same_bytes_sorted_by_id_hash():
    records = [rejection(i) for i in range(50)]
    shuffled = records[:]
    random.Random(1).shuffle(shuffled)
    a, rows = encode_table(records, REJECTION, unique=False)
    b, _ = encode_table(shuffled, REJECTION, unique=False)
    assert a == b and rows == 50
    table = pq.read_table(io.BytesIO(a))
    assert table.schema.metadata[b"huggingface"]


def test_duplicate_ids_are_an_error():
    recs = [{"id": "a"}, {"id": "b"}, {"id": "a"}]
    from schemas.core import Field, RecordSchema

    schema = RecordSchema("t", "1", "", (Field("id", "string", ""),))
    with pytest.raises(ValueError, match="duplicate id"):
        encode_table(recs, schema)
    data, _ = encode_table([{"id": "b"}, {"id": "a"}], schema)
    order = pq.read_table(io.BytesIO(data)).column("id").to_pylist()
    assert order == sorted(["a", "b"], key=id_hash)


def test_shard_assignment_is_a_hash_range_partition():
    assert num_shards(0) == 1 and num_shards(1000, 300) == 4
    ids = [f"x/{i}" for i in range(400)]
    shards = [shard_of(i, 4) for i in ids]
    assert set(shards) == {0, 1, 2, 3}
    # ranges: every id in shard k hashes below every id in shard k+1
    by = {k: [id_hash(i) for i, s in zip(ids, shards, strict=True) if s == k] for k in range(4)}
    assert all(max(by[k]) < min(by[k + 1]) for k in range(3))
    assert shard_name("test", 2, 12) == "test-00002-of-00012.parquet"
