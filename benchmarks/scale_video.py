"""How a StreamVibe-Bench or ProReady-QA build scales with its video: time, memory, disk at k×.

Why: the video demos build in seconds from a few clips; the papers' benchmarks hold 183 hours
(StreamVibe §3.4) and 32 half-hour-to-hour videos (StreamReady §4.2). For each scale this
replicates the demo corpus in its native layouts (``benchmarks/replicate_video.py``: the custom
manifest and YouCook2 / Ego4D / Charades in their released layouts, every video under a new
id), then runs the real build in a subprocess while sampling the memory of its whole process
tree and the disk it fills (``benchmarks/monitor.py``, the sampler the ProactiveBench benchmark
uses), for each stage asked:

* ``pending`` — ``benchforge build <benchmark>`` without decisions: reading, decoding, planning,
  candidates, the pending-review state with its review media;
* ``release`` — the same build with the scripted demo panel's decisions (every candidate
  approved: ``pipelines/<benchmark>/demo.py``), through the release and its quality gate, into the
  output folder that already holds its pending state (as a team builds it: pending, review,
  release; the pending row's state copied there, :func:`copy_pending`); it makes no review
  copies, and StreamVibe's reads back the frames its pending state kept instead of decoding
  (``pipelines.common.decoded_frames``; the release row's ``×floor`` is then below 1);
* with ``--train`` (StreamVibe) both stages build the training split beside the evaluation split
  (``--split train``, as ``make build-streamvibe-train`` does: StreamVibe §3.4, App. B.4), so the
  release row also counts SFT streams and RL seed rows, and the floor also decodes the training
  videos.

The **floor** is measured in the same run on the same videos, one process: every video the build
decodes — every video its listing names (:func:`listed_videos`), also those that yield no
candidate or turn out truncated, corrupt or annotated past their end, which the build must
decode to find out — decoded once with the project's decoder (StreamVibe:
``core.media.video.causal_frames`` at 1 FPS with the streams' size cap, JPEG-encoding the frames
it keeps, as the build does; ProReady-QA: ``probe_video``, the one decode its template build
needs, since its items reference the video and embed no frame), plus the browser copy the build
makes for review of each video its candidates name (``transcode_for_browser`` to H.264).
``videos`` and ``video min`` count the decoded videos.

    .venv/bin/python benchmarks/scale_video.py streamvibe --scales 1,10
    .venv/bin/python benchmarks/scale_video.py proready --scales 1,10 --workers 1,2 --stages pending,release
    .venv/bin/python benchmarks/scale_video.py streamvibe --scales 1 --stages pending,release --train
    .venv/bin/python benchmarks/scale_video.py proready --scales 1 --long-minutes 30   # the paper's length
    .venv/bin/python benchmarks/scale_video.py streamvibe --scales 1,280 --stages pending,release \
        --no-review-copies   # the paper's 4,100 samples; the review copies' cost is per video minute

Columns: ``scale``, ``stage``, ``w`` (Beam worker processes), ``videos`` (the floor's decoded
videos), ``video min`` (their decoded minutes), ``samples`` (candidates in the pending
state; released evaluation samples for ``release``), ``sft`` / ``rl`` (with
``--train``: the release's SFT streams and RL seed rows), ``wall s`` (median of ``--repeat``),
``s/video min``, ``peak RSS MB`` (sum over the process tree, sampled every 0.2 s), ``PSS MB`` (as
proportional set size: a page shared by several processes counted once — a fork about to exec
ffmpeg maps all of the build's pages, which the RSS sum counts twice: ``monitor.tree_pss``),
``disk MB`` (the most the output's file system filled during the build), ``floor s`` /
``×floor`` (decoding, plus the review copies for ``pending``, the stage that makes them),
``floor w s`` (rows with w > 1: the same floor split over w processes at once, the slowest
one's seconds), ``ceiling`` (floor s / floor w s: what w processes gain over one for this work
on this machine now), ``speedup`` (the 1-worker build's wall / this one's), ``sp/ceil``
(speedup / ceiling), ``RSS×``, ``PSS×`` and ``s/min×`` (against the smallest scale of the same
stage and worker count), ``load`` (1-minute load average at the start: other work on the
machine). Absolute seconds depend on the machine and its load; the ratios are what to compare.
Under the table, for each scale and stage built with several worker counts: whether every build
wrote the same bytes (the release's Parquet files, the pending state's candidates); a build that
did not is marked in its status and the exit code is 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

if TYPE_CHECKING:
    from pipelines.common.benchmark import Demo

from benchmarks.monitor import MB, log, python_exe, run_monitored  # noqa: E402
from benchmarks.replicate_video import REPLICATED, replicate  # noqa: E402
from core.files import file_sha256  # noqa: E402
from pipelines.common.decoded_frames import KEPT  # noqa: E402

DEMO_MEDIA = ROOT / ".cache" / "demo-media" / "video"
STAGES = ("pending", "release")


@dataclass
class Row:
    scale: int
    stage: str
    workers: int
    status: str = "ok"
    videos: int = 0
    video_minutes: float = 0.0
    samples: int = 0
    sft_streams: int = 0  # with --train: the release's training rows
    rl_seeds: int = 0
    walls_s: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    peak_rss_mb: float = 0.0
    peak_pss_mb: float | None = None  # the tree's proportional set size (monitor.tree_pss)
    peak_disk_mb: float = 0.0
    peak_procs: int = 0
    floor_s: float | None = None
    over_floor: float | None = None
    floor_w_s: float | None = None  # the same floor split over w processes at once (w > 1)
    floor_speedup: float | None = None  # floor_s / floor_w_s: this machine's ceiling for w workers
    speedup: float | None = None  # the 1-worker row's wall / this row's (w > 1)
    speedup_over_ceiling: float | None = None  # speedup / floor_speedup
    s_per_video_min: float | None = None
    rss_ratio: float | None = None
    pss_ratio: float | None = None
    time_ratio: float | None = None
    load_avg_1m: float = 0.0
    # what the build wrote: one sha256 over the release's Parquet files (relative path and sha256
    # of each), or of the pending state's candidates; rows of one scale and stage must agree
    output_sha256: str | None = None
    stderr_tail: list[str] = field(default_factory=list)


# -- corpus, config, commands ---------------------------------------------------------------------
def demo_raw(work: Path, benchmark: str) -> Path:
    """The benchmark's demo corpus (its folder's ``demo.py``), written as ``make
    build-<benchmark>`` writes it."""
    raw = work / "demo-raw"
    if (raw / benchmark).is_dir():
        return raw
    demo_of(benchmark).corpus(raw)
    return raw


def demo_of(name: str) -> Demo:
    """The benchmark's demo (:class:`pipelines.common.benchmark.Demo`); SystemExit if it has none."""
    from pipelines.registry import benchmark

    demo = benchmark(name).demo
    if demo is None:
        raise SystemExit(f"{name} declares no demo to scale up")
    return demo


