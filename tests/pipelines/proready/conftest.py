"""Shared fixtures: the real registry videos (design.md §Environment) and a small ProReady corpus
built on them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def media(videos: Path) -> Path:
    """The real registry videos: vtest.avi, tree.avi, bikes.mp4 (make setup)."""
    return videos


def write_corpus(root: Path, media: Path, videos: list[dict[str, Any]]) -> Path:
    """A source root with ``manifest.yaml`` and the named videos copied under ``video/``."""
    src = root / "proready"
    (src / "video").mkdir(parents=True, exist_ok=True)
    for v in videos:
        name = Path(v["path"]).name
        if (media / name).is_file() and not (src / v["path"]).exists():
            shutil.copyfile(media / name, src / v["path"])
    (src / "manifest.yaml").write_text(yaml.safe_dump({"videos": videos}, sort_keys=False))
    return src


@pytest.fixture()
def demo_manifest() -> dict[str, Any]:
    from pipelines.proready import demo as proready_demo

    return yaml.safe_load(yaml.safe_dump(proready_demo.MANIFEST))


@pytest.fixture(scope="session")
def manifest_only_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo config without its video datasets: the custom manifest alone, for the tests that
    build small corpora of their own and check what that source yields, item by item (the
    datasets have their own tests: test_native_sources.py, test_vstream_qa.py)."""
    cfg = yaml.safe_load((ROOT / "configs" / "proready.yaml").read_text())
    cfg.pop("datasets", None)
    cfg["prompts_dir"] = str(ROOT / cfg["prompts_dir"])
    path = tmp_path_factory.mktemp("cfg") / "proready.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path
