"""Push reads a round's candidates from their file a line at a time, on each of its passes
(``annotation.candidates.CandidatesFile``), and pushes exactly what a list of the same candidates
pushes; a one-shot iterator is refused, a bad line is found before any request, and a file edited
while it is pushed is refused and the push undone — on the real server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation import cli, decision_log
from annotation.candidates import BadCandidate, CandidatesFile
from annotation.projects import Candidate, export_tasks, find_projects
from annotation.push import PushError, push
from pipelines.registry import rubric
from pipelines.streamvibe.rubric import STREAMVIBE
from tests.support.label_studio import panel_yaml

BENCH = "push-file"
label_studio = pytest.mark.label_studio


def _cand(i: int, version: int = 1, note: str = "") -> Candidate:
    return Candidate(f"pf-{i:02d}", version, "IPR"[i % 3], {
        "instruction": f"Tell me when step {i} is done{note}",
        "turns": [{"role": "user", "time": 1.0 + i, "text": "and warn me if I skip"}],
        "evidence_points": [{"window": [2.0, 4.0], "preferred": 3.0, "response": f"Step {i}."}],
        "fps": 2.0}, ["streamvibe/clip.webm"])


def _jsonl(cands: list[Candidate]) -> str:
    return "".join(json.dumps({"sample_id": c.sample_id, "version": c.version,
                               "task_type": c.task_type, "content": c.content,
                               "media": c.media}) + "\n" for c in cands)


def _push(ls_env: Any, panel: Any, review_round: str, cands: Any, log: Path,
          batch_size: int = 500) -> Any:
    return push(panel.admin.client(), BENCH, review_round, cands, STREAMVIBE,
                reviewers=[m.pseudonym for m in panel.reviewers],
                media_root=ls_env.server.media_root, media_dir=ls_env.media_dir, log_dir=log,
                batch_size=batch_size)


def _records(log: Path, review_round: str, res: Any) -> list[str]:
    """The round's push records as written, with what differs between two rounds of the same
    candidates taken out: the round's name, the task and project ids (checked here against the
    push's result), ``pushed_at``."""
    out = []
    for rec in decision_log.read_pushes(log, BENCH, review_round):
        key = (rec.pop("sample_id"), rec.pop("version"))
        assert rec.pop("tasks") == {rv: res.task_id(rv, key) for rv in res.projects}
        assert rec.pop("projects") == res.projects
        rec.pop("pushed_at")
        out.append(f"{key} " + json.dumps(rec, sort_keys=True).replace(review_round, "ROUND"))
    return out


@label_studio
def test_a_file_pushes_what_a_list_pushes(ls_env, panel, tmp_path):
    cands = [_cand(i) for i in range(7)] + [_cand(3, version=2, note=" (corrected)")]
    f = tmp_path / "review_candidates.jsonl"
    f.write_text(_jsonl(cands))
    log = tmp_path / "log"
    by_list = _push(ls_env, panel, "via-list", cands, log, batch_size=3)
    by_file = _push(ls_env, panel, "via-file", CandidatesFile(f), log, batch_size=3)
    assert by_list.n_candidates == by_file.n_candidates == 8
    keys = sorted(c.key for c in cands)
    assert all(sorted(t) == keys for t in [*by_list.tasks.values(), *by_file.tasks.values()])
    assert _records(log, "via-file", by_file) == _records(log, "via-list", by_list)
    assert len(_records(log, "via-file", by_file)) == 8
    admin = panel.admin.client()
    for rv in by_list.projects:
        shown = [sorted(json.dumps(t["data"], sort_keys=True).replace(rnd, "ROUND")
                         for t in export_tasks(admin, res.projects[rv]))
                 for rnd, res in (("via-list", by_list), ("via-file", by_file))]
        assert shown[0] == shown[1] and len(shown[0]) == 8
    # re-pushing the file is idempotent: the same tasks, no new record
    again = _push(ls_env, panel, "via-file", CandidatesFile(f), log, batch_size=3)
    assert again.tasks == by_file.tasks
    assert [len(export_tasks(admin, p)) for p in again.projects.values()] == [8] * 4
    assert len(_records(log, "via-file", by_file)) == 8


def test_a_one_shot_iterator_is_refused(tmp_path):
    """push goes over the candidates several times: a generator would be empty the second time."""
    gen = (c for c in [_cand(1)])
    with pytest.raises(TypeError, match="reads the candidates several times.*not a one-shot"):
        push(None, BENCH, "gen", gen, STREAMVIBE, reviewers=["r1"], media_root=tmp_path,
             log_dir=tmp_path / "log")
    with pytest.raises(TypeError, match="one-shot"):
        push(None, BENCH, "gen", iter([_cand(1)]), STREAMVIBE, reviewers=["r1"],
             media_root=tmp_path, log_dir=tmp_path / "log")


