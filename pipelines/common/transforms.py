"""Beam building blocks shared by every benchmark pipeline.

* :class:`ReadSources` — enumerate + load the source datasets in one stage; bad items become
  rejections, items a selection rule leaves out become filtered inputs, files outside the layout
  become rejections, and all of them are counted; the frames of loaded items go to the blob
  store at once (``core.blobs``), so only references flow through the rest of the pipeline.
* :class:`WriteShardedParquet` — deterministic HF-named shards through Beam file systems: only
  small records are shuffled, each shard is streamed one row group at a time.
* :class:`WriteJson`, :class:`WriteFacts` — the per-stage counts and the build facts the driver
  turns into the manifest.

All output goes through ``apache_beam.io.filesystems.FileSystems`` so any runner with a shared
file system (local, GCS, S3, HDFS) can write a release.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import heapq
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import AsDict, AsSingleton, TaggedOutput

from core import progress
from core.blobs import BlobStore
from core.errors import BadInput, Rejection
from core.media.images import verify_image
from core.memory import trim_periodically
from core.process_end import end_worker_without_teardown
from exports.parquet_shards import (
    MAX_SHARD_BYTES,
    num_shards,
    pack,
    shard_name,
    shard_of,
    spread_shards,
    write_packed_shard,
)
from pipelines.common.options import shard_writers
from pipelines.common.progress import ReportsProgress
from pipelines.common.sources import Filtered, Frame, ItemRef, SourceReader
from schemas.core import RecordSchema

REJECTED = "rejected"
FILTERED_INPUTS = "filtered_inputs"  # release folder of items a source's selection rule left out
# A record reaching a shuffle with more inline bytes than this still carries its frames: they
# belong in the blob store (core/blobs.py). Large elements are what made Beam buffer whole
# benchmarks in memory and lose records between worker processes.
MAX_INLINE_BYTES = 256 * 1024


def write_bytes(path: str, data: bytes) -> None:
    parent = path.rsplit("/", 1)[0]
    if not FileSystems.exists(parent):
        try:
            FileSystems.mkdirs(parent)
        except OSError:  # another worker made it between the check and here
            if not FileSystems.exists(parent):
                raise
    with FileSystems.create(path) as fh:
        fh.write(data)


class _SplitRefs(beam.DoFn):
    def process(self, element):
        if isinstance(element, Rejection):
            yield TaggedOutput(REJECTED, element)
        elif isinstance(element, Filtered):
            yield TaggedOutput(FILTERED_INPUTS, element)
        else:
            yield element


class _Enumerate(beam.DoFn):
    def __init__(self, readers: dict[str, SourceReader]) -> None:
        self.readers = readers

    def process(self, part: tuple[str, str]):
        environment, partition = part
        reader = self.readers[environment]
        try:
            yield from reader.enumerate_partition(partition)
        except BadInput as err:  # the whole part is unreadable: one rejection says why
            yield reader.rejection(err, item_id=partition or "*", stage="enumerate")


class _Load(ReportsProgress):
    """Load one listed item (frames into the blob store); ``read <group>`` progress counts every
    listed item, rejected ones too (as ``rejected=n``), so a source's line ends at 100%.

    Every frame's exact bytes are decoded in full here, where they are made: a source image kept
    as it is was decoded by its reader (``Frame.decoded``); bytes the reader encoded itself (a
    crop, a video frame, rendered strokes, a corruption) are decoded once more now. The store
    records them all as proven, so the release gate checks their sha256, header and format but
    does not decode them again. Why here: the gate runs in the driver after the pipeline, alone,
    while the workers idle (docs/scaling.md), and on a distributed runner the driver would decode
    the whole benchmark on one machine; here the decode is spread over the workers like the
    encode it checks. Bytes that
    do not decode reject the item, naming the frame."""

    def __init__(self, readers: dict[str, SourceReader], blobs: str, prefix: str) -> None:
        super().__init__()
        self.readers = readers
        self.blobs = blobs
        self.prefix = prefix
        self.store: BlobStore | None = None

    def setup(self) -> None:
        super().setup()  # its counts go to the driver's board (pipelines/common/progress.py)
        self.store = BlobStore(self.blobs)
        trim_periodically()  # this worker gives freed heap back as it goes (core/memory.py)
        end_worker_without_teardown()  # and ends at once when the runner stops it (core/process_end.py)

    def process(self, ref: ItemRef, totals):
        reader = self.readers[ref.environment]
        stage, total = f"read {self.prefix}{ref.environment}", totals.get(ref.environment)
        try:
            item = reader.load(ref)
            for frame in item.frames:
                if not frame.decoded:
                    verify_image(frame.data, frame.source, field="encoded frame")
        except BadInput as err:
            progress.tally(stage, total=total, rejected=1)
            yield TaggedOutput(REJECTED, reader.rejection(err, item_id=ref.source_id))
            return
        item.frames = [Frame(self.store.put(f.data, decoded=True), f.source, decoded=True)
                       for f in item.frames]
        progress.tally(stage, total=total)
        yield item

    def finish_bundle(self) -> None:
        self.store.flush_decoded()
        progress.flush()


class ReadSources(beam.PTransform):
    """Enumerate and load every source — the one way every reader's candidates are accounted for.

    All readers share one set of steps, so the loading of every source is one Beam stage: the
    embedded runner executes stages one after another, and a stage per source (seven for
    ProactiveBench) left workers idle at each small source's tail instead of spreading all
    items over them at once. Elements carry their environment, which picks the reader.

    Outputs ``refs`` (listed items), ``items`` (loaded; frames as blob references under
    ``blobs``), ``listing_rejected`` (bad before loading: malformed line, duplicate id, a file
    or folder outside the layout), ``listing_filtered`` (:class:`Filtered`: left out by a named
    selection rule), ``load_rejected``, and ``counts``: the outcome tags of all of them for
    :class:`CountOutcomes`. Inputs = refs + listing_rejected + listing_filtered.

    ``group_prefix`` puts the outcomes of a second split's sources in groups of their own
    (``train/coco`` beside the evaluation's ``coco``): its rejections, filtered inputs, counts and
    progress lines carry ``<prefix><environment>``, while the loaded items keep the environment
    their reader knows (what builds them into samples).
    """

    def __init__(self, readers: dict[str, SourceReader], blobs: str, group_prefix: str = "") -> None:
        super().__init__()
        self.readers = dict(sorted(readers.items()))
        self.blobs = blobs
        self.group_prefix = group_prefix

    def expand(self, pbegin):
        readers = self.readers
        parts = [(env, part) for env, reader in readers.items() for part in reader.partitions()]
        # reshuffle=False on these small Creates: Beam's own reshuffle of a Create is a stage of
        # its own, a round trip to the workers each (docs/scaling.md), and
        # the partitions are spread right after anyway; the layout check is seven small calls
        listed = (
            pbegin
            | "Partitions" >> beam.Create(parts, reshuffle=False)
            | "SpreadPartitions" >> beam.Reshuffle()
            | "Enumerate" >> beam.ParDo(_Enumerate(readers))
            | "SplitRejected" >> beam.ParDo(_SplitRefs()).with_outputs(REJECTED, FILTERED_INPUTS,
                                                                         main="refs")
        )
        unrecognized = (
            pbegin
            | "Layout" >> beam.Create(list(readers), reshuffle=False)
            | "Unrecognized" >> beam.FlatMap(lambda env: readers[env].unrecognized())
        )
        listing_rejected = (listed[REJECTED], unrecognized) | "ListingRejected" >> beam.Flatten()
        totals = AsDict(listed.refs
                        | "RefEnvironment" >> beam.Map(lambda ref: (ref.environment, 1))
                        | "CountRefs" >> beam.CombinePerKey(sum))
        loaded = (
            listed.refs
            | "Spread" >> beam.Reshuffle()
            | "Load" >> beam.ParDo(_Load(readers, self.blobs, self.group_prefix), totals=totals)
            .with_outputs(REJECTED, main="items")
        )
        prefix = self.group_prefix
        items = loaded.items
        listing_filtered, load_rejected = listed[FILTERED_INPUTS], loaded[REJECTED]
        if prefix:
            def regroup(outcome):
                return dataclasses.replace(outcome, environment=prefix + outcome.environment)

            listing_rejected = listing_rejected | "RegroupListingRejected" >> beam.Map(regroup)
            listing_filtered = listing_filtered | "RegroupListingFiltered" >> beam.Map(regroup)
            load_rejected = load_rejected | "RegroupLoadRejected" >> beam.Map(regroup)
        counts = (
            listed.refs | "TagRefs" >> CountAs("enumerated", lambda ref: prefix + ref.environment),
            listing_rejected | "TagListingRejected" >> CountAs("listing_rejected"),
            listing_filtered | "TagListingFiltered" >> CountAs("listing_filtered"),
            load_rejected | "TagLoadRejected" >> CountAs("read_rejected"),
        ) | "Tags" >> beam.Flatten()
        return {
            "refs": listed.refs,
            "items": items,
            "listing_rejected": listing_rejected,
            "listing_filtered": listing_filtered,
            "load_rejected": load_rejected,
            "counts": counts,
        }


def inline_bytes(record: Any) -> int:
    """Bytes a record carries itself (blob references excluded)."""
    if isinstance(record, bytes):
        return len(record)
    if isinstance(record, dict):
        return sum(inline_bytes(v) for v in record.values())
    if isinstance(record, list | tuple):
        return sum(inline_bytes(v) for v in record)
    return 0


def _small(record: dict[str, Any]) -> dict[str, Any]:
    n = inline_bytes(record)
    if n > MAX_INLINE_BYTES:
        raise ValueError(
            f"record {record.get('id', '?')!r} carries {n} inline bytes into a shuffle: store its "
            "frames with core.blobs.BlobStore and pass the references (large PCollection elements "
            "make Beam hold whole benchmarks in memory)")
    return record


class WriteShardedParquet(beam.PTransform):
    """Write records as ``<staging>/<group>/<split>-0000i-of-0000N.parquet``.

    ``group_fn(record)`` picks the directory (e.g. ``data/coco``). Shard count per group comes
    from the group's total size; rows go to shards by id-hash range. The shuffle groups rows per
    *writer*: with the workers of an in-process runner, each worker gets one key holding the
    shards planned for it, largest first onto the least loaded
    (:func:`pipelines.common.options.shard_writers`, :func:`exports.parquet_shards.spread_shards`);
    any other runner gets one key per shard. Only records with their
    frames as blob references are grouped (checked: :data:`MAX_INLINE_BYTES`), and each shard is
    streamed one row group at a time, so memory stays flat however large the benchmark is.
    Emits one dict per file: relative path, rows, bytes, sha256.

    ``finish(record, **finish_inputs)`` (optional) completes each record as its shard is written,
    with side inputs (``AsDict`` …): a field that depends on all records, such as ProactiveBench's
    open-ended subset. Why here and not in a step of its own: a step with a side input computed
    from all records is a stage of its own, and every stage moves all records through the
    runner once more, and with two workers such a stage ran on one of them while the other
    idled (docs/scaling.md). ``finish`` must not change a record's size (the shard count
    is computed before it runs), e.g. it sets a field the record already holds.
    """

    def __init__(
        self,
        staging: str,
        group_fn: Callable[[dict[str, Any]], str],
        schema: RecordSchema,
        split: str,
        unique: bool = True,
        max_shard_bytes: int = MAX_SHARD_BYTES,
        finish: Callable[..., dict[str, Any]] | None = None,
        finish_inputs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.staging = staging
        self.group_fn = group_fn
        self.schema = schema
        self.split = split
        self.unique = unique
        self.max_shard_bytes = max_shard_bytes
        self.finish = finish
        self.finish_inputs = finish_inputs or {}

    def expand(self, records):
        group_fn, schema, split = self.group_fn, self.schema, self.split
        staging, unique, max_bytes, finish = self.staging, self.unique, self.max_shard_bytes, self.finish
        writers = shard_writers(records.pipeline.options)
        # packed where the record is made, in the stage that builds it: every later stage moves
        # one bytes value per record (exports.parquet_shards.Packed)
        keyed = records | "CheckSmall" >> beam.Map(_small) | "Pack" >> beam.Map(
            lambda r: (group_fn(r), pack(r, schema)))
        sizes = (
            keyed
            | "Size" >> beam.MapTuple(lambda g, p: (g, p[1]))
            | "SumSizes" >> beam.CombinePerKey(sum)
        )
        plans: dict[tuple[tuple[str, int], ...], dict[tuple[str, int, int], int]] = {}

        def assign(pair, sizes):
            group, packed = pair
            shards = num_shards(sizes[group], max_bytes)
            shard = (group, shard_of(packed[0], shards), shards)
            if writers is None:  # one key per shard: the runner spreads them (options.shard_writers)
                return shard, (shard, packed)
            plan_key = tuple(sorted(sizes.items()))
            if plan_key not in plans:
                plans[plan_key] = spread_shards(sizes, writers, max_bytes)
            return plans[plan_key][shard], (shard, packed)

        def write(writer_rows, **side):
            end_worker_without_teardown()  # a worker that only writes shards (core/process_end.py)
            _, rows = writer_rows
            by_shard: dict[tuple[str, int, int], list] = {}
            for shard, packed in rows:
                by_shard.setdefault(shard, []).append(packed)
            complete = (lambda r: finish(r, **side)) if finish is not None else None
            for group, index, shards in sorted(by_shard):
                rel = f"{group}/{shard_name(split, index, shards)}"
                yield {"path": rel, **write_packed_shard(
                    f"{staging}/{rel}", by_shard.pop((group, index, shards)), schema, unique,
                    complete)}

        return (
            keyed
            | "AssignShard" >> beam.Map(assign, sizes=AsDict(sizes))
            | "GroupShard" >> beam.GroupByKey()
            | "WriteShard" >> beam.FlatMap(write, **self.finish_inputs)
        )


FACT_ROWS_PER_PART = 2048  # the facts one worker holds to sort and write one part


@dataclass(frozen=True)
class BuildFacts:
    """Facts a pipeline hands to the steps the driver runs after it (the ledger, the
    pending-review state, the release's manifest facts): ``_build/<name>/``, JSON lines in parts
    of at most about :data:`FACT_ROWS_PER_PART` facts, each part sorted, and an ``index.json``
    with the count. Declared once in a benchmark folder's ``build_facts.py`` and used by both
    sides — the pipeline writes it (:meth:`write`), the driver-side step reads it (:meth:`read`,
    :meth:`iter`) — so the two cannot name different files.

    Why parts: collecting every fact into one element to sort it held them all at once, as Python
    objects, in one worker, and then their JSON twice over — a build's candidates grow with its
    corpus (docs/scaling.md, "The one-worker release's peak, stage by stage"). A fact's line is
    its ``json.dumps``, and the facts come back in the order of those lines, merged across the
    parts as they are read."""

    name: str

    def folder(self, staging: str | Path) -> Path:
        return Path(staging) / "_build" / self.name

    def write(self, staging: str) -> WriteFacts:
        return WriteFacts(f"{staging}/_build/{self.name}")

    def iter(self, staging: str | Path) -> Iterator[Any]:
        """The facts in the order of their JSON lines, one part's line at a time from each."""
        folder = self.folder(staging)
        index = json.loads((folder / "index.json").read_text())
        parts = [folder / part for i in range(index["parts"])
                 if (folder / (part := fact_part_name(i, index["parts"]))).exists()]
        with contextlib.ExitStack() as stack:
            files = [stack.enter_context(p.open(encoding="ascii")) for p in parts]
            n = 0
            for line in heapq.merge(*files):
                n += 1
                yield json.loads(line)
        if n != index["rows"]:  # a part lost or cut: never a silently shorter list
            raise ValueError(f"{folder}: its parts hold {n} facts, its index.json says {index['rows']}")

    def read(self, staging: str | Path) -> list[Any]:
        return list(self.iter(staging))


def fact_part_name(index: int, parts: int) -> str:
    return f"part-{index:05d}-of-{parts:05d}.jsonl"


def fact_parts(rows: int) -> int:
    """How many parts ``rows`` facts are written in (at least one, for the index to name)."""
    return max(1, -(-rows // FACT_ROWS_PER_PART))


class WriteFacts(beam.PTransform):
    """A PCollection of JSON values → ``<folder>/part-*.jsonl`` and ``<folder>/index.json``
    (:class:`BuildFacts`): each value goes to a part by the hash of its JSON, each part is sorted
    by its lines. Deterministic: the parts and their bytes depend on the values alone."""

    def __init__(self, folder: str) -> None:
        super().__init__()
        self.folder = folder

    def expand(self, pcoll):
        folder = self.folder
        count = pcoll | "Count" >> beam.combiners.Count.Globally()

        def to_part(value: Any, rows: int) -> tuple[int, tuple[int, str]]:
            line = json.dumps(value)
            parts = fact_parts(rows)
            return int(hashlib.sha256(line.encode()).hexdigest()[:16], 16) % parts, (parts, line)

        def write_part(part: int, lines: Any) -> str:
            lines = list(lines)
            path = f"{folder}/{fact_part_name(part, lines[0][0])}"
            write_bytes(path, "".join(f"{line}\n" for _, line in sorted(lines, key=lambda x: x[1])).encode())
            return path

        def write_index(rows: int) -> str:
            path = f"{folder}/index.json"
            write_bytes(path, json.dumps({"rows": rows, "parts": fact_parts(rows)}, sort_keys=True).encode())
            return path

        count | "WriteIndex" >> beam.Map(write_index)
        return (
            pcoll
            | "ToPart" >> beam.Map(to_part, rows=AsSingleton(count))
            | "GroupPart" >> beam.GroupByKey()
            | "WritePart" >> beam.MapTuple(write_part)
        )


class WriteJson(beam.PTransform):
    """Collect a PCollection into one sorted JSON list file (the per-stage counts for the
    driver: one row per group and stage, never more)."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def expand(self, pcoll):
        path = self.path

        def write(values):
            data = json.dumps(sorted(values, key=json.dumps), indent=1, sort_keys=True)
            write_bytes(path, data.encode())
            return path

        return pcoll | "ToList" >> beam.combiners.ToList() | "Write" >> beam.Map(write)


def _flattened(pcolls: Any) -> Any:
    """One PCollection from a PCollection or a tuple of them (pipe a *tuple* into these
    transforms: Beam does not pass a list of PCollections through to a composite's expand)."""
    if isinstance(pcolls, beam.pvalue.PCollection):
        return pcolls
    return pcolls | "Flatten" >> beam.Flatten()


def outcome_group(element: Any) -> str:
    """The counts group of a record, rejection or item reference: its ``environment``."""
    if isinstance(element, dict):
        return str(element["environment"])
    return element.environment  # Rejection, Filtered, ItemRef, SourceItem


class CountAs(beam.PTransform):
    """Tag every element with ``((group, stage), n)`` for :class:`CountOutcomes`, ``n`` being the
    items it stands for (``count`` of a per-file :class:`Filtered` summary; 1 otherwise) — a
    weight, not ``n`` copies: a per-class summary of 150K drawings is one element."""

    def __init__(self, stage: str, group_fn: Callable[[Any], str] = outcome_group) -> None:
        super().__init__()
        self.stage = stage
        self.group_fn = group_fn

    def expand(self, pcoll):
        stage, group_fn = self.stage, self.group_fn
        return pcoll | "Tag" >> beam.Map(lambda x: ((group_fn(x), stage), getattr(x, "count", 1)))


class CountOutcomes(beam.PTransform):
    """``((group, stage), n)`` tags from every stage → ``_build/counts.json`` (one row per group
    and stage, ``n`` summed), which the driver turns into ``inputs = kept + filtered + rejected``
    per group. A part of a pipeline that counts its own groups apart (a training split beside the
    evaluation split) writes ``_build/counts-<part>.json``; the driver reads every
    ``counts*.json``."""

    def __init__(self, staging: str, part: str = "") -> None:
        super().__init__()
        self.staging = staging
        self.name = f"counts-{part}" if part else "counts"

    def expand(self, tags):
        return (
            _flattened(tags)
            | "CountPerStage" >> beam.CombinePerKey(sum)
            | "Rows" >> beam.MapTuple(lambda k, n: {"environment": k[0], "stage": k[1], "n": n})
            | "Write" >> WriteJson(f"{self.staging}/_build/{self.name}.json")
        )


class WriteFilteredInputs(beam.PTransform):
    """Every :class:`Filtered` input → ``filtered_inputs/`` (FILTERED_INPUT records); a second
    split of a release writes its own under ``folder`` (e.g. ``filtered_inputs/train``)."""

    def __init__(self, staging: str, folder: str = FILTERED_INPUTS) -> None:
        super().__init__()
        self.staging = staging
        self.folder = folder

    def expand(self, filtered):
        from schemas.outcomes import FILTERED_INPUT

        folder = self.folder
        return (
            _flattened(filtered)
            | "Records" >> beam.Map(lambda r: r.to_record())
            | "Write" >> WriteShardedParquet(self.staging, lambda r: folder, FILTERED_INPUT,
                                             FILTERED_INPUTS, unique=False)
        )


class WriteRejections(beam.PTransform):
    """Every rejection → ``rejected/`` (REJECTION records, several per item allowed); a second
    split of a release writes its own under ``folder`` (e.g. ``train/rejected``)."""

    def __init__(self, staging: str, folder: str = "rejected") -> None:
        super().__init__()
        self.staging = staging
        self.folder = folder

    def expand(self, rejections):
        from schemas.outcomes import REJECTION

        folder = self.folder
        return (
            _flattened(rejections)
            | "Records" >> beam.Map(lambda r: r.to_record())
            | "Write" >> WriteShardedParquet(self.staging, lambda r: folder, REJECTION, "rejected",
                                             unique=False)
        )
