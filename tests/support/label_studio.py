"""Session-scoped real Label Studio for every test that needs one (no mocks).

Registered for the whole suite by ``tests/conftest.py`` (``pytest_plugins``), so the annotation,
StreamVibe and ProReady tests share ONE server per session.

Why session scope: a fresh data dir costs 30-45 s of migrations on these 2-core machines, so one
server serves every test; each test uses its own benchmark/round names (projects) to stay
independent. The fixture installs ``.venv-ls`` if missing (CI starts from a fresh machine), picks
a free loopback port, uses a fresh tmp data dir and a tmp token file (never ~/.config), and stops
the server at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from annotation.server import LabelStudioServer, Panel, PanelConfig, ensure_panel

REVIEWERS = tuple(f"reviewer{i}@panel.test" for i in range(1, 5))
ADMIN = "admin@panel.test"


@dataclass(frozen=True)
class LSEnv:
    server: LabelStudioServer
    config: PanelConfig
    media_root: Path
    base: Path


def _write_media(root: Path) -> None:
    """Small real media: a VP8 webm (a codec browsers play, docs/label_studio.md) and two PNGs."""
    (root / "streamvibe").mkdir(parents=True)
    (root / "vsod").mkdir(parents=True)
    path = str(root / "streamvibe" / "clip.webm")
    w = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"VP80"), 2.0, (64, 48))
    assert w.isOpened(), "opencv cannot write VP8 webm"
    for i in range(8):
        frame = np.full((48, 64, 3), 30 * i % 255, np.uint8)
        cv2.putText(frame, str(i), (20, 35), cv2.FONT_HERSHEY_SIMPLEX, 1, (255, 255, 255), 2)
        w.write(frame)
    w.release()
    for name, color in (("occluded.png", (20, 20, 20)), ("reference.png", (200, 180, 40))):
        Image.new("RGB", (64, 48), color).save(root / "vsod" / name)


@pytest.fixture(scope="session")
def ls_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LSEnv]:
    base = tmp_path_factory.mktemp("label_studio")
    media = base / "media"
    _write_media(media)
    cfg = PanelConfig(admin_email=ADMIN, reviewer_emails=REVIEWERS,
                      token_file=base / "secrets" / "label_studio.json", data_dir=base / "data",
                      media_root=media)
    srv = LabelStudioServer(cfg.data_dir, port=None, media_root=media, token_file=cfg.token_file,
                            admin_email=ADMIN)
    srv.start()
    try:
        yield LSEnv(srv, cfg, media, base)
    finally:
        srv.stop()


@pytest.fixture(scope="session")
def panel(ls_env: LSEnv) -> Panel:
    return ensure_panel(ls_env.server.url, ls_env.config)
