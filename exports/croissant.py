"""Croissant metadata (``croissant.json``) for a release, so dataset catalogues and loaders read it
without running benchforge (MLCommons Croissant 1.0, as Hugging Face publishes it).

What goes in, and from where (nothing is typed twice):

* **record sets** — one per config of the card, its fields derived from the record type the
  config's Parquet files say they hold (:mod:`schemas.registry`): scalars become ``sc:Text`` /
  ``sc:Integer`` / ``sc:Float`` / ``sc:Boolean``, embedded images ``sc:ImageObject`` (the
  ``bytes`` of the ``{bytes, path}`` struct), lists ``repeated`` fields, structs ``subField`` s;
  each field keeps its schema docstring as description;
* **file objects** — ``manifest.json`` (hashed here) and every file the manifest lists (the
  card, the data, the reports), each once, under its path as ``@id``, with the sha256 the
  manifest records and the media type its extension names (:data:`FORMATS`; an extension not
  in the table is ``application/octet-stream``, never guessed); one file set per config with
  the card's glob;
* **licence, description, version, date, citation** — the card's ``license`` and summary, the
  manifest's version and the sha256 of ``manifest.json`` (in ``sc:identifier``), the date of
  the manifest's ``release`` entry as ``datePublished`` (the config's ``release_date:`` or the
  commit date of the code: :func:`exports.release.release_date`), the paper's BibTeX entry
  the manifest records (``citation``, the benchmark folder's ``citation.bib``).

So the document is a function of the manifest, the card and the Parquet schemas, and the gate
derives it again and compares (:func:`first_difference`, called by
:func:`exports.integrity.verify_croissant`): an edited ``croissant.json`` fails ``benchforge
check``, naming the first JSON path that differs.

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
import posixpath
import re
from pathlib import Path
from typing import Any

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
# encodingFormat by extension: the media types mlcroissant 1.1.1 reads by (its EncodingFormat:
# Parquet, JSON, JSON lines as "application/jsonlines", CSV, TSV, text, PNG, JPEG, …) and the
# registered types of the other files a release holds (the card, the gate's HTML report)
FORMATS = {
    ".parquet": PARQUET, ".json": "application/json", ".jsonl": "application/jsonlines",
    ".csv": "text/csv", ".tsv": "text/tab-separated-values", ".txt": "text/plain",
    ".md": "text/markdown", ".html": "text/html", ".yaml": "application/yaml",
    ".yml": "application/yaml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
    ".webp": "image/webp", ".gif": "image/gif", ".tif": "image/tiff", ".tiff": "image/tiff",
    ".mp4": "video/mp4", ".webm": "video/webm", ".mkv": "video/x-matroska", ".avi": "video/x-msvideo",
    ".mov": "video/quicktime", ".wav": "audio/wav", ".mp3": "audio/mpeg", ".zip": "application/zip",
    ".tar": "application/x-tar", ".gz": "application/gzip",
}
UNKNOWN_FORMAT = "application/octet-stream"  # bytes of no declared type: a reader must not guess


def encoding_format(path: str) -> str:
    """The media type of a release file, by its extension (:data:`FORMATS`, case-insensitive);
    :data:`UNKNOWN_FORMAT` for any other, so a file is never declared to be what it is not."""
    return FORMATS.get(posixpath.splitext(path)[1].lower(), UNKNOWN_FORMAT)


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


def _file_object(rel: str, sha256: str) -> dict[str, Any]:
    return {"@type": "cr:FileObject", "@id": rel, "name": rel, "contentUrl": rel,
            "encodingFormat": encoding_format(rel), "sha256": sha256}


def _card_summary(card_text: str) -> str:
    """The card's first paragraph after its title (what the benchmark says it is)."""
    paragraphs = [p.strip() for p in card_text.split("\n\n") if p.strip()]
    body = [p for p in paragraphs if not p.startswith("#")]
    return body[0] if body else ""


