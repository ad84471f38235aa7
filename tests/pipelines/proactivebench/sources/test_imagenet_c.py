"""ImageNet-C reader: native severity folders and clean-image mode (ProactiveBench App. 0.A.4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import BadInput, Rejection
from core.media.images import decode_image, encode_image
from pipelines.common.sources import Filtered, ItemRef, ReaderConfig
from pipelines.proactivebench.sources.imagenet_c import ImageNetCReader, disambiguate
from tests.core.media.bombs import huge_header

from .conftest import WNID_CAT, WNID_CUP


def test_native_frames_severity_5_to_1(imagenet_c_root: Path) -> None:
    reader = ImageNetCReader(str(imagenet_c_root))
    assert not reader.is_clean
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
    assert reader.is_clean
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


def test_images_beyond_the_per_class_sample_are_filtered(imagenet_clean_root: Path) -> None:
    src = imagenet_clean_root / WNID_CAT / "chelsea.JPEG"
    (imagenet_clean_root / WNID_CAT / "chelsea2.JPEG").write_bytes(src.read_bytes())
    out = list(ImageNetCReader(str(imagenet_clean_root), ReaderConfig(per_class=1)).enumerate())
    refs = [x.source_id for x in out if isinstance(x, ItemRef)]
    left = [x for x in out if isinstance(x, Filtered)]
    assert len(refs) == 2 and len(left) == 1
    assert (left[0].rule, left[0].item_id, left[0].source_file, left[0].count) == (
        "per-class sample", f"{WNID_CAT}/*", f"{WNID_CAT}/", 1)  # one summary row per class folder
    assert len({*refs} & {f"{WNID_CAT}/chelsea", f"{WNID_CAT}/chelsea2"}) == 1
    assert f"{WNID_CUP}/coffee" in refs


def test_a_root_one_folder_too_high_is_one_rejection_naming_it(imagenet_c_root: Path) -> None:
    """Pointed at the folder above the dataset, the reader used to list nothing (inputs = 0) and
    the build published an empty release; now the folder is an input, rejected with why."""
    reader = ImageNetCReader(str(imagenet_c_root.parent))
    assert [x for x in reader.enumerate() if isinstance(x, ItemRef)] == []
    (found,) = list(reader.unrecognized())
    assert (found.item_id, found.source_file, found.field) == ("imagenet_c/", "imagenet_c/", "path")
    assert found.reason.startswith("not a corruption folder (known: brightness, contrast, ")
    assert found.reason.endswith("(9 files)")


def test_folders_outside_the_native_layout_are_rejected(imagenet_c_root: Path) -> None:
    stray = {"pixelate/7": "severity", "pixelate/2/cats": "wnid", "pixelate_v2/1/x": "corruption",
             "pixelate/4/n02123045/sub": "deep"}
    for folder in stray:
        (imagenet_c_root / folder).mkdir(parents=True, exist_ok=True)
        (imagenet_c_root / folder / "a.JPEG").write_bytes(b"x")
    (imagenet_c_root / "README.txt").write_text("about")
    (imagenet_c_root / "synset_mapping.txt").write_text(f"{WNID_CAT} tabby\n{WNID_CUP} coffee mug\n")
    found = {r.item_id: r.reason for r in ImageNetCReader(str(imagenet_c_root)).unrecognized()}
    assert found == {
        "pixelate/7/": "not a severity folder (1 to 5) (1 file)",
        "pixelate/2/cats/": "not a WordNet id folder (n + 8 digits) (1 file)",
        "pixelate_v2/": found["pixelate_v2/"],
        "pixelate/4/n02123045/sub/": "a folder where image files belong (1 file)",
        "README.txt": "a file in the root: the layout is <corruption>/<severity>/<wnid>/<file> (1 file)",
    }
    assert found["pixelate_v2/"].startswith("not a corruption folder")
    # the stray files are no candidates: the two images are listed as before
    refs = [x for x in ImageNetCReader(str(imagenet_c_root)).enumerate() if isinstance(x, ItemRef)]
    assert len(refs) == 1


def test_clean_layout_with_a_stray_folder_stays_clean(imagenet_clean_root: Path) -> None:
    (imagenet_clean_root / "extras").mkdir()
    (imagenet_clean_root / "extras" / "notes.txt").write_text("x")
    reader = ImageNetCReader(str(imagenet_clean_root))
    assert reader.is_clean
    assert [r.item_id for r in reader.unrecognized()] == ["extras/"]
    assert len([x for x in reader.enumerate() if isinstance(x, ItemRef)]) == 2


def test_two_files_with_one_sample_id_are_both_rejected(imagenet_clean_root: Path) -> None:
    png = encode_image(decode_image((imagenet_clean_root / WNID_CUP / "coffee.JPEG").read_bytes(), "x"))
    (imagenet_clean_root / WNID_CUP / "coffee.png").write_bytes(png)
    out = list(ImageNetCReader(str(imagenet_clean_root)).enumerate())
    rej = sorted(x.source_file for x in out if isinstance(x, Rejection))
    assert rej == [f"{WNID_CUP}/coffee.JPEG", f"{WNID_CUP}/coffee.png"]
    assert [x.source_id for x in out if isinstance(x, ItemRef)] == [f"{WNID_CAT}/chelsea"]


def test_png_saved_as_jpeg_is_rejected(imagenet_c_root: Path) -> None:
    """Format vs extension: a PNG under a .JPEG name was embedded silently (its bytes kept, its
    name a lie); it is bad input now, named with both formats."""
    path = imagenet_c_root / f"pixelate/4/{WNID_CAT}/ILSVRC2012_val_00000001.JPEG"
    path.write_bytes(encode_image(decode_image(path.read_bytes(), "x"), "png"))
    reader = ImageNetCReader(str(imagenet_c_root))
    ref = next(x for x in reader.enumerate() if isinstance(x, ItemRef))
    with pytest.raises(BadInput) as err:
        reader.load(ref)
    assert (err.value.source_file, err.value.field) == (path.relative_to(imagenet_c_root).as_posix(),
                                                        "severity 4")
    assert err.value.reason == "the content is PNG, but the extension .JPEG names JPEG"


def test_class_folders_behind_bad_links_are_rejected_and_counted(imagenet_c_root: Path) -> None:
    """A wnid folder that was a dangling link or a loop was skipped by the listing and counted
    nowhere; each is now a rejected input naming it. A link to an existing folder is followed
    like the folder."""
    cat = imagenet_c_root / "pixelate" / "5" / WNID_CAT
    for f in cat.iterdir():
        f.unlink()
    cat.rmdir()
    cat.symlink_to("n00000000")  # dangling
    (imagenet_c_root / "pixelate" / "4" / "n01440764").symlink_to(".")  # back to pixelate/4/
    (imagenet_c_root / "pixelate" / "3" / WNID_CUP).symlink_to(f"../2/{WNID_CUP}")  # inside: fine
    reader = ImageNetCReader(str(imagenet_c_root))
    found = {r.item_id: (r.field, r.reason) for r in reader.unrecognized()}
    assert found == {
        f"pixelate/5/{WNID_CAT}": ("path", "a symbolic link whose target does not exist (1 file)"),
        "pixelate/4/n01440764": ("path", "a symbolic link loop (it leads back to pixelate/4/) "
                                         "(1 file)"),
    }
    out = list(reader.enumerate())
    rej = {r.item_id: (r.source_file, r.field) for r in out if isinstance(r, Rejection)}
    assert rej == {f"pixelate/{WNID_CAT}/ILSVRC2012_val_00000001": (
        f"pixelate/5/{WNID_CAT}/ILSVRC2012_val_00000001.JPEG", "severity 5")}
    (ref,) = [x for x in out if isinstance(x, ItemRef)]  # the cup, its severity 3 now linked
    assert ref.source_id == f"pixelate/{WNID_CUP}/ILSVRC2012_val_00000002"
    assert len(reader.load(ref).frames) == 5


def test_a_decompression_bomb_is_a_rejected_severity(imagenet_c_root: Path,
                                                     imagenet_clean_root: Path) -> None:
    """In the native layout (the file kept as it is) and in clean mode (decoded, resized and
    corrupted) alike, a header claiming 20000x20000 is BadInput naming the file and field."""
    (imagenet_c_root / f"pixelate/4/{WNID_CAT}/ILSVRC2012_val_00000001.JPEG").write_bytes(
        huge_header("jpeg", 20000, 20000))
    reader = ImageNetCReader(str(imagenet_c_root))
    (ref,) = [x for x in reader.enumerate() if isinstance(x, ItemRef)]
    with pytest.raises(BadInput) as err:
        reader.load(ref)
    assert (err.value.source_file, err.value.field) == (
        f"pixelate/4/{WNID_CAT}/ILSVRC2012_val_00000001.JPEG", "severity 4")
    assert "decompression bomb" in err.value.reason
    (imagenet_clean_root / WNID_CUP / "coffee.JPEG").write_bytes(huge_header("jpeg", 10000, 10000))
    clean = ImageNetCReader(str(imagenet_clean_root))
    ref = next(x for x in clean.enumerate() if isinstance(x, ItemRef) and WNID_CUP in x.source_id)
    with pytest.raises(BadInput) as err:
        clean.load(ref)
    assert (err.value.source_file, err.value.field) == (f"{WNID_CUP}/coffee.JPEG", "file")
    assert err.value.reason.startswith("the header claims 10000x10000 = 100,000,000 pixels")
