"""Source-dataset readers, one module per ProactiveBench environment (see docs/sources.md)."""

from __future__ import annotations

from pipelines.sources.base import SourceReader
from pipelines.sources.changeit import ChangeItReader
from pipelines.sources.coco import COCOReader
from pipelines.sources.imagenet_c import ImageNetCReader
from pipelines.sources.mvpn import MVPNReader
from pipelines.sources.quickdraw import QuickDrawReader
from pipelines.sources.rod import RODReader
from pipelines.sources.vsod import VSODReader

READERS: dict[str, type[SourceReader]] = {
    cls.environment: cls
    for cls in (RODReader, VSODReader, MVPNReader, ImageNetCReader, QuickDrawReader,
                ChangeItReader, COCOReader)
}

__all__ = ["READERS"]
