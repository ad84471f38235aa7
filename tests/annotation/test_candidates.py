"""A round's candidates as push reads them (``annotation.candidates``): the JSON-lines file read
again on every pass with the line-numbered errors the command line always gave, and the first
pass's fingerprints that refuse candidates changed before a later pass — no server needed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from annotation import cli
from annotation.candidates import BadCandidate, CandidatesChanged, CandidatesFile, Seen
from annotation.projects import Candidate


def _line(sid: str, version: int = 1, text: str = "x", media: tuple[str, ...] = ("v/clip.webm",)
          ) -> str:
    return json.dumps({"sample_id": sid, "version": version, "task_type": "I",
                       "content": {"instruction": text}, "media": list(media)}) + "\n"


def test_the_file_is_read_again_on_every_pass(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_text(_line("a") + "\n" + _line("b", 2, media=()))
    cands = CandidatesFile(f)
    assert iter(cands) is not cands  # re-iterable: push may go over it several times
    first = list(cands)
    assert first == [Candidate("a", 1, "I", {"instruction": "x"}, ["v/clip.webm"]),
                     Candidate("b", 2, "I", {"instruction": "x"}, [])]
    f.write_text(_line("c"))
    assert [c.sample_id for c in cands] == ["c"]  # the file as it is now, not a copy
    assert cli.read_candidates(str(f)) == list(cands)


@pytest.mark.parametrize(("bad", "why"), [
    ("{not json", "Expecting property name"),
    (json.dumps({"version": 1, "content": {}}), "'sample_id'"),
    (json.dumps({"sample_id": "s", "version": "one", "content": {}}), "invalid literal for int"),
    (json.dumps({"sample_id": "s", "version": 1, "content": 3}), "not iterable"),
])
def test_a_bad_line_names_file_and_line(tmp_path: Path, bad: str, why: str) -> None:
    f = tmp_path / "c.jsonl"
    f.write_text(_line("a") + "\n" + bad + "\n" + _line("b"))  # a blank line is counted, skipped
    with pytest.raises(BadCandidate, match=rf"^{re.escape(str(f))}:3: bad candidate \(.*{why}"):
        list(CandidatesFile(f))
    # the command line's reader (gemini-review) as ever: the same message, as an exit
    with pytest.raises(SystemExit, match=rf"^{re.escape(str(f))}:3: bad candidate"):
        cli.read_candidates(str(f))


def test_bytes_that_are_not_utf8_are_a_bad_line(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(_line("a").encode() + b'{"sample_id": "\xff"}\n')
    with pytest.raises(BadCandidate, match=rf"^{re.escape(str(f))}:2: bad candidate \(.*utf-8"):
        list(CandidatesFile(f))


def _cands(*lines: str, tmp: Path) -> list[Candidate]:
    f = tmp / "c.jsonl"
    f.write_text("".join(lines))
    return list(CandidatesFile(f))


@pytest.mark.parametrize(("later", "where"), [
    ((_line("a", text="edited"), _line("b")), "'a' version 1 is not what the first pass read"),
    ((_line("a", media=("v/other.webm",)), _line("b")), "'a' version 1"),
    ((_line("a"), _line("c")), "'c' version 1"),
    ((_line("b"), _line("a")), "reordered"),
    ((_line("a"),), "added, removed"),
    ((_line("a"), _line("b"), _line("b")), "added, removed"),
])
def test_a_later_pass_must_read_what_the_first_read(tmp_path: Path, later: tuple[str, ...],
                                                      where: str) -> None:
    seen = Seen()
    assert all(seen.add(c) for c in _cands(_line("a"), _line("b"), tmp=tmp_path))
    assert [c.key for c in seen.again(_cands(_line("a"), _line("b"), tmp=tmp_path))] == [
        ("a", 1), ("b", 1)]
    with pytest.raises(CandidatesChanged, match=where):
        list(seen.again(_cands(*later, tmp=tmp_path)))


def test_duplicates_are_listed_not_kept(tmp_path: Path) -> None:
    seen = Seen()
    added = [seen.add(c) for c in _cands(_line("a"), _line("a", text="other"), _line("b"),
                                         tmp=tmp_path)]
    assert added == [True, False, True]
    assert seen.dupes == {("a", 1)} and sorted(seen.versions) == [("a", 1), ("b", 1)]
