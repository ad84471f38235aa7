"""ImageNet-C reader: native severity folders and clean-image mode (ProactiveBench App. 0.A.4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import Rejection
from core.media.images import decode_image
from pipelines.common.sources import ItemRef, ReaderConfig
from pipelines.proactivebench.sources.imagenet_c import ImageNetCReader, disambiguate

from .conftest import WNID_CAT, WNID_CUP


def test_native_frames_severity_5_to_1(imagenet_c_root: Path) -> None:
    reader = ImageNetCReader(str(imagenet_c_root))
    assert not reader.clean_mode()
    out = list(reader.enumerate())
    ref = next(x for x in out if isinstance(x, ItemRef))
    item = reader.load(ref)
    assert ref.source_id == f"pixelate/{WNID_CAT}/ILSVRC2012_val_00000001"
    assert [f.source.split("/")[1] for f in item.frames] == ["5", "4", "3", "2", "1"]
    raw = (imagenet_c_root / f"pixelate/5/{WNID_CAT}/ILSVRC2012_val_00000001.JPEG").read_bytes()
    assert item.frames[0].data == raw  # untouched bytes
    assert (item.start_frame, item.reference_frame, item.goal_frames) == (0, 4, [4])
    assert item.category == "tabby"
    assert item.metadata == {"corruption": "pixelate", "action": "resolution",
                             "wnid": WNID_CAT, "severities": [5, 4, 3, 2, 1]}


def test_missing_severity_is_rejected(imagenet_c_root: Path) -> None:
    out = list(ImageNetCReader(str(imagenet_c_root)).enumerate())
    rej = [x for x in out if isinstance(x, Rejection)]
    assert len(rej) == 1
    assert rej[0].source_file == f"pixelate/3/{WNID_CUP}/ILSVRC2012_val_00000002.JPEG"
    assert rej[0].field == "severity 3" and rej[0].item_id.startswith("pixelate/n03063599/")


def test_clean_mode_is_seeded(imagenet_clean_root: Path) -> None:
    reader = ImageNetCReader(str(imagenet_clean_root), ReaderConfig(global_seed=3))
    assert reader.clean_mode()
    refs = [x for x in reader.enumerate() if isinstance(x, ItemRef)]
    assert [r.source_id for r in refs] == [f"{WNID_CAT}/chelsea", f"{WNID_CUP}/coffee"]
    item = reader.load(refs[0])
    again = ImageNetCReader(str(imagenet_clean_root), ReaderConfig(global_seed=3)).load(refs[0])
    assert [f.data for f in item.frames] == [f.data for f in again.frames]
    assert len({f.data for f in item.frames}) == 5  # five distinct severities
    assert decode_image(item.frames[0].data, "x").size == (224, 224)
    assert item.frames[0].source == f"{WNID_CAT}/chelsea.JPEG#{item.metadata['corruption']}(5)"


def test_labels_from_mapping_file(imagenet_clean_root: Path) -> None:
    (imagenet_clean_root / "LOC_synset_mapping.txt").write_text(
        f"{WNID_CAT} tabby, tabby cat\n{WNID_CUP} coffee mug\n")
    reader = ImageNetCReader(str(imagenet_clean_root))
    assert reader.vocabulary() == ["coffee mug", "tabby"]


def test_timm_labels_are_unique() -> None:
    labels = ImageNetCReader("/nonexistent").labels
    assert len(labels) == 1000 and len(set(labels.values())) == 1000
    assert disambiguate({"n1": ["crane"], "n2": ["crane"]}) == {"n1": "crane (n1)",
                                                              "n2": "crane (n2)"}


@pytest.mark.parametrize("per_class", [1])
def test_per_class(imagenet_clean_root: Path, per_class: int) -> None:
    reader = ImageNetCReader(str(imagenet_clean_root), ReaderConfig(per_class=per_class))
    assert len([x for x in reader.enumerate() if isinstance(x, ItemRef)]) == 2
