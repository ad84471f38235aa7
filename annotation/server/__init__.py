"""A real, local Label Studio server started by the project, and the four-reviewer panel on it.

Why a real server and not a mock: the approval rule (StreamVibe App. B.3) is only as good as the
integrity checks behind it, and those checks exist because of what the real community edition
does *not* enforce (any member's token can write anything — see docs/label_studio.md). Tests and the
benchmark therefore drive the same server reviewers use.

One module per job, each depending only on the ones before it:

- ``credential_store.py``: the owner-only credential files (the lead's: secret key and admin;
  one per reviewer: that reviewer's password and tokens) and
  :class:`LabelStudioError`, whose messages never carry a secret;
- ``venv.py``: the server's own virtual environment (``.venv-ls``), installed on first use;
- ``process.py``: :class:`LabelStudioServer`, the process on 127.0.0.1 (start, adopt, stop),
  with the webhook receiver of ``annotation.webhooks`` started before it and stopped after it;
- ``panel.py``: the admin and the reviewers on a running server (:func:`ensure_panel`).

The names the rest of the code uses are re-exported here.
"""

from annotation.server.credential_store import (
    CredentialStore,
    LabelStudioError,
    ReviewerCredentials,
    reviewer_file_path,
)
from annotation.server.panel import Member, Panel, PanelConfig, ensure_panel, load_panel_config
from annotation.server.process import LabelStudioServer

__all__ = [
    "LabelStudioError", "LabelStudioServer", "Member", "Panel", "PanelConfig", "CredentialStore",
    "ReviewerCredentials", "ensure_panel", "load_panel_config", "reviewer_file_path",
]
