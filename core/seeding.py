"""Per-sample seeded randomness (design.md §Conventions).

Every random choice is drawn from a generator seeded by ``sha256(global_seed, sample_id,
purpose)``. A shared RNG would re-letter every later sample when one earlier sample is dropped,
and would depend on the order in which a Beam runner happens to process elements.
"""

from __future__ import annotations

import hashlib
import random

import numpy as np


def seed_bytes(global_seed: int | str, sample_id: str, purpose: str) -> bytes:
    key = f"{global_seed}\x1f{sample_id}\x1f{purpose}".encode()
    return hashlib.sha256(key).digest()


def rng_for(global_seed: int | str, sample_id: str, purpose: str) -> random.Random:
    """A ``random.Random`` private to one (sample, purpose) pair."""
    return random.Random(int.from_bytes(seed_bytes(global_seed, sample_id, purpose), "big"))


def np_rng_for(global_seed: int | str, sample_id: str, purpose: str) -> np.random.Generator:
    """A numpy generator private to one (sample, purpose) pair (image corruptions etc.)."""
    digest = seed_bytes(global_seed, sample_id, purpose)
    return np.random.default_rng([int.from_bytes(digest[i : i + 4], "big") for i in range(0, 32, 4)])


def id_hash(sample_id: str) -> int:
    """Stable 128-bit hash of a sample id: orders rows inside shards (as TFDS does)."""
    return int.from_bytes(hashlib.sha256(sample_id.encode()).digest()[:16], "big")