def scale_config(benchmark: str, path: Path) -> Path:
    """The demo config with ``datasets:`` cut to the replicated ones (module doc), its relative
    paths made absolute (the config is written elsewhere)."""
    cfg = yaml.safe_load((ROOT / "configs" / f"{benchmark}.yaml").read_text())
    listed = cfg.get("datasets") or {}
    cfg["datasets"] = {name: listed.get(name) or {} for name in REPLICATED[benchmark]}
    for key in ("intents", "prompt", "prompts_dir"):
        if isinstance(cfg.get(key), str):
            cfg[key] = str(ROOT / cfg[key])
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def build_command(benchmark: str, config: Path, raw: Path, out: Path, workers: int,
                  extra: list[str]) -> list[str]:
    cmd = [python_exe(), "-m", "pipelines.cli", "build", benchmark, "--config", str(config),
           "--raw-dir", str(raw), "--out", str(out), *extra]
    if workers > 1:
        cmd += ["--direct_running_mode=multi_processing", f"--direct_num_workers={workers}"]
    return cmd


def pending_state(out: Path, benchmark: str) -> Path | None:
    found = sorted((out / benchmark / "review").glob("*/candidates.jsonl"))
    return found[0].parent if found else None


def write_decisions(state: Path, benchmark: str, folder: Path) -> list[str]:
    """``--decisions`` (and ProReady's ``--corrections``) of the scripted demo panel over
    ``state`` (the benchmark's ``demo.py``), written into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    decide = demo_of(benchmark).decisions
    if decide is None:
        raise SystemExit(f"{benchmark}'s demo gives no review decisions")
    return list(decide(state, folder))


# How each benchmark's pending state is built without review copies: StreamVibe has no review media
# then; ProReady-QA's candidates reference the source videos themselves
NO_REVIEW_COPIES = {"streamvibe": ["--no-review-media"], "proready": ["--review-media", "source"]}


# -- the floor ------------------------------------------------------------------------------------
def candidate_videos(state: Path, benchmark: str, raw: Path) -> list[Path]:
    """The distinct video files the pending state's candidates name."""
    key = "source_file" if benchmark == "streamvibe" else "video_file"
    names = set()
    for line in (state / "candidates.jsonl").read_text().splitlines():
        names.add(json.loads(line)[key])
    root = raw / benchmark
    return [root / n for n in sorted(names) if (root / n).is_file()]


