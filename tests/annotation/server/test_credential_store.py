"""The credential files: owner-only, one per reviewer, the lead's holding the admin only
(design.md §Conventions; why one file each: any member's token can write anything in the
community edition, docs/label_studio.md).

No server needed: this runs in ``make test-fast`` too.
"""

from __future__ import annotations

import json
import stat

import pytest

from annotation.server import CredentialStore, ReviewerCredentials, reviewer_file_path
from annotation.server.credential_store import LabelStudioError

ADMIN = "admin@panel.test"
REVIEWERS = {f"r{i}": f"reviewer{i}@panel.test" for i in range(1, 5)}


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_group_readable_token_file_is_refused(tmp_path):
    p = tmp_path / "t.json"
    p.write_text("{}")
    p.chmod(0o644)
    with pytest.raises(Exception, match="readable by others"):
        CredentialStore(p)


def test_group_readable_reviewer_file_is_refused(tmp_path):
    lead = tmp_path / "secrets" / "ls.json"
    CredentialStore(lead).reviewer("r1", REVIEWERS["r1"]).password()
    own = reviewer_file_path(lead, "r1")
    own.chmod(0o640)
    with pytest.raises(LabelStudioError, match="readable by others \\(mode 640\\)"):
        CredentialStore(lead).reviewer("r1", REVIEWERS["r1"])


def test_one_owner_only_file_per_reviewer_and_the_lead_holds_the_admin_only(tmp_path):
    lead = tmp_path / "secrets" / "ls.json"
    store = CredentialStore(lead)
    admin = store.admin(ADMIN)
    store.set_token(ADMIN, "a" * 40, "/srv/data")
    key = store.secret_key()
    tokens = {p: f"{i}" * 40 for i, p in enumerate(REVIEWERS, start=1)}
    passwords = {}
    for p, email in REVIEWERS.items():
        cred = store.reviewer(p, email)
        passwords[p] = cred.password()
        cred.set_token(tokens[p], "/srv/data")

    assert (_mode(lead), _mode(lead.parent)) == (0o600, 0o700)
    folder = lead.parent / "reviewers"
    assert sorted(f.name for f in folder.iterdir()) == ["r1.json", "r2.json", "r3.json", "r4.json"]
    assert _mode(folder) == 0o700
    lead_data = json.loads(lead.read_text())
    assert lead_data["secret_key"] == key
    assert list(lead_data["users"]) == [ADMIN]
    assert lead_data["users"][ADMIN] == {"password": admin["password"], "token": admin["token"],
                                         "tokens": {"/srv/data": "a" * 40}}
    lead_text = lead.read_text()
    for p, email in REVIEWERS.items():
        own = folder / f"{p}.json"
        assert _mode(own) == 0o600
        data = json.loads(own.read_text())
        assert data == {"version": 1, "email": email, "password": passwords[p],
                        "tokens": {"/srv/data": tokens[p]}}
        text = own.read_text()
        # a reviewer's file never holds another member's secret, nor the server's key
        others = [tokens[q] for q in REVIEWERS if q != p] + [passwords[q] for q in REVIEWERS if q != p]
        assert all(s not in text for s in others + ["a" * 40, admin["password"], admin["token"], key])
        assert tokens[p] not in lead_text and passwords[p] not in lead_text and email not in lead_text
    # read back from the files alone, as a reviewer would
    again = ReviewerCredentials(folder / "r3.json", REVIEWERS["r3"])
    assert (again.password(), again.token("/srv/data")) == (passwords["r3"], tokens["r3"])


def test_lead_file_of_the_old_layout_is_split(tmp_path):
    """A lead file that still holds every reviewer (the earlier layout) loses each reviewer's
    entry to that reviewer's own file on first use, secrets kept as they were."""
    lead = tmp_path / "secrets" / "ls.json"
    lead.parent.mkdir(mode=0o700)
    old = {"version": 1, "secret_key": "k" * 64, "users": {
        ADMIN: {"password": "adminpw", "token": "b" * 40},
        REVIEWERS["r1"]: {"password": "pw-one", "tokens": {"/srv/data": "1" * 40}},
        REVIEWERS["r2"]: {"password": "pw-two", "tokens": {"/srv/data": "2" * 40}},
    }}
    lead.write_text(json.dumps(old))
    lead.chmod(0o600)
    store = CredentialStore(lead)
    one = store.reviewer("r1", REVIEWERS["r1"])
    assert (one.password(), one.token("/srv/data")) == ("pw-one", "1" * 40)
    assert sorted(json.loads(lead.read_text())["users"]) == [ADMIN, REVIEWERS["r2"]]
    store.reviewer("r2", REVIEWERS["r2"])
    data = json.loads(lead.read_text())
    assert data["users"] == {ADMIN: {"password": "adminpw", "token": "b" * 40}}
    assert data["secret_key"] == "k" * 64
    assert json.loads(reviewer_file_path(lead, "r2").read_text())["tokens"] == {"/srv/data": "2" * 40}
    assert _mode(reviewer_file_path(lead, "r2")) == 0o600


def test_reviewer_file_of_another_reviewer_is_refused(tmp_path):
    """Files are named by pseudonym; a reordered panel config must not hand r1's account to
    someone else."""
    lead = tmp_path / "secrets" / "ls.json"
    CredentialStore(lead).reviewer("r1", REVIEWERS["r1"]).password()
    with pytest.raises(LabelStudioError, match="r1.json belongs to another reviewer"):
        CredentialStore(lead).reviewer("r1", REVIEWERS["r2"])
