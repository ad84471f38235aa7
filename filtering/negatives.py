"""Hard negatives mined with the open_clip text encoder (ProactiveBench App. 0.A.7).

For MS-COCO the paper mines wrong category options "using the CLIP text encoder to score the
similarity between the ground truth and all the other categories". Why hard negatives at all:
random wrong categories make a blurry first frame answerable by elimination (a "dog" among
"toaster", "airplane", "pizza"), which leaks the answer and defeats the proactive setting; the
paper does the same for MVP-N ("sampled among those similar to the correct one"). The miner is
selectable for any environment.

Similarity is the cosine between prompt-ensembled text embeddings (CLIP's zero-shot recipe:
embed each template, L2-normalise, average, normalise). Candidates that are the *same concept*
as the correct label are excluded, otherwise the benchmark would contain two right answers:

1. normalised duplicates ("hot dog" / "hot-dog" / "Hot_Dog"),
2. synonyms in the source's own label set (e.g. ImageNet synset lemmas "tabby, tabby cat"),
3. anything with similarity at or above ``ceiling`` (near-identical names the label set does not
   list as synonyms).

Scores are rounded to 6 decimals and ties are broken by name so a CPU and a GPU run pick the same
negatives (design.md §Conventions determinism).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sqlite3
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from contextlib import closing
from typing import Any

import numpy as np

from filtering.clip_models import (
    RANDOM_WEIGHTS,
    load_clip,
    resolve_checkpoint,
    resolve_device,
    sha256_file,
)

DEFAULT_TEMPLATES = ["a photo of a {}."]
SCORE_DECIMALS = 6


class NotEnoughNegativesError(ValueError):
    """Fewer than ``k`` admissible negatives remain after the exclusion rules."""


def normalize_label(name: str) -> str:
    """Canonical form for duplicate detection: NFKC, lower case, separators → space."""
    s = unicodedata.normalize("NFKC", name).lower()
    s = re.sub(r"[_\-/]+", " ", s)
    s = re.sub(r"[^\w\s]", "", s)
    return re.sub(r"\s+", " ", s).strip()


def concept_keys(name: str, synonyms: Mapping[str, Sequence[str]] | None) -> set[str]:
    """The normalised label plus its synonyms from the source's label set."""
    keys = {normalize_label(name)}
    if synonyms:
        keys.update(normalize_label(s) for s in synonyms.get(name, ()))
    return keys


def rank_negatives(
    correct: str,
    vocabulary: Sequence[str],
    scores: Mapping[str, float],
    k: int = 3,
    synonyms: Mapping[str, Sequence[str]] | None = None,
    ceiling: float = 0.95,
) -> tuple[list[tuple[str, float]], dict[str, str]]:
    """Pick the ``k`` most similar admissible candidates; also return why others were excluded.

    ``scores`` maps each vocabulary name to its similarity with ``correct``. Two candidates that
    are the same concept as each other keep only the higher-scoring one.
    """
    correct_keys = concept_keys(correct, synonyms)
    excluded: dict[str, str] = {}
    ranked = sorted(
        ((name, round(float(scores[name]), SCORE_DECIMALS)) for name in dict.fromkeys(vocabulary)),
        key=lambda t: (-t[1], t[0]),
    )
    taken: list[tuple[str, float]] = []
    taken_keys: set[str] = set()
    for name, score in ranked:
        keys = concept_keys(name, synonyms)
        if name == correct:
            continue
        if normalize_label(name) == normalize_label(correct):
            excluded[name] = "duplicate of the correct label after normalisation"
        elif keys & correct_keys:
            excluded[name] = "synonym of the correct label in the source label set"
        elif score >= ceiling:
            excluded[name] = f"similarity {score:.3f} >= ceiling {ceiling}"
        elif keys & taken_keys:
            excluded[name] = "same concept as a higher-ranked negative"
        elif len(taken) < k:
            taken.append((name, score))
            taken_keys |= keys
    if len(taken) < k:
        raise NotEnoughNegativesError(
            f"hard negatives for {correct!r}: only {len(taken)} admissible of {k} requested "
            f"(vocabulary {len(vocabulary)}, excluded {len(excluded)}: "
            f"{sorted(excluded.items())[:5]})"
        )
    return taken, excluded


def mine_from_table(
    correct: str,
    vocabulary: Sequence[str],
    table: Mapping[str, np.ndarray],
    k: int = 3,
    synonyms: Mapping[str, Sequence[str]] | None = None,
    ceiling: float = 0.95,
) -> list[tuple[str, float]]:
    """Mining on a given embedding table (cosine similarity); the logic the miner runs."""
    names = list(dict.fromkeys(vocabulary))
    if correct not in table:
        raise KeyError(f"no embedding for the correct label {correct!r}")
    mat = np.stack([np.asarray(table[n], dtype=np.float64) for n in names])
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    ref = np.asarray(table[correct], dtype=np.float64)
    ref = ref / np.linalg.norm(ref)
    sims = mat @ ref
    return rank_negatives(correct, names, dict(zip(names, sims, strict=True)), k, synonyms, ceiling)[0]


