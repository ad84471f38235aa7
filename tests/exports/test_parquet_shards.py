"""Deterministic shards: same records in any order give the same bytes; duplicates refused;
shards stream from the blob store one row group at a time, with the same bytes."""

import hashlib
import io
import random

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.blobs import BlobStore
from core.seeding import id_hash
from exports import parquet_shards
from exports.parquet_shards import (
    encode_table,
    num_shards,
    shard_name,
    shard_of,
    spread_shards,
    write_shard,
)
from pipelines.common.options import beam_options
from schemas.core import IMAGE, Field, ListOf, RecordSchema
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


def test_shards_are_spread_over_writers_largest_first_onto_the_least_loaded():
    """The shard sizes of a 100× ProactiveBench build (MB): one key per shard put vsod, coco and
    changeit on one of two workers; the plan gives each worker about half."""
    mb = 1 << 20
    sizes = {"data/vsod": 142 * mb, "data/coco": 119 * mb, "data/changeit": 92 * mb,
             "data/rod": 68 * mb, "data/imagenet_c": 6 * mb, "data/mvpn": 1 * mb}
    plan = spread_shards(sizes, 2)
    assert sorted(plan) == sorted((g, 0, 1) for g in sizes)  # every shard once
    load = [sum(sizes[g] for (g, _, _), w in plan.items() if w == k) for k in (0, 1)]
    assert load == [216 * mb, 212 * mb]  # vsod+rod+imagenet_c | coco+changeit+mvpn
    assert spread_shards(dict(reversed(sizes.items())), 2) == plan  # not the order they came in
    assert set(spread_shards(sizes, 1).values()) == {0}
    # a group over the shard limit is several shards, each its share
    split = spread_shards({"a": 900, "b": 400}, 2, max_shard_bytes=300)
    assert split == {("a", 0, 3): 0, ("a", 1, 3): 1, ("a", 2, 3): 0, ("b", 0, 2): 1,
                     ("b", 1, 2): 1}  # 300+300 | 300+200+200
    assert spread_shards({"a": 10}, 4) == {("a", 0, 1): 0}  # more writers than shards


def test_each_worker_process_writes_the_shards_planned_for_it(tmp_path):
    """With two worker processes the embedded runner hands each writer key to its own worker,
    so each process writes exactly the shards the plan gives it (twelve one-shard groups: with
    one key per shard the runner's split matched the plan only by chance), and the bytes are
    those of one process."""
    import os

    from apache_beam.testing.test_pipeline import TestPipeline

    from pipelines.common.transforms import WriteShardedParquet

    store = BlobStore(str(tmp_path / "blobs"))
    records = _image_records(12, store)  # frames grow with i: twelve sizes
    marks = tmp_path / "marks"
    marks.mkdir()

    def group(record):
        return f"g{int(record['id'].split('/')[1]):02d}"

    def mark(record):  # which process completes (writes) each row
        (marks / f"{group(record)}.{os.getpid()}").touch()
        return record

    for out, args in (("one", []), ("two", ["--direct_running_mode=multi_processing",
                                             "--direct_num_workers=2"])):
        with TestPipeline(options=beam_options(args)) as p:
            _ = (p | beam.Create(records)
                 | WriteShardedParquet(str(tmp_path / out), group, IMAGES, "test", finish=mark))
    writers: dict[str, set[str]] = {}
    for m in marks.iterdir():
        writers.setdefault(m.suffix, set()).add(m.stem)
    assert writers.pop(f".{os.getpid()}") == {group(r) for r in records}  # one process: this one
    plan = spread_shards({group(r): parquet_shards.record_bytes(r) for r in records}, 2)
    planned = sorted(sorted(g for (g, _, _), w in plan.items() if w == k) for k in (0, 1))
    assert planned[0][0] == "g00" and "g11" in planned[0] and "g10" in planned[1]
    assert sorted(map(sorted, writers.values())) == planned
    for g in sorted(plan):
        name = f"{g[0]}/test-00000-of-00001.parquet"
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


# -- streaming: frames from the blob store, one row group at a time ---------------------------

IMAGES = RecordSchema("imgs", "1", "", (Field("id", "string", ""),
                                        Field("frames", ListOf(IMAGE), "")))


def _image_records(n: int, store: BlobStore | None) -> list[dict]:
    rng = random.Random(7)
    out = []
    for i in range(n):
        frames = []
        for k in range(3):
            data = bytes(rng.getrandbits(8) for _ in range(2000 + 37 * i + k))
            frames.append({"bytes": store.put(data) if store else data, "path": f"{i}/{k}.png"})
        out.append({"id": f"s/{i}", "frames": frames})
    return out


