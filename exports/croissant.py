"""Croissant metadata (``croissant.json``) for a release, so dataset catalogues and loaders read it
without running benchforge (MLCommons Croissant 1.0, as Hugging Face publishes it).

What goes in, and from where (nothing is typed twice):

* **record sets** — one per config of the card, its fields derived from the record type the
  config's Parquet files say they hold (:mod:`schemas.registry`): scalars become ``sc:Text`` /
  ``sc:Integer`` / ``sc:Float`` / ``sc:Boolean``, embedded images ``sc:ImageObject`` (the
  ``bytes`` of the ``{bytes, path}`` struct), lists ``repeated`` fields, structs ``subField`` s;
  each field keeps its schema docstring as description;
* **file objects** — ``manifest.json``, ``README.md`` and every Parquet file of the manifest,
  each with the sha256 the manifest records (``README.md``/``manifest.json`` hashed here); one
  file set per config with the card's glob;
* **licence, description, version, citation** — the card's ``license`` and summary, the
  manifest's version and the sha256 of ``manifest.json`` (in ``sc:identifier``), the paper's
  BibTeX entry from ``CITATIONS.bib`` (passed in by the caller, which knows the benchmark).

Paths are relative, and Croissant resolves them against the folder holding the JSON file
(mlcroissant reads a file set by walking that folder): ``croissant.json`` must therefore sit in
the release or in a folder that contains it — next to it, in ``<out>/<benchmark>/``, is where
``benchforge export croissant`` puts it by default, since a published release is never written
into.

One limit of mlcroissant 1.1.1, and what we do about it: it reads a list of structs inside a
list of structs (StreamVibe's ``steps[].new_turns``) into the wrong place, so such a field is
left out of the record set and its parent's description says so (the Parquet file still has
it); every other field is described with its type.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from core.files import file_sha256
from exports.release_files import Release, read_release
from schemas.core import IMAGE, Field, ListOf, StructOf

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
CONTEXT: dict[str, Any] = {
    "@language": "en", "@vocab": "https://schema.org/", "citeAs": "cr:citeAs", "column": "cr:column",
    "conformsTo": "dct:conformsTo", "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/", "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"}, "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty", "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract", "field": "cr:field",
    "fileProperty": "cr:fileProperty", "fileObject": "cr:fileObject", "fileSet": "cr:fileSet",
    "format": "cr:format", "includes": "cr:includes", "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath", "key": "cr:key", "md5": "cr:md5", "parentField": "cr:parentField",
    "path": "cr:path", "recordSet": "cr:recordSet", "references": "cr:references", "regex": "cr:regex",
    "repeated": "cr:repeated", "replace": "cr:replace", "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator", "source": "cr:source", "subField": "cr:subField",
    "transform": "cr:transform",
}
DATA_TYPES = {"string": "sc:Text", "int32": "sc:Integer", "int64": "sc:Integer", "float64": "sc:Float",
              "bool": "sc:Boolean", IMAGE: "sc:ImageObject"}
PARQUET = "application/x-parquet"


def _source(file_set: str, column: str, path: list[str]) -> dict[str, Any]:
    src: dict[str, Any] = {"fileSet": {"@id": file_set}, "extract": {"column": column}}
    if path:
        src["transform"] = {"jsonPath": ".".join(path)}
    return src


def _field(rid: str, file_set: str, f: Field, column: str, path: list[str], depth: int
           ) -> dict[str, Any] | None:
    """The Croissant field of schema field ``f``: read from top-level ``column``, then by the JSON
    path ``path`` inside each element (mlcroissant applies a path to every element of a list).
    ``depth`` counts the lists of structs around ``f``; ``None`` for a list of structs inside a
    list of structs, which mlcroissant 1.1.1 cannot read (module doc)."""
    kind, repeated = f.kind, False
    if isinstance(kind, ListOf):
        kind, repeated = kind.item, True
    out: dict[str, Any] = {"@type": "cr:Field", "@id": f"{rid}/{f.name}", "name": f.name,
                           "description": f.doc}
    if repeated:
        out["repeated"] = True
    if isinstance(kind, StructOf):
        if repeated and depth >= 1:
            return None
        subs = [(s, _field(f"{rid}/{f.name}", file_set, s, column, path + [s.name],
                           depth + int(repeated))) for s in kind.fields]
        out["subField"] = [sub for _, sub in subs if sub is not None]
        left_out = [s.name for s, sub in subs if sub is None]
        if left_out:
            out["description"] += (f" Not described here: {', '.join(left_out)} (a list of structs in "
                                   "a list of structs, which mlcroissant 1.1.1 cannot read; it is "
                                   "in the Parquet file).")
        return out
    out["dataType"] = DATA_TYPES[kind]
    out["source"] = _source(file_set, column, path + (["bytes"] if kind == IMAGE else []))
    return out


def _file_object(rel: str, sha256: str, fmt: str) -> dict[str, Any]:
    return {"@type": "cr:FileObject", "@id": rel, "name": rel, "contentUrl": rel,
            "encodingFormat": fmt, "sha256": sha256}


def _card_summary(card_text: str) -> str:
    """The card's first paragraph after its title (what the benchmark says it is)."""
    paragraphs = [p.strip() for p in card_text.split("\n\n") if p.strip()]
    body = [p for p in paragraphs if not p.startswith("#")]
    return body[0] if body else ""


