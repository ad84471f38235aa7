"""Images as the model APIs take them.

Why here: both APIs accept PNG, JPEG, WebP and GIF inline; anything else (a BMP frame, a TIFF
photo) must be re-encoded before it is sent, losslessly, so that no caller has to care.
"""

from __future__ import annotations

import io


def image_mime(data: bytes) -> str | None:
    """MIME type of an image the APIs accept, from its magic bytes; ``None`` for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return None


def as_supported_image(data: bytes) -> tuple[bytes, str]:
    """Bytes + MIME type the APIs accept; any other image format is re-encoded as PNG."""
    mime = image_mime(data)
    if mime is not None:
        return data, mime
    from PIL import Image

    buf = io.BytesIO()
    Image.open(io.BytesIO(data)).convert("RGB").save(buf, format="PNG")
    return buf.getvalue(), "image/png"
