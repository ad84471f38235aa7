"""Decode, encode, crop and resize images deterministically.

Why a wrapper around Pillow: readers must turn a corrupt file into a :class:`BadInput` naming
the file (design.md §Conventions "Bad input"), never an uncaught ``OSError`` deep inside a Beam
worker, and the
encoders must not embed anything that varies between runs (timestamps, EXIF, ICC blobs), so a
rebuilt release is byte-identical.

Every decode of source bytes goes through :func:`_loaded`, so its checks hold for every reader,
crop, corruption and the release gate alike; one of them is the pixel limit
(:func:`check_pixels`): a file of a few KB whose header claims 20000×20000 pixels made Pillow
raise ``DecompressionBombError`` — an ``Exception``, not the ``OSError`` caught here — and the
build died with a traceback.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import numpy as np
from PIL import Image, UnidentifiedImageError

from core.errors import BadInput

ImageFormat = Literal["png", "jpeg"]
JPEG_QUALITY = 95  # high enough that re-encoded crops keep the detail a model needs
PNG_COMPRESS_LEVEL = 6

Box = tuple[int, int, int, int]  # (left, top, right, bottom), PIL convention

# The most pixels a source image (or a video frame, core/media/video.py) may have: Pillow's
# default ``Image.MAX_IMAGE_PIXELS`` (1 GiB of 4-byte pixels / 3), ~268 MB as RGB. Pillow only
# *warns* (``DecompressionBombWarning``) between this and twice it, and a warning is no rule: the
# process's warning filters decide whether it is shown once, ignored or raised. So the limit is
# checked here, on the header's size before any pixel is decoded, and Pillow's error and warning
# (raised as an exception under a strict filter) mean the same.
MAX_PIXELS = 89_478_485

# What a file name promises: extension → Pillow format. A file whose bytes are another format
# (a PNG saved as ``.JPEG``, as in ImageNet's training set) was embedded silently; a release
# keeps a file's original bytes and name, so the two must agree. MPO is how Pillow names a
# camera JPEG with extra pictures.
EXTENSION_FORMATS = {
    ".jpg": {"JPEG", "MPO"}, ".jpeg": {"JPEG", "MPO"}, ".jpe": {"JPEG", "MPO"}, ".png": {"PNG"},
    ".bmp": {"BMP"}, ".gif": {"GIF"}, ".webp": {"WEBP"}, ".tif": {"TIFF"}, ".tiff": {"TIFF"},
    ".ppm": {"PPM"}, ".pgm": {"PPM"}, ".pbm": {"PPM"},
}


def decode_image(data: bytes, source_file: str, field: str = "file") -> Image.Image:
    """Decode bytes into an RGB image, fully loaded; corrupt or truncated data, or content of
    another format than ``source_file``'s extension names (:data:`EXTENSION_FORMATS`) ⇒
    BadInput."""
    with _loaded(data, source_file, field) as img:
        return img.convert("RGB")


def verify_image(data: bytes, source_file: str, field: str = "file", *, full: bool = True) -> None:
    """Every check of :func:`decode_image` — the full decode included — without the RGB copy;
    ``full=False`` only checks the format against the name, for bytes already proven to decode
    (``exports.integrity``): from the magic bytes where they say PNG or JPEG, else from the header
    Pillow reads.

    Why: the release gate decodes every embedded frame only to prove it decodes, so the RGB
    copy is wasted work. For proven bytes Pillow's header parse is pure Python held under the
    GIL, per frame; the full decode these exact bytes passed already read the same header, and
    Pillow picks PNG and JPEG by the same magic bytes."""
    sniffed = None if full else sniff_format(data)
    if sniffed is not None:
        _check_named(sniffed.upper(), source_file, field)
        return
    with _loaded(data, source_file, field, load=full):
        pass


def _check_named(fmt: str, source_file: str, field: str) -> None:
    """BadInput when ``fmt`` (a Pillow format name) is not what ``source_file``'s extension names."""
    ext = posixpath.splitext(source_file)[1]
    named = EXTENSION_FORMATS.get(ext.lower(), set())
    if named and fmt not in named:
        raise BadInput(source_file, field, f"the content is {fmt}, but the extension "
                                           f"{ext} names {min(named)}")


def check_pixels(width: int, height: int, source_file: str, field: str) -> None:
    """BadInput when a header's ``width`` × ``height`` exceeds :data:`MAX_PIXELS`: a decompression
    bomb (a few KB claiming gigabytes of pixels) or an image too large to decode safely."""
    if width * height > MAX_PIXELS:
        raise BadInput(source_file, field, f"the header claims {width}x{height} = "
                                           f"{width * height:,} pixels, over the limit of "
                                           f"{MAX_PIXELS:,}: {_BOMB}")


