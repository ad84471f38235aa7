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

from annotation.label_config import build_result
from annotation.projects import Candidate
from annotation.push import PushResult, push
from annotation.rubrics import Rubric
from annotation.server import LabelStudioServer, Panel, PanelConfig, ensure_panel

REVIEWERS = tuple(f"reviewer{i}@panel.test" for i in range(1, 5))
ADMIN = "admin@panel.test"


@dataclass(frozen=True)
class LSEnv:
    server: LabelStudioServer
    config: PanelConfig
    media_dir: Path  # small test media push copies from; the server's store is server.media_root
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
    """The server with its default media store (``<data dir>/media``) and a folder of small test
    media that ``push`` copies from (``media_dir``)."""
    base = tmp_path_factory.mktemp("label_studio")
    media = base / "media"
    _write_media(media)
    cfg = PanelConfig(admin_email=ADMIN, reviewer_emails=REVIEWERS,
                      token_file=base / "secrets" / "label_studio.json", data_dir=base / "data")
    srv = LabelStudioServer(cfg.data_dir, port=None, token_file=cfg.token_file, admin_email=ADMIN)
    srv.start()
    try:
        yield LSEnv(srv, cfg, media, base)
    finally:
        srv.stop()


@pytest.fixture(scope="session")
def panel(ls_env: LSEnv) -> Panel:
    return ensure_panel(ls_env.server.url, ls_env.config)


def kettle_candidate(sid: str = "s1") -> Candidate:
    """A StreamVibe candidate of one evidence point, version 1, for the review-loop tests."""
    return Candidate(sid, 1, "I", {
        "instruction": f"Tell me when the kettle boils ({sid})",
        "turns": [{"role": "user", "t": 0.0, "text": "Tell me when the kettle boils"}],
        "evidence_points": [{"id": "e0", "window": [1.0, 3.0], "gold_response": "It boils now."}],
        "fps": 2.0}, ["streamvibe/clip.webm"])


def push_round(ls_env: LSEnv, panel: Panel, benchmark: str, review_round: str,
               cands: list[Candidate], rubric: Rubric, log_dir: Path,
               media_dir: Path | None = None) -> PushResult:
    """``push`` as the CLI does it: every panel reviewer gets a project, media go into the
    server's media store (``media_dir`` defaults to the fixture's media folder)."""
    return push(panel.admin.client(), benchmark, review_round, cands, rubric,
                reviewers=[m.pseudonym for m in panel.reviewers], media_root=ls_env.server.media_root,
                media_dir=media_dir or ls_env.media_dir, log_dir=log_dir)


def decide(panel: Panel, pushed: PushResult, key: tuple[str, int], decisions: dict[str, str],
           criteria: list[str], comment: str = "", lead_time: float = 5.0) -> dict[str, int]:
    """Each named reviewer decides the candidate version in their own project, with their own
    token (criteria ticked only for an approval); returns the annotation ids."""
    ids = {}
    for who, dec in decisions.items():
        a = panel.reviewer(who).client().annotations.create(
            id=pushed.task_id(who, key), lead_time=lead_time,
            result=build_result(dec, criteria if dec == "approve" else [], comment))
        ids[who] = int(a.id)
    return ids


def panel_yaml(ls_env: LSEnv, folder: Path) -> Path:
    """A panel config file for the CLI (``--config``) naming the session server's data dir and
    token file, so ``annotation.cli`` finds the running server and the panel's tokens."""
    import yaml

    path = folder / "panel.yaml"
    path.write_text(yaml.safe_dump({
        "admin": ls_env.config.admin_email, "reviewers": list(ls_env.config.reviewer_emails),
        "token_file": str(ls_env.config.token_file),
        "server": {"data_dir": str(ls_env.config.data_dir)},
    }))
    return path
