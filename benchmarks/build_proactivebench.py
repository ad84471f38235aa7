"""Speed of a ProactiveBench build against the I/O floor, measured in the same run.

Prints episodes/s and images/s of a full build (embedded FnApiRunner) of the given corpus, and
the ratio of the build time to the time of only reading every source file once and writing the
release's image bytes once — the floor no builder can beat. A ratio is comparable across
machines; absolute seconds are not.

    .venv/bin/python benchmarks/build_proactivebench.py --raw-dir demo_corpus [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipelines.proactivebench.build import run  # noqa: E402


def io_floor(raw_dir: Path, release: Path, scratch: Path) -> float:
    """Seconds to read every source file once and write every embedded frame once."""
    started = time.perf_counter()
    for path in sorted(raw_dir.rglob("*")):
        if path.is_file():
            path.read_bytes()
    n = 0
    for shard in sorted((release / "data").rglob("*.parquet")):
        for frames in pq.read_table(shard, columns=["frames"]).column("frames").to_pylist():
            for frame in frames:
                (scratch / f"{n}.bin").write_bytes(frame["bytes"])
                n += 1
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw-dir", type=Path, default=ROOT / "demo_corpus")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    beam_args = []
    if args.workers > 1:
        beam_args = ["--direct_running_mode=multi_processing", f"--direct_num_workers={args.workers}"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        started = time.perf_counter()
        release = run(["--raw-dir", str(args.raw_dir), "--out", str(out), *beam_args])
        build_s = time.perf_counter() - started
        manifest = json.loads((release / "manifest.json").read_text())
        episodes = sum(c["kept"] for c in manifest["counts"].values())
        images = 0
        for shard in sorted((release / "data").rglob("*.parquet")):
            frames = pq.read_table(shard, columns=["frames"]).column("frames").to_pylist()
            images += sum(len(f) for f in frames)
        scratch = Path(tmp) / "scratch"
        scratch.mkdir()
        floor_s = io_floor(args.raw_dir, release, scratch)
    print(f"\nbuild: {build_s:.2f} s, {episodes} episodes, {images} images, workers={args.workers}, "
          f"cpus={os.cpu_count()}")
    print(f"episodes/s: {episodes / build_s:.2f}")
    print(f"images/s:   {images / build_s:.2f}")
    print(f"I/O floor:  {floor_s:.3f} s (read sources once + write frames once)")
    print(f"build / I/O floor ratio: {build_s / max(floor_s, 1e-9):.1f}x")


if __name__ == "__main__":
    main()
