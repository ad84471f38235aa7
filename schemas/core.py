"""One definition per record type; Arrow schema, HF ``Features`` and JSON Schema derive from it.

Why a tiny DSL instead of writing three schemas by hand: the three views drift apart the moment
someone adds a field to one of them. Every record type in the project is a :class:`RecordSchema`
built from :class:`Field` objects, and every consumer (the Parquet writer, the dataset card, the
data-quality suite, the Label Studio task builder) asks it for the view it needs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

# Scalar type names used in field definitions, mapped to their three views.
_SCALARS: dict[str, tuple[pa.DataType, str, dict[str, Any]]] = {
    "string": (pa.string(), "string", {"type": "string"}),
    "int32": (pa.int32(), "int32", {"type": "integer"}),
    "int64": (pa.int64(), "int64", {"type": "integer"}),
    "float64": (pa.float64(), "float64", {"type": "number"}),
    "bool": (pa.bool_(), "bool", {"type": "boolean"}),
}

IMAGE = "image"  # HF Image(): struct{bytes: binary, path: string}
_IMAGE_ARROW = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


@dataclass(frozen=True)
class Field:
    """A named, documented field. ``kind`` is a scalar name, ``"image"``, a :class:`ListOf` or a
    :class:`StructOf`."""

    name: str
    kind: Any
    doc: str
    nullable: bool = False


@dataclass(frozen=True)
class ListOf:
    item: Any


@dataclass(frozen=True)
class StructOf:
    fields: tuple[Field, ...]


def _arrow_type(kind: Any) -> pa.DataType:
    if isinstance(kind, str):
        if kind == IMAGE:
            return _IMAGE_ARROW
        return _SCALARS[kind][0]
    if isinstance(kind, ListOf):
        return pa.list_(_arrow_type(kind.item))
    if isinstance(kind, StructOf):
        return pa.struct([pa.field(f.name, _arrow_type(f.kind)) for f in kind.fields])
    raise TypeError(f"unknown field kind {kind!r}")


def _hf_feature(kind: Any) -> dict[str, Any]:
    """The JSON form of a ``datasets`` feature (what ``Features.to_dict`` produces)."""
    if isinstance(kind, str):
        if kind == IMAGE:
            return {"_type": "Image"}
        return {"dtype": _SCALARS[kind][1], "_type": "Value"}
    if isinstance(kind, ListOf):
        return {"feature": _hf_feature(kind.item), "_type": "List"}
    if isinstance(kind, StructOf):
        return {f.name: _hf_feature(f.kind) for f in kind.fields}
    raise TypeError(f"unknown field kind {kind!r}")


def _json_schema(kind: Any, doc: str = "", nullable: bool = False) -> dict[str, Any]:
    if isinstance(kind, str):
        if kind == IMAGE:
            out: dict[str, Any] = {
                "type": "object",
                "properties": {"bytes": {"type": ["string", "null"], "contentEncoding": "base64"},
                               "path": {"type": ["string", "null"]}},
                "required": ["bytes", "path"],
            }
        else:
            out = dict(_SCALARS[kind][2])
    elif isinstance(kind, ListOf):
        out = {"type": "array", "items": _json_schema(kind.item)}
    elif isinstance(kind, StructOf):
        out = {
            "type": "object",
            "properties": {f.name: _json_schema(f.kind, f.doc, f.nullable) for f in kind.fields},
            "required": [f.name for f in kind.fields],
            "additionalProperties": False,
        }
    else:
        raise TypeError(f"unknown field kind {kind!r}")
    if nullable:
        out = {"anyOf": [out, {"type": "null"}]}
    if doc:
        out["description"] = doc
    return out


@dataclass(frozen=True)
class RecordSchema:
    """A record type: name, semantic version of its layout, and its fields."""

    name: str
    version: str
    doc: str
    fields: tuple[Field, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        names = [f.name for f in self.fields]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ValueError(f"schema {self.name}: duplicate field names {sorted(dupes)}")

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def extend(self, name: str, doc: str, *extra: Field) -> RecordSchema:
        """A new record type with all fields of this one plus ``extra`` (e.g. filtered episodes)."""
        return RecordSchema(name, self.version, doc, self.fields + tuple(extra))

    def hf_features_dict(self) -> dict[str, Any]:
        return {f.name: _hf_feature(f.kind) for f in self.fields}

    def arrow_schema(self) -> pa.Schema:
        """Arrow schema with the HF features in the ``huggingface`` metadata key, so
        ``datasets`` decodes ``Image`` columns without a cast (design.md §Conventions).

        Arrow fields are all nullable: ``datasets`` ignores the stored features when the Arrow
        schema has non-nullable fields (checked with datasets 5.2), and nullability is enforced
        by :meth:`validate` and the data-quality suite instead.
        """
        meta = {
            b"huggingface": json.dumps({"info": {"features": self.hf_features_dict()}}).encode(),
            b"benchforge": json.dumps({"record": self.name, "schema_version": self.version}).encode(),
        }
        return pa.schema(
            [pa.field(f.name, _arrow_type(f.kind)) for f in self.fields], metadata=meta
        )

    def hf_features(self) -> Any:
        from datasets import Features

        return Features.from_dict(self.hf_features_dict())

    def json_schema(self) -> dict[str, Any]:
        body = _json_schema(StructOf(self.fields))
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": self.name,
            "description": self.doc,
            "x-schema-version": self.version,
            **body,
        }

    def validate(self, record: dict[str, Any]) -> None:
        """Raise ``ValueError`` naming the first offending field (cheap structural check)."""
        missing = [n for n in self.names if n not in record]
        if missing:
            raise ValueError(f"{self.name}: missing fields {missing}")
        extra = [k for k in record if k not in self.names]
        if extra:
            raise ValueError(f"{self.name}: unknown fields {extra}")
        for f in self.fields:
            if record[f.name] is None and not f.nullable:
                raise ValueError(f"{self.name}: field {f.name!r} is null")
