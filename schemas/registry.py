"""Every record type benchforge writes to Parquet (releases, decision logs) by name, so a reader
can tell what a Parquet file holds.

Why a registry: each release file says which record it carries (the ``benchforge`` key of its
Arrow schema metadata, :meth:`schemas.core.RecordSchema.arrow_schema`), and the exports that
describe or compare releases (Croissant record sets, release diffs) need that record's fields
without knowing which benchmark wrote the file.
"""

from __future__ import annotations

from schemas.core import RecordSchema
from schemas.outcomes import FILTERED_INPUT, REJECTION
from schemas.proactivebench import EPISODE, FILTERED_EPISODE, TRAIN_ROW
from schemas.proready import FILTERED_ITEM, ITEM, RELEASED_ITEM
from schemas.review import REVIEW_DECISION
from schemas.streamvibe import FILTERED, POINTWISE, RL_SEED, SAMPLE, SFT_STREAM

RECORDS: dict[str, RecordSchema] = {
    s.name: s
    for s in (EPISODE, FILTERED_EPISODE, TRAIN_ROW, SAMPLE, POINTWISE, FILTERED, SFT_STREAM, RL_SEED,
              RELEASED_ITEM, FILTERED_ITEM, ITEM, REJECTION, FILTERED_INPUT, REVIEW_DECISION)
}


def record_schema(name: str) -> RecordSchema:
    """The record type called ``name``; ``KeyError`` naming the known ones otherwise."""
    try:
        return RECORDS[name]
    except KeyError:
        raise KeyError(f"unknown record type {name!r}; known: {', '.join(sorted(RECORDS))}") from None
