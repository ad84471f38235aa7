"""Every record type benchforge writes to Parquet (releases, decision logs) by name, so a reader
can tell what a Parquet file holds.

Why a registry: each release file says which record it carries (the ``benchforge`` key of its
Arrow schema metadata, :meth:`schemas.core.RecordSchema.arrow_schema`), and the exports that
describe or compare releases (Croissant record sets, release diffs) need that record's fields
without knowing which benchmark wrote the file.
"""

from __future__ import annotations

import importlib
import pkgutil

import schemas
from schemas.core import RecordSchema


def _defined() -> dict[str, RecordSchema]:
    """Every :class:`RecordSchema` defined in a module of this package, by name. Why discovered,
    not listed: a new benchmark's ``schemas/<name>.py`` is registered by existing, so a record
    type cannot be forgotten here."""
    found: dict[str, RecordSchema] = {}
    for info in sorted(pkgutil.iter_modules(schemas.__path__), key=lambda i: i.name):
        if info.name != "registry":
            module = importlib.import_module(f"schemas.{info.name}")
            found.update((v.name, v) for v in vars(module).values() if isinstance(v, RecordSchema))
    return dict(sorted(found.items()))


RECORDS: dict[str, RecordSchema] = _defined()


def record_schema(name: str) -> RecordSchema:
    """The record type called ``name``; ``KeyError`` naming the known ones otherwise."""
    try:
        return RECORDS[name]
    except KeyError:
        raise KeyError(f"unknown record type {name!r}; known: {', '.join(sorted(RECORDS))}") from None
