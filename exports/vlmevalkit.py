"""VLMEvalKit's image multiple-choice TSV, written from rows a benchmark provides.

VLMEvalKit (not on PyPI; read from its sources: ``vlmeval/dataset/image_base.py``,
``image_mcq.py``, ``vlmeval/smp/file.py``) loads a dataset as ``pd.read_csv(<LMUData>/<name>.tsv,
sep='\\t')`` and, for a registered dataset, re-downloads the file unless the MD5 of its bytes is the
one in ``DATASET_MD5``. A row is one question: ``index``, ``image`` (base64 of the image file),
``question``, ``hint``, one column per option letter, ``answer`` (the letter), ``category``,
``split``. ``ImageMCQDataset.build_prompt`` shows every option column ``A``–``Z`` present in the
row and not empty, so options beyond ``D`` are simply columns ``E``, ``F``, …; a row with fewer
options leaves the later columns empty (NaN when read back), which VLMEvalKit skips. A file with
no ``DATASET_MD5`` entry is loaded as a custom MCQ dataset when it has ``A``, ``B`` and an
``image`` column.

Why the release's bytes and not a re-encoded JPEG (VLMEvalKit's own ``encode_image_to_base64``
re-encodes): decoding the base64 gives back exactly the image of the release, so the test can
compare bytes, and a result is computed on the same pixels the release holds. Every row also
carries ``sample_id``, ``release_version`` and ``manifest_sha256`` — VLMEvalKit keeps the
dataset's columns in its prediction files, so each prediction names the data it came from.
"""

from __future__ import annotations

import base64
import hashlib
import json
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class McqRow:
    """One VLMEvalKit question: an image, the question, the options in letter order, the answer."""

    sample_id: str
    image: bytes
    question: str
    hint: str
    options: tuple[str, ...]
    answer: str  # the correct option's text (one of ``options``)
    category: str
    split: str


def md5_file(path: Path) -> str:
    """The MD5 VLMEvalKit checks (``vlmeval.smp.md5``: of the file's bytes, read in 1 MiB chunks)."""
    digest = hashlib.md5()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def write_tsv(rows: list[McqRow], path: Path, stamp: dict[str, str], notes: dict[str, Any]) -> dict[str, Any]:
    """Write ``path`` (the TSV) and ``<path>.json`` (its MD5, row count, the release stamp and
    ``notes``); return the sidecar's content."""
    letters = max(len(r.options) for r in rows)
    if letters > len(string.ascii_uppercase):
        raise ValueError(f"{path.name}: {letters} options; VLMEvalKit letters stop at Z")
    records = []
    for i, r in enumerate(rows):
        if r.answer not in r.options:
            raise ValueError(f"{r.sample_id}: answer {r.answer!r} is not among its options")
        rec: dict[str, Any] = {"index": i, "image": base64.b64encode(r.image).decode("ascii"),
                               "question": r.question, "hint": r.hint or None}
        rec.update({string.ascii_uppercase[k]: (r.options[k] if k < len(r.options) else None)
                    for k in range(letters)})
        rec.update(answer=string.ascii_uppercase[r.options.index(r.answer)], category=r.category,
                   split=r.split, sample_id=r.sample_id, release_version=stamp["version"],
                   manifest_sha256=stamp["manifest_sha256"])
        records.append(rec)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame.from_records(records).to_csv(path, sep="\t", index=False, encoding="utf-8")
    sidecar = {"dataset": path.stem, "tsv": path.name, "md5": md5_file(path), "rows": len(rows),
               "option_letters": string.ascii_uppercase[:letters], "release": stamp, **notes}
    path.with_suffix(".json").write_text(json.dumps(sidecar, indent=1, sort_keys=True) + "\n")
    return sidecar
