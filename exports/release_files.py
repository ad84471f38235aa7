"""Reading a published release as the evaluation kits see it: card configs, data files, rows.

Why one reader for every export: an export must describe exactly the data a user loads with
``datasets.load_dataset(<release>, <config>)`` — the configs of the card's YAML header and the
files they glob — and must carry the release's identity (benchmark, version, sha256 of
``manifest.json``) so a result computed on it can be traced to the exact bytes
(docs/exports.md). Nothing here knows a benchmark: record types come from the files themselves
(:mod:`schemas.registry`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from core.files import file_sha256
from schemas.core import RecordSchema
from schemas.registry import record_schema


@dataclass(frozen=True)
class Release:
    """A published release folder and what its card and manifest say about it."""

    path: Path
    manifest: dict[str, Any]
    manifest_sha256: str
    card: dict[str, Any]  # the YAML header of README.md
    card_text: str  # README.md without the header

    @property
    def benchmark(self) -> str:
        return str(self.manifest["benchmark"])

    @property
    def version(self) -> str:
        return str(self.manifest["version"])

    @property
    def splits(self) -> list[str]:
        """Every split of the release: the evaluation split first, then a split published beside
        it (a training split), as the manifest lists them."""
        split = self.manifest.get("split", "test")
        return [str(s) for s in split] if isinstance(split, list) else [str(split)]

    @property
    def split(self) -> str:
        """The evaluation split (what evaluation exports read)."""
        return self.splits[0]

    def stamp(self) -> dict[str, str]:
        """What every export carries so a result names the exact data it was computed on."""
        return {"benchmark": self.benchmark, "version": self.version,
                "manifest_sha256": self.manifest_sha256,
                "code_version": str(self.manifest.get("code_version", ""))}

    def configs(self, *, include_all: bool = False, split: str | None = None) -> dict[str, list[str]]:
        """Config name → data-file globs (relative to the release) of the card's ``configs:`` that
        have files of ``split`` (default: the evaluation split). ``all`` (the union of the
        per-group configs) is left out unless asked for."""
        split = split or self.split
        out: dict[str, list[str]] = {}
        for cfg in self.card.get("configs", []):
            name = str(cfg["config_name"])
            globs = [str(d["path"]) for d in cfg["data_files"] if d.get("split") == split]
            if globs and (include_all or name != "all"):
                out[name] = globs
        return out

    def files(self, config: str, split: str | None = None) -> list[Path]:
        """The Parquet files of one config, sorted (shards in order)."""
        globs = self.configs(include_all=True, split=split)[config]
        return sorted({p for g in globs for p in self.path.glob(g)})

    def record_schema(self, config: str, split: str | None = None) -> RecordSchema:
        """The record type a config's files hold (from the ``benchforge`` key of the first one)."""
        files = self.files(config, split)
        if not files:
            raise ValueError(f"{self.path}: config {config!r} has no data files")
        return file_record_schema(files[0])


def read_release(path: str | Path, manifest: dict[str, Any] | None = None) -> Release:
    """Read ``manifest.json`` and the card of a release; ``ValueError`` names what is missing.

    ``manifest``: the manifest of a release still being built, given because it is not on disk
    yet (the build writes it once, last but for Croissant); its ``manifest_sha256`` is then
    empty, as the bytes it will have are not known."""
    root = Path(path).resolve()
    manifest_path, card_path = root / "manifest.json", root / "README.md"
    needed = [card_path] if manifest is not None else [manifest_path, card_path]
    for p in needed:
        if not p.is_file():
            raise ValueError(f"{root} is not a release: {p.name} is missing")
    text = card_path.read_text(encoding="utf-8")
    if not text.startswith("---\n") or "\n---" not in text[4:]:
        raise ValueError(f"{card_path}: no YAML header (configs:)")
    header, body = text[4:].split("\n---", 1)
    if manifest is None:
        manifest, digest = json.loads(manifest_path.read_text(encoding="utf-8")), file_sha256(manifest_path)
    else:
        digest = ""
    return Release(path=root, manifest=manifest, manifest_sha256=digest,
                   card=yaml.safe_load(header) or {}, card_text=body.lstrip("-\n"))


def file_record_schema(path: Path) -> RecordSchema:
    """The record type a release Parquet file says it holds."""
    meta = pq.read_schema(path).metadata or {}
    if b"benchforge" not in meta:
        raise ValueError(f"{path}: no benchforge record metadata")
    return record_schema(json.loads(meta[b"benchforge"])["record"])


def read_batches(path: str | Path, columns: list[str] | None = None, rows: int = 8
                 ) -> Iterator[pa.RecordBatch]:
    """Batches of ``rows`` rows of one Parquet file, read one row group at a time.

    Why: the shard writer bounds each row group's frame bytes (``MAX_ROW_GROUP_BYTES``), so this
    holds about one row group whatever the file's size. ``ParquetFile.iter_batches(batch_size=64)``
    over a whole file decodes 64 rows of frames at once, across row groups: several times the
    shard's size in memory, which was the largest share of a large build's peak
    (docs/scaling.md)."""
    pf = pq.ParquetFile(path)
    for group in range(pf.metadata.num_row_groups):
        yield from pf.iter_batches(batch_size=rows, row_groups=[group], columns=columns)


def iter_rows(files: list[Path], columns: list[str] | None = None, rows: int = 8
              ) -> Iterator[dict[str, Any]]:
    """Rows of ``files`` in file order, a few at a time (frames make rows large)."""
    for path in files:
        for batch in read_batches(path, columns, rows):
            yield from batch.to_pylist()
