"""The leak filter's probe pool: which members it has and the two that answer locally.

The paper probes first-turn leakage with a pool of 22 MLLMs from 10 families (ProactiveBench App.
0.A.8). A pool member is one entry of the config's ``probes:`` list:

- ``openai`` / ``gemini``: a hosted or served model — a :class:`clients.ModelSpec`, asked through
  the model-client layer (:mod:`clients`: real SDKs, retries, limits, response cache, usage);
- ``precomputed``: first-turn predictions already run elsewhere (sample id, model, raw answer)
  from JSONL or Parquet — e.g. open-weight models evaluated with the authors' own harness;
- ``clip``: open_clip zero-shot scoring of the category options (a cheap, local pool member).

The last two are :class:`LocalProbe` s: they need no client, so they stay here.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass, fields
from typing import Any

from clients import BACKENDS as REMOTE_BACKENDS
from clients import ClientConfigError, ModelSpec
from filtering.parsing import FirstTurn

LOCAL_BACKENDS = ("precomputed", "clip")
BACKENDS = REMOTE_BACKENDS + LOCAL_BACKENDS
#: a first-turn answer is one letter or option: a probe without max_tokens gets this cap
PROBE_DEFAULTS = {"max_tokens": 32}


class ProbeConfigError(ClientConfigError):
    """The leak-filter section or a probe entry is unusable (names the file and the key)."""


@dataclass(frozen=True)
class LocalProbe:
    """A pool member answered without a model client (``precomputed`` or ``clip``)."""

    backend: str
    model: str
    name: str = ""
    path: str | None = None  # precomputed
    checkpoint: str | None = None  # clip
    templates: tuple[str, ...] = ("a photo of a {}.",)
    device: str = "auto"
    random_weights: bool = False

    def answer_settings(self) -> dict[str, Any]:
        """Settings that change the answer; for the manifest (never paths outside a file name)."""
        if self.backend == "precomputed":
            return {"path": os.path.basename(self.path or "")}
        return {"templates": list(self.templates), "checkpoint": self.checkpoint or "",
                "random_weights": self.random_weights}


Probe = ModelSpec | LocalProbe


def parse_probe(entry: dict[str, Any], where: str) -> Probe:
    """One ``probes:`` entry: a model entry (:mod:`clients.config` shape) or a local probe."""
    if not isinstance(entry, dict):
        raise ProbeConfigError(f"{where}: must be a mapping")
    backend = entry.get("backend")
    if backend in REMOTE_BACKENDS:
        try:
            return ModelSpec.from_dict(entry, where, PROBE_DEFAULTS)
        except ClientConfigError as exc:
            raise ProbeConfigError(str(exc)) from None
    if backend not in LOCAL_BACKENDS:
        raise ProbeConfigError(f"{where}.backend: must be one of {BACKENDS}, got {backend!r}")
    known = {f.name for f in fields(LocalProbe)}
    unknown = sorted(set(entry) - known)
    if unknown:
        raise ProbeConfigError(f"{where}: unknown keys {unknown} for a {backend} probe")
    if not entry.get("model"):
        raise ProbeConfigError(f"{where}.model: required")
    kw = {k: v for k, v in entry.items() if v is not None}
    if "templates" in kw:
        kw["templates"] = tuple(kw["templates"])
    probe = LocalProbe(**kw)
    if not probe.name:
        probe = LocalProbe(**{**kw, "name": probe.model})
    if backend == "precomputed" and not probe.path:
        raise ProbeConfigError(f"{where}.path: a precomputed probe needs a JSONL or Parquet file")
    return probe


_PRECOMPUTED: dict[tuple[str, float], dict[tuple[str, str], str]] = {}


def load_precomputed(path: str) -> dict[tuple[str, str], str]:
    """(sample id, model) → raw first-turn answer from JSONL or Parquet (memoised per file)."""
    if not os.path.isfile(path):
        raise ProbeConfigError(f"precomputed predictions file {path} does not exist")
    key = (os.path.abspath(path), os.stat(path).st_mtime)
    if key in _PRECOMPUTED:
        return _PRECOMPUTED[key]
    rows: list[dict[str, Any]]
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    else:
        rows = []
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        raise ProbeConfigError(f"{path}:{n}: invalid JSON ({e.msg})") from None
    table: dict[tuple[str, str], str] = {}
    for n, row in enumerate(rows, 1):
        for col in ("sample_id", "model", "raw_answer"):
            if not isinstance(row.get(col), str):
                raise ProbeConfigError(f"{path}: row {n}: field {col!r} missing or not a string")
        k = (row["sample_id"], row["model"])
        if k in table and table[k] != row["raw_answer"]:
            raise ProbeConfigError(f"{path}: row {n}: conflicting duplicate answer for {k}")
        table[k] = row["raw_answer"]
    _PRECOMPUTED[key] = table
    return table


class ClipProbe:
    """open_clip zero-shot choice among the category options (image vs. prompt-ensembled text).

    It can only pick a category, never a proactive option, so it is an upper bound on what
    "recognisable at the first frame" means for a contrastive model; it answers with the
    category text, parsed like any other answer.
    """

    def __init__(self, probe: LocalProbe, cache_dir: str | None, batch_size: int = 32) -> None:
        from filtering.negatives import HardNegativeMiner

        self.probe = probe
        self.batch_size = batch_size
        self.text = HardNegativeMiner(probe.model, probe.checkpoint, list(probe.templates), probe.device,
                                      probe.random_weights, cache_dir=cache_dir)

    def describe(self) -> dict[str, Any]:
        return self.text.describe()

    def identity(self) -> str:
        """What a cached CLIP answer is an answer of: the weights' sha256 and the templates."""
        d = self.describe()
        settings = json.dumps({"checkpoint_sha256": d["checkpoint_sha256"], "templates": d["templates"]},
                              sort_keys=True, separators=(",", ":"))
        return f"clip:{self.probe.model}:{settings}"

    def answer(self, turns: list[FirstTurn]) -> list[str]:
        import numpy as np
        import torch
        from PIL import Image

        from filtering.clip_models import load_clip, resolve_device

        clip = load_clip(self.text.model_name, self.text.checkpoint_path, resolve_device(self.probe.device))
        out: list[str] = []
        for i in range(0, len(turns), self.batch_size):
            chunk = turns[i : i + self.batch_size]
            imgs = torch.stack(
                [clip.preprocess(Image.open(io.BytesIO(t.image)).convert("RGB")) for t in chunk]
            ).to(clip.device)
            with torch.no_grad():
                feats = clip.model.encode_image(imgs).float()
                feats = (feats / feats.norm(dim=-1, keepdim=True)).cpu().numpy()
            for t, f in zip(chunk, feats, strict=True):
                text = self.text.embed(list(t.categories))
                scores = np.round(text @ f.astype(np.float64), 6)
                out.append(t.categories[int(np.argmax(scores))])
        return out
