"""A project's export read one task at a time (``annotation.projects.iter_tasks``): the same tasks
as Label Studio's whole JSON export, whatever the chunking, and a clear error for an export that
is not a JSON list of tasks."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from annotation.projects import iter_tasks
from pipelines.streamvibe.rubric import STREAMVIBE
from tests.support.label_studio import decide, kettle_candidate, push_round

ALL = list(STREAMVIBE.criterion_keys)


def _exporting(body: bytes, chunk: int) -> SimpleNamespace:
    """An object with the SDK's ``projects.exports.download_sync`` that streams ``body`` in
    ``chunk``-byte pieces. Why not the server: Label Studio never sends a broken export, and
    these are the bytes a proxy, a full disk or a crashed worker can leave."""
    def download_sync(project_id, **_):
        return (body[i:i + chunk] for i in range(0, len(body), chunk))
    return SimpleNamespace(projects=SimpleNamespace(exports=SimpleNamespace(download_sync=download_sync)))


@pytest.mark.label_studio
def test_the_streamed_export_equals_the_whole_export(ls_env, panel, tmp_path):
    admin = panel.admin.client()
    pushed = push_round(ls_env, panel, "exports", "stream", [kettle_candidate()], STREAMVIBE,
                        tmp_path / "log")
    decide(panel, pushed, ("s1", 1), {"r1": "approve", "r2": "revise"}, ALL, comment="fine 0.1")
    for rv, pid in pushed.projects.items():
        whole = json.loads(b"".join(admin.projects.exports.download_sync(
            pid, export_type="JSON", download_all_tasks=True, download_resources=False)))
        got = list(iter_tasks(admin, pid))
        assert got == whole and len(got) == 1
        assert len(got[0]["annotations"]) == (1 if rv in ("r1", "r2") else 0)


TASKS = [{"id": i, "data": {"sample_id": f"s{i}", "version": 1, "fps": 0.5, "text": "ä [ ] , {"},
          "annotations": [{"id": 10 + i, "lead_time": 1.25, "result": []}]} for i in range(5)]


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_any_chunking_gives_the_same_tasks(chunk):
    body = json.dumps(TASKS, ensure_ascii=False).encode()
    got = list(iter_tasks(_exporting(body, chunk), 3))
    assert got == TASKS
    assert isinstance(got[0]["data"]["fps"], float)  # floats stay floats, never Decimal


@pytest.mark.parametrize(("body", "why"), [
    (b"", "the export of project 3 is empty"),
    (b"  \n", "the export of project 3 is empty"),
    (b'{"detail": "Authentication credentials were not provided."}',
     "the export of project 3 is not a JSON list of tasks: it starts b'{\"detail\""),
    (json.dumps(TASKS).encode()[:-40], r"the export of project 3 is not valid JSON \("),
    (b'[{"id": 1}, {"id": 2,,}]', r"the export of project 3 is not valid JSON \("),
])
def test_an_export_that_is_not_a_list_of_tasks_is_named(body, why):
    with pytest.raises(ValueError, match=why):
        list(iter_tasks(_exporting(body, 16), 3))