def test_a_bad_line_is_found_before_any_request(tmp_path):
    """The client is None: a push that reached Label Studio would fail otherwise."""
    (tmp_path / "streamvibe").mkdir()
    (tmp_path / "streamvibe" / "clip.webm").write_bytes(b"\x1a\x45\xdf\xa3")
    f = tmp_path / "c.jsonl"
    f.write_text(_jsonl([_cand(1)]) + '{"sample_id": "pf-02"}\n')
    with pytest.raises(BadCandidate, match=rf"^{re.escape(str(f))}:2: bad candidate \('version'\)"):
        push(None, BENCH, "bad", CandidatesFile(f), STREAMVIBE, reviewers=["r1"],
             media_root=tmp_path, log_dir=tmp_path / "log")
    assert not (tmp_path / "log").exists()


@label_studio
def test_the_command_line_names_the_bad_line(ls_env, panel, tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(_jsonl([_cand(1)]) + "\n" + '{"sample_id": "pf-02", "version": 1}\n')
    with pytest.raises(SystemExit, match=rf"^{re.escape(str(f))}:3: bad candidate \('content'\)"):
        cli.main(["--config", str(panel_yaml(ls_env, tmp_path)), "push", "--url", panel.url,
                  "--media-root", str(ls_env.server.media_root), "--benchmark", BENCH,
                  "--round", "cli-bad", "--rubric", STREAMVIBE.name, "--candidates", str(f),
                  "--media-dir", str(ls_env.media_dir), "--log-dir", str(tmp_path / "log")],
                 rubrics=rubric)
    assert find_projects(panel.admin.client(), BENCH, "cli-bad") == {}


class EditedBeforePass(CandidatesFile):
    """A candidates file that someone rewrites just before push's pass number ``at`` reads it
    (1: the checks, 2: the imports, 3: the push records)."""

    def __init__(self, path: Path, at: int, text: str) -> None:
        super().__init__(path)
        self.at, self.text, self.passes = at, text, 0

    def __iter__(self) -> Iterator[Candidate]:  # counts a pass once it reads, not at iter()
        self.passes += 1
        if self.passes == self.at:
            self.path.write_text(self.text)
        yield from super().__iter__()


THREE = [_cand(i) for i in range(3)]
EDITS = {  # how the file is edited -> what the failed push says
    "line edited": (_jsonl([THREE[0], _cand(1, note="!"), THREE[2]]),
                    r"CandidatesChanged: the candidates changed during the push: 'pf-01' version 1"),
    "line removed": (_jsonl(THREE[:2]), r"CandidatesChanged: .* added, removed or reordered"),
    "line added": (_jsonl([*THREE, _cand(3)]), r"CandidatesChanged: .* 'pf-03' version 1"),
    "line broken": (_jsonl(THREE[:2]) + "{\n", r"BadCandidate: .*c\.jsonl:3: bad candidate"),
}


@label_studio
@pytest.mark.parametrize("at", [2, 3])
@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_file_edited_during_the_push_is_refused_and_undone(ls_env, panel, tmp_path, at, edit):
    text, said = EDITS[edit]
    f = tmp_path / "c.jsonl"
    f.write_text(_jsonl(THREE))
    rnd = f"edited-{at}-{edit.replace(' ', '-')}"
    log = tmp_path / "log"
    with pytest.raises(PushError, match=f"{said}.*; undone \\(4 new projects and \\d+ new tasks"):
        _push(ls_env, panel, rnd, EditedBeforePass(f, at, text), log, batch_size=1)
    assert find_projects(panel.admin.client(), BENCH, rnd) == {}
    assert decision_log.read_pushes(log) == []  # no record: the log verifies and holds no push
    assert not (log / "pushes").exists()  # not even a temporary file or an empty folder


@label_studio
def test_an_edit_during_a_repush_removes_only_the_new_tasks(ls_env, panel, tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(_jsonl(THREE[:2]))
    log = tmp_path / "log"
    first = _push(ls_env, panel, "repush-edited", CandidatesFile(f), log)
    f.write_text(_jsonl(THREE))  # one more candidate, then edited before the records are written
    edited = EditedBeforePass(f, 3, _jsonl([THREE[0], THREE[1], _cand(2, note="!")]))
    with pytest.raises(PushError, match="'pf-02' version 1.*undone \\(0 new projects and 4 new"):
        _push(ls_env, panel, "repush-edited", edited, log)
    admin = panel.admin.client()
    assert {rv: sorted(t["id"] for t in export_tasks(admin, p)) for rv, p in first.projects.items()
            } == {rv: sorted(t.values()) for rv, t in first.tasks.items()}
    assert len(decision_log.read_pushes(log)) == 2  # the first push's records only
