"""ImageNet-C corruptions, seeded per call (ProactiveBench App. 0.A.4).

``imagecorruptions`` (PyPI ``imagecorruptions-imaug``) draws its noise from numpy's *global*
RNG, and ``impulse_noise`` / ``glass_blur`` fall back to fresh OS entropy when no seed is given.
Left alone, the same image would corrupt differently on every run and every Beam worker. So each
call seeds the global RNG from ``seed_bytes(global_seed, sample_id, purpose)``, passes explicit
seeds to the two functions that accept one, and restores the previous global state afterwards
so nothing else in the process is perturbed (design.md §Conventions "Determinism").

Action mapping. The authors' environment (``proactivebench/environment.py``, ``action_map``)
knows eight image-quality actions: brightness, contrast, saturation, deblur, denoise,
compression, resolution and artifacts. Each ImageNet-C corruption is undone by one of them:
"""

from __future__ import annotations

import threading

import numpy as np

from core.seeding import seed_bytes

# corruption name (ImageNet-C folder name) -> action keyword of the official action_map
CORRUPTION_ACTIONS: dict[str, str] = {
    "brightness": "brightness",
    "contrast": "contrast",
    "saturate": "saturation",
    "defocus_blur": "deblur",
    "glass_blur": "deblur",
    "motion_blur": "deblur",
    "zoom_blur": "deblur",
    "gaussian_blur": "deblur",
    "gaussian_noise": "denoise",
    "shot_noise": "denoise",
    "impulse_noise": "denoise",
    "speckle_noise": "denoise",
    "jpeg_compression": "compression",
    "pixelate": "resolution",
    "snow": "artifacts",
    "frost": "artifacts",
    "fog": "artifacts",
    "spatter": "artifacts",
    "elastic_transform": "artifacts",
}

ACTIONS = ("brightness", "contrast", "saturation", "deblur", "denoise", "compression",
           "resolution", "artifacts")

# One representative corruption per action for clean-image mode (the paper's "eight different
# corruptions"); chosen among the fast ones (glass_blur takes seconds per image).
CLEAN_MODE_CORRUPTIONS: tuple[str, ...] = (
    "brightness", "contrast", "saturate", "defocus_blur", "gaussian_noise", "jpeg_compression",
    "pixelate", "spatter",
)

_SEEDED = {"impulse_noise", "glass_blur"}  # accept an explicit ``seed=`` keyword
_LOCK = threading.Lock()  # the global numpy RNG is process-wide; Beam may run threads

assert set(CORRUPTION_ACTIONS.values()) == set(ACTIONS)
# that CORRUPTION_ACTIONS names every corruption imagecorruptions knows is tested
# (tests/core/media/test_corruptions.py): importing it here cost every process that reads
# ImageNet-C ~0.3 s, each Beam worker included, though only clean-image mode corrupts


def apply_corruption(
    image: np.ndarray,
    name: str,
    severity: int,
    *,
    global_seed: int | str,
    sample_id: str,
    purpose: str = "imagenet_c",
) -> np.ndarray:
    """Corrupt an HxWx3 uint8 image; byte-identical across runs and processes for equal args."""
    if name not in CORRUPTION_ACTIONS:
        raise ValueError(f"unknown corruption {name!r}")
    digest = seed_bytes(global_seed, sample_id, f"{purpose}:{name}:{severity}")
    seed = int.from_bytes(digest[:4], "big")
    kwargs = {"seed": seed} if name in _SEEDED else {}
    from imagecorruptions import corrupt  # first use only (see above)

    with _LOCK:
        state = np.random.get_state()
        try:
            np.random.seed(seed)
            out = corrupt(np.ascontiguousarray(image, dtype=np.uint8), severity=severity,
                          corruption_name=name, **kwargs)
        finally:
            np.random.set_state(state)
    return np.asarray(out, dtype=np.uint8)
