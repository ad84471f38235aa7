"""Every benchmark folder passes the same checks on its own demo release, found by the registry.

Why one test over all folders (as TFDS's ``DatasetBuilderTestCase`` runs every builder over its
dummy data): a benchmark's tests check what is its own; what every release must hold — each input
accounted for, the same bytes from a rebuild with another worker count, the release gate, every
card config loadable by ``datasets`` — was checked per benchmark by hand, so a new folder got it
only if someone copied the tests. Here a new folder is checked by being there; one that declares
no demo fails, naming what to add.

The first build of each demo is the session's ``demo_releases`` (one worker, the byte
fingerprint's builds); the rebuild runs the same :class:`~pipelines.common.benchmark.Demo` with
two worker processes into another folder.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from pipelines.common.benchmark import Benchmark, Demo, Info
from pipelines.registry import BENCHMARKS, benchmark
from tests.support.demo import DemoReleases

ROOT = Path(__file__).resolve().parents[2]
TWO_WORKERS = ("--direct_running_mode=multi_processing", "--direct_num_workers=2")


def declared_demo(bench: Benchmark) -> Demo:
    """The benchmark's demo; the test fails naming the benchmark and what to add when it has none
    (a benchmark no demo builds is one no test builds end to end)."""
    demo = getattr(bench, "demo", None)
    if demo is None:
        pytest.fail(f"benchmark {bench.name!r} declares no demo: add pipelines/{bench.name}/demo.py "
                    "and declare `demo=Demo(...)` on its Benchmark", pytrace=False)
    return demo


def parquet_files(release: Path) -> dict[str, bytes]:
    return {p.relative_to(release).as_posix(): p.read_bytes()
            for p in sorted(release.rglob("*.parquet"))}


def card_configs(release: Path) -> list[dict[str, Any]]:
    """The ``configs:`` of the release card's YAML header (what ``datasets`` reads)."""
    return yaml.safe_load((release / "README.md").read_text().split("---")[1])["configs"]


def rows_listed(manifest: dict[str, Any], patterns: list[str]) -> int:
    """The rows the manifest's file inventory gives the files ``patterns`` match (a ``*`` stays
    inside one folder, as in the card's globs)."""
    return sum(int(f["rows"]) for f in manifest["files"]
               if any(PurePosixPath(f["path"]).match(pattern) for pattern in patterns))


@pytest.fixture(scope="module")
def fingerprint_builds() -> Any:
    sys.path.insert(0, str(ROOT / "scripts"))
    import demo_fingerprint

    return demo_fingerprint


