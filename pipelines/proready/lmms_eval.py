"""The lmms-eval tasks of a ProReady-QA release: one task per task-type config (hooks:
:mod:`pipelines.proready.lmms_eval_utils`; writer: :mod:`exports.lmms_eval`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from exports.lmms_eval import LmmsEvalAdapter, Metric, Task
from exports.release_files import Release, iter_rows
from pipelines.proready.ars import release_tau

HOOKS = {"doc_to_visual": "doc_to_visual", "doc_to_text": "doc_to_text",
         "doc_to_target": "doc_to_target", "process_results": "process_results"}
STRIDE_S = 1.0


def settings(release: Release, *, content_judge: str, video_root: Path | None) -> dict[str, Any]:
    """What every task of the release is run with: τ from the manifest (``ars_tau_s``: one τ per
    release, docs/scoring.md), the videos' root (ProReady releases reference their videos)."""
    if video_root is None or not video_root.is_dir():
        raise ValueError(f"--video-root must be the folder the items' video_file paths are relative "
                         f"to (got {video_root})")
    return {"ars_tau_s": release_tau(release.path), "video_root": str(video_root.resolve()),
            "decision_stride_s": STRIDE_S, "max_frames": 16, "content_judge": content_judge}


def tasks(release: Release, *, content_judge: str = "none", video_root: Path | None = None) -> list[Task]:
    """``proready_<task type>``: ARS, Acc, Acc × ARS, joint effective accuracy."""
    kw = settings(release, content_judge=content_judge, video_root=video_root)
    out = []
    for config in release.configs():
        rows = list(iter_rows(release.files(config), ["questions", "video_duration_s"]))
        rounds = max(math.ceil((r["video_duration_s"] - min(q["ask_time_s"] for q in r["questions"]))
                               / STRIDE_S) + 1 for r in rows)
        out.append(Task(
            name=f"proready_{config}", config=config, output_type="generate_until_agentic",
            metrics=tuple(Metric(m, f"aggregate_{m}") for m in ("ars", "acc", "acc_e", "acc_e_joint")),
            generation_kwargs={"max_new_tokens": 128, "temperature": 0, "do_sample": False,
                               "max_agentic_steps": rounds},
            specific_kwargs=kw, functions=HOOKS))
    return out


# the options are those of `benchforge export lmms-eval` this benchmark takes; the vendored modules
# are what its hooks (lmms_eval_utils.py) import
ADAPTER = LmmsEvalAdapter(
    tasks=tasks, utils=Path(__file__).with_name("lmms_eval_utils.py"),
    options=("content_judge", "video_root"),
    vendored=("pipelines/proready/ars.py", "core/errors.py", "core/media/probe.py", "core/media/video.py",
              "core/media/images.py"))
