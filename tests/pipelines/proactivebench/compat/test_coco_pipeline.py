"""COCO episodes built by the real reader and episode builder replay in the authors' class.

The MS-COCO environment (ProactiveBench App. 0.A.7) explores a cardinal direction, an ordinal one or a
zoom-out. Our crop planner grows the crop towards the move as the authors' ``COCO2014Environment``
does, so the compat export must accept every episode the pipeline builds — not only hand-made
ones — and the official class, run under Python 3.12, must show our frames turn by turn. Images
are real photos bundled with scikit-image; each direction is forced with the reader's
``extra["directions"]`` option, the number of steps K comes from the per-sample seeded draw.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import skimage.data
from PIL import Image

from core.media.images import encode_image
from pipelines.common.sources import ItemRef, ReaderConfig
from pipelines.proactivebench.compat import (
    export,
    load_compat_records,
    official_check,
)
from pipelines.proactivebench.episodes import BuildConfig, build_episode
from pipelines.proactivebench.selfcheck import self_check
from pipelines.proactivebench.sources._coco_crops import CARDINAL, DIRECTIONS, ORDINAL
from pipelines.proactivebench.sources.coco import COCOReader
from tests.pipelines.proactivebench.fixtures import write_release

# real photos, one annotated object each: (file, photo, bbox [x, y, w, h], category id)
PHOTOS = [
    ("astronaut.jpg", skimage.data.astronaut, [160.0, 20.0, 150.0, 170.0], 1),  # the head
    ("coffee.jpg", skimage.data.coffee, [170.0, 18.0, 253.0, 270.0], 47),  # the cup
    ("chelsea.jpg", skimage.data.chelsea, [10.0, 0.0, 390.0, 300.0], 17),  # touches 3 borders
]
CATEGORIES = [{"id": 1, "name": "person"}, {"id": 17, "name": "cat"}, {"id": 47, "name": "cup"},
              {"id": 5, "name": "airplane"}, {"id": 18, "name": "dog"}, {"id": 44, "name": "bottle"}]
SEEDS = (0, 1)
KINDS = {"cardinal": CARDINAL, "ordinal": ORDINAL, "zoom": ("zoom_out",)}


@pytest.fixture(scope="module")
def coco_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("coco")
    (root / "annotations").mkdir()
    (root / "val2014").mkdir()
    images, anns = [], []
    for i, (name, photo, bbox, cat) in enumerate(PHOTOS, start=1):
        img = Image.fromarray(photo())
        (root / "val2014" / name).write_bytes(encode_image(img, "jpeg"))
        images.append({"id": i, "file_name": name, "width": img.width, "height": img.height})
        anns.append({"id": 100 + i, "image_id": i, "category_id": cat, "bbox": bbox})
    (root / "annotations" / "instances_val2014.json").write_text(
        json.dumps({"images": images, "annotations": anns, "categories": CATEGORIES}))
    return root


@pytest.fixture(scope="module")
def episodes(coco_root: Path) -> list[dict]:
    """Every photo in every one of the nine directions, through reader.load + build_episode;
    global seeds 0 and 1 draw K = 4 for all photos, then K = 5, 3, 3."""
    out = []
    for seed in SEEDS:
        for direction in DIRECTIONS:
            config = ReaderConfig(global_seed=seed, extra={"directions": [direction]})
            reader = COCOReader(str(coco_root), config)
            vocab = reader.vocabulary()
            refs = [r for r in reader.enumerate() if isinstance(r, ItemRef)]
            assert len(refs) == len(PHOTOS), direction  # every direction feasible for these boxes
            build = BuildConfig(global_seed=seed, negative_strategy={"coco": "random"})
            for ref in refs:
                ep = build_episode(reader.load(ref), vocab, build)
                ep["id"] = f"{ep['id']}/{direction}/{seed}"  # one id per (photo, direction, seed)
                assert self_check(ep) is None
                out.append(ep)
    return out


@pytest.fixture(scope="module")
def exported(episodes: list[dict], tmp_path_factory: pytest.TempPathFactory):
    root = write_release(tmp_path_factory.mktemp("release"), episodes)
    out = tmp_path_factory.mktemp("compat") / "proactivebench"
    return root, out, export(root, out)


def test_pipeline_coco_episodes_cover_every_kind_and_step_count(episodes: list[dict]) -> None:
    metas = [json.loads(ep["source_metadata"]) for ep in episodes]
    for kind, directions in KINDS.items():
        assert any(m["direction"] in directions for m in metas), kind
    assert {m["steps"] for m in metas} == {3, 4, 5}


def test_every_pipeline_coco_episode_exports(episodes: list[dict], exported) -> None:
    _, out, result = exported
    assert result.rejected == []
    assert result.exported == {"coco2014": len(episodes)}
    records = {r["id"]: r for r in load_compat_records(out, "coco2014")}
    for ep in episodes:
        meta = json.loads(ep["source_metadata"])
        rec = records[ep["id"]]
        # the class's parameters are our plan's: integer steps, K moves per component
        assert rec["direction"] == ("zoom" if meta["direction"] == "zoom_out" else meta["direction"])
        assert rec["horizontal_step"] == meta["horizontal_step"]
        assert rec["vertical_step"] == meta["vertical_step"]
        assert rec["granularity"] == (meta["steps"] if meta["direction"] == "zoom_out"
                                      else meta["steps"] + 1)
        assert not any("hides the move option" in n for n in result.notes.get(ep["id"], []))


@pytest.mark.py312
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_official_class_replays_pipeline_coco_episodes(kind: str, episodes: list[dict],
                                                       tmp_path: Path, python312: str,
                                                       official_source: Path) -> None:
    """Oracle succeeds in exactly len(path)+1 turns showing our crop at every turn; abstain fails."""
    python, source = python312, official_source
    chosen = [ep for ep in episodes
              if json.loads(ep["source_metadata"])["direction"] in KINDS[kind]]
    # replay only this kind: a release and an export holding just its episodes
    sub_root = write_release(tmp_path / "release", chosen)
    sub_out = tmp_path / "compat"
    assert export(sub_root, sub_out).rejected == []
    counts, problems = official_check(sub_root, sub_out, python=python, source=source)
    assert problems == []
    assert counts == {"oracle_ok": len(chosen), "abstain_ok": len(chosen), "episodes": len(chosen)}
