"""The panel on the real server: owner-only credential files (the lead's for the admin, one per
reviewer), idempotent set-up, and no secret in any output (design.md §Conventions,
docs/label_studio.md)."""

from __future__ import annotations

import json
import stat

import pytest
import yaml

from annotation import cli
from annotation.server import ensure_panel, reviewer_file_path
from pipelines import cli as benchforge_cli
from pipelines.proactivebench.rubric import PROACTIVEBENCH_VSOD
from pipelines.registry import rubric

pytestmark = pytest.mark.label_studio


def test_token_file_owner_only_and_panel_idempotent(ls_env, panel):
    tf = ls_env.config.token_file
    assert stat.S_IMODE(tf.stat().st_mode) == 0o600
    assert stat.S_IMODE(tf.parent.stat().st_mode) == 0o700
    data = json.loads(tf.read_text())
    assert list(data["users"]) == [ls_env.config.admin_email]  # the admin's, nobody else's
    assert data["users"][ls_env.config.admin_email]["tokens"] == {
        str(ls_env.config.data_dir): panel.admin.token}
    lead_text = tf.read_text()
    for m in panel.reviewers:
        own = reviewer_file_path(tf, m.pseudonym)
        assert own.parent == tf.parent / "reviewers"
        assert stat.S_IMODE(own.stat().st_mode) == 0o600
        assert stat.S_IMODE(own.parent.stat().st_mode) == 0o700
        mine = json.loads(own.read_text())
        assert mine["email"] == m.email
        assert mine["tokens"][str(ls_env.config.data_dir)] == m.token
        text = own.read_text()
        assert all(o.token not in text for o in (panel.admin, *panel.reviewers) if o is not m)
        assert m.token not in lead_text and mine["password"] not in lead_text
    again = ensure_panel(ls_env.server.url, ls_env.config)
    assert [m.user_id for m in again.reviewers] == [m.user_id for m in panel.reviewers]
    assert [m.pseudonym for m in again.reviewers] == ["r1", "r2", "r3", "r4"]
    emails = {u.email for u in panel.admin.client().users.list()}
    assert {ls_env.config.admin_email, *ls_env.config.reviewer_emails} <= emails
    for m in panel.reviewers:
        me = m.client().users.whoami()
        assert (me.id, me.email) == (m.user_id, m.email)
    # repr of a panel leaks neither e-mails nor tokens
    text = repr(panel)
    assert all(m.token not in text and m.email not in text for m in panel.reviewers)


def _secrets(ls_env, panel) -> list[str]:
    """Every token and password of the panel, read from the lead's and the reviewers' files."""
    tf = ls_env.config.token_file
    found = [m.token for m in (panel.admin, *panel.reviewers)]
    found += [u["password"] for u in json.loads(tf.read_text())["users"].values()]
    for m in panel.reviewers:
        own = json.loads(reviewer_file_path(tf, m.pseudonym).read_text())
        found += [own["password"], *own["tokens"].values()]
    # 5 member tokens, the admin's password, each reviewer's password and token(s) per server
    assert len(found) >= 5 + 1 + 4 * 2 and all(len(s) >= 20 for s in found)
    return found


def test_cli_outputs_no_secrets(ls_env, panel, tmp_path, capsys, monkeypatch):
    """Every review command that reads credentials (panel, push, pull, status, verify, both as
    ``python -m annotation.cli`` and ``benchforge review``) prints no token, password or e-mail."""
    cfg = tmp_path / "panel.yaml"
    cfg.write_text(yaml.safe_dump({
        "admin": ls_env.config.admin_email, "reviewers": list(ls_env.config.reviewer_emails),
        "token_file": str(ls_env.config.token_file),
        "server": {"data_dir": str(ls_env.config.data_dir)},
    }))
    monkeypatch.delenv("BENCHFORGE_LS_TOKEN_FILE", raising=False)
    cands = tmp_path / "c.jsonl"
    cands.write_text(json.dumps({"sample_id": "s-1", "version": 1, "task_type": "x",
                                 "content": {"question": "q", "options": {}},
                                 "media": ["vsod/occluded.png", "vsod/reference.png"]}) + "\n")
    log = tmp_path / "log"
    rnd = ["--benchmark", "proactivebench", "--round", "no-secrets", "--rubric",
           PROACTIVEBENCH_VSOD.name, "--log-dir", str(log)]
    assert cli.main(["--config", str(cfg), "panel", "ensure"]) == 0
    assert cli.main(["--config", str(cfg), "server", "status"]) == 0
    assert cli.main(["--config", str(cfg), "push", *rnd, "--candidates", str(cands),
                     "--media-dir", str(ls_env.media_dir)], rubrics=rubric) == 0
    assert cli.main(["--config", str(cfg), "pull", *rnd], rubrics=rubric) == 0
    assert cli.main(["status", "--log-dir", str(log)]) == 0
    assert cli.main(["verify", "--log-dir", str(log)]) == 0
    assert benchforge_cli.main(["review", "--config", str(cfg), "panel", "ensure"]) == 0
    assert benchforge_cli.main(["review", "--config", str(cfg), "pull", *rnd]) == 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert "r4 (user" in text and '"healthy": true' in text
    assert "1 candidate versions in 4 reviewer projects" in text
    assert text.count("4 tasks, 0 annotations -> 0 decisions, 0 violations") == 2  # a task each
    assert "s-1\tv1\tpending" in text
    assert str(reviewer_file_path(ls_env.config.token_file, "r<i>")) in text
    for s in _secrets(ls_env, panel):
        assert s not in text
        assert s not in ls_env.server.log_file.read_text()
    assert "@" not in text


def test_two_servers_share_one_token_file(ls_env, panel, tmp_path):
    """Tokens are per database; the token file keeps them per server (data dir), so setting up
    a second server from the same file leaves the first server's tokens in place."""
    from annotation.server import CredentialStore, LabelStudioServer, PanelConfig

    cfg = ls_env.config
    cfg2 = PanelConfig(admin_email=cfg.admin_email, reviewer_emails=cfg.reviewer_emails,
                       token_file=cfg.token_file, data_dir=tmp_path / "data2")
    with LabelStudioServer(cfg2.data_dir, token_file=cfg.token_file,
                           admin_email=cfg.admin_email) as srv2:
        panel2 = ensure_panel(srv2.url, cfg2)
        store = CredentialStore(cfg.token_file)
        for one, two in zip(panel.reviewers, panel2.reviewers, strict=True):
            assert one.token != two.token  # two databases, two tokens
            own = store.reviewer(one.pseudonym, one.email)  # the same reviewer's own file
            assert own.token(str(cfg.data_dir)) == one.token
            assert own.token(str(cfg2.data_dir)) == two.token
            assert one.client().users.whoami().id == one.user_id
            assert two.client().users.whoami().email == two.email
        again = ensure_panel(ls_env.server.url, cfg)
        assert [m.token for m in again.reviewers] == [m.token for m in panel.reviewers]