def listed_videos(benchmark: str, raw: Path, config: Path, train: bool = False) -> list[Path]:
    """Every video the build's listing names and so decodes once — the candidates' videos and
    also those that turn out to have none (no valid request or annotation, a truncated or
    corrupt file: the build decodes them to find out). Listed with the pipeline's own listing
    functions; ``train``: StreamVibe's training manifest too."""
    if benchmark == "streamvibe":
        return _streamvibe_videos(raw, config, train)
    return _proready_videos(raw, config)


def _proready_videos(raw: Path, config: Path) -> list[Path]:
    """ProReady-QA: each manifest entry's ``path`` and each listed dataset's videos, as its
    readers enumerate them (an entry or a video refused at listing is never decoded)."""
    from core.errors import BadInput
    from pipelines.common.sources import ItemRef, ReaderConfig, safe_relative
    from pipelines.common.video_sources.base import NativeVideo
    from pipelines.proready.native import open_dataset
    from pipelines.proready.sources import ProReadyReader

    cfg = yaml.safe_load(config.read_text())
    root = raw / cfg["source"]["path"]
    manifest = cfg["source"]["manifest"]
    reader = ProReadyReader(str(root), ReaderConfig(extra={"manifest": manifest}))
    found = set()
    for ref in reader.enumerate():
        if isinstance(ref, ItemRef):
            with contextlib.suppress(BadInput):  # the build refuses, by this rule, before decoding
                found.add(root / safe_relative(ref.payload["entry"].get("path"), manifest, "path"))
    names = list(cfg.get("datasets") or {})
    roots = {name: str(root / name) for name in [*names, "ego4d"]}
    for name in names:
        found |= {root / name / v.video for v in open_dataset(name, roots[name], roots).videos()
                  if isinstance(v, NativeVideo)}
    return sorted(found)


def _streamvibe_videos(raw: Path, config: Path, train: bool) -> list[Path]:
    """StreamVibe: each distinct (video key, file) as its ``Normalize`` step takes them."""
    from pipelines.streamvibe.pipeline import _into_train, _pair_key, _video_path, inside_root
    from pipelines.streamvibe.planner import planned_pairs
    from pipelines.streamvibe.sources import enumerate_pairs
    from schemas.streamvibe import SUBTYPES

    cfg = yaml.safe_load(config.read_text())
    root = raw / cfg["source"]["path"]
    roots = {"": root, **{name: root / name for name in cfg.get("datasets") or {}}}
    pairs: list[Any] = list(enumerate_pairs(str(root), cfg["source"]["manifest"]))
    for name, opts in (cfg.get("datasets") or {}).items():
        pairs += planned_pairs(name, str(roots[name]), int(cfg.get("global_seed", 0)),
                               tuple((opts or {}).get("subtypes") or SUBTYPES))
    if train:
        train_cfg = yaml.safe_load((ROOT / "configs" / "streamvibe" / "train.yaml").read_text())
        pairs += [_into_train(x) for x in enumerate_pairs(str(root), train_cfg["source"]["manifest"])]
    seen: set[tuple[str, str, str]] = set()
    for pair in pairs:
        if isinstance(pair, dict):
            source, rel = _video_path(pair)
            seen.add((_pair_key(pair), source, inside_root(source, rel)))
    return [roots[source] / inside for _, source, inside in sorted(seen)]


