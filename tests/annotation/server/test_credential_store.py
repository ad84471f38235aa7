"""The token file refuses to be read when others can read it (design.md §Conventions).

No server needed: this runs in ``make test-fast`` too.
"""

from __future__ import annotations

import pytest

from annotation.server import CredentialStore


def test_group_readable_token_file_is_refused(tmp_path):
    p = tmp_path / "t.json"
    p.write_text("{}")
    p.chmod(0o644)
    with pytest.raises(Exception, match="readable by others"):
        CredentialStore(p)
