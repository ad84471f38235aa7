"""Source-dataset readers, one module per ProactiveBench environment (see docs/sources.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipelines.common.sources import ReaderConfig, SourceReader
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


def make_readers(cfg: dict[str, Any], raw_dir: Path, overrides: dict[str, str]) -> dict[str, SourceReader]:
    """One reader per configured environment; a missing folder stops the build with a hint that
    names what the user types."""
    readers = {}
    for env, spec in sorted(cfg["environments"].items()):
        spec = dict(spec or {})
        spec_path = spec.pop("path", env)
        root = overrides.get(env) or str(raw_dir / spec_path)
        per_class = spec.pop("per_class", None)
        if not Path(root).exists() and "://" not in root:
            raise SystemExit(
                f"source directory for {env} not found: {root} — point RAW_DIR at the folder holding "
                f"{spec_path}/, or this dataset elsewhere with {env.upper()}_DIR=/path (make) or "
                f"--source {env}=/path (python -m pipelines.proactivebench)")
        config = ReaderConfig(per_class=per_class, global_seed=int(cfg.get("global_seed", 0)), extra=spec)
        readers[env] = READERS[env](root, config)
    return readers