def floor(videos: list[Path], benchmark: str, copies: bool = True,
          decoded: list[Path] | None = None) -> tuple[float, float, float]:
    """(decode seconds, review-copy seconds, decoded minutes): decode each of ``decoded``
    (default: ``videos``) once as the build must, and make a browser copy of each of ``videos``
    (module doc; not with ``copies`` False), one process. A file the decoder refuses costs its
    attempt, as in the build."""
    from core.errors import BadInput
    from core.media.browser import transcode_for_browser
    from core.media.probe import probe_video
    from core.media.video import STREAM_MAX_SIDE, causal_frames

    minutes = decode_s = review_s = 0.0
    for video in videos if decoded is None else decoded:
        started = time.perf_counter()
        try:
            if benchmark == "streamvibe":
                minutes += causal_frames(video, fps=1.0, max_side=STREAM_MAX_SIDE).info.duration_s / 60
            else:
                minutes += probe_video(video).duration_s / 60
        except BadInput:
            pass
        decode_s += time.perf_counter() - started
    if copies:
        with tempfile.TemporaryDirectory(prefix="floor-") as tmp:
            for k, video in enumerate(videos):
                started = time.perf_counter()
                transcode_for_browser(video, Path(tmp) / f"{k}.mp4")
                review_s += time.perf_counter() - started
    return decode_s, review_s, minutes


def _floor_share(videos: list[Path], decoded: list[Path], benchmark: str, copies: bool, start: Any,
                 results: Any) -> None:
    import core.media.browser  # noqa: F401 - imported before the clock starts, as in the build
    import core.media.video  # noqa: F401

    start.wait()
    decode_s, review_s, _ = floor(videos, benchmark, copies, decoded)
    results.put((decode_s, review_s))


def parallel_floor(videos: list[Path], decoded: list[Path], benchmark: str, processes: int,
                   copies: bool = True) -> tuple[float, float]:
    """(decode seconds, decode + review-copy seconds) of the slowest of ``processes`` processes
    that share the floor's videos (every n-th each) and start together. Why: what n processes
    gain over one for exactly this work, on this machine at this time, is the ceiling a build's
    own speed-up with n workers is compared with (a VM's second vCPU may be worth well under a
    core, and an encoder may already use both). Spawned, not forked: OpenCV's threads do not
    survive a fork."""
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_floor_share,
                         args=(videos[k::processes], decoded[k::processes], benchmark, copies,
                               start, results))
             for k in range(processes)]
    for proc in procs:
        proc.start()
    shares = [results.get() for _ in procs]
    for proc in procs:
        proc.join()
    return max(d for d, _ in shares), max(d + r for d, r in shares)


