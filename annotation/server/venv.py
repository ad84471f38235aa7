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
    on fresh machines, so the test fixture calls this (measured times: docs/annotation.md)."""
    path = Path(venv)
    if not path.is_absolute():
        path = REPO_ROOT / path
    stamp = path / ".benchforge-label-studio"
    exe = path / "bin" / "label-studio"
    if stamp.exists() and stamp.read_text().strip() == LABEL_STUDIO_VERSION and exe.exists():
        return path
    print(f"[label-studio] installing label-studio=={LABEL_STUDIO_VERSION} into {path} "
          "(~2-6 min on a loaded 2-core machine, once; pip's output in "
          f"{path / 'install.log'})", file=sys.stderr, flush=True)
    py = os.environ.get("PYTHON") or shutil.which("python3.11") or sys.executable
    if not (path / "bin" / "python").exists():
        subprocess.run([py, "-m", "venv", str(path)], check=True)
    # pip's chatter (dependency-resolver notices, deprecation warnings, a hundred lines of them)
    # goes to a log beside the venv, as scripts/setup_env.sh does; a failure shows its end.
    log = path / "install.log"
    cmd = [str(path / "bin" / "pip"), "install", "--disable-pip-version-check",
           f"label-studio=={LABEL_STUDIO_VERSION}"]
    if quiet:
        cmd.insert(2, "-q")
    with open(log, "w", encoding="utf-8") as fh:
        rc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, check=False).returncode
    if rc != 0:
        tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-30:])
        raise RuntimeError(f"pip install label-studio=={LABEL_STUDIO_VERSION} failed (exit {rc}); "
                           f"the end of {log}:\n{tail}")
    stamp.write_text(LABEL_STUDIO_VERSION + "\n")
    return path