def test_streamed_shard_with_blob_references_equals_writing_the_table_at_once(tmp_path, monkeypatch):
    """Bytes identical to pyarrow's one-shot ``write_table`` of the same (inline) rows, with row
    groups small enough that the shard is written in several pieces."""
    monkeypatch.setattr(parquet_shards, "MAX_ROW_GROUP_BYTES", 30_000)  # ~4 rows per group
    inline = _image_records(23, None)
    stored = _image_records(23, BlobStore(str(tmp_path / "blobs")))
    facts = write_shard(str(tmp_path / "out" / "x.parquet"), reversed(stored), IMAGES)
    data = (tmp_path / "out" / "x.parquet").read_bytes()

    rows = parquet_shards.ordered(inline, IMAGES)
    per_row = sum(parquet_shards.record_bytes(r) for r in rows) // len(rows)
    reference = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=IMAGES.arrow_schema()), reference,
                   row_group_size=30_000 // per_row, compression="zstd", write_statistics=True,
                   store_schema=True)
    assert data == reference.getvalue()
    assert facts == {"rows": 23, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    assert meta.num_row_groups == 6 and meta.num_rows == 23
    assert encode_table(inline, IMAGES)[0] == data


def test_blob_store_is_content_addressed(tmp_path):
    store = BlobStore(str(tmp_path))
    a, b = store.put(b"\x89PNG\r\n\x1a\n" + b"x" * 100), store.put(b"\x89PNG\r\n\x1a\n" + b"x" * 100)
    assert a == b and a.size == 108 and a.head.startswith(b"\x89PNG")
    assert a.read() == b"\x89PNG\r\n\x1a\n" + b"x" * 100
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == [a.sha256]
    assert parquet_shards.record_bytes({"f": {"bytes": a, "path": "ab"}}) == 108 + 2


def test_writer_refuses_records_that_carry_their_frames_into_the_shuffle(tmp_path):
    """The cause of the lost records with worker processes (large PCollection elements) is
    guarded: a record with inline frames reaching the writer fails the build, naming it."""
    from apache_beam.testing.test_pipeline import TestPipeline

    from pipelines.common.transforms import MAX_INLINE_BYTES, WriteShardedParquet

    big = {"id": "s/0", "frames": [{"bytes": b"\xff" * (MAX_INLINE_BYTES + 1), "path": "0.jpg"}]}
    with pytest.raises(Exception, match="s/0.*inline bytes"), \
            TestPipeline(options=beam_options([])) as p:
        _ = (p | beam.Create([big])
             | WriteShardedParquet(str(tmp_path), lambda r: "data", IMAGES, "test"))
    store = BlobStore(str(tmp_path / "blobs"))
    small = {"id": "s/0", "frames": [{"bytes": store.put(b"\xff" * (MAX_INLINE_BYTES + 1)),
                                      "path": "0.jpg"}]}
    with TestPipeline(options=beam_options([])) as p:
        _ = (p | beam.Create([small])
             | WriteShardedParquet(str(tmp_path), lambda r: "data", IMAGES, "test"))
    table = pq.read_table(tmp_path / "data" / "test-00000-of-00001.parquet")
    assert table.column("frames").to_pylist()[0][0]["bytes"] == b"\xff" * (MAX_INLINE_BYTES + 1)


def test_sharded_writer_completes_each_record_with_side_inputs_as_its_shard_is_written(tmp_path):
    """Records cross the shuffle packed (one bytes value each) and are completed by ``finish``
    with a side input when their row group is written: every shard equals the in-process
    encoding of its finished rows, and the side input reached every row."""
    from apache_beam.pvalue import AsDict
    from apache_beam.testing.test_pipeline import TestPipeline

    from pipelines.common.transforms import WriteShardedParquet

    store = BlobStore(str(tmp_path / "blobs"))
    records = _image_records(23, store)
    selected = {f"s/{i}" for i in range(0, 23, 3)}
    marked = RecordSchema("imgs", "1", "", IMAGES.fields + (Field("picked", "bool", ""),))
    unfinished = [{**r, "picked": False} for r in records]

    def pick(record, chosen):
        return {**record, "picked": record["id"] in chosen}

    total = sum(parquet_shards.record_bytes(r) for r in unfinished)
    shards = 3
    with TestPipeline(options=beam_options([])) as p:
        chosen = p | "Chosen" >> beam.Create([(k, True) for k in sorted(selected)])
        _ = (p | beam.Create(unfinished)
             | WriteShardedParquet(str(tmp_path / "out"), lambda r: "data", marked, "test",
                                   max_shard_bytes=total // shards + 1, finish=pick,
                                   finish_inputs={"chosen": AsDict(chosen)}))
    picked = 0
    for index in range(shards):
        part = [pick(r, selected) for r in unfinished
                if shard_of(r["id"], shards) == index]
        data = (tmp_path / "out" / "data" / shard_name("test", index, shards)).read_bytes()
        assert data == encode_table(part, marked)[0]
        table = pq.read_table(io.BytesIO(data))
        picked += sum(table.column("picked").to_pylist())
    assert picked == len(selected) == 8
