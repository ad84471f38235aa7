"""lmms-eval task folders for a release: one task YAML per config, a group, ``utils.py``, and the
benchforge code the tasks score with (``benchforge export lmms-eval``; docs/exports.md).

Why the scoring code travels with the tasks: lmms-eval runs in its own environment (it pins
torch, transformers and its own OpenCV), where benchforge is not installed; the tasks must still
score with *our* metric functions — the ProactiveBench episode runner, the StreamVibe scorer, ARS —
not with a re-implementation that could drift. So the benchmark's ``utils.py`` (a module of
benchforge, linted and tested like the rest) is copied next to the YAMLs, and the modules it
imports are copied byte for byte under ``_vendor/`` with their package paths, which ``utils.py``
puts first on ``sys.path``. ``export.json`` lists every copied file with its sha256, the
release's stamp (benchmark, version, manifest sha256) and the tasks; every task YAML repeats the
stamp under ``metadata``, so lmms-eval's results name the exact data.

Each YAML points ``dataset_path`` at the local release and ``dataset_name`` at the card config:
lmms-eval calls ``datasets.load_dataset(dataset_path, dataset_name)``, which reads the card's
``configs:`` offline (design.md §Environment).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.files import file_sha256
from exports.release_files import Release

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Metric:
    """A metric ``process_results`` returns and the ``utils`` function that aggregates it."""

    name: str
    aggregation: str
    higher_is_better: bool = True


@dataclass(frozen=True)
class Task:
    """One lmms-eval task over one config of the release."""

    name: str
    config: str
    output_type: str
    metrics: tuple[Metric, ...]
    generation_kwargs: dict[str, Any]
    specific_kwargs: dict[str, Any] = field(default_factory=dict)  # lmms_eval_specific_kwargs.default
    functions: dict[str, str] = field(default_factory=dict)  # doc_to_visual / doc_to_text / … → utils name


@dataclass(frozen=True)
class LmmsEvalAdapter:
    """What a benchmark folder gives ``benchforge export lmms-eval``: its tasks for a release
    (``tasks(release, **options)``), the hooks module copied as ``utils.py``, the command-line
    options of the export it takes (names of ``benchforge export lmms-eval`` options), and the
    repository modules its hooks import (vendored under ``_vendor/``)."""

    tasks: Callable[..., list[Task]]
    utils: Path
    options: tuple[str, ...] = ()
    vendored: tuple[str, ...] = ()


def _scalar(value: Any) -> str:
    """A YAML scalar (JSON strings, numbers and booleans are YAML)."""
    return json.dumps(value, ensure_ascii=False)


def task_yaml(task: Task, release: Release) -> str:
    """The task file: ``!function utils.<name>`` for each hook, the stamp under ``metadata``."""
    stamp = release.stamp()
    lines = [f"task: {_scalar(task.name)}",
             f"dataset_path: {_scalar(str(release.path))}",
             f"dataset_name: {_scalar(task.config)}",
             f"test_split: {_scalar(release.split)}",
             f"output_type: {task.output_type}"]
    lines += [f"{hook}: !function utils.{fn}" for hook, fn in task.functions.items()]
    lines.append("generation_kwargs:")
    lines += [f"  {k}: {_scalar(v)}" for k, v in task.generation_kwargs.items()]
    lines.append("metric_list:")
    for m in task.metrics:
        lines += [f"  - metric: {m.name}", f"    aggregation: !function utils.{m.aggregation}",
                  f"    higher_is_better: {_scalar(m.higher_is_better)}"]
    lines += ["lmms_eval_specific_kwargs:", "  default:"]
    lines += [f"    {k}: {_scalar(v)}" for k, v in task.specific_kwargs.items()] or ["    {}"]
    lines += ["metadata:", f"  version: {_scalar(stamp['version'])}",
              f"  benchmark: {_scalar(stamp['benchmark'])}",
              f"  manifest_sha256: {_scalar(stamp['manifest_sha256'])}"]
    return "\n".join(lines) + "\n"


def write_task_folder(release: Release, out: Path, group: str, tasks: list[Task], utils: Path,
                      vendored: list[str], settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``out/<group>/`` (YAMLs, ``_<group>.yaml``, ``utils.py``, ``_vendor/``,
    ``export.json``) and return what ``export.json`` says. ``vendored`` are repository-relative
    paths of the modules ``utils`` imports (their packages' ``__init__.py`` come along);
    ``settings`` go into ``export.json`` for hooks lmms-eval calls without task arguments
    (``doc_to_visual``)."""
    folder = out / group
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    files: dict[str, str] = {}
    for rel in sorted(set(vendored) | {str(Path(p).parent / "__init__.py") for p in vendored}
                      | _parent_inits(vendored)):
        dst = folder / "_vendor" / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / rel, dst)
        files[f"_vendor/{rel}"] = file_sha256(dst)
    shutil.copyfile(utils, folder / "utils.py")
    files["utils.py"] = file_sha256(folder / "utils.py")
    for task in tasks:
        (folder / f"{task.name}.yaml").write_text(task_yaml(task, release), encoding="utf-8")
    (folder / f"_{group}.yaml").write_text(
        f"group: {group}\ntask:\n" + "".join(f"  - {t.name}\n" for t in tasks), encoding="utf-8")
    report = {"release": release.stamp(), "release_path": str(release.path), "group": group,
              "tasks": {t.name: t.config for t in tasks},
              "utils_source": str(utils.relative_to(REPO)), "files": files, "settings": settings or {}}
    (folder / "export.json").write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return report


def _parent_inits(paths: list[str]) -> set[str]:
    """``__init__.py`` of every package above the vendored modules (``a/b/c.py`` → ``a/__init__.py``)."""
    out = set()
    for p in paths:
        parts = Path(p).parts[:-1]
        for i in range(1, len(parts)):
            out.add(str(Path(*parts[:i]) / "__init__.py"))
    return out
