"""What a release card tells its reader, checked on the text it renders.

A card lists exactly the configs that have rows, and its loading example names one of them. Why:
ProReady's card declared a ``rec`` config whose file held zero rows, and
``datasets.load_dataset(release, 'rec')`` raised ``DatasetGenerationError``; a release with no
kept episode had ``configs: []`` and still showed loading ``'coco'``. One config is the default,
so a release loads without a config name; every card has its sources' licences and terms (from
the one file that holds them) and the BibTeX of the benchmark's paper and of benchforge.
"""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from pathlib import Path

import datasets
import pytest
import yaml

from exports.dataset_card import (
    SOURCE_LICENCES,
    SourceTerms,
    licence_lines,
    license_metadata,
    mark_default,
    render_card,
    source_terms,
)
from pipelines.common.benchmark import VIDEO_SOURCES
from pipelines.common.citations import card_citations
from pipelines.registry import benchmark
from schemas.outcomes import REJECTION
from tests.support.demo import DemoReleases

USAGE = "ds = datasets.load_dataset('/abs/release', '{config}', split='test')  # configs: {configs}"
MANIFEST = {"version": "1.0.0", "code_version": "x", "config_sha256": "y", "global_seed": 0,
            "counts": {}}


def card(files: list[dict], groups: dict[str, str], extra: list[dict] | None = None) -> str:
    return render_card(title="T", summary="S", manifest=MANIFEST, groups=groups, split="test",
                       schema=REJECTION, warnings=[], usage=USAGE, files=files, example="ssr",
                       extra_configs=extra)


def configs(text: str) -> list[str]:
    return [c["config_name"] for c in yaml.safe_load(text.split("---")[1])["configs"]]


def test_a_config_whose_files_hold_no_rows_is_not_listed() -> None:
    files = [{"path": "data/rec/test-00000-of-00001.parquet", "rows": 0},
             {"path": "data/ssr/test-00000-of-00001.parquet", "rows": 3},
             {"path": "pointwise/r/test-00000-of-00001.parquet", "rows": 0},
             {"path": "README.md"}]
    text = card(files, {"rec": "data/rec", "ssr": "data/ssr"},
                [{"config_name": "pointwise", "data_files": [{"split": "test",
                                                             "path": "pointwise/*/test-*.parquet"}]}])
    assert configs(text) == ["ssr", "all"]
    assert "load_dataset('/abs/release', 'ssr', split='test')  # configs: ssr, all" in text


def test_the_example_falls_back_to_a_config_that_loads() -> None:
    files = [{"path": "data/crr/test-00000-of-00001.parquet", "rows": 2}]
    text = card(files, {"crr": "data/crr", "ssr": "data/ssr"})
    assert configs(text) == ["crr", "all"] and "'crr', split='test'" in text


def test_no_rows_no_config_and_no_loading_example() -> None:
    text = card([{"path": "rejected/rejected-00000-of-00001.parquet", "rows": 4}], {"coco": "data/coco"})
    assert configs(text) == [] and "load_dataset" not in text
    assert "This release holds no records: there is no config to load." in text


# -- the default config ----------------------------------------------------------------------------


def header(text: str) -> dict:
    return yaml.safe_load(text.split("---")[1])


def test_all_is_the_default_config() -> None:
    """HF card convention: ``default: true`` right after the config's name. Without it
    ``load_dataset(<release>)`` stopped with "Config name is missing" on every release."""
    files = [{"path": "data/crr/test-00000-of-00001.parquet", "rows": 2},
             {"path": "data/ssr/test-00000-of-00001.parquet", "rows": 3}]
    configs = header(card(files, {"crr": "data/crr", "ssr": "data/ssr"}))["configs"]
    assert [(c["config_name"], c.get("default")) for c in configs] == \
        [("crr", None), ("ssr", None), ("all", True)]
    assert list(configs[-1]) == ["config_name", "default", "data_files"]
    text = card(files, {"crr": "data/crr"})
    assert "loads `all`, the card's default config (every config of `data/`" in text


def test_a_card_without_all_makes_its_first_config_the_default() -> None:
    configs = [{"config_name": "pointwise", "data_files": []}, {"config_name": "sft", "data_files": []}]
    assert [c.get("default") for c in mark_default(configs)] == [True, None]
    assert mark_default([]) == []
    text = card([{"path": "rejected/rejected-00000-of-00001.parquet", "rows": 4}], {"coco": "data/coco"})
    assert "default config" not in text


def test_a_demo_release_loads_without_a_config_name(demo_releases: DemoReleases, tmp_path: Path) -> None:
    """The real ``datasets`` library, offline, on each demo release: no config name loads the
    evaluation split of every ``data/`` config, as many rows as the manifest counts there. A
    cache of this test's own: the machine's shared one answered a release folder another run
    had built at the same path with other rows."""
    for bench, release in sorted(demo_releases.paths.items()):
        manifest = json.loads((release / "manifest.json").read_text())
        rows = sum(f["rows"] for f in manifest["files"]
                   if fnmatchcase(f["path"], "data/*/test-*.parquet"))
        loaded = datasets.load_dataset(str(release), cache_dir=str(tmp_path / bench))
        assert list(loaded) == ["test"] and loaded["test"].num_rows == rows > 0, bench


