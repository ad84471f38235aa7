"""The lmms-eval tasks of a ProactiveBench release: one multi-turn task per environment
(hooks: :mod:`pipelines.proactivebench.lmms_eval_utils`; writer: :mod:`exports.lmms_eval`)."""

from __future__ import annotations

from pathlib import Path

from exports.lmms_eval import LmmsEvalAdapter, Metric, Task
from exports.release_files import Release, iter_rows

HOOKS = {"doc_to_visual": "doc_to_visual", "doc_to_text": "doc_to_text",
         "doc_to_target": "doc_to_target", "process_results": "process_results"}


def tasks(release: Release, *, hint: bool = False) -> list[Task]:
    """``proactivebench_<environment>``: acc and ps (pipelines/proactivebench/scoring.py).
    ``max_agentic_steps`` is the config's largest ``max_steps``, so lmms-eval never cuts an
    episode short (each episode still ends at its own budget); 50 new tokens as ``tests/mcqa.py``.
    ``ps`` has no better direction (the oracle suggests as little as it can); lmms-eval needs
    one, so it is marked lower-is-better."""
    out = []
    for config in release.configs():
        budget = max(int(r["max_steps"]) for r in iter_rows(release.files(config), ["max_steps"]))
        out.append(Task(
            name=f"proactivebench_{config}", config=config, output_type="generate_until_agentic",
            metrics=(Metric("acc", "aggregate_acc"), Metric("ps", "aggregate_ps", higher_is_better=False)),
            generation_kwargs={"max_new_tokens": 50, "temperature": 0, "do_sample": False,
                               "max_agentic_steps": budget},
            specific_kwargs={"hint": hint}, functions=HOOKS))
    return out


# the options are those of `benchforge export lmms-eval` this benchmark takes; the vendored modules
# are what its hooks (lmms_eval_utils.py) import
ADAPTER = LmmsEvalAdapter(
    tasks=tasks, utils=Path(__file__).with_name("lmms_eval_utils.py"), options=("hint",),
    vendored=("filtering/parsing.py", "pipelines/proactivebench/pools.py",
              "pipelines/proactivebench/scoring.py", "core/errors.py"))
