"""The project-started server: loopback only, and restarts keep tokens (fixed secret key)
(docs/label_studio.md)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from annotation.server import LabelStudioServer

pytestmark = pytest.mark.label_studio


def _listening_addresses(port: int) -> set[str]:
    """Local addresses with a LISTEN socket on ``port`` (from /proc/net/tcp{,6})."""
    out = set()
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(f).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            addr, p = cols[1].split(":")
            if int(p, 16) == port and cols[3] == "0A":
                out.add(addr)
    return out


def test_health_and_loopback_only(ls_env):
    url = ls_env.server.url
    assert url.startswith("http://127.0.0.1:")
    assert httpx.get(f"{url}/health").json() == {"status": "UP"}
    assert _listening_addresses(ls_env.server.port) == {"0100007F"}  # 127.0.0.1, nothing else


def test_restart_keeps_tokens(ls_env, panel, tmp_path):
    """A fixed secret key means tokens survive a restart (else every token dies). The webhook
    receiver stops after Label Studio and starts before it, on the same port: its stop record
    says Label Studio was down, so a clean restart is no hole in the capture of a round pushed
    before it, and decisions made after it are captured."""
    from annotation import decision_log
    from annotation.projects import Candidate
    from annotation.pull import pull
    from pipelines.streamvibe.rubric import STREAMVIBE
    from tests.support.label_studio import decide, push_round

    srv: LabelStudioServer = ls_env.server
    port = srv.port
    log = tmp_path / "log"
    cand = Candidate("s1", 1, "I", {
        "instruction": "Tell me when the kettle boils",
        "turns": [{"role": "user", "t": 0.0, "text": "Tell me when the kettle boils"}],
        "evidence_points": [{"id": "e0", "window": [1.0, 3.0], "gold_response": "It boils now."}],
        "fps": 2.0}, ["streamvibe/clip.webm"])
    pushed = push_round(ls_env, panel, "restart", "r1", [cand], STREAMVIBE, log)
    receiver = srv.receiver()
    srv.stop()
    assert not _listening_addresses(port)
    assert srv.receiver() is None and not _listening_addresses(int(receiver.url.rsplit(":", 1)[1]))
    srv.start()
    assert srv.port == port
    for m in panel.reviewers:
        assert m.client().users.whoami().id == m.user_id
    assert srv.receiver().url == receiver.url and srv.receiver().session != receiver.session
    states = [(r["state"], r.get("server_stopped")) for r in decision_log.chain(log)
              if r["kind"] == "receiver"]
    assert states == [("attach", None), ("stop", True), ("start", None)]
    decide(panel, pushed, ("s1", 1), {f"r{i}": "approve" for i in range(1, 5)},
           list(STREAMVIBE.criterion_keys))
    res = pull(panel.admin.client(), "restart", "r1", STREAMVIBE, panel, log_dir=log)
    assert res.violations == [] and len(res.decisions) == 4


def test_another_media_root_for_a_running_server_is_refused(ls_env, tmp_path, capsys):
    """Starting again with another media root used to keep the old one silently; now it is an
    error, and a start without one adopts the running server with its root."""
    from annotation import cli
    from annotation.server import LabelStudioError
    from tests.support.label_studio import panel_yaml

    srv = ls_env.server
    other = LabelStudioServer(srv.data_dir, media_root=tmp_path, token_file=srv.token_file,
                              admin_email=srv.admin_email)
    with pytest.raises(LabelStudioError, match="running with media root"):
        other.start()
    adopted = LabelStudioServer(srv.data_dir, token_file=srv.token_file, admin_email=srv.admin_email)
    adopted.start()
    assert (adopted.url, adopted.media_root) == (srv.url, srv.data_dir / "media")
    code = cli.main(["--config", str(panel_yaml(ls_env, tmp_path)), "server", "start",
                     "--media-root", str(tmp_path)])
    assert code == 2 and "running with media root" in capsys.readouterr().err
