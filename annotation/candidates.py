"""A round's candidates as ``push`` reads them: a JSON-lines file (what the benchmark builds
write as ``review_candidates.jsonl``) read again on every pass, never held whole.

Why a file that is re-read: ``push`` goes over the candidates more than once — to check and
store everything before the first request, to import the tasks, to write the push records —
and a paper-sized round held as a list of candidates, their task data and their records grew
the client with every candidate (docs/scaling.md, "Push holds no list of the round"). Each pass
here holds one line.

Why fingerprints (:class:`Seen`): a file read more than once can change between two reads.
Everything push checks before its first request is checked on the first pass; each later pass
must read exactly the same candidate versions in the same order, or the push fails (and is
undone) rather than import or record something that was never checked.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from annotation.projects import Candidate
from core.files import canonical_json

__all__ = ["BadCandidate", "CandidatesChanged", "CandidatesFile", "Seen", "fingerprint",
           "parse_candidate"]


class BadCandidate(ValueError):
    """A line of a candidates file that is not a candidate; the message names file and line."""


def parse_candidate(raw: Any) -> Candidate:
    """One candidate from its JSON object (sample_id, version, task_type, content, media);
    raises ValueError, KeyError or TypeError for anything else."""
    return Candidate(str(raw["sample_id"]), int(raw["version"]), str(raw.get("task_type", "")),
                     dict(raw["content"]), list(raw.get("media", [])))


class CandidatesFile:
    """The candidates of a JSON-lines file, read from the file on every iteration (one line at a
    time), so ``push`` can go over them several times without holding them. Blank lines are
    skipped; a line that is not a candidate raises :class:`BadCandidate`
    (``path:line: bad candidate (why)``) when the iteration reaches it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._shown = os.fspath(path)  # as given: the error names the file the way the user did

    def __repr__(self) -> str:
        return f"CandidatesFile({str(self.path)!r})"

    def __iter__(self) -> Iterator[Candidate]:
        with open(self.path, "rb") as fh:  # split on b"\n" only; each line decoded on its own
            for n, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    c = parse_candidate(json.loads(line.decode("utf-8")))
                except (ValueError, KeyError, TypeError) as exc:
                    raise BadCandidate(f"{self._shown}:{n}: bad candidate ({exc})") from None
                yield c


class CandidatesChanged(ValueError):
    """The candidates differ between two passes of one push (their file edited meanwhile)."""


def fingerprint(c: Candidate, content_sha: str) -> bytes:
    """What a candidate version pushes, as one digest: its id, type, content hash and media."""
    return hashlib.sha256(canonical_json([c.sample_id, c.version, c.task_type, content_sha,
                                          c.media]).encode("utf-8")).digest()


class Seen:
    """What the first pass over a push's candidates keeps — per version its content hash and
    fingerprint, and a digest of the whole pass in order — and checks every later pass against,
    so a file edited during the push is refused, never pushed as something else. Per version it
    holds a key, a hex string and 32 bytes, whatever the size of the candidates."""

    def __init__(self) -> None:
        self.versions: dict[tuple[str, int], tuple[str, bytes]] = {}
        self.dupes: set[tuple[str, int]] = set()
        self._order = hashlib.sha256()

    def add(self, c: Candidate) -> bool:
        """Record one candidate of the first pass; False for a version seen before (a duplicate,
        listed in :attr:`dupes`)."""
        sha = c.content_hash
        fp = fingerprint(c, sha)
        self._order.update(fp)
        if c.key in self.versions:
            self.dupes.add(c.key)
            return False
        self.versions[c.key] = (sha, fp)
        return True

    def again(self, candidates: Iterable[Candidate]) -> Iterator[Candidate]:
        """The candidates once more, each checked against the first pass before it is yielded, the
        pass as a whole (order, lines added or removed) once it ends: :class:`CandidatesChanged`
        otherwise — so consume it to the end."""
        order = hashlib.sha256()
        for c in candidates:
            fp = fingerprint(c, c.content_hash)
            if self.versions.get(c.key, (None, None))[1] != fp:
                raise CandidatesChanged(
                    f"the candidates changed during the push: {c.sample_id!r} version {c.version} "
                    "is not what the first pass read (its file edited while it was pushed?); "
                    "push again once it is final")
            order.update(fp)
            yield c
        if order.digest() != self._order.digest():
            raise CandidatesChanged("the candidates changed during the push: lines were added, "
                                    "removed or reordered after the first pass read them (their "
                                    "file edited while it was pushed?); push again once it is final")