# -- one scale ------------------------------------------------------------------------------------
def run_scale(n: int, args: argparse.Namespace, raw_demo: Path, config: Path, work: Path) -> list[Row]:
    raw = work / f"raw-{n}x"
    log(f"{args.benchmark} {n}x: replicating")
    summary = replicate(raw_demo, raw, args.benchmark, n, unique_bytes=args.unique_bytes,
                        long_minutes=args.long_minutes)
    log(f"{args.benchmark} {n}x: {summary['video_bytes'] / MB:.0f} MB of video")
    rows: list[Row] = []
    for stage in args.stages:
        for w in args.workers:
            row = Row(n, stage, w)
            for turn in range(args.repeat):
                out = work / f"out-{n}x-w{w}-{stage}"
                extra = _stage_args(stage, args, work, n, raw, config)
                if extra is None:
                    row.status = "no pending state"
                    break
                shutil.rmtree(out, ignore_errors=True)
                if stage == "release":  # the release builds over its own pending state
                    copy_pending(work, n, args.benchmark, out)
                out.mkdir(parents=True, exist_ok=True)
                row.load_avg_1m = max(row.load_avg_1m, os.getloadavg()[0])
                log(f"{args.benchmark} {n}x: {stage}, {w} worker(s), run {turn + 1}/{args.repeat}")
                run = run_monitored(build_command(args.benchmark, config, raw, out, w, extra),
                                    work / "logs" / f"{n}x-w{w}-{stage}-{turn}", args.timeout, disk_of=out)
                row.walls_s.append(run.wall_s)
                row.peak_rss_mb = max(row.peak_rss_mb, run.peak_rss_bytes / MB)
                if run.peak_pss_bytes is not None:
                    row.peak_pss_mb = max(row.peak_pss_mb or 0.0, run.peak_pss_bytes / MB)
                row.peak_disk_mb = max(row.peak_disk_mb, run.peak_disk_bytes / MB)
                row.peak_procs = max(row.peak_procs, run.peak_procs)
                if run.timed_out or run.returncode != 0:
                    row.status = "timeout" if run.timed_out else f"failed rc={run.returncode}"
                    row.stderr_tail = run.stderr_tail
                    break
                _count(row, out, args.benchmark)
            if row.walls_s:
                row.wall_s = statistics.median(row.walls_s)
            rows.append(row)
    pend = next((r for r in rows if r.stage == "pending" and r.status == "ok"), None)
    if pend is not None and args.floor:
        state = pending_state(work / f"out-{n}x-w{pend.workers}-pending", args.benchmark)
        videos = candidate_videos(state, args.benchmark, raw)
        decoded = listed_videos(args.benchmark, raw, config, args.train)
        log(f"{args.benchmark} {n}x: measuring the floor: {len(decoded)} videos decoded, "
            f"{len(videos) if args.review_copies else 0} review copies")
        decode_s, review_s, minutes = floor(videos, args.benchmark, args.review_copies, decoded)
        split = {w: parallel_floor(videos, decoded, args.benchmark, w, args.review_copies)
                 for w in args.workers if w > 1}
        one = {r.stage: r for r in rows if r.workers == 1 and r.status == "ok"}
        for r in rows:
            r.videos, r.video_minutes = len(decoded), minutes
            if r.status == "ok":
                r.floor_s = decode_s + (review_s if r.stage == "pending" else 0.0)
                r.over_floor = r.wall_s / r.floor_s
                if r.workers in split:
                    r.floor_w_s = split[r.workers][r.stage == "pending"]
                    r.floor_speedup = r.floor_s / r.floor_w_s
                    if r.stage in one:
                        r.speedup = one[r.stage].wall_s / r.wall_s
                        r.speedup_over_ceiling = r.speedup / r.floor_speedup
            if r.status == "ok" and minutes:
                r.s_per_video_min = r.wall_s / minutes
    if not args.keep:
        for path in work.glob(f"*-{n}x*"):
            shutil.rmtree(path, ignore_errors=True)
    return rows


def copy_pending(work: Path, n: int, benchmark: str, out: Path) -> None:
    """The pending state the decisions were made on, copied into ``out`` for a release to build
    over, as a team's release builds over its pending state. A copy, not a second pending build:
    that build is the pending row's. The review copies and the kept decoded frames are
    hard-linked (the release only reads them; they are most of the state's bytes), every other
    file copied (a build may rewrite its ledger in place)."""
    source = next(p for p in (work / f"out-{n}x-w1-pending", work / f"prep-{n}x")
                  if pending_state(p, benchmark) is not None)

    def copy(src: str, dst: str) -> None:
        if Path(src).suffix in (".mp4", ".webm") or f"/{KEPT}/" in src:
            os.link(src, dst)
        else:
            shutil.copy2(src, dst)

    shutil.copytree(source, out, copy_function=copy)


