"""The lmms-eval tasks of a StreamVibe-Bench release: one trajectory task per subtype config
(hooks: :mod:`pipelines.streamvibe.lmms_eval_utils`; writer: :mod:`exports.lmms_eval`).

The ``pointwise`` config (§3.5 Pointwise with Gold History) is not exported: its rows are
respond-or-not decisions scored by FPR_near / accuracy on their own, not the six trajectory
metrics, and lmms-eval scores trajectories, not single decisions.
"""

from __future__ import annotations

from pathlib import Path

from exports.lmms_eval import LmmsEvalAdapter, Metric, Task
from exports.release_files import Release, iter_rows
from schemas.streamvibe import SAMPLE

HOOKS = {"doc_to_visual": "doc_to_visual", "doc_to_text": "doc_to_text",
         "doc_to_target": "doc_to_target", "process_results": "process_results"}
METRICS = (("precision", True), ("recall", True), ("f1", True), ("fpr_near", False), ("ans", True),
           ("content_f1", True))


def tasks(release: Release, *, content_judge: str = "none", tau: float = 2.0) -> list[Task]:
    """``streamvibe_<subtype>``: P, R, F1, FPR_near, ANS, Content-F1 at ``tau``, which must be a
    tolerance the release supports (its probes lie beyond the largest, docs/streamvibe.md)."""
    supported = [float(x) for x in (release.manifest.get("fpr_near") or {}).get("tolerances_s", [])]
    if supported and tau not in supported:
        raise ValueError(f"tau={tau} is not one of the release's tolerances {supported}")
    out = []
    for config in release.configs():
        if release.record_schema(config).name != SAMPLE.name:
            continue
        steps = max(len(r["steps"]) for r in iter_rows(release.files(config), ["steps"]))
        out.append(Task(
            name=f"streamvibe_{config}", config=config, output_type="generate_until_agentic",
            metrics=tuple(Metric(m, f"aggregate_{m}", hib) for m, hib in METRICS),
            generation_kwargs={"max_new_tokens": 128, "temperature": 0, "do_sample": False,
                               "max_agentic_steps": steps},
            specific_kwargs={"tau": tau, "content_judge": content_judge, "max_frames": 16},
            functions=HOOKS))
    return out


# the options are those of `benchforge export lmms-eval` this benchmark takes; the vendored modules
# are what its hooks (lmms_eval_utils.py) import
ADAPTER = LmmsEvalAdapter(
    tasks=tasks, utils=Path(__file__).with_name("lmms_eval_utils.py"), options=("content_judge", "tau"),
    vendored=("pipelines/streamvibe/scoring.py",))
