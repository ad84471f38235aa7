"""ImageNet-C corruptions: seeded per call, global RNG untouched, byte-identical across processes."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import skimage.data

from core.media.corruptions import (
    ACTIONS,
    CLEAN_MODE_CORRUPTIONS,
    CORRUPTION_ACTIONS,
    apply_corruption,
)

IMG = skimage.data.chelsea()[:96, :96].copy()
REPO = Path(__file__).resolve().parents[3]
_CHILD = """
import hashlib, skimage.data
from core.media.corruptions import apply_corruption
img = skimage.data.chelsea()[:96, :96].copy()
for name in ("gaussian_noise", "impulse_noise", "spatter"):
    print(hashlib.sha256(apply_corruption(img, name, 5, global_seed=1, sample_id="s").tobytes()).hexdigest())
"""


def test_every_action_has_a_clean_mode_corruption() -> None:
    assert {CORRUPTION_ACTIONS[c] for c in CLEAN_MODE_CORRUPTIONS} == set(ACTIONS)


def test_the_action_map_names_every_corruption_imagecorruptions_knows() -> None:
    from imagecorruptions import get_corruption_names

    assert set(CORRUPTION_ACTIONS) == set(get_corruption_names("all"))


def test_reading_native_imagenet_c_does_not_import_imagecorruptions() -> None:
    """Only clean-image mode corrupts: a Beam worker that reads the released tarballs' layout
    does not pay imagecorruptions' ~0.3 s import (scipy, scikit-image)."""
    code = ("import sys, pipelines.proactivebench.sources, core.media.corruptions; "
            "print('imagecorruptions' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", ["gaussian_noise", "impulse_noise", "spatter", "pixelate"])
def test_seeded_and_restores_global_state(name: str) -> None:
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    a = apply_corruption(IMG, name, 3, global_seed=1, sample_id="s")
    assert np.array_equal(np.random.get_state()[1], before)
    assert np.array_equal(a, apply_corruption(IMG, name, 3, global_seed=1, sample_id="s"))
    assert a.shape == IMG.shape and a.dtype == np.uint8 and not np.array_equal(a, IMG)


def test_sample_id_changes_noise() -> None:
    a = apply_corruption(IMG, "gaussian_noise", 5, global_seed=1, sample_id="s")
    b = apply_corruption(IMG, "gaussian_noise", 5, global_seed=1, sample_id="t")
    assert not np.array_equal(a, b)


def test_identical_in_a_fresh_process() -> None:
    here = [hashlib.sha256(apply_corruption(IMG, n, 5, global_seed=1, sample_id="s").tobytes())
            .hexdigest() for n in ("gaussian_noise", "impulse_noise", "spatter")]
    out = subprocess.run([sys.executable, "-c", _CHILD], cwd=REPO, capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == here