class _EmbeddingStore:
    """Per-template text embeddings keyed by (model, checkpoint sha256, template, text).

    In memory for the run, and in ``<cache_dir>/text_embeddings.sqlite`` when a cache directory is
    given, so a vocabulary is encoded once per run (and once ever with a cache dir).
    """

    def __init__(self, cache_dir: str | None) -> None:
        self.mem: dict[tuple[str, str, str, str], np.ndarray] = {}
        self.path = os.path.join(cache_dir, "text_embeddings.sqlite") if cache_dir else None
        if self.path:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with closing(sqlite3.connect(self.path, timeout=60)) as con, con:
                con.execute("PRAGMA journal_mode=WAL")
                con.execute(
                    "CREATE TABLE IF NOT EXISTS emb (model TEXT, sha TEXT, template TEXT, "
                    "text TEXT, vec BLOB, PRIMARY KEY (model, sha, template, text))"
                )

    def load(self, keys: list[tuple[str, str, str, str]]) -> None:
        missing = [k for k in keys if k not in self.mem]
        if not self.path or not missing:
            return
        with closing(sqlite3.connect(self.path, timeout=60)) as con:
            for key in missing:
                row = con.execute(
                    "SELECT vec FROM emb WHERE model=? AND sha=? AND template=? AND text=?", key
                ).fetchone()
                if row:
                    self.mem[key] = np.frombuffer(row[0], dtype=np.float32).copy()

    def save(self, items: dict[tuple[str, str, str, str], np.ndarray]) -> None:
        self.mem.update(items)
        if not self.path or not items:
            return
        with closing(sqlite3.connect(self.path, timeout=60)) as con, con:
            con.executemany(
                "INSERT OR REPLACE INTO emb VALUES (?,?,?,?,?)",
                [(*k, v.astype(np.float32).tobytes()) for k, v in items.items()],
            )


