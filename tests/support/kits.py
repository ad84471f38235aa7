"""The evaluation kits' own virtual environments (``.venv-kits/<kit>``), installed on first use.

Why separate environments: lmms-eval pulls transformers, accelerate, its own numpy and OpenCV
builds, and mlcroissant pins its own stack; installed into the project's ``.venv`` they would
replace the pinned OpenCV and change every decoded video frame (it happened once with
``pip install -e .``). Each kit gets a venv of its own with its pins, created by this module
(the tests call it; so can a person: ``.venv/bin/python -m tests.support.kits lmms-eval``),
exactly as ``annotation/server/venv.py`` does for Label Studio. A stamp file records the pins,
so a second call is instant and a changed pin reinstalls.

Pins (docs/exports.md): lmms-eval 0.7.3 with torch 2.14.1 / torchvision 0.29.1 (the pair
design.md §Environment measured on these CPUs; left alone, the resolver picks a newer torch);
mlcroissant 1.1.1 with its ``parquet`` and ``image`` extras (pyarrow, Pillow: loading the
records back reads the Parquet files and decodes the images).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
KITS_DIR = REPO_ROOT / ".venv-kits"

KITS: dict[str, tuple[str, ...]] = {
    "lmms-eval": ("lmms-eval==0.7.3", "torch==2.14.1", "torchvision==0.29.1", "filelock<4"),
    "mlcroissant": ("mlcroissant[parquet,image]==1.1.1",),
}


def kit_python(kit: str, *, quiet: bool = True) -> Path:
    """The interpreter of ``kit``'s venv, created and installed if its stamp is not current."""
    pins = KITS[kit]
    venv = KITS_DIR / kit
    python = venv / "bin" / "python"
    stamp = venv / ".benchforge-kit"
    if stamp.exists() and stamp.read_text().split() == list(pins) and python.exists():
        return python
    print(f"[kits] installing {' '.join(pins)} into {venv} (once; lmms-eval takes a few minutes)",
          file=sys.stderr, flush=True)
    base = os.environ.get("PYTHON") or shutil.which("python3.11") or sys.executable
    if not python.exists():
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", *pins]
    if quiet:
        cmd.insert(4, "-q")
    subprocess.run(cmd, check=True)
    stamp.write_text("\n".join(pins) + "\n")
    return python


if __name__ == "__main__":
    for name in sys.argv[1:] or list(KITS):
        print(kit_python(name, quiet=False))