def croissant(release: Release, folder: Path, citation: str = "") -> dict[str, Any]:
    """The Croissant JSON-LD of ``release`` for a file in ``folder`` (the release or a folder
    containing it: paths are relative to the JSON file, module doc)."""
    rel_root = os.path.relpath(release.path, folder)
    if rel_root.startswith(".."):
        raise ValueError(f"croissant.json must be written into {release.path} or a folder that "
                         f"contains it (Croissant paths are relative to the JSON file), not {folder}")
    prefix = "" if rel_root == "." else rel_root + "/"
    distribution = [
        _file_object(prefix + "manifest.json", release.manifest_sha256, "application/json"),
        _file_object(prefix + "README.md", file_sha256(release.path / "README.md"), "text/markdown"),
    ]
    distribution += [_file_object(prefix + f["path"], f["sha256"], PARQUET)
                     for f in release.manifest["files"]]
    record_sets: list[dict[str, Any]] = []
    for split in release.splits:  # a training split beside the evaluation split is described too
        for config, globs in release.configs(split=split).items():
            schema = release.record_schema(config, split)
            set_id = config if split == release.split else f"{config}-{split}"
            file_set = f"files-{set_id}"
            distribution.append({"@type": "cr:FileSet", "@id": file_set, "name": file_set,
                                 "encodingFormat": PARQUET, "includes": [prefix + g for g in globs]})
            fields = [_field(set_id, file_set, f, f.name, [], 0) for f in schema.fields]
            record_sets.append({
                "@type": "cr:RecordSet", "@id": set_id, "name": set_id,
                "description": f"Config {config!r}, split {split!r}: records of type "
                               f"{schema.name} (schema {schema.version}). {schema.doc}",
                "key": {"@id": f"{set_id}/id"},
                "field": [f for f in fields if f is not None],
            })
    stamp = release.stamp()
    meta: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": str(release.card.get("pretty_name") or release.benchmark),
        "description": _card_summary(release.card_text),
        "license": str(release.card.get("license", "")),
        "version": release.version,
        "identifier": f"{stamp['benchmark']} {stamp['version']} manifest.json sha256:"
                      f"{stamp['manifest_sha256']}",
        "distribution": distribution,
        "recordSet": record_sets,
    }
    if citation:
        meta["citeAs"] = citation
    return meta


def write_croissant(release_dir: str | Path, folder: str | Path | None = None, citation: str = ""
                    ) -> Path:
    """Write the Croissant file of a release: ``croissant.json`` when ``folder`` is the release
    (what a build would add), else ``<benchmark>-<version>.croissant.json`` in ``folder``
    (default: the folder holding the release, i.e. next to it)."""
    release = read_release(release_dir)
    out_dir = Path(folder).resolve() if folder else release.path.parent
    name = "croissant.json" if out_dir == release.path else \
        f"{release.benchmark}-{release.version}.croissant.json"
    meta = croissant(release, out_dir, citation)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / name
    path.write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def bibtex_entry(bib: str, key: str) -> str:
    """The ``@type{key, …}`` entry of a BibTeX text, as written there."""
    match = re.search(r"@\w+\{" + re.escape(key) + r",.*?\n\}", bib, flags=re.S)
    if match is None:
        raise KeyError(f"no BibTeX entry {key!r}")
    return match.group(0)
