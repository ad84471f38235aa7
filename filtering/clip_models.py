"""Offline open_clip loading shared by the hard-negative miner and the CLIP probe.

Why one loader: both users must agree on which weights were used (the manifest records the
checkpoint's sha256), must never reach for the network (no hub access here or in CI, design.md §Environment),
and must fail loudly when weights are missing instead of silently running a random model. Random
weights exist only for tests and smoke runs and must be asked for explicitly; they are seeded so
two workers build the same random model.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from typing import Any

RANDOM_WEIGHTS = "random-weights"
_HF_FILENAMES = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin")


class MissingWeightsError(FileNotFoundError):
    """No usable local weights for the requested open_clip model."""


def resolve_device(device: str = "auto") -> str:
    """``auto`` → ``cuda`` when a GPU is visible, else ``cpu``; ``cuda`` without a GPU is an error."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} requested but torch sees no CUDA device")
    if device != "cpu" and not device.startswith("cuda"):
        raise ValueError(f"device must be auto, cpu or cuda[:N], got {device!r}")
    return device


def _hf_cache_lookup(model: str, tag: str, cache_dir: str | None) -> str | None:
    """Path of a pretrained tag's weights in the local HF cache, without any network access."""
    import open_clip
    from huggingface_hub import try_to_load_from_cache

    cfg = open_clip.get_pretrained_cfg(model.replace("/", "-"), tag)
    hub = cfg.get("hf_hub", "") if cfg else ""
    if not hub:
        return None
    # open_clip's convention: 'org/repo/' = default filenames, 'org/repo/file.bin' = that file.
    if hub.endswith("/"):
        repo_id, filename = hub.rstrip("/"), ""
    else:
        repo_id, filename = os.path.split(hub)
    candidates = [filename] if filename else list(_HF_FILENAMES)
    if filename.endswith((".bin", ".pth")):
        candidates.insert(0, filename[:-4] + ".safetensors")
    for name in candidates:
        hit = try_to_load_from_cache(repo_id, name, cache_dir=cache_dir)
        if isinstance(hit, str) and os.path.isfile(hit):
            return hit
    return None


def resolve_checkpoint(
    model: str, checkpoint: str | None, random_weights: bool = False, hf_cache_dir: str | None = None
) -> str | None:
    """A local weights file for ``model``: a path, or a pretrained tag found in the HF cache.

    Returns ``None`` only when ``random_weights`` is set and no checkpoint was given.
    """
    if checkpoint:
        path = os.path.expanduser(checkpoint)
        if os.path.isfile(path):
            return os.path.abspath(path)
        hit = _hf_cache_lookup(model, checkpoint, hf_cache_dir)
        if hit:
            return hit
        raise MissingWeightsError(
            f"open_clip {model}: checkpoint {checkpoint!r} is neither a local file nor a pretrained "
            "tag present in the local Hugging Face cache (no downloads are attempted). Pass a "
            ".pt/.safetensors path or pre-populate HF_HUB_CACHE."
        )
    if random_weights:
        return None
    raise MissingWeightsError(
        f"open_clip {model}: no checkpoint given. Pass a local .pt/.safetensors path or a "
        "pretrained tag cached locally; random weights only with random_weights=True "
        "(tests/smoke runs; recorded in the manifest)."
    )


_SHA_CACHE: dict[tuple[str, int, float], str] = {}


def sha256_file(path: str) -> str:
    """sha256 of a weights file, memoised per (path, size, mtime) so workers hash it once."""
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime)
    if key not in _SHA_CACHE:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        _SHA_CACHE[key] = h.hexdigest()
    return _SHA_CACHE[key]


@dataclass
class LoadedClip:
    """A ready open_clip model with its tokenizer and eval transform."""

    model_name: str
    model: Any
    tokenizer: Any
    preprocess: Any
    device: str
    checkpoint_sha256: str  # or RANDOM_WEIGHTS


_LOADED: dict[tuple[str, str | None, str], LoadedClip] = {}
_LOCK = threading.Lock()


def load_clip(model: str, checkpoint_path: str | None, device: str) -> LoadedClip:
    """Load (once per process) ``model`` with weights from ``checkpoint_path`` (None = random)."""
    import open_clip
    import torch

    key = (model, checkpoint_path, device)
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        if checkpoint_path is None:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(0)
                net, _, preprocess = open_clip.create_model_and_transforms(
                    model, pretrained=None, device="cpu"
                )
            sha = RANDOM_WEIGHTS
        else:
            net, _, preprocess = open_clip.create_model_and_transforms(
                model, pretrained=checkpoint_path, device="cpu"
            )
            sha = sha256_file(checkpoint_path)
        net = net.to(device).eval()
        loaded = LoadedClip(model, net, open_clip.get_tokenizer(model), preprocess, device, sha)
        _LOADED[key] = loaded
        return loaded