def _stage_args(stage: str, args: argparse.Namespace, work: Path, n: int, raw: Path, config: Path
                ) -> list[str] | None:
    split = ["--split", "train"] if args.train else []
    if stage == "pending":
        return split + ([] if args.review_copies else NO_REVIEW_COPIES[args.benchmark])
    prep = work / f"out-{n}x-w1-pending"
    state = pending_state(prep, args.benchmark) if prep.is_dir() else None
    if state is None:
        out = work / f"prep-{n}x"
        shutil.rmtree(out, ignore_errors=True)
        run_monitored(build_command(args.benchmark, config, raw, out, 1,
                                    _stage_args("pending", args, work, n, raw, config) or []),
                      work / "logs" / f"{n}x-prep",
                      args.timeout)
        state = pending_state(out, args.benchmark)
        if state is None:
            return None
    return split + write_decisions(state, args.benchmark, work / f"decisions-{n}x")


def _count(row: Row, out: Path, benchmark: str) -> None:
    """Samples: candidates of the pending state, rows of the release's data."""
    import pyarrow.parquet as pq

    from exports.release import source_digest

    manifests = sorted(out.glob(f"{benchmark}/*/manifest.json"))
    if row.stage == "release" and manifests:
        release = manifests[0].parent

        def rows(folder: str) -> int:
            return sum(pq.ParquetFile(f).metadata.num_rows
                       for f in sorted((release / folder).rglob("*.parquet")))

        row.samples, row.sft_streams, row.rl_seeds = rows("data"), rows("sft"), rows("rl_seed")
        row.output_sha256 = source_digest([
            {"file": f.relative_to(release).as_posix(), "sha256": file_sha256(f)}
            for f in release.rglob("*.parquet")])["sha256"]
        return
    state = pending_state(out, benchmark)
    if state is not None:
        row.samples = len((state / "candidates.jsonl").read_text().splitlines())
        row.output_sha256 = file_sha256(state / "candidates.jsonl")


def check_same_bytes(rows: list[Row]) -> list[str]:
    """One line per scale and stage built with several worker counts: whether every build wrote
    the same bytes; a row that differs from the first is marked in its status."""
    lines = []
    for key in sorted({(r.scale, r.stage) for r in rows}):
        group = [r for r in rows if (r.scale, r.stage) == key and r.status == "ok" and r.output_sha256]
        if len(group) < 2:
            continue
        first = group[0]
        differ = [r for r in group[1:] if r.output_sha256 != first.output_sha256]
        for r in differ:
            r.status = f"bytes differ from w{first.workers}"
        workers = ", ".join(f"w{r.workers}" for r in group)
        lines.append(f"{key[0]}x {key[1]}: {workers}: " + (
            f"same bytes ({first.output_sha256[:12]})" if not differ else
            "DIFFERENT bytes: " + ", ".join(f"w{r.workers} {r.output_sha256[:12]}" for r in group)))
    return lines


def add_ratios(rows: list[Row]) -> None:
    """RSS and seconds per video minute against the smallest scale of each stage and worker count."""
    for r in rows:
        base = min((b for b in rows if (b.stage, b.workers) == (r.stage, r.workers) and b.status == "ok"),
                   key=lambda b: b.scale, default=None)
        if base is None or r.status != "ok":
            continue
        r.rss_ratio = r.peak_rss_mb / base.peak_rss_mb if base.peak_rss_mb else None
        if r.peak_pss_mb and base.peak_pss_mb:
            r.pss_ratio = r.peak_pss_mb / base.peak_pss_mb
        if r.s_per_video_min and base.s_per_video_min:
            r.time_ratio = r.s_per_video_min / base.s_per_video_min