# -- licences and citations ------------------------------------------------------------------------


def terms(key: str, **over: object) -> SourceTerms:
    fields = {"key": key, "name": key.upper(), "licence": None, "spdx": None, "url": None,
              "terms": "", "agreement": False, "checked": None}
    return SourceTerms(**{**fields, **over})  # type: ignore[arg-type]


def test_mixed_terms_are_license_other_with_a_name_and_a_link_to_the_table() -> None:
    sources = [terms("a", licence="CC BY 4.0", spdx="CC-BY-4.0", checked="x"), terms("b")]
    meta = header(render_card(title="ProReady-QA", summary="S", manifest=MANIFEST, groups={},
                              split="test", schema=REJECTION, warnings=[], usage=USAGE, files=[],
                              sources=sources))
    assert (meta["license"], meta["license_name"], meta["license_link"]) == \
        ("other", "proready-qa-source-terms", "README.md#licences-and-terms-of-use")
    one = license_metadata("T", [terms("a", spdx="CC-BY-4.0"), terms("b", spdx="CC-BY-4.0")])
    assert one == {"license": "cc-by-4.0"}  # one SPDX id for every source: no name, no link


def test_every_card_lists_its_sources_terms_and_signed_agreements() -> None:
    """Each benchmark's card reads its sources from configs/source_licences.yaml: ImageNet-C and
    Ego4D say a signed agreement is needed; a licence nobody confirmed is "not confirmed: see
    <official page>", never a guess."""
    expected = {"proactivebench": ["rod", "vsod", "mvpn", "imagenet_c", "quickdraw", "changeit", "coco"],
                "streamvibe": list(VIDEO_SOURCES), "proready": list(VIDEO_SOURCES)}
    for name, keys in expected.items():
        bench = benchmark(name)
        assert list(bench.info.source_datasets) == keys
        table = "\n".join(licence_lines(bench.info.title, source_terms(bench.info.source_datasets)))
        assert table.startswith("## Licences and terms of use")
        assert len([line for line in table.splitlines() if line.startswith("| ") and "|---" not in line]) \
            == len(keys) + 1
    rows = {line.split(" | ")[0][2:]: line for line in
            licence_lines("T", source_terms([*expected["proactivebench"], *VIDEO_SOURCES]))
            if line.startswith("| ") and not line.startswith("| source")}
    assert rows["ImageNet-C (corruptions of ImageNet validation images)"].endswith("| **yes** |")
    assert "ImageNet's terms of access" in rows["ImageNet-C (corruptions of ImageNet validation images)"]
    assert rows["Ego4D"].endswith("| **yes** |") and "signed Ego4D license agreement" in rows["Ego4D"]
    assert rows["Quick, Draw!"].split(" | ")[1] == "Creative Commons Attribution 4.0 International"
    assert "| not confirmed: see <https://movienet.github.io> |" in rows["MovieNet"]
    assert [k for k, r in rows.items() if r.endswith("| **yes** |")] == \
        ["ImageNet-C (corruptions of ImageNet validation images)", "Ego4D", "VStream-QA (Flash-VStream)"]


def test_a_licence_is_stated_only_where_it_was_read() -> None:
    entries = yaml.safe_load(SOURCE_LICENCES.read_text())["sources"]
    for key, e in entries.items():
        assert set(e) == {"name", "licence", "spdx", "url", "terms", "agreement", "checked"}, key
        if e["licence"] or e["spdx"]:
            assert e["checked"], f"{key}: a licence with no record of where it was read"
        if not e["licence"]:
            assert e["terms"].startswith("Not confirmed"), key


def test_a_source_the_file_lacks_stops_the_card(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="no entry for source dataset 'kinetics'"):
        source_terms(["coco", "kinetics"])
    path = tmp_path / "terms.yaml"
    path.write_text("sources:\n  coco: {name: COCO}\n")
    assert source_terms(["coco"], path)[0].licence is None


def test_the_card_cites_the_benchmark_paper_and_benchforge() -> None:
    for name, key in (("proactivebench", "@misc{proactivebench,"), ("streamvibe", "@misc{streamvibe,"),
                      ("proready", "@misc{streamready,")):
        entries = card_citations(benchmark(name).info.citation)
        assert [e.split("\n")[0] for e in entries] == [key, "@software{benchforge,"]
        text = render_card(title="T", summary="S", manifest=MANIFEST, groups={}, split="test",
                           schema=REJECTION, warnings=[], usage=USAGE, files=[], citations=entries)
        block = text[text.index("## Citation"):]
        assert block.index("```bibtex\n" + key) < block.index("@software{benchforge,") < block.rindex("```")
        assert entries[0] == benchmark(name).info.citation  # what croissant.json cites
