"""How a ProactiveBench build scales with the corpus: time, memory and size at 1×, 10×, 100×, paper size.

Why: the demo corpus builds in seconds, which says nothing about a build of the paper's ~18K
samples. For each scale this replicates the demo corpus (``benchmarks/replicate_corpus.py``:
every item N times under new ids, native layouts, hard links), runs the real build in a
subprocess — ``.venv/bin/python -m pipelines.proactivebench --config … --raw-dir … --out …`` —
while sampling the memory of its whole process tree, then measures the release. Absolute
seconds depend on the machine (and on whoever else uses it: the load average at the start of
each build is recorded); the ratios are what to compare across runs.

    .venv/bin/python benchmarks/scale_proactivebench.py                      # 1×, 10×, 100×
    .venv/bin/python benchmarks/scale_proactivebench.py --scales 1,10 --json scale.json
    .venv/bin/python benchmarks/scale_proactivebench.py --scales 1 --paper --workers 2
    .venv/bin/python benchmarks/scale_proactivebench.py --scales 1,100 --workers 1,2 --repeat 2

Options: ``--scales`` (comma list of factors, default ``1,10,100``), ``--paper`` (adds the
paper-size preset of replicate_corpus.py), ``--unique-bytes`` (byte-distinct copies instead of
hard links, see replicate_corpus.py), ``--workers N[,M…]`` (N > 1 adds
``--direct_running_mode=multi_processing --direct_num_workers=N``; several counts build each
scale once per count), ``--repeat R`` (every build R times, worker counts taking turns —
1, 2, 1, 2 — so a slow minute of a shared machine hits both; wall time is the median),
``--timeout`` (seconds per
build; the build's process group is then killed), ``--work-dir`` / ``--keep`` (corpora and
releases are deleted after each scale unless kept), ``--json out.json``.

The build config is ``configs/proactivebench.yaml`` with ``per_class`` of QuickDraw and
ImageNet-C raised to what the replicated corpus needs (``replication.json``), since their
per-class caps (10 and 5) would otherwise hide the copies and the scale would not be N×.

Columns of the table (one row per scale and worker count; the JSON has the same fields and more):

- ``scale``: the replication factor (``paper`` = the per-dataset preset).
- ``w``: Beam worker processes (``--direct_num_workers``; 1 = the embedded runner in-process).
- ``inputs`` / ``episodes`` / ``rej``: items the build read, episodes kept in the release and
  items rejected (from ``manifest.json`` ``counts``; rejections should be 0 on a replica).
- ``images``: frames embedded in the release (all ``data/`` shards).
- ``wall s``: wall time of the build subprocess, start to exit (replication not included); the
  median of ``--repeat`` builds (the JSON lists each).
- ``speed-up``: the 1-worker wall time of the same scale over this row's, both from this run
  (needs 1 among ``--workers``).
- ``peak RSS MB``: the largest sum of resident set sizes over the build process and all its
  descendants (Beam worker processes count), sampled from /proc every 0.2 s (psutil when the
  venv has it). Summing RSS counts pages shared between forked workers more than once, and a
  peak shorter than 0.2 s can be missed — it is an upper-ish estimate of what the machine must
  hold, not an exact figure.
- ``procs``: the most processes seen in the tree at once.
- ``release MB``: bytes of every file of the published release (data, filtered, rejected,
  reports, manifest, card). On a hard-linked replica this grows far less than N×: Parquet
  dictionary-encodes the frames and stores byte-identical copies once (``--unique-bytes``
  makes most copies distinct; see replicate_corpus.py).
- ``disk MB``: the most the used bytes of the output's file system rose during the build
  (statvfs, sampled with the memory): staging folder, blob store and release at their largest
  together — the free disk a build needs beside its sources. Other writers on that disk count
  too; the replicated sources are made before the build starts and are not counted.
- ``frames MB``: the bytes of all embedded frames as the rows hold them, before Parquet's
  dictionary and compression — what the release data would weigh if no two frames were equal.
- ``floor s``: the decode+re-encode floor, measured in this run on this release: decode every
  embedded frame once (``core.media.images.decode_image``) and encode it once with the
  pipeline's encoder settings (``encode_image``: JPEG q95 4:4:4 for JPEG frames, PNG level 6 for
  PNG frames), single process. A yardstick of per-frame image work measured on the same
  machine at the same time: the readers decode every frame and encode crops, video frames and
  strokes, but embed frames that already are JPEG/PNG after only decoding them, so a large
  build may come close to 1× or even below it.
- ``×floor``: wall s / floor s — how far the build is from that yardstick (comparable across
  machines; with several workers the floor is still one process).
- ``floor w s`` (rows with w > 1): the same floor work split over w processes running at once
  (every w-th frame each; the slowest process's seconds), measured right after the one-process
  floor.
- ``floor sp``: floor s / floor w s — what w processes gain over one for exactly this per-frame
  work on this machine at this time: the ceiling of a build's speed-up here (on a VM it can be
  well under w×: the host decides what a second vCPU is worth).
- ``sp/floor sp``: the build's speed-up over that ceiling (1.0 = the workers scale as well as
  the bare per-frame work does).
- ``ms/ep``: wall time per episode.
- ``RSS×`` / ``ms/ep×``: peak RSS and time per episode relative to the base scale (1× if it
  ran, else the smallest successful scale): how memory and per-episode cost grow with N
  (RSS× ≈ 1 means memory does not grow with the corpus; ms/ep× < 1 means fixed start-up cost
  is being amortised).
- ``load``: the 1-minute load average when the build started (other work on the machine).

A failed build (non-zero exit, or killed on ``--timeout``) is reported as such with its exit
code, and the last lines of its stderr are printed under the table and saved in the JSON.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import queue
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.monitor import MB, SAMPLE_INTERVAL_S, log, python_exe, run_monitored  # noqa: E402
from benchmarks.replicate_corpus import (  # noqa: E402
    DEFAULT_CONFIG,
    DEMO_COUNTS,
    ENVIRONMENTS,
    parse_factors,
    replicate,
)
from core.media.images import decode_image, encode_image, sniff_format  # noqa: E402
from exports.release_files import read_batches  # noqa: E402


# -- measuring a release --------------------------------------------------------------------------------
def find_release(out: Path) -> Path | None:
    manifests = sorted(out.glob("*/*/manifest.json"))
    return manifests[0].parent if manifests else None


def release_counts(release: Path) -> dict[str, int]:
    counts = json.loads((release / "manifest.json").read_text())["counts"]
    return {k: sum(c.get(k, 0) for c in counts.values())
            for k in ("inputs", "kept", "filtered", "rejected")}


def release_bytes(release: Path) -> int:
    return sum(p.stat().st_size for p in release.rglob("*") if p.is_file())


def decode_encode_floor(release: Path, part: int = 0, parts: int = 1) -> tuple[int, int, float]:
    """(frames, their bytes, seconds) to decode every embedded frame once and re-encode it once
    with the pipeline's encoder settings; Parquet reading is outside the timed part. With
    ``parts`` > 1, only every ``parts``-th frame from the ``part``-th on (one process's share)."""
    frames, nbytes, seconds, index = 0, 0, 0.0, -1
    for shard in sorted((release / "data").rglob("*.parquet")):
        for batch in read_batches(shard, ["frames"]):
            for row in batch.column("frames").to_pylist():
                for frame in row or []:
                    index += 1
                    if index % parts != part:
                        continue
                    data = frame["bytes"]
                    started = time.perf_counter()
                    encode_image(decode_image(data, frame.get("path") or shard.name),
                                 sniff_format(data) or "png")
                    seconds += time.perf_counter() - started
                    frames += 1
                    nbytes += len(data)
    return frames, nbytes, seconds


def _floor_share(release: Path, part: int, parts: int, start: Any, results: Any) -> None:
    start.wait()  # every process imported what it needs: they all begin together
    results.put(decode_encode_floor(release, part, parts))


def parallel_floor(release: Path, processes: int) -> tuple[int, int, float]:
    """(frames, their bytes, seconds) of the same floor work split over ``processes`` processes
    at once (each takes every n-th frame; the seconds are the slowest one's). Why: the floor's
    speed-up from one process to ``processes`` is what this machine gives that per-frame work
    right now — the ceiling a build's own speed-up is to be compared with (a VM's vCPUs may map
    to host threads that share a core or serve other guests, so it can be well below
    ``processes``). Processes are spawned, not forked: OpenCV's threads do not survive a fork."""
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_floor_share, args=(release, k, processes, start, results))
             for k in range(processes)]
    for proc in procs:
        proc.start()
    shares: list[tuple[int, int, float]] = []
    while len(shares) < processes:
        try:
            shares.append(results.get(timeout=1.0))
        except queue.Empty:
            failed = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
            if failed:  # a share that died would otherwise be waited for forever
                for proc in procs:
                    proc.kill()
                raise RuntimeError(f"a floor process ended with exit code {failed[0]}") from None
    for proc in procs:
        proc.join()
    return (sum(frames for frames, _, _ in shares), sum(nbytes for _, nbytes, _ in shares),
            max(seconds for _, _, seconds in shares))


