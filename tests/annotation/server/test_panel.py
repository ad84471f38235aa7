"""The panel on the real server: owner-only token file, idempotent set-up, and no secret in any
output (design.md §Conventions, docs/label_studio.md)."""

from __future__ import annotations

import json
import stat

import pytest
import yaml

from annotation import cli
from annotation.server import ensure_panel

pytestmark = pytest.mark.label_studio


def test_token_file_owner_only_and_panel_idempotent(ls_env, panel):
    tf = ls_env.config.token_file
    assert stat.S_IMODE(tf.stat().st_mode) == 0o600
    assert stat.S_IMODE(tf.parent.stat().st_mode) == 0o700
    data = json.loads(tf.read_text())
    assert sorted(data["users"]) == sorted([ls_env.config.admin_email,
                                            *ls_env.config.reviewer_emails])
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


def test_cli_outputs_no_secrets(ls_env, panel, tmp_path, capsys, monkeypatch):
    cfg = tmp_path / "panel.yaml"
    cfg.write_text(yaml.safe_dump({
        "admin": ls_env.config.admin_email, "reviewers": list(ls_env.config.reviewer_emails),
        "token_file": str(ls_env.config.token_file),
        "server": {"data_dir": str(ls_env.config.data_dir)},
    }))
    monkeypatch.delenv("BENCHFORGE_LS_TOKEN_FILE", raising=False)
    assert cli.main(["--config", str(cfg), "panel", "ensure"]) == 0
    assert cli.main(["--config", str(cfg), "server", "status"]) == 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert "r4 (user" in text and '"healthy": true' in text
    secrets = [m.token for m in (panel.admin, *panel.reviewers)]
    secrets += [u["password"] for u in json.loads(ls_env.config.token_file.read_text())["users"]
                .values()]
    for s in secrets:
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
            assert store.token(one.email, str(cfg.data_dir)) == one.token
            assert store.token(two.email, str(cfg2.data_dir)) == two.token
            assert one.client().users.whoami().id == one.user_id
            assert two.client().users.whoami().email == two.email
        again = ensure_panel(ls_env.server.url, cfg)
        assert [m.token for m in again.reviewers] == [m.token for m in panel.reviewers]
