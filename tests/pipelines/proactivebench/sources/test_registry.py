"""Registry and cross-process determinism of every reader."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from core.errors import BadInput
from pipelines.common.sources import ItemRef, ReaderConfig, SourceReader
from pipelines.proactivebench.sources import READERS
from schemas.proactivebench import ENVIRONMENTS

REPO = Path(__file__).resolve().parents[4]

_DIGEST = """
import hashlib, json, sys
from core.errors import BadInput
from pipelines.proactivebench.sources import READERS
from pipelines.common.sources import ItemRef, ReaderConfig
res = {}
for env, root in json.loads(sys.argv[1]).items():
    reader = READERS[env](root, ReaderConfig(global_seed=7))
    out = res.setdefault(env, {})
    for ref in reader.enumerate():
        if isinstance(ref, ItemRef):
            try:
                item = reader.load(ref)
            except BadInput:
                continue
            out[ref.source_id] = [hashlib.sha256(f.data).hexdigest() for f in item.frames]
print(json.dumps(res, sort_keys=True))
"""


def test_registry_covers_every_environment() -> None:
    assert sorted(READERS) == sorted(ENVIRONMENTS)
    for env, cls in READERS.items():
        assert issubclass(cls, SourceReader) and cls.environment == env


def _digests(env: str, root: Path) -> dict[str, list[str]]:
    reader = READERS[env](str(root), ReaderConfig(global_seed=7))
    out = {}
    for ref in reader.enumerate():
        if isinstance(ref, ItemRef):
            json.dumps(ref.payload)  # refs cross Beam workers: JSON-serialisable
            try:
                item = reader.load(ref)
            except BadInput:  # the fixtures plant corrupt files on purpose
                continue
            json.dumps(item.metadata)
            assert 0 <= item.start_frame < len(item.frames)
            assert 0 <= item.reference_frame < len(item.frames)
            assert all(0 <= g < len(item.frames) for g in item.goal_frames)
            assert item.reference_frame in item.goal_frames
            out[ref.source_id] = [hashlib.sha256(f.data).hexdigest() for f in item.frames]
    return out


def test_same_bytes_twice_and_in_a_fresh_process(
    coco_root: Path, quickdraw_root: Path, imagenet_clean_root: Path,
    manifest_root: Callable[..., Path],
) -> None:
    rod = manifest_root("rod", [{"id": "r", "frames": [f"frames/{i:04d}.jpg" for i in range(14)],
                                 "category": "cat", "occluding_object": "blue blocks"}])
    cases = {"coco": coco_root, "quickdraw": quickdraw_root, "imagenet_c": imagenet_clean_root,
             "rod": rod}
    here = {env: _digests(env, root) for env, root in cases.items()}
    assert all(here.values())
    assert here == {env: _digests(env, root) for env, root in cases.items()}
    arg = json.dumps({env: str(root) for env, root in cases.items()})
    fresh = subprocess.run([sys.executable, "-c", _DIGEST, arg], cwd=REPO,
                           capture_output=True, text=True, check=True)
    assert json.loads(fresh.stdout.strip().splitlines()[-1]) == here
