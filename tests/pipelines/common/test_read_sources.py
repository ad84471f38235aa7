"""ReadSources' Load step: every frame's exact bytes are decoded once where they are made.

A reader's own encodings (crops, video frames, strokes) are decoded in the Load step and recorded
as proven beside the blobs, like a source image its reader decoded; bytes that do not decode
reject their item, naming the frame — the release gate then need not decode either again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import apache_beam as beam
import numpy as np
from apache_beam.testing import test_pipeline as beam_testing
from apache_beam.testing.util import assert_that, equal_to
from PIL import Image

from core.blobs import BlobRef, decoded_digests
from core.media.images import encode_image
from pipelines.common.sources import Frame, ItemRef, SourceItem, SourceReader
from pipelines.common.transforms import ReadSources


def _png(seed: int) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 256, (8, 8, 3), dtype=np.uint8)
    return encode_image(Image.fromarray(pixels), "png")


GOOD, OTHER = _png(1), _png(2)
TRUNCATED = GOOD[: len(GOOD) // 2]  # its header still reads; the pixels do not decode


class _EncodingReader(SourceReader):
    """Frames as a reader encodes them itself (``decoded=False``): two good items, one whose
    second frame is truncated."""

    environment = "synthetic"

    def enumerate(self) -> Iterator[ItemRef]:
        for name in ("good", "also-good", "truncated"):
            yield ItemRef(self.environment, name)

    def load(self, ref: ItemRef) -> SourceItem:
        second = {"good": OTHER, "also-good": OTHER, "truncated": TRUNCATED}[ref.source_id]
        frames = [Frame(GOOD, f"{ref.source_id}.mp4@0s"), Frame(second, f"{ref.source_id}.mp4@1s")]
        return SourceItem(self.environment, ref.source_id, frames, "thing", 0, 1, [1])

    def vocabulary(self) -> list[str]:
        return ["thing"]


def test_load_decodes_encoded_frames_records_them_proven_and_rejects_what_fails(tmp_path: Path) -> None:
    blobs = str(tmp_path / "blobs")
    with beam_testing.TestPipeline() as p:
        read = p | ReadSources({"synthetic": _EncodingReader("")}, blobs)
        assert_that(read["items"] | beam.Map(lambda item: (
            item.source_id, [(isinstance(f.data, BlobRef), f.decoded) for f in item.frames])),
            equal_to([("good", [(True, True)] * 2), ("also-good", [(True, True)] * 2)]),
            label="LoadedItems")
        assert_that(read["load_rejected"] | beam.Map(lambda r: (r.item_id, r.source_file, r.field,
                                                                r.reason.split(":")[0])),
                    equal_to([("truncated", "truncated.mp4@1s", "encoded frame", "cannot decode image")]),
                    label="Rejected")
    proven = decoded_digests(blobs)
    assert proven == {hashlib.sha256(GOOD).hexdigest(), hashlib.sha256(OTHER).hexdigest()}
    assert hashlib.sha256(TRUNCATED).hexdigest() not in proven
