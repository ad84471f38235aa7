"""Decoded frames a pending-review state keeps for its release.

Why: a reviewed benchmark is built twice over the same videos: to its pending-review state, and
again, once four reviewers have decided, to its release. Decoding is most of both builds (a
py-spy profile of StreamVibe's release at 100 copies of the demo put 127 of its 159 s in
normalizing the videos, docs/scaling.md). So the pending build keeps what it decoded, in the
state it publishes (``<state>/frames/``), and the release of that state reads it back instead
of decoding every video a second time.

What is kept, per video: the frames in a content-addressed blob store (:mod:`core.blobs`) and one
small JSON record of the decoded timeline, named by the video file's sha256 and a fingerprint of
everything that shapes the frames (:func:`settings_key`: the sampler's settings, the OpenCV
version, the source of the decoding modules). Another file, other settings or other decoding
code give another name, so a stale record is never found, only left unused.

A record is trusted only as far as it checks: it must parse, name this video and these
settings, and every frame it lists must be there with exactly the bytes its sha256 promises
(each is read and hashed). Anything else is a miss with its reason, and the video is decoded
again. Reusing changes no byte of a release: a record holds exactly what decoding produced.

Deleting a state's ``frames/`` is safe: its release decodes the videos again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from apache_beam.io.filesystems import FileSystems

from core.blobs import RAW, BlobReader, BlobRef, BlobStore, write_whole
from core.files import canonical_json

FORMAT = 1  # of a record; another format is another name
KEPT = "frames"  # the folder of a pending-review state that holds them
_DIGEST = re.compile(r"[0-9a-f]{64}")


def staged_root(staging: str) -> str:
    """Where a build writes the frames it decodes: inside the staging folder's ``_build``."""
    return f"{staging}/_build/{KEPT}"


def kept_root(state: Path) -> Path:
    """The frames a pending-review state kept (``<state>/frames``)."""
    return state / KEPT


def code_fingerprint(modules: Iterable[ModuleType]) -> str:
    """sha256 over the source files of ``modules``: decoding code that changed is another key."""
    digest = hashlib.sha256()
    for module in sorted(modules, key=lambda m: m.__name__):
        digest.update(module.__name__.encode() + b"\0" + Path(module.__file__).read_bytes() + b"\0")
    return digest.hexdigest()


def settings_key(settings: dict[str, Any]) -> str:
    """The short name of a decoder's settings (everything that shapes the frames)."""
    return hashlib.sha256(canonical_json(settings).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class KeptVideo:
    """A video's decoded timeline (``facts``, JSON values) and its frames in the store."""

    facts: dict[str, Any]
    frames: tuple[BlobRef, ...]


class FrameStore:
    """The frames of decoded videos under ``root``: ``blobs/`` (content-addressed frames) and
    ``videos/<video sha256>-<settings key>.json`` (one record per video). Works through Beam's
    file systems, like the blob store, so any worker that reaches the folder can use it."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.blobs = BlobStore(FileSystems.join(root, "blobs"))
        self._reader = BlobReader()
        self._videos = FileSystems.join(root, "videos")

    def record_path(self, video_sha256: str, settings: str) -> str:
        return FileSystems.join(self._videos, f"{video_sha256}-{settings}.json")

    def put(self, video_sha256: str, settings: str, facts: dict[str, Any],
            frames: Sequence[bytes]) -> tuple[BlobRef, ...]:
        """Store a decoded video's frames and its record; the references to the frames."""
        refs = tuple(self.blobs.put(f) for f in frames)
        record = {"format": FORMAT, "video_sha256": video_sha256, "settings": settings,
                  "facts": facts, "frames": [[r.sha256, r.size, r.head.hex()] for r in refs]}
        self.blobs.make_folder(self._videos)
        write_whole(FileSystems.get_filesystem(self._videos), self.record_path(video_sha256, settings),
                    canonical_json(record).encode())
        return refs

    def get(self, video_sha256: str, settings: str) -> tuple[KeptVideo | None, str]:
        """(the kept video, "") — or (None, why not): "" when no record exists, else the reason
        a record was not used (unreadable, another video's, a frame missing or changed)."""
        path = self.record_path(video_sha256, settings)
        if not FileSystems.exists(path):
            return None, ""
        try:
            with FileSystems.open(path, compression_type=RAW) as fh:
                record = json.loads(fh.read())
            if record.get("format") != FORMAT:
                return None, f"{path}: format {record.get('format')!r}, expected {FORMAT}"
            if record.get("video_sha256") != video_sha256 or record.get("settings") != settings:
                return None, f"{path}: the record names another video or other settings"
            refs = tuple(BlobRef(self.blobs.root, str(d), int(n), bytes.fromhex(h))
                         for d, n, h in record["frames"])
            named = next((r.sha256 for r in refs if not _DIGEST.fullmatch(r.sha256)), None)
            if named is not None:  # e.g. "../x": never a path outside the store
                return None, f"{path}: a frame is named {named[:70]!r}, not a sha256"
            facts = record["facts"]
            if not isinstance(facts, dict):
                return None, f"{path}: facts is not an object"
        except (OSError, ValueError, TypeError, KeyError) as exc:
            return None, f"{path}: unreadable record ({type(exc).__name__}: {exc})"
        for i, ref in enumerate(refs):
            try:
                data = self._reader.read(ref)
            except OSError as exc:
                return None, f"{path}: frame {i} ({ref.sha256[:12]}) cannot be read ({exc})"
            if hashlib.sha256(data).hexdigest() != ref.sha256 or data[:len(ref.head)] != ref.head:
                return None, f"{path}: frame {i} ({ref.sha256[:12]}) has other bytes than its name"
        return KeptVideo(facts, refs), ""