def render(rows: list[Row]) -> str:
    head = (f"{'scale':>5} {'stage':>8} {'w':>2} {'videos':>6} {'video min':>9} {'samples':>7} "
            f"{'sft':>6} {'rl':>5} "
            f"{'wall s':>8} {'s/vmin':>7} {'RSS MB':>7} {'PSS MB':>7} {'disk MB':>8} {'floor s':>8} "
            f"{'xfloor':>6} {'RSS x':>6} {'PSS x':>6} {'s/min x':>7} {'floor w s':>9} {'ceiling':>7} "
            f"{'speedup':>7} {'sp/ceil':>7} "
            f"{'load':>5}  status")
    lines = [head]

    def opt(v: float | None, fmt: str) -> str:
        return "-" if v is None else format(v, fmt)

    for r in rows:
        lines.append(
            f"{r.scale:>5} {r.stage:>8} {r.workers:>2} {r.videos:>6} {r.video_minutes:>9.1f} {r.samples:>7} "
            f"{r.sft_streams:>6} {r.rl_seeds:>5} "
            f"{r.wall_s:>8.1f} {opt(r.s_per_video_min, '.2f'):>7} {r.peak_rss_mb:>7.0f} "
            f"{opt(r.peak_pss_mb, '.0f'):>7} {r.peak_disk_mb:>8.0f} {opt(r.floor_s, '.1f'):>8} "
            f"{opt(r.over_floor, '.2f'):>6} {opt(r.rss_ratio, '.2f'):>6} {opt(r.pss_ratio, '.2f'):>6} "
            f"{opt(r.time_ratio, '.2f'):>7} {opt(r.floor_w_s, '.1f'):>9} "
            f"{opt(r.floor_speedup, '.2f'):>7} {opt(r.speedup, '.2f'):>7} "
            f"{opt(r.speedup_over_ceiling, '.2f'):>7} {r.load_avg_1m:>5.1f}  {r.status}")
    for r in rows:
        if r.stderr_tail:
            lines.append(f"--- {r.scale}x {r.stage} w{r.workers}: {r.status}")
            lines += [f"    {x}" for x in r.stderr_tail]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("benchmark", choices=sorted(REPLICATED))
    ap.add_argument("--scales", default="1,10", help="comma-separated factors")
    ap.add_argument("--workers", default="1", help="comma-separated worker counts, e.g. 1,2")
    ap.add_argument("--stages", default="pending", help=f"comma-separated, of {','.join(STAGES)}")
    ap.add_argument("--train", action="store_true",
                    help="StreamVibe: every stage builds the training split too (--split train)")
    ap.add_argument("--repeat", type=int, default=1, help="builds per row (median wall)")
    ap.add_argument("--unique-bytes", action="store_true", help="byte-distinct video copies")
    ap.add_argument("--long-minutes", type=float, default=None,
                    help="ProReady-QA: the manifest's videos made this long (replicate_video.py)")
    ap.add_argument("--no-floor", dest="floor", action="store_false", help="skip the floor")
    ap.add_argument("--no-review-copies", dest="review_copies", action="store_false",
                    help="the pending state without the H.264 review copies (and a floor without "
                         "them): for sizes where the copies alone would take hours")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per build")
    ap.add_argument("--work-dir", type=Path, default=None, help="default: a temporary folder")
    ap.add_argument("--keep", action="store_true", help="keep corpora and outputs")
    ap.add_argument("--json", type=Path, default=None, help="write every figure here")
    args = ap.parse_args(argv)
    args.scales = [int(x) for x in args.scales.split(",") if x.strip()]
    args.workers = [int(x) for x in args.workers.split(",") if x.strip()]
    args.stages = [s for s in args.stages.split(",") if s.strip()]
    bad = sorted(set(args.stages) - set(STAGES))
    if bad:
        raise SystemExit(f"--stages: unknown: {bad}")
    if args.train and args.benchmark != "streamvibe":
        raise SystemExit(f"--train: {args.benchmark} has no training split")
    work = args.work_dir or Path(tempfile.mkdtemp(prefix=f"scale-{args.benchmark}-"))
    work.mkdir(parents=True, exist_ok=True)
    raw_demo = demo_raw(work, args.benchmark)
    config = scale_config(args.benchmark, work / f"{args.benchmark}.yaml")
    rows: list[Row] = []
    for n in args.scales:
        rows += run_scale(n, args, raw_demo, config, work)
    add_ratios(rows)
    same = check_same_bytes(rows)
    table = render(rows)
    print(table)
    print("\n".join(same))
    if args.json:
        args.json.write_text(json.dumps({
            "benchmark": args.benchmark, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "cpus": os.cpu_count(), "unique_bytes": args.unique_bytes, "repeat": args.repeat,
            "long_minutes": args.long_minutes,
            "rows": [asdict(r) for r in rows]}, indent=1) + "\n")
    if args.work_dir is None and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r.status == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
