"""Hard-negative mining (ProactiveBench App. 0.A.7): logic on hand-made embeddings, exclusion rules,
and the real open_clip text-encoder path with a tiny registered config."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from filtering.clip_models import MissingWeightsError, resolve_checkpoint
from filtering.negatives import (
    HardNegativeMiner,
    NotEnoughNegativesError,
    mine_from_table,
    normalize_label,
    rank_negatives,
)

TABLE = {
    "dog": np.array([1.0, 0.0, 0.0]),
    "cat": np.array([0.8, 0.6, 0.0]),
    "wolf": np.array([0.9, 0.1, 0.1]),
    "toaster": np.array([0.0, 0.1, 1.0]),
    "car": np.array([0.1, 0.3, 0.9]),
}


def test_dog_is_nearer_cat_than_toaster() -> None:
    got = mine_from_table("dog", list(TABLE), TABLE, k=3, ceiling=0.999)
    assert [n for n, _ in got] == ["wolf", "cat", "car"]
    scores = dict(got)
    assert scores["cat"] == pytest.approx(0.8, abs=1e-6)
    assert scores["wolf"] == pytest.approx(0.9 / np.sqrt(0.83), abs=1e-6)
    assert "toaster" not in scores and "dog" not in scores


def test_ceiling_excludes_near_identical() -> None:
    # wolf·dog = 0.98787 ≥ 0.95 → excluded as the same concept
    got, excluded = rank_negatives(
        "dog",
        list(TABLE),
        {n: float(TABLE[n] @ TABLE["dog"] / np.linalg.norm(TABLE[n])) for n in TABLE},
        k=2,
        ceiling=0.95,
    )
    assert [n for n, _ in got] == ["cat", "car"]
    assert excluded["wolf"].startswith("similarity 0.988")


def test_normalised_duplicates_and_synonyms_are_excluded() -> None:
    vocab = ["hot dog", "Hot-Dog", "hot_dog", "frankfurter", "sandwich", "pizza", "bun", "taco"]
    scores = {
        "hot dog": 1.0,
        "Hot-Dog": 0.93,
        "hot_dog": 0.92,
        "frankfurter": 0.91,
        "sandwich": 0.8,
        "pizza": 0.7,
        "bun": 0.75,
        "taco": 0.6,
    }
    synonyms = {"hot dog": ["frankfurter", "wiener"], "bun": ["Sandwich"]}
    got, excluded = rank_negatives("hot dog", vocab, scores, k=3, synonyms=synonyms)
    # "bun" and "sandwich" share the synonym "sandwich": only the higher-ranked one is kept.
    assert got == [("sandwich", 0.8), ("pizza", 0.7), ("taco", 0.6)]
    assert excluded["Hot-Dog"].startswith("duplicate")
    assert excluded["hot_dog"].startswith("duplicate")
    assert excluded["frankfurter"].startswith("synonym")
    assert excluded["bun"].startswith("same concept")
    assert normalize_label(" Hot__Dog! ") == "hot dog"


def test_synonym_relation_is_symmetric() -> None:
    scores = {"tabby": 1.0, "tabby cat": 0.9, "lynx": 0.5, "tiger": 0.4, "puma": 0.3}
    got, excluded = rank_negatives("tabby", list(scores), scores, k=3, synonyms={"tabby cat": ["tabby"]})
    assert [n for n, _ in got] == ["lynx", "tiger", "puma"]
    assert excluded["tabby cat"].startswith("synonym")


def test_too_few_negatives_is_a_clear_error() -> None:
    with pytest.raises(NotEnoughNegativesError, match="'dog': only 1 admissible of 3"):
        rank_negatives("dog", ["dog", "dog ", "cat"], {"dog": 1, "dog ": 0.9, "cat": 0.5}, k=3)


def test_ties_broken_by_name_deterministically() -> None:
    scores = {"a": 1.0, "zeta": 0.5, "beta": 0.5, "alpha": 0.5}
    got, _ = rank_negatives("a", ["a", "zeta", "beta", "alpha"], scores, k=2)
    assert got == [("alpha", 0.5), ("beta", 0.5)]


def test_missing_weights_is_a_clear_error(tiny_clip: str) -> None:
    with pytest.raises(MissingWeightsError, match="no checkpoint given.*random_weights=True"):
        HardNegativeMiner(tiny_clip, None, ["a photo of a {}."])
    with pytest.raises(MissingWeightsError, match="neither a local file nor a pretrained tag"):
        HardNegativeMiner("ViT-B-32", "openai", ["a photo of a {}."])
    with pytest.raises(ValueError, match="must contain"):
        HardNegativeMiner(tiny_clip, None, ["a photo"], random_weights=True)


VOCAB = ["dog", "cat", "wolf", "toaster", "car", "hot dog", "Hot-Dog", "pizza"]


def test_real_open_clip_path_random_weights(tiny_clip: str, tmp_path: Path) -> None:
    templates = ["a photo of a {}.", "a blurry photo of a {}."]
    miner = HardNegativeMiner(
        tiny_clip,
        None,
        templates,
        device="auto",
        random_weights=True,
        ceiling=0.999,
        cache_dir=str(tmp_path / "emb"),
    )
    got = miner.mine("dog", VOCAB, k=3)
    assert len(got) == 3
    names = [n for n, _ in got]
    assert "dog" not in names
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True) and all(-1 <= s <= 1 for s in scores)
    # the scores are the cosine of the prompt-ensembled text embeddings
    emb = miner.embed(VOCAB)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0)
    for name, score in got:
        assert score == pytest.approx(float(emb[VOCAB.index(name)] @ emb[0]), abs=2e-6)
    # the whole vocabulary was encoded once: 8 names x 2 templates, and never again
    assert miner.encoded_texts == len(VOCAB) * len(templates)
    again = miner.mine("cat", VOCAB, k=3)
    assert miner.encoded_texts == len(VOCAB) * len(templates)
    assert "cat" not in [n for n, _ in again]
    # a new miner (e.g. a new worker) reads the persistent embedding cache, encodes nothing
    fresh = HardNegativeMiner(
        tiny_clip, None, templates, random_weights=True, ceiling=0.999, cache_dir=str(tmp_path / "emb")
    )
    assert fresh.mine("dog", VOCAB, k=3) == got
    assert fresh.encoded_texts == 0
    d = miner.describe()
    assert d["checkpoint_sha256"] == "random-weights" and d["random_weights"] is True
    assert d["model"] == tiny_clip and d["templates"] == templates
    assert "RANDOM open_clip weights" in miner.card_notice()
    assert d["ceiling_applied"] is False  # random embeddings are all alike: no ceiling
    # picklable for Beam workers, model state is rebuilt lazily
    clone = pickle.loads(pickle.dumps(miner))
    assert clone.mine("dog", VOCAB, k=3) == got


def test_checkpoint_file_is_loaded_and_hashed(tiny_clip: str, tmp_path: Path) -> None:
    import hashlib

    import open_clip
    import torch

    torch.manual_seed(123)
    model = open_clip.create_model(tiny_clip, pretrained=None)
    ckpt = tmp_path / "tiny.pt"
    torch.save(model.state_dict(), ckpt)
    miner = HardNegativeMiner(tiny_clip, str(ckpt), ["a photo of a {}."], device="cpu")
    sha = hashlib.sha256(ckpt.read_bytes()).hexdigest()
    assert miner.describe()["checkpoint_sha256"] == sha
    assert miner.describe()["random_weights"] is False
    assert sha in miner.card_notice() and "RANDOM" not in miner.card_notice()
    assert miner.describe()["ceiling_applied"] is True
    tok = open_clip.get_tokenizer(tiny_clip)
    with torch.no_grad():
        ref = model.encode_text(tok(["a photo of a dog."])).float()
    ref = (ref / ref.norm(dim=-1, keepdim=True)).numpy()[0]
    assert np.allclose(miner.embed(["dog"])[0], ref, atol=1e-5)
    rnd = HardNegativeMiner(tiny_clip, None, ["a photo of a {}."], random_weights=True)
    assert not np.allclose(rnd.embed(["dog"])[0], ref, atol=1e-3)


def test_pretrained_tag_resolves_from_local_hf_cache_only(tmp_path: Path) -> None:
    """A tag works offline when its file is already in the HF cache layout."""
    repo = tmp_path / "models--timm--vit_base_patch32_clip_224.openai"
    snap = repo / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    weights = snap / "open_clip_model.safetensors"
    weights.write_bytes(b"not really weights")
    got = resolve_checkpoint("ViT-B-32", "openai", hf_cache_dir=str(tmp_path))
    assert os.path.samefile(got, weights)
    with pytest.raises(MissingWeightsError):
        resolve_checkpoint("ViT-B-32", "laion2b_s34b_b79k", hf_cache_dir=str(tmp_path))