@pytest.mark.parametrize("name", BENCHMARKS)
def test_the_demo_release_conforms(name: str, demo_releases: DemoReleases, fingerprint_builds: Any,
                                   tmp_path: Path) -> None:
    import datasets

    from pipelines.cli import main as benchforge

    bench = benchmark(name)
    demo = declared_demo(bench)
    if bench.reviewed:
        assert demo.decisions is not None, f"{name} is reviewed: its demo must give decisions"
    release = demo_releases.paths[name]
    manifest = json.loads((release / "manifest.json").read_text())

    # every input is kept, filtered or rejected, in each counts group and in each split
    counts = manifest["counts"]
    assert counts, name
    unbalanced = {g: c for g, c in counts.items()
                  if c["inputs"] != c["kept"] + c["filtered"] + c["rejected"] or c.get("pending", 0)}
    assert unbalanced == {}, name
    assert sum(c["kept"] for c in counts.values()) > 0, name
    for split, facts in (manifest.get("splits") or {}).items():
        assert facts["inputs"] == facts["kept"] + facts["filtered"] + facts["rejected"], (name, split)
        assert facts["inputs"] == sum(counts[g]["inputs"] for g in facts["groups"]), (name, split)

    # a rebuild from the same corpus with two worker processes, into another folder: same bytes
    again = fingerprint_builds.build_release(name, demo_releases.raw, tmp_path / "out",
                                             tmp_path / "work", TWO_WORKERS)
    assert again.parent == tmp_path / "out" / name
    first, second = parquet_files(release), parquet_files(again)
    assert first, name
    assert sorted(first) == sorted(second), name
    assert [rel for rel in first if first[rel] != second[rel]] == [], name

    # the release gate passed at build time, and passes as a user runs it on the published folder
    assert manifest["quality"]["success"] is True
    assert benchforge(["check", str(release)]) == 0

    # every config the card lists loads, with the rows the manifest lists for its files
    configs = card_configs(release)
    assert configs, name
    card = (release / "README.md").read_text()
    example = card.split("load_dataset(")[1].split(",")[1].strip().strip("'")
    assert example in {c["config_name"] for c in configs}, (name, example)  # the card's snippet
    for config in configs:
        for entry in config["data_files"]:
            patterns = [entry["path"]] if isinstance(entry["path"], str) else entry["path"]
            ds = datasets.load_dataset(str(release), config["config_name"], split=entry["split"],
                                       cache_dir=str(tmp_path / "hf"))
            assert len(ds) == rows_listed(manifest, patterns) > 0, (name, config["config_name"])

    # what it cites, and what its reviewers decide by, come from its folder
    assert manifest["citation"] == bench.info.citation and bench.info.citation.startswith("@"), name
    if bench.review is not None:  # reviewed before release, or in rounds beside the build
        assert bench.review.rubrics, f"{name} is reviewed: its folder must define its rubric (rubric.py)"
        assert all(r.benchmark == name for r in bench.review.rubrics), name
    check_exports(bench, release, {c["config_name"] for c in configs}, tmp_path / "exports",
                  demo.lmms_eval_args(demo_releases.raw))


def check_exports(bench: Benchmark, release: Path, configs: set[str], out: Path,
                  lmms_eval_args: tuple[str, ...]) -> None:
    """Its exports run on its demo release: Croissant (every benchmark; the build writes it, the
    export command writes the same next to a release; it cites the folder's paper), and the
    evaluation-kit exports its folder declares — an lmms-eval task per card config that has rows,
    each naming the release, and VLMEvalKit TSVs."""
    from pipelines.cli import main as benchforge

    built = (release / "croissant.json").read_text()
    assert json.loads(built)["citeAs"] == bench.info.citation, bench.name
    copy = out / "croissant" / release.name
    shutil.copytree(release, copy)
    assert benchforge(["export", "croissant", str(copy), str(copy)]) == 0
    assert (copy / "croissant.json").read_text() == built, bench.name
    if bench.exports.lmms_eval is not None:
        assert benchforge(["export", "lmms-eval", str(release), str(out / "lmms-eval"),
                           *lmms_eval_args]) == 0
        export = json.loads((out / "lmms-eval" / bench.name / "export.json").read_text())
        tasks = export["tasks"]  # task name → config
        assert tasks and set(tasks.values()) <= configs, bench.name
        for task_name, config in tasks.items():
            task = yaml.safe_load((out / "lmms-eval" / bench.name / f"{task_name}.yaml").read_text()
                                  .replace("!function", ""))
            assert (task["dataset_path"], task["dataset_name"]) == (str(release.resolve()), config)
    if bench.exports.vlmevalkit is not None:
        assert benchforge(["export", "vlmevalkit", str(release), str(out / "vlmevalkit")]) == 0
        assert sorted((out / "vlmevalkit").glob("*.tsv")), bench.name


def test_a_benchmark_without_a_demo_fails_naming_it() -> None:
    """The check every folder passes cannot be skipped by leaving the demo out."""

    no_demo = replace(benchmark(BENCHMARKS[0]), demo=None,
                      info=Info(name="nodemo", title="NoDemo", citation="@misc{nodemo}"))
    with pytest.raises(pytest.fail.Exception, match="'nodemo' declares no demo: add "
                                                     "pipelines/nodemo/demo.py"):
        declared_demo(no_demo)
    assert declared_demo(benchmark(BENCHMARKS[0])) is benchmark(BENCHMARKS[0]).demo
