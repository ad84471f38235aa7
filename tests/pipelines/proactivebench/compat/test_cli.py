"""``benchforge export compat-proactivebench --verify``: exports, replays, reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.proactivebench.compat import main


@pytest.mark.py312
def test_cli_exports_and_verifies(release, official, tmp_path: Path, capsys):
    root, _ = release
    assert main([str(root), str(tmp_path / "out"), "--verify"]) == 0
    out = capsys.readouterr().out
    assert "rejected 1" in out and "'oracle_ok': 10" in out
