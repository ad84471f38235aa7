"""The pending-review state of a reviewed benchmark built without decisions
(``<out>/<benchmark>/review/<version>/``): candidates, push units, review media, what did not
become a candidate, the decoded frames its release reuses (``frames/``), ``status.json`` and the
review loop's commands to paste. Nothing is released
before four reviewers approve (StreamVibe App. B.3).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from exports.release import (
    code_version,
    config_hash,
    publish,
    staging_dir,
)
from pipelines.common.assembly import print_counts
from pipelines.common.benchmark import Benchmark, BuildContext
from pipelines.common.command_line import shown
from pipelines.common.decoded_frames import KEPT, kept_root
from pipelines.common.transforms import FILTERED_INPUTS

PENDING = "pending_review"


def write_pending(benchmark: Benchmark, ctx: BuildContext, counts: dict[str, dict[str, int]]) -> Path:
    """``<out>/<benchmark>/review/<version>/``: what reviewers get, published atomically; no
    release is written (StreamVibe App. B.3: nothing is released before four approvals)."""
    if benchmark.review is None or benchmark.review.pending is None:  # the driver asks reviewed ones only
        raise TypeError(f"{benchmark.name}'s release does not wait for review: "
                        "it has no pending-review state")
    review = benchmark.review.pending(ctx)
    state_dir = ctx.out_root / "review" / ctx.version
    with staging_dir(state_dir.parent, f"pending-{ctx.version}") as tmp:
        cands = sorted(review.candidates, key=lambda c: c["id"])
        (tmp / "candidates.jsonl").write_text(
            "".join(json.dumps(c, sort_keys=True, ensure_ascii=False) + "\n" for c in cands))
        (tmp / "review_candidates.jsonl").write_text("".join(
            json.dumps(u, sort_keys=True, ensure_ascii=False) + "\n"
            for u in sorted(review.units, key=lambda u: (u["sample_id"], u["version"]))))
        if review.media is not None:
            shutil.move(review.media, tmp / "media")
        if review.frames is not None and review.frames.is_dir():
            shutil.move(review.frames, kept_root(tmp))
        for group in ("filtered", FILTERED_INPUTS, "rejected"):  # what did not become a candidate
            if (ctx.staging / group).exists():
                shutil.copytree(ctx.staging / group, tmp / group)
        status = {
            "state": PENDING, "benchmark": benchmark.name, "version": ctx.version,
            "candidates": len(cands), "counts": counts,
            "per_task_type": dict(sorted(Counter(u["task_type"] for u in review.units).items())),
            "config_sha256": config_hash(ctx.config), "code_version": code_version(),
            "review_media": "media/" if review.media else None,
            "decoded_frames": f"{KEPT}/" if kept_root(tmp).is_dir() else None,
            **({"skipped_sources": ctx.skipped} if ctx.skipped else {}),
            **review.status,
        }
        status["next"] = next_commands(benchmark, ctx, state_dir, status)
        (tmp / "status.json").write_text(json.dumps(status, indent=1, sort_keys=True) + "\n")
        publish(tmp, state_dir)
    return state_dir


def next_commands(benchmark: Benchmark, ctx: BuildContext, state: Path, status: dict[str, Any]
                  ) -> list[str]:
    """The review loop's commands for this pending state, complete enough to paste: the server's
    data dir (``configs/review_panel.yaml``), the media folder and the decision log are named in
    each. The decision log sits beside the versioned states (``<out>/<benchmark>/review/log``),
    which a rebuild replaces; the server serves copies of the media (``annotation.projects``), so
    neither a rebuild nor a release breaks a task under review."""
    from annotation.server import load_panel_config

    exe = Path(sys.executable).with_name("benchforge")
    bf = shown(exe) if exe.exists() else f"{shown(Path(sys.executable))} -m pipelines.cli"
    data_dir = shown(load_panel_config().data_dir)
    log = shown(ctx.out_root / "review" / "log")
    media = shown(Path(status.get("media_root") or state / "media"))
    round_ = f"--benchmark {benchmark.name} --round {status['review_round']} --rubric {status['rubric']}"
    build = (f"{bf} build {benchmark.name} --config {shown(ctx.config_path)} "
             f"--raw-dir {shown(ctx.raw_dir)} --out {shown(ctx.out_root.parent)}")
    return [
        f"{bf} review server start --data-dir {data_dir}",
        f"{bf} review panel ensure --data-dir {data_dir}",
        f"{bf} review push --data-dir {data_dir} {round_} "
        f"--candidates {shown(state / 'review_candidates.jsonl')} "
        f"--media-dir {media} --log-dir {log}",
        f"{bf} review pull --data-dir {data_dir} {round_} --log-dir {log}",
        f"{bf} review status --log-dir {log} --benchmark {benchmark.name}",
        f"{build} --decisions {log}",
    ]


def print_pending(benchmark: Benchmark, ctx: BuildContext, state: Path,
                  counts: dict[str, dict[str, int]]) -> None:
    st = json.loads((state / "status.json").read_text())
    print(f"\nPENDING REVIEW — no release written. {st['candidates']} candidates wait for four "
          f"approvals each (StreamVibe App. B.3).\n  state: {state}")
    print_counts(benchmark, counts, pending=True)
    steps = ("start the review server and its panel (once; it serves every benchmark's and "
             "round's media)", None, "push the candidates (their media are copied to the server)",
             "when the reviewers are done: pull the decisions, see the states",
             None, "build the release from the decision log")
    print("  next (paste as they are):")
    for step, cmd in zip(steps, st["next"], strict=True):
        if step:
            print(f"  # {step}")
        print(f"    {cmd}")
