"""The Label Studio server's own virtual environment (``.venv-ls``), installed on first use.

Also the home of ``REPO_ROOT``: relative venv, data-dir and panel-config paths are resolved
against the repository, not the current directory, so ``make``, the CLI and the tests agree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]  # annotation/server/venv.py -> the repository
LABEL_STUDIO_VERSION = "1.23.2"  # the version docs/label_studio.md was measured on


def ensure_venv(venv: str | os.PathLike[str] = ".venv-ls", *, quiet: bool = True) -> Path:
    """Create ``venv`` with ``label-studio`` pinned, unless a stamp says it is already there.

    Why a separate venv: label-studio pins Django 5.2, ``pytz<2023``, ``numpy<2.3`` and
    ``openai<2``, which must not leak into the project's environment (docs/label_studio.md). CI runs
    on fresh machines, so the test fixture calls this (≈ 60–70 s the first time)."""
    path = Path(venv)
    if not path.is_absolute():
        path = REPO_ROOT / path
    stamp = path / ".benchforge-label-studio"
    exe = path / "bin" / "label-studio"
    if stamp.exists() and stamp.read_text().strip() == LABEL_STUDIO_VERSION and exe.exists():
        return path
    print(f"[label-studio] installing label-studio=={LABEL_STUDIO_VERSION} into {path} "
          "(~60-70 s, once)", file=sys.stderr, flush=True)
    py = os.environ.get("PYTHON") or shutil.which("python3.11") or sys.executable
    if not (path / "bin" / "python").exists():
        subprocess.run([py, "-m", "venv", str(path)], check=True)
    cmd = [str(path / "bin" / "pip"), "install", f"label-studio=={LABEL_STUDIO_VERSION}"]
    if quiet:
        cmd.insert(2, "-q")
    subprocess.run(cmd, check=True)
    stamp.write_text(LABEL_STUDIO_VERSION + "\n")
    return path
