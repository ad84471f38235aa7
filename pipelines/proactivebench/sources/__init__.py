"""Source-dataset readers, one module per ProactiveBench environment (see docs/sources.md)."""

from __future__ import annotations

from pipelines.common.sources import SourceReader
from pipelines.proactivebench.sources.changeit import ChangeItReader
from pipelines.proactivebench.sources.coco import COCOReader
from pipelines.proactivebench.sources.imagenet_c import ImageNetCReader
from pipelines.proactivebench.sources.mvpn import MVPNReader
from pipelines.proactivebench.sources.quickdraw import QuickDrawReader
from pipelines.proactivebench.sources.rod import RODReader
from pipelines.proactivebench.sources.vsod import VSODReader

READERS: dict[str, type[SourceReader]] = {
    cls.environment: cls
    for cls in (RODReader, VSODReader, MVPNReader, ImageNetCReader, QuickDrawReader,
                ChangeItReader, COCOReader)
}

__all__ = ["READERS"]