class HardNegativeMiner:
    """Mine the ``k`` most similar wrong categories with the open_clip text encoder.

    Weights come from ``checkpoint`` (a local .pt/.safetensors file, or a pretrained tag already
    in the local HF cache); nothing is downloaded. Missing weights raise
    :class:`~filtering.clip_models.MissingWeightsError` unless ``random_weights`` is set, which
    :meth:`describe` then reports as ``"random-weights"`` for the manifest and dataset card.
    The model loads lazily and is not pickled, so the miner can be shipped to Beam workers.
    """

    def __init__(
        self,
        model: str,
        checkpoint: str | None,
        templates: list[str],
        device: str = "auto",
        random_weights: bool = False,
        ceiling: float = 0.95,
        cache_dir: str | None = None,
        batch_size: int = 256,
    ) -> None:
        if not templates:
            templates = list(DEFAULT_TEMPLATES)
        bad = [t for t in templates if "{}" not in t]
        if bad:
            raise ValueError(f"prompt templates must contain '{{}}': {bad}")
        self.model_name = model
        self.templates = list(templates)
        self.device_request = device
        self.random_weights = random_weights
        self.ceiling = float(ceiling)
        self.cache_dir = cache_dir
        self.batch_size = batch_size
        # Resolve now: a missing checkpoint is a configuration error, reported before any work.
        self.checkpoint_path = resolve_checkpoint(model, checkpoint, random_weights)
        self.checkpoint_sha256 = sha256_file(self.checkpoint_path) if self.checkpoint_path else RANDOM_WEIGHTS
        self._store: _EmbeddingStore | None = None
        self._matrices: dict[tuple[str, ...], tuple[list[str], np.ndarray]] = {}
        self.encoded_texts = 0  # prompts actually run through the text encoder (cache misses)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_store"] = None
        state["_matrices"] = {}
        return state

    def describe(self) -> dict[str, Any]:
        """What the manifest records: model, checkpoint hash (or "random-weights"), templates."""
        import open_clip

        return {
            "method": "clip_text",
            "model": self.model_name,
            "checkpoint_sha256": self.checkpoint_sha256,
            "random_weights": self.checkpoint_sha256 == RANDOM_WEIGHTS,
            "templates": list(self.templates),
            "ceiling": self.ceiling,
            "ceiling_applied": self.ceiling_applied,
            "open_clip_version": open_clip.__version__,
            "score_decimals": SCORE_DECIMALS,
        }

    @property
    def ceiling_applied(self) -> bool:
        """The similarity ceiling is a semantic rule; random weights give every pair a
        near-identical embedding (ViT-B-32 random: all cosines > 0.95), so it is off for them."""
        return self.checkpoint_sha256 != RANDOM_WEIGHTS

    def card_notice(self) -> str:
        """Markdown for the dataset card; loud when the negatives came from random weights."""
        if self.checkpoint_sha256 == RANDOM_WEIGHTS:
            return (
                f"> ⚠️ **Hard negatives were mined with RANDOM open_clip weights** "
                f"({self.model_name}); they are not semantically similar categories. "
                "Only for tests and smoke runs.\n"
            )
        return (
            f"Hard negatives: open_clip {self.model_name} text encoder, checkpoint sha256 "
            f"`{self.checkpoint_sha256}`, templates {self.templates}, ceiling {self.ceiling}.\n"
        )

    @property
    def store(self) -> _EmbeddingStore:
        if self._store is None:
            self._store = _EmbeddingStore(self.cache_dir)
        return self._store

    def _encode(self, prompts: list[str]) -> np.ndarray:
        """Run prompts through the text encoder in batches (GPU when present); L2-normalised."""
        import torch

        clip = load_clip(self.model_name, self.checkpoint_path, resolve_device(self.device_request))
        out = []
        with torch.no_grad():
            for i in range(0, len(prompts), self.batch_size):
                tokens = clip.tokenizer(prompts[i : i + self.batch_size]).to(clip.device)
                feats = clip.model.encode_text(tokens).float()
                feats = feats / feats.norm(dim=-1, keepdim=True)
                out.append(feats.cpu().numpy())
        self.encoded_texts += len(prompts)
        return np.concatenate(out, axis=0) if out else np.zeros((0, 0), np.float32)

    def embed(self, names: Sequence[str]) -> np.ndarray:
        """Prompt-ensembled, normalised class embeddings, one row per name (cached)."""
        keys = [(self.model_name, self.checkpoint_sha256, t, n) for n in names for t in self.templates]
        self.store.load(keys)
        missing = list(dict.fromkeys(k for k in keys if k not in self.store.mem))
        if missing:
            vecs = self._encode([k[2].format(k[3]) for k in missing])
            self.store.save(dict(zip(missing, vecs, strict=True)))
        rows = []
        for n in names:
            per_t = np.stack(
                [self.store.mem[(self.model_name, self.checkpoint_sha256, t, n)] for t in self.templates]
            ).astype(np.float64)
            mean = per_t.mean(axis=0)
            rows.append(mean / np.linalg.norm(mean))
        return np.stack(rows)

    def _vocab_matrix(self, vocabulary: Sequence[str]) -> tuple[list[str], np.ndarray]:
        key = tuple(vocabulary)
        if key not in self._matrices:
            names = list(dict.fromkeys(vocabulary))
            self._matrices[key] = (names, self.embed(names))
        return self._matrices[key]

    def similarities(self, correct: str, vocabulary: Sequence[str]) -> dict[str, float]:
        names, mat = self._vocab_matrix(vocabulary)
        ref = mat[names.index(correct)] if correct in names else self.embed([correct])[0]
        return dict(zip(names, (mat @ ref).tolist(), strict=True))

    def mine(
        self,
        correct: str,
        vocabulary: list[str],
        k: int = 3,
        synonyms: dict[str, list[str]] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` hardest admissible negatives for ``correct`` with their cosine scores."""
        sims = self.similarities(correct, vocabulary)
        names = list(sims)
        ceiling = self.ceiling if self.ceiling_applied else math.inf
        return rank_negatives(correct, names, sims, k, synonyms, ceiling)[0]


def main(argv: list[str] | None = None) -> int:
    """CLI: mine negatives for every label of a vocabulary file and print JSON lines."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", required=True, help="text file, one label per line")
    ap.add_argument("--model", default="ViT-B-32")
    ap.add_argument("--checkpoint", default=None, help="local .pt/.safetensors or cached tag")
    ap.add_argument("--template", action="append", default=None)
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--ceiling", type=float, default=0.95)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--random-weights", action="store_true")
    args = ap.parse_args(argv)
    with open(args.vocab, encoding="utf-8") as fh:
        vocab = [ln.strip() for ln in fh if ln.strip()]
    try:
        miner = HardNegativeMiner(
            args.model,
            args.checkpoint,
            args.template or list(DEFAULT_TEMPLATES),
            args.device,
            args.random_weights,
            args.ceiling,
            args.cache_dir,
        )
    except (FileNotFoundError, ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps({"miner": miner.describe()}, sort_keys=True))
    for label in vocab:
        negs = miner.mine(label, vocab, args.k)
        print(json.dumps({"label": label, "negatives": negs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
