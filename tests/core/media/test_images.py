"""Image decode/encode: clear errors on corrupt bytes, byte-identical encodes."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
import skimage.data
from PIL import Image

from core.errors import BadInput
from core.media.images import (
    MAX_PIXELS,
    center_crop,
    crop,
    decode_image,
    encode_image,
    passthrough_or_png,
    resize_short_edge,
    sniff_format,
    verify_image,
)
from tests.core.media.bombs import huge_header


def test_encode_is_deterministic_and_roundtrips() -> None:
    img = Image.fromarray(skimage.data.chelsea())
    for fmt in ("png", "jpeg"):
        a, b = encode_image(img, fmt), encode_image(img.copy(), fmt)
        assert a == b and sniff_format(a) == fmt
    png = encode_image(img, "png")
    assert np.array_equal(np.asarray(decode_image(png, "x.png")), skimage.data.chelsea())


def test_corrupt_and_truncated_jpeg() -> None:
    good = encode_image(Image.fromarray(skimage.data.coffee()), "jpeg")
    with pytest.raises(BadInput) as trunc:
        decode_image(good[: len(good) // 2], "a/b.jpg", field="frames[3]")
    assert (trunc.value.source_file, trunc.value.field) == ("a/b.jpg", "frames[3]")
    assert "truncated" in trunc.value.reason
    with pytest.raises(BadInput) as garbage:
        decode_image(b"\xff\xd8\xff\xe0garbage", "c.jpg")
    assert garbage.value.field == "file" and "cannot decode image" in garbage.value.reason
    with pytest.raises(BadInput, match="empty file"):
        decode_image(b"", "d.jpg")


def test_passthrough_keeps_jpeg_and_converts_bmp() -> None:
    img = Image.fromarray(skimage.data.astronaut()[:64, :64])
    jpg = encode_image(img, "jpeg")
    assert passthrough_or_png(jpg, "x.jpg") == (jpg, "")
    buf = io.BytesIO()
    img.save(buf, format="BMP")
    out, op = passthrough_or_png(buf.getvalue(), "x.bmp")
    assert op == "png" and sniff_format(out) == "png"


def test_content_must_be_the_format_its_extension_names() -> None:
    """A PNG saved as ``.JPEG`` (ImageNet has one) was embedded as it was; the name and the
    bytes must agree, since a release keeps both. Unknown extensions are not judged."""
    img = Image.fromarray(skimage.data.astronaut()[:32, :32])
    png, jpg = encode_image(img, "png"), encode_image(img, "jpeg")
    with pytest.raises(BadInput) as err:
        passthrough_or_png(png, "n01440764/x.JPEG", field="severity 5")
    assert (err.value.source_file, err.value.field) == ("n01440764/x.JPEG", "severity 5")
    assert err.value.reason == "the content is PNG, but the extension .JPEG names JPEG"
    with pytest.raises(BadInput, match="the content is JPEG, but the extension .png names PNG"):
        decode_image(jpg, "a.png")
    assert decode_image(jpg, "a.jpeg").size == (32, 32) and decode_image(png, "cat.ndjson:3").size


def test_geometry() -> None:
    img = Image.fromarray(skimage.data.chelsea())  # 451x300
    assert resize_short_edge(img, 256).size == (385, 256)
    assert center_crop(resize_short_edge(img, 256), 224).size == (224, 224)
    assert crop(img, (10, 20, 110, 70)).size == (100, 50)
    with pytest.raises(ValueError):
        crop(img, (400, 0, 500, 10))


def test_pixels_sha256_keys_decoded_pixels_not_the_file() -> None:
    from core.media.images import pixels_sha256

    img = Image.fromarray(skimage.data.astronaut())
    png = encode_image(img, "png")
    # a lossless copy in another format decodes to the same pixels: the same key
    assert pixels_sha256(decode_image(png, "a.png")) == pixels_sha256(img)
    # a re-encoded JPEG, one changed pixel, another mode or size: another key
    jpeg = decode_image(encode_image(img, "jpeg"), "a.jpg")
    changed = img.copy()
    changed.putpixel((0, 0), (0, 0, 0) if img.getpixel((0, 0)) != (0, 0, 0) else (1, 1, 1))
    keys = {pixels_sha256(x) for x in (img, jpeg, changed, img.convert("L"), img.crop((0, 0, 511, 512)))}
    assert len(keys) == 5


@pytest.mark.parametrize("fmt", ["png", "jpeg"])
def test_decompression_bomb_is_bad_input_not_a_crash(fmt: str) -> None:
    """A few hundred bytes whose header claims 20000x20000 made Pillow raise
    ``DecompressionBombError`` (not an ``OSError``) and the whole build died; between the limit
    and twice it Pillow only warns, and a 10000x10000 claim was decoded into 300 MB."""
    name = f"val2014/bomb.{'jpg' if fmt == 'jpeg' else 'png'}"
    for width, height in ((20000, 20000), (10000, 10000)):
        data = huge_header(fmt, width, height)
        assert len(data) < 1000
        with pytest.raises(BadInput) as err:
            decode_image(data, name, field="file_name")
        assert (err.value.source_file, err.value.field) == (name, "file_name")
        assert err.value.reason.endswith(
            "a decompression bomb, or an image too large to decode safely")
        with pytest.raises(BadInput, match="decompression bomb"):
            verify_image(data, name)  # the release gate's decode
    assert err.value.reason.startswith(
        "the header claims 10000x10000 = 100,000,000 pixels, over the limit of 89,478,485")


def test_pixel_limit_does_not_depend_on_warning_filters() -> None:
    """Whether Pillow's ``DecompressionBombWarning`` is shown, ignored or raised is the
    process's warning filters' choice; the image is rejected under each."""
    data = huge_header("png", 10000, 10000)
    claims = {"error": "the header claims over 89,478,485 pixels (DecompressionBombWarning: ",
              "ignore": "the header claims 10000x10000 = 100,000,000 pixels, over the limit",
              "always": "the header claims 10000x10000 = 100,000,000 pixels, over the limit"}
    for action, claim in claims.items():
        with warnings.catch_warnings():
            warnings.simplefilter(action)  # type: ignore[call-overload]
            with pytest.raises(BadInput) as err:
                decode_image(data, "x.png")
        assert (err.value.source_file, err.value.field) == ("x.png", "file")
        assert err.value.reason.startswith(claim)
    assert MAX_PIXELS == Image.MAX_IMAGE_PIXELS  # Pillow's own default, not a second opinion
    small = huge_header("png", 9459, 9459)  # 89,472,681 pixels: under the limit, decoded
    with pytest.raises(BadInput, match="cannot decode image"):  # (its pixel data is 16x16)
        decode_image(small, "x.png")