# -- one scale ---------------------------------------------------------------------------------------
@dataclass
class ScaleResult:
    scale: str
    factors: dict[str, int]
    expected_episodes: int
    workers: int = 1
    status: str = "ok"
    returncode: int | None = None
    inputs: int = 0
    episodes: int = 0
    filtered: int = 0
    rejected: int = 0
    images: int = 0
    replicate_s: float = 0.0
    wall_s: float = 0.0
    walls_s: list[float] = field(default_factory=list)
    speedup: float | None = None
    peak_rss_mb: float = 0.0
    peak_disk_mb: float = 0.0
    peak_procs: int = 0
    rss_samples: int = 0
    release_mb: float = 0.0
    frames_mb: float = 0.0
    floor_s: float = 0.0
    parallel_floor_s: float | None = None
    floor_speedup: float | None = None
    speedup_of_floor_speedup: float | None = None
    build_over_floor: float | None = None
    ms_per_episode: float | None = None
    rss_vs_base: float | None = None
    ms_per_episode_vs_base: float | None = None
    load_avg_1m: float = 0.0
    stderr_tail: list[str] = field(default_factory=list)


def write_config(base: Path, per_class: dict[str, int], path: Path) -> Path:
    """The base build config with QuickDraw/ImageNet-C ``per_class`` raised for the replica."""
    cfg = yaml.safe_load(base.read_text())
    for env, value in per_class.items():
        cfg["environments"][env] = {**(cfg["environments"].get(env) or {}), "per_class": value}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def build_command(config: Path, corpus: Path, out: Path, workers: int) -> list[str]:
    cmd = [python_exe(), "-m", "pipelines.proactivebench", "--config", str(config),
           "--raw-dir", str(corpus), "--out", str(out)]
    if workers > 1:
        cmd += ["--direct_running_mode=multi_processing", f"--direct_num_workers={workers}"]
    return cmd


