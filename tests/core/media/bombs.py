"""Decompression bombs for tests: a few hundred bytes whose header claims a huge image.

Real image bytes with only the size fields rewritten, so Pillow (and OpenCV) read a valid
header: the PNG's IHDR with its CRC recomputed, the JPEG's SOF0 marker. The pixel data stays
the small image's, so nothing here ever decodes to the claimed size.
"""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image


def huge_header(fmt: str, width: int, height: int) -> bytes:
    """A ``"png"`` or ``"jpeg"`` file of a few hundred bytes claiming ``width`` × ``height``."""
    buf = io.BytesIO()
    Image.new("RGB", (16, 16), (200, 30, 30)).save(buf, format=fmt.upper())
    data = bytearray(buf.getvalue())
    if fmt == "png":
        # signature (8), IHDR length (4), "IHDR" (4), width, height, 5 more bytes, CRC
        data[16:24] = struct.pack(">II", width, height)
        data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    else:
        sof = data.index(b"\xff\xc0")  # marker, length (2), precision (1), height, width
        data[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)
