"""A card lists exactly the configs that have rows, and its loading example names one of them.

Why: ProReady's card declared a ``rec`` config whose file held zero rows, and
``datasets.load_dataset(release, 'rec')`` raised ``DatasetGenerationError``; a release with no
kept episode had ``configs: []`` and still showed loading ``'coco'``.
"""

from __future__ import annotations

import yaml

from exports.dataset_card import render_card
from schemas.outcomes import REJECTION

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