def croissant(release: Release, folder: Path, citation: str = "") -> dict[str, Any]:
    """The Croissant JSON-LD of ``release`` for a file in ``folder`` (the release or a folder
    containing it: paths are relative to the JSON file, module doc). ``citation`` is the BibTeX
    entry for a release whose manifest records none (built before manifests did); the
    manifest's own ``citation`` wins, so the document stays a function of the release."""
    rel_root = os.path.relpath(release.path, folder)
    if rel_root.startswith(".."):
        raise ValueError(f"croissant.json must be written into {release.path} or a folder that "
                         f"contains it (Croissant paths are relative to the JSON file), not {folder}")
    prefix = "" if rel_root == "." else rel_root + "/"
    # the manifest lists the card with the other files: one object per file, README.md once
    distribution = [_file_object(prefix + "manifest.json", release.manifest_sha256)]
    distribution += [_file_object(prefix + f["path"], f["sha256"]) for f in release.manifest["files"]]
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
    published = (release.manifest.get("release") or {}).get("date")
    if published:  # a release built outside a git checkout with no release_date: names no date
        meta["datePublished"] = str(published)
    cite = str(release.manifest.get("citation") or citation)
    if cite:
        meta["citeAs"] = cite
    return meta


def croissant_text(meta: dict[str, Any]) -> str:
    """The bytes ``croissant.json`` holds for ``meta``: one serialisation, written by the build
    and compared by the gate."""
    return json.dumps(meta, indent=1, ensure_ascii=False) + "\n"


def _step(key: str) -> str:
    return f".{key}" if re.fullmatch(r"[A-Za-z_]\w*", key) else f"[{key!r}]"


def _ids(items: list[Any]) -> list[Any] | None:
    """The ``@id`` of every entry of a JSON-LD list, or None unless every entry has one."""
    if items and all(isinstance(i, dict) and "@id" in i for i in items):
        return [i["@id"] for i in items]
    return None


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "…"


def first_difference(found: Any, derived: Any, where: str = "$") -> str | None:
    """Where the JSON value ``found`` (a ``croissant.json`` as read) first differs from
    ``derived`` (what the release gives, as JSON reads it back), as a JSON path and what each
    side holds; None when they are equal. Lists of JSON-LD nodes are matched by ``@id`` first,
    so a removed or added file object is named, not reported as a shift of every entry after
    it."""
    if isinstance(found, dict) and isinstance(derived, dict):
        for key in derived:
            if key not in found:
                return f"{where}{_step(key)}: missing, the release gives {_short(derived[key])}"
        for key in found:
            if key not in derived:
                return f"{where}{_step(key)}: {_short(found[key])}, which the release does not give"
        for key in derived:
            if (diff := first_difference(found[key], derived[key], where + _step(key))) is not None:
                return diff
        return None
    if isinstance(found, list) and isinstance(derived, list):
        ours, theirs = _ids(found), _ids(derived)
        if ours is not None and theirs is not None:
            if missing := [i for i in theirs if i not in ours]:
                return f"{where}: no entry with @id {_short(missing[0])}, which the release gives"
            if added := [i for i in ours if i not in theirs]:
                return f"{where}: an entry with @id {_short(added[0])}, which the release does not give"
        for i, (a, b) in enumerate(zip(found, derived, strict=False)):
            if (diff := first_difference(a, b, f"{where}[{i}]")) is not None:
                return diff
        if len(found) != len(derived):
            return f"{where}: {len(found)} entries, the release gives {len(derived)}"
        return None
    if type(found) is not type(derived) or found != derived:
        return f"{where}: {_short(found)}, the release gives {_short(derived)}"
    return None


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
    path.write_text(croissant_text(meta), encoding="utf-8")
    return path


def bibtex_entry(bib: str, key: str) -> str:
    """The ``@type{key, …}`` entry of a BibTeX text, as written there."""
    match = re.search(r"@\w+\{" + re.escape(key) + r",.*?\n\}", bib, flags=re.S)
    if match is None:
        raise KeyError(f"no BibTeX entry {key!r}")
    return match.group(0)
