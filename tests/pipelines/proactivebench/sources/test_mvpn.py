"""MVP-N manifest reader (ProactiveBench App. 0.A.3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.errors import Rejection
from pipelines.common.sources import ItemRef
from pipelines.proactivebench.sources.mvpn import MVPNReader

from .conftest import frame_list


def test_mvpn_item_and_rejections(manifest_root: Callable[..., Path]) -> None:
    sims = ["lynx", "tiger cat", "Egyptian cat"]
    root = manifest_root("mvpn", [
        {"id": "m1", "frames": frame_list(4), "category": "tabby", "similar_categories": sims},
        {"id": "m2", "frames": frame_list(4), "category": "tabby", "similar_categories": sims[:2]},
        {"id": "m3", "frames": frame_list(4), "category": "tabby", "similar_categories": sims,
         "informative_views": [0, 3]},
    ], n_frames=4)
    reader = MVPNReader(str(root))
    out = list(reader.enumerate())
    item = reader.load(next(x for x in out if isinstance(x, ItemRef)))
    assert (item.start_frame, item.reference_frame, item.goal_frames) == (0, 3, [3])
    assert item.metadata == {"informative_views": [3], "similar_categories": sorted(sims)}
    rej = {r.item_id: r.field for r in out if isinstance(r, Rejection)}
    assert rej == {"m2": "similar_categories", "m3": "informative_views"}
    assert reader.vocabulary() == sorted([*sims, "tabby"])