def run_scale(label: str, factors: dict[str, int], args: argparse.Namespace, work: Path
              ) -> list[ScaleResult]:
    """Replicate the corpus once, then build it with every worker count, ``args.repeat`` times
    with the counts taking turns; one result per worker count."""
    expected = sum(factors[e] * DEMO_COUNTS[e] for e in ENVIRONMENTS)
    results = {w: ScaleResult(label, factors, expected, workers=w) for w in args.workers}
    corpus, out = work / f"corpus-{label}", work / f"out-{label}"
    log(f"{label}: replicating {args.raw_dir} ({expected} episodes expected)")
    started = time.perf_counter()
    try:
        summary = replicate(args.raw_dir, corpus, factors, config=args.config,
                            unique_bytes=args.unique_bytes)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a row that says why, not a crash
        for result in results.values():
            result.status = "replication failed"
            result.stderr_tail = [f"{type(exc).__name__}: {exc}"]
        return list(results.values())
    replicate_s = time.perf_counter() - started
    config = write_config(args.config, summary["reader_per_class"], work / f"config-{label}.yaml")
    for turn in range(args.repeat):
        for w, result in results.items():
            if result.status != "ok":
                continue
            result.replicate_s = replicate_s
            build_once(result, turn, config, corpus, out / f"w{w}", work / f"logs-{label}-w{w}", args)
    floor_measured = False
    for w, result in results.items():
        if result.status == "ok":
            result.wall_s = statistics.median(result.walls_s)
            measure_release(result, find_release(out / f"w{w}"), floor=not floor_measured)
            floor_measured = True
    floor = next((r for r in results.values() if r.floor_s), None)
    for result in results.values():  # one floor per scale: every worker count gives the same bytes
        if floor is not None and result.status == "ok":
            result.images, result.frames_mb, result.floor_s = floor.images, floor.frames_mb, floor.floor_s
            result.build_over_floor = result.wall_s / result.floor_s if result.floor_s else None
            if result.workers > 1 and result.floor_s:
                log(f"{label}: measuring the floor in {result.workers} processes at once")
                *_, result.parallel_floor_s = parallel_floor(find_release(out / f"w{result.workers}"),
                                                             result.workers)
                result.floor_speedup = result.floor_s / result.parallel_floor_s
    if not args.keep:
        shutil.rmtree(corpus, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
    return list(results.values())


def build_once(result: ScaleResult, turn: int, config: Path, corpus: Path, out: Path, logs: Path,
               args: argparse.Namespace) -> None:
    """One monitored build into a fresh ``out``; a failure marks the result."""
    shutil.rmtree(out, ignore_errors=True)
    load = os.getloadavg()[0]
    result.load_avg_1m = max(result.load_avg_1m, load)
    log(f"{result.scale}: building (workers={result.workers}, run {turn + 1}/{args.repeat}, "
        f"load {load:.1f})")
    out.parent.mkdir(parents=True, exist_ok=True)
    run = run_monitored(build_command(config, corpus, out, result.workers), logs, args.timeout,
                        disk_of=out.parent)
    result.returncode = run.returncode
    result.walls_s.append(run.wall_s)
    result.peak_rss_mb = max(result.peak_rss_mb, run.peak_rss_bytes / MB)
    result.peak_disk_mb = max(result.peak_disk_mb, run.peak_disk_bytes / MB)
    result.peak_procs = max(result.peak_procs, run.peak_procs)
    result.rss_samples += run.samples
    if run.timed_out or run.returncode != 0 or find_release(out) is None:
        result.status = "timeout" if run.timed_out else f"failed rc={run.returncode}"
        result.wall_s = run.wall_s
        result.stderr_tail = run.stderr_tail


def measure_release(result: ScaleResult, release: Path, *, floor: bool = True) -> None:
    counts = release_counts(release)
    result.inputs, result.episodes = counts["inputs"], counts["kept"]
    result.filtered, result.rejected = counts["filtered"], counts["rejected"]
    result.release_mb = release_bytes(release) / MB
    if floor:
        log(f"{result.scale}: measuring the decode+re-encode floor")
        result.images, frame_bytes, result.floor_s = decode_encode_floor(release)
        result.frames_mb = frame_bytes / MB
    result.ms_per_episode = 1000 * result.wall_s / result.episodes if result.episodes else None


def add_ratios(results: list[ScaleResult]) -> str | None:
    """Fill the ``*_vs_base`` ratios against 1× (else the first successful scale) with the same
    worker count, and each row's speed-up over 1 worker at the same scale."""
    ok = [r for r in results if r.status == "ok" and r.ms_per_episode]
    if not ok:
        return None
    base_scale = next((r.scale for r in ok if r.scale == "1x"), ok[0].scale)
    for r in ok:
        base = next((b for b in ok if b.scale == base_scale and b.workers == r.workers), None)
        if base is not None:
            r.rss_vs_base = r.peak_rss_mb / base.peak_rss_mb if base.peak_rss_mb else None
            r.ms_per_episode_vs_base = r.ms_per_episode / base.ms_per_episode
        one = next((b for b in ok if b.scale == r.scale and b.workers == 1), None)
        r.speedup = one.wall_s / r.wall_s if one is not None and r.wall_s else None
        if r.speedup is not None and r.floor_speedup:
            r.speedup_of_floor_speedup = r.speedup / r.floor_speedup
    return base_scale


# -- report ----------------------------------------------------------------------------------------------
COLUMNS = [  # header, width, formatter
    ("scale", 6, lambda r: r.scale),
    ("w", 2, lambda r: f"{r.workers}"),
    ("inputs", 7, lambda r: f"{r.inputs}"),
    ("episodes", 9, lambda r: f"{r.episodes}"),
    ("rej", 4, lambda r: f"{r.rejected}"),
    ("images", 8, lambda r: f"{r.images}"),
    ("wall s", 8, lambda r: f"{r.wall_s:.1f}"),
    ("speed-up", 8, lambda r: _opt(r.speedup, "{:.2f}")),
    ("peak RSS MB", 12, lambda r: f"{r.peak_rss_mb:.0f}"),
    ("procs", 6, lambda r: f"{r.peak_procs}"),
    ("release MB", 11, lambda r: f"{r.release_mb:.1f}"),
    ("disk MB", 8, lambda r: f"{r.peak_disk_mb:.0f}"),
    ("frames MB", 10, lambda r: f"{r.frames_mb:.1f}"),
    ("floor s", 8, lambda r: f"{r.floor_s:.2f}"),
    ("×floor", 7, lambda r: _opt(r.build_over_floor, "{:.1f}")),
    ("floor w s", 10, lambda r: _opt(r.parallel_floor_s, "{:.2f}")),
    ("floor sp", 9, lambda r: _opt(r.floor_speedup, "{:.2f}")),
    ("sp/floor sp", 12, lambda r: _opt(r.speedup_of_floor_speedup, "{:.2f}")),
    ("ms/ep", 8, lambda r: _opt(r.ms_per_episode, "{:.0f}")),
    ("RSS×", 6, lambda r: _opt(r.rss_vs_base, "{:.2f}")),
    ("ms/ep×", 7, lambda r: _opt(r.ms_per_episode_vs_base, "{:.2f}")),
    ("load", 5, lambda r: f"{r.load_avg_1m:.1f}"),
]


def _opt(value: float | None, fmt: str) -> str:
    return "—" if value is None else fmt.format(value)


def render_table(results: list[ScaleResult], base: str | None) -> str:
    lines = ["  ".join(f"{h:>{w}}" for h, w, _ in COLUMNS)]
    for r in results:
        if r.status == "ok":
            lines.append("  ".join(f"{fmt(r):>{w}}" for _h, w, fmt in COLUMNS))
        else:
            lines.append(f"{r.scale:>6}  w={r.workers}  {r.status} after {r.wall_s:.1f} s, peak RSS "
                         f"{r.peak_rss_mb:.0f} MB ({r.expected_episodes} items)")
    if base:
        lines.append(f"(ratios RSS× and ms/ep× are relative to {base} with the same worker count; "
                     "speed-up is over 1 worker at the same scale)")
    for r in results:
        # the demo's filtered inputs (multi-object COCO photos, unrecognized drawings) are
        # replicated too, so inputs exceed episodes; every replicated episode must be kept
        if r.status == "ok" and r.episodes != r.expected_episodes:
            lines.append(f"WARNING {r.scale}: {r.episodes} episodes kept, expected {r.expected_episodes}")
        if r.stderr_tail:
            lines.append(f"--- {r.scale}: {r.status}; last lines of stderr:")
            lines.extend(f"    {line}" for line in r.stderr_tail)
    return "\n".join(lines)


def parse_scales(text: str, flag: str = "--scales") -> list[int]:
    try:
        scales = [int(s) for s in text.split(",") if s.strip()]
    except ValueError as exc:
        raise SystemExit(f"{flag} {text!r}: expected comma-separated integers") from exc
    if not scales or any(s < 1 for s in scales):
        raise SystemExit(f"{flag}: at least one number, each ≥ 1")
    return list(dict.fromkeys(scales))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw-dir", type=Path, default=ROOT / "demo_corpus")
    parser.add_argument("--scales", default="1,10,100", help="comma-separated factors")
    parser.add_argument("--paper", action="store_true", help="also build the paper-size preset")
    parser.add_argument("--workers", default="1", help="comma-separated worker counts, e.g. 1,2")
    parser.add_argument("--repeat", type=int, default=1,
                        help="builds per scale and worker count (counts take turns; median wall)")
    parser.add_argument("--unique-bytes", action="store_true",
                        help="replicate with byte-distinct JPEG/PNG copies (replicate_corpus.py)")
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--timeout", type=float, default=None, help="seconds per build")
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep corpora, releases and logs")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args(argv)
    args.workers = parse_scales(args.workers, "--workers")
    if args.repeat < 1:
        raise SystemExit("--repeat: at least 1")
    if not args.raw_dir.is_dir():  # a fresh clone has no demo corpus until `make demo-corpus`
        hint = " (make demo-corpus writes it)" if args.raw_dir == ROOT / "demo_corpus" else ""
        raise SystemExit(f"--raw-dir {args.raw_dir}: no such folder{hint}")
    plan = [(f"{n}x", parse_factors(n, [], False)) for n in parse_scales(args.scales)]
    if args.paper:
        plan.append(("paper", parse_factors(1, [], True)))
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="scale-proactivebench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        results = [r for label, factors in plan for r in run_scale(label, factors, args, work)]
    finally:
        if args.work_dir is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    base = add_ratios(results)
    print(render_table(results, base))
    if args.json:
        args.json.write_text(json.dumps(report(results, base, args), indent=2) + "\n")
    return 0 if all(r.status == "ok" for r in results) else 1


def report(results: list[ScaleResult], base: str | None, args: argparse.Namespace) -> dict[str, Any]:
    return {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
        "raw_dir": str(args.raw_dir),
        "workers": args.workers,
        "repeat": args.repeat,
        "unique_bytes": args.unique_bytes,
        "sample_interval_s": SAMPLE_INTERVAL_S,
        "base": base,
        "results": [asdict(r) for r in results],
    }


if __name__ == "__main__":
    sys.exit(main())