_BOMB = "a decompression bomb, or an image too large to decode safely"


@contextmanager
def _loaded(data: bytes, source_file: str, field: str, load: bool = True
            ) -> Iterator[Image.Image]:
    if not data:
        raise BadInput(source_file, field, "empty file")
    try:
        with Image.open(io.BytesIO(data)) as img:
            _check_named(str(img.format), source_file, field)
            check_pixels(img.width, img.height, source_file, field)
            if load:
                img.load()  # force the full decode: a truncated JPEG fails here, not later
            yield img
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        # raised by Image.open before the size can be read: more than twice the limit (the
        # error), or over it under a filter that turns the warning into an exception
        raise BadInput(source_file, field, f"the header claims over {MAX_PIXELS:,} pixels "
                                           f"({type(exc).__name__}: {exc}): {_BOMB}") from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise BadInput(
            source_file, field, f"cannot decode image: {type(exc).__name__}: {exc}"
        ) from exc


def sniff_format(data: bytes) -> ImageFormat | None:
    """'png' / 'jpeg' from the magic bytes, ``None`` for anything else (BMP, WebP...)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    return None


def encode_image(img: Image.Image, fmt: ImageFormat = "png") -> bytes:
    """Encode without metadata; the output depends only on the pixels and the format."""
    buf = io.BytesIO()
    img = img.convert("RGB") if img.mode not in ("RGB", "L") else img
    if fmt == "png":
        img.save(buf, format="PNG", optimize=False, compress_level=PNG_COMPRESS_LEVEL)
    elif fmt == "jpeg":
        img.save(buf, format="JPEG", quality=JPEG_QUALITY, optimize=False, progressive=False,
                 subsampling=0)
    else:
        raise ValueError(f"unsupported image format {fmt!r}")
    return buf.getvalue()


def passthrough_or_png(data: bytes, source_file: str, field: str = "file") -> tuple[bytes, str]:
    """Keep PNG/JPEG bytes untouched (after checking they decode); re-encode others as PNG.

    Returns (bytes, op) where ``op`` is ``""`` for untouched bytes and ``"png"`` otherwise, so
    the frame's ``source`` records whether the release holds the original file. Untouched bytes
    were decoded in full here (``Frame.decoded``).
    """
    img = decode_image(data, source_file, field)
    if sniff_format(data) is not None:
        return data, ""
    return encode_image(img, "png"), "png"


def crop(img: Image.Image, box: Box) -> Image.Image:
    """Crop with integer box; the box must lie inside the image (callers clip first)."""
    left, top, right, bottom = box
    if not (0 <= left < right <= img.width and 0 <= top < bottom <= img.height):
        raise ValueError(f"crop box {box} outside image {img.size}")
    return img.crop(box)


def resize(img: Image.Image, size: tuple[int, int]) -> Image.Image:
    """Resize to (width, height) with a fixed bicubic filter, never a library default."""
    return img.resize(size, Image.Resampling.BICUBIC)


def resize_short_edge(img: Image.Image, short: int) -> Image.Image:
    """Scale so the short edge is ``short`` px (the paper's memory-saving resize, ProactiveBench App. 0.C)."""
    scale = short / min(img.size)
    return resize(img, (max(1, round(img.width * scale)), max(1, round(img.height * scale))))


def center_crop(img: Image.Image, size: int) -> Image.Image:
    """Central ``size``×``size`` square (after resize_short_edge this is the ImageNet protocol)."""
    left = (img.width - size) // 2
    top = (img.height - size) // 2
    return crop(img, (left, top, left + size, top + size))


def pixels_sha256(img: Image.Image) -> str:
    """sha256 of an image's decoded pixels (mode, size and raw bytes): the same for every file
    that decodes to these pixels — a renamed copy, a PNG of a JPEG's pixels — unlike the file's
    sha256. Why: a training split is held out from an evaluation split by content, not by name."""
    head = f"{img.mode} {img.width}x{img.height}\n".encode()
    return hashlib.sha256(head + img.tobytes()).hexdigest()


def to_array(img: Image.Image) -> np.ndarray:
    return np.asarray(img.convert("RGB"), dtype=np.uint8)


def from_array(arr: np.ndarray) -> Image.Image:
    return Image.fromarray(np.ascontiguousarray(arr, dtype=np.uint8))
