"""What every demo layout writer shares: stream copies of the registry videos, and text and JSON
written byte-identically on every run (a demo release's bytes must not depend on the run).

Why a module of its own: the layouts of :mod:`pipelines.common.video_sources.demo.native` and the
per-dataset layout modules beside it all write through these, and none may import the other.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any


def remux(src: Path, dst: Path, start: float = 0.0, length: float | None = None) -> None:
    """``src`` stream-copied into ``dst``'s container (optionally a clip from the key frame at
    ``start``), written identically on every run."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise SystemExit("ffmpeg not found: run `make setup` (scripts/setup_system.sh video)")
    dst.parent.mkdir(parents=True, exist_ok=True)
    cmd = [ffmpeg, "-v", "error", "-y", "-fflags", "+bitexact", "-ss", f"{start:g}", "-i", str(src)]
    cmd += (["-t", f"{length:g}"] if length else []) + [
        "-map", "0:v", "-c", "copy", "-map_metadata", "-1", "-fflags", "+bitexact", str(dst)]
    subprocess.run(cmd, check=True)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def dump(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=True) + "\n"
