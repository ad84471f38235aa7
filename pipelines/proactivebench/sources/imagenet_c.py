"""ImageNet-C (ProactiveBench App. 0.A.4): one image seen at severity 5 → 1, five frames.

Native layout: ``<root>/<corruption>/<severity 1..5>/<wnid>/<file>`` (the released ImageNet-C
tarballs). Corruption folders map to the eight quality actions of the authors' environment via
:data:`core.media.corruptions.CORRUPTION_ACTIONS`; ``extra["corruptions"]`` restricts the
folders used. Every image (``<wnid>/<file>`` in a used corruption folder) is an input. Per class
N images (``config.per_class``, paper 5): distinct file names ranked by sha256(wnid/file), the
others filtered by the rule ``per-class sample``; each image gets one corruption drawn with
``rng_for(global_seed, "<wnid>/<file>", "imagenet_c_corruption")`` among the folders holding
it. A missing severity file is a rejection naming the missing path; so is every file of one
class whose names differ only in the extension (they would share the sample id). A folder or
file that does not fit the layout (unknown corruption, severity outside 1–5, not a wnid, a root
one folder too high) is rejected as one input naming it.

Clean-image mode (``extra["clean"] = True``, or auto-detected when the root holds ``n<digits>``
folders): ``<root>/<wnid>/<file>``. The image is resized (short edge 256) and centre-cropped to
224 as ImageNet-C was made, and the five frames are produced with ``imagecorruptions`` using
one of :data:`CLEAN_MODE_CORRUPTIONS` drawn per sample, seeded per call.

Labels: ``synset_mapping.txt`` / ``LOC_synset_mapping.txt`` in the root
(``n01440764 tench, Tinca tinca``) if present, else timm's ``imagenet_synsets.txt`` +
``imagenet_synset_to_lemma.txt``. The category is the first lemma; lemmas shared by two
synsets (e.g. ``crane``) get the full lemma list, then the wnid, so no two classes collide.
"""

from __future__ import annotations

import hashlib
import importlib.util
import posixpath
import re
from collections.abc import Callable, Iterator
from functools import cached_property, partial
from pathlib import Path
from typing import Any

from core.errors import BadInput, Rejection
from core.files import sha256_hex
from core.media.corruptions import (
    CLEAN_MODE_CORRUPTIONS,
    CORRUPTION_ACTIONS,
    apply_corruption,
)
from core.media.images import (
    center_crop,
    decode_image,
    encode_image,
    from_array,
    resize_short_edge,
    to_array,
)
from core.seeding import rng_for
from core.text import utf8_text
from pipelines.common.sources import Filtered, Frame, ItemRef, SourceItem, SourceReader

SEVERITIES = (5, 4, 3, 2, 1)  # frame order: most corrupted first (start), severity 1 last
SEVERITY_DIRS = {str(s) for s in SEVERITIES}
WNID = re.compile(r"^n\d{8}$")
MAPPING_FILES = ("synset_mapping.txt", "LOC_synset_mapping.txt")
DEFAULT_PER_CLASS = 5


def disambiguate(lemmas: dict[str, list[str]]) -> dict[str, str]:
    """wnid -> unique human-readable label (first lemma, else all lemmas, else + wnid)."""
    firsts = [v[0] for v in lemmas.values()]
    joined = [", ".join(v) for v in lemmas.values()]
    out: dict[str, str] = {}
    for wnid, names in lemmas.items():
        label = names[0]
        if firsts.count(label) > 1:
            label = ", ".join(names)
            if joined.count(label) > 1:
                label = f"{label} ({wnid})"
        out[wnid] = label
    return out


def _timm_info_dir() -> Path:
    """timm's bundled label files, located without importing timm (which imports torch)."""
    spec = importlib.util.find_spec("timm")
    if spec is None or not spec.submodule_search_locations:
        raise BadInput("timm/data/_info", "file", "no synset_mapping.txt in the root and timm "
                                                  "is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / "_info"


class ImageNetCReader(SourceReader):
    """ImageNet-C severity sequences (native) or corruptions generated from clean images."""

    environment = "imagenet_c"
    checks_layout = True

    # -- labels -----------------------------------------------------------------------------
    @cached_property
    def labels(self) -> dict[str, str]:
        for name in MAPPING_FILES:
            if self.exists(name):
                text = utf8_text(self.read_bytes(name), name)  # BadInput, not UnicodeDecodeError
                lemmas = {}
                for i, line in enumerate(text.splitlines(), 1):
                    if not line.strip():
                        continue
                    wnid, _, rest = line.strip().partition(" ")
                    if not WNID.match(wnid) or not rest.strip():
                        raise BadInput(f"{name}:{i}", "wnid", f"malformed line {line!r}")
                    lemmas[wnid] = [s.strip() for s in rest.split(",") if s.strip()]
                return disambiguate(lemmas)
        info = _timm_info_dir()
        wnids = (info / "imagenet_synsets.txt").read_text().split()
        lemma_of = dict(line.split("\t", 1) for line in
                        (info / "imagenet_synset_to_lemma.txt").read_text().splitlines() if line)
        return disambiguate({w: [s.strip() for s in lemma_of[w].split(",")] for w in wnids})

    def vocabulary(self) -> list[str]:
        return sorted(self.labels.values())

    def _label(self, wnid: str, where: str) -> str:
        if wnid not in self.labels:
            raise BadInput(where, "wnid", f"{wnid} is not in the synset mapping")
        return self.labels[wnid]

    # -- enumeration ------------------------------------------------------------------------
    def _list(self, depth: int) -> list[list[str]]:
        return sorted(r.split("/") for r in self.match("/".join(["*"] * depth)))

    @cached_property
    def is_clean(self) -> bool:
        """Clean-image mode: asked for, or the root holds wnid folders and no corruption folder
        (a stray folder beside them is then rejected, not a reason to misread the layout)."""
        if "clean" in self.config.extra:
            return bool(self.config.extra["clean"])
        tops = {parts[0] for parts in self._list(2)}
        return any(WNID.match(t) for t in tops) and not tops & set(CORRUPTION_ACTIONS)

    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        parts = relative.split("/")
        if len(parts) == 1:
            return None if relative in MAPPING_FILES else (
                relative, "a file in the root: the layout is "
                + ("<wnid>/<file>" if self.is_clean else "<corruption>/<severity>/<wnid>/<file>"))
        if self.is_clean:
            if not WNID.match(parts[0]):
                return f"{parts[0]}/", "not a WordNet id folder (n + 8 digits)"
            return (f"{parts[0]}/{parts[1]}/", "a folder where image files belong") if len(parts) > 2 \
                else None
        if parts[0] not in CORRUPTION_ACTIONS:
            return f"{parts[0]}/", f"not a corruption folder (known: {', '.join(sorted(CORRUPTION_ACTIONS))})"
        if parts[0] not in self._corruptions():
            return None  # a known corruption the config leaves out: not read at all
        if len(parts) > 2 and parts[1] not in SEVERITY_DIRS:
            return f"{parts[0]}/{parts[1]}/", "not a severity folder (1 to 5)"
        if len(parts) > 3 and not WNID.match(parts[2]):
            return "/".join(parts[:3]) + "/", "not a WordNet id folder (n + 8 digits)"
        if len(parts) < 4:
            return relative, "a file above <corruption>/<severity>/<wnid>/<file>"
        if len(parts) > 4:
            return "/".join(parts[:4]) + "/", "a folder where image files belong"
        return None

    def _corruptions(self) -> set[str]:
        return set(self.config.extra.get("corruptions", CORRUPTION_ACTIONS)) & set(CORRUPTION_ACTIONS)

    def enumerate(self) -> Iterator[ItemRef | Rejection | Filtered]:
        per_class = self.config.per_class or DEFAULT_PER_CLASS
        if self.is_clean:
            yield from self._enumerate_clean(per_class)
        else:
            yield from self._enumerate_native(per_class)

    @staticmethod
    def _rank(wnid: str, name: str) -> str:
        return hashlib.sha256(f"{wnid}/{name}".encode()).hexdigest()

    def _shared_stems(self, wnid: str, names: list[str], where: Callable[[str], str]
                      ) -> tuple[list[str], list[Rejection]]:
        """Names whose stem (the sample id) is unique in the class, and a rejection for every
        file of a stem given twice (``x.JPEG`` and ``x.png``): which one is the image cannot be
        told, so neither is used."""
        stems: dict[str, list[str]] = {}
        for name in names:
            stems.setdefault(posixpath.splitext(name)[0], []).append(name)
        unique = [n for n in names if len(stems[posixpath.splitext(n)[0]]) == 1]
        rejected = [self.rejection(BadInput(
            where(n), "file", f"{len(group)} files share the sample id "
            f"{wnid}/{stem} ({', '.join(sorted(group))}): every one is rejected"),
            item_id=f"{wnid}/{stem}") for stem, group in sorted(stems.items()) if len(group) > 1
            for n in sorted(group)]
        return unique, rejected

    def _sample(self, wnid: str, names: list[str], per_class: int, where: Callable[[str], str]
                ) -> tuple[list[str], list[Filtered]]:
        """The N names taken for a class (sha256 order); the others, one summary row counted per
        image (a full class folder holds thousands)."""
        ranked = sorted(names, key=lambda n: self._rank(wnid, n))
        rest = ranked[per_class:]
        left = [self.filtered(f"{wnid}/*", where(rest[0]).rsplit("/", 1)[0] + "/", "per-class sample",
                              f"{len(rest)} images of {wnid} not among the {per_class} taken in "
                              "sha256(wnid/file) order", count=len(rest))] if rest else []
        return ranked[:per_class], left

    def _enumerate_clean(self, per_class: int) -> Iterator[ItemRef | Rejection | Filtered]:
        by_class: dict[str, list[str]] = {}
        for wnid, name in (p for p in self._list(2) if WNID.match(p[0])):
            by_class.setdefault(wnid, []).append(name)
        allowed = tuple(self.config.extra.get("corruptions", CLEAN_MODE_CORRUPTIONS))
        for wnid in sorted(by_class):
            where = partial("{}/{}".format, wnid)
            names, shared = self._shared_stems(wnid, by_class[wnid], where)
            taken, left = self._sample(wnid, names, per_class, where)
            yield from shared
            yield from left
            for name in taken:
                sid = f"{wnid}/{posixpath.splitext(name)[0]}"
                try:
                    category = self._label(wnid, f"{wnid}/{name}")
                except BadInput as err:
                    yield self.rejection(err, item_id=sid)
                    continue
                rng = rng_for(self.config.global_seed, f"{wnid}/{name}", "imagenet_c_corruption")
                corruption = rng.choice(sorted(allowed))
                yield ItemRef(self.environment, sid, {
                    "mode": "clean", "file": f"{wnid}/{name}", "wnid": wnid,
                    "category": category, "corruption": corruption})

    def _enumerate_native(self, per_class: int) -> Iterator[ItemRef | Rejection | Filtered]:
        allowed = self._corruptions()
        have: set[tuple[str, str, str, str]] = set()
        holders: dict[tuple[str, str], set[str]] = {}
        first: dict[tuple[str, str], str] = {}  # an image's first file: what a listing names
        for parts in self._list(4):
            corruption, sev, wnid, name = parts
            if corruption in allowed and sev in SEVERITY_DIRS and WNID.match(wnid):
                have.add((corruption, sev, wnid, name))
                holders.setdefault((wnid, name), set()).add(corruption)
                first.setdefault((wnid, name), "/".join(parts))
        by_class: dict[str, list[str]] = {}
        for wnid, name in holders:
            by_class.setdefault(wnid, []).append(name)
        for wnid in sorted(by_class):
            where = partial(lambda w, n: first[(w, n)], wnid)
            names, shared = self._shared_stems(wnid, by_class[wnid], where)
            taken, left = self._sample(wnid, names, per_class, where)
            yield from shared
            yield from left
            for name in taken:
                rng = rng_for(self.config.global_seed, f"{wnid}/{name}", "imagenet_c_corruption")
                corruption = rng.choice(sorted(holders[(wnid, name)]))
                sid = f"{corruption}/{wnid}/{posixpath.splitext(name)[0]}"
                missing = [f"{corruption}/{s}/{wnid}/{name}" for s in SEVERITIES
                           if (corruption, str(s), wnid, name) not in have]
                try:
                    if missing:
                        raise BadInput(missing[0], f"severity {missing[0].split('/')[1]}",
                                       f"missing file ({len(missing)} of 5 severities missing)")
                    category = self._label(wnid, f"{corruption}/5/{wnid}/{name}")
                except BadInput as err:
                    yield self.rejection(err, item_id=sid)
                    continue
                files = [f"{corruption}/{s}/{wnid}/{name}" for s in SEVERITIES]
                yield ItemRef(self.environment, sid, {
                    "mode": "native", "files": files, "wnid": wnid, "category": category,
                    "corruption": corruption})

    # -- loading ----------------------------------------------------------------------------
    def load(self, ref: ItemRef) -> SourceItem:
        try:
            frames, files = (self._load_clean(ref) if ref.payload["mode"] == "clean"
                             else self._load_native(ref))
        except BadInput as err:
            err.item_id = err.item_id or ref.source_id
            raise
        p = ref.payload
        return SourceItem(
            environment=self.environment, source_id=ref.source_id, frames=frames,
            category=p["category"], start_frame=0, reference_frame=len(SEVERITIES) - 1,
            goal_frames=[len(SEVERITIES) - 1],
            metadata={"corruption": p["corruption"], "action": CORRUPTION_ACTIONS[p["corruption"]],
                      "wnid": p["wnid"], "severities": list(SEVERITIES)},
            source_files=files,
        )

    def _load_native(self, ref: ItemRef) -> tuple[list[Frame], list[tuple[str, str]]]:
        frames, files = [], []
        for sev, rel in zip(SEVERITIES, ref.payload["files"], strict=True):
            data = self.read_bytes(rel, field=f"severity {sev}")
            frames.append(Frame.of_source_image(data, rel, field=f"severity {sev}"))
            files.append((rel, sha256_hex(data)))
        return frames, files

    def _load_clean(self, ref: ItemRef) -> tuple[list[Frame], list[tuple[str, str]]]:
        p: dict[str, Any] = ref.payload
        data = self.read_bytes(p["file"])
        img = center_crop(resize_short_edge(decode_image(data, p["file"]), 256), 224)
        arr = to_array(img)
        frames = []
        for sev in SEVERITIES:
            out = apply_corruption(arr, p["corruption"], sev, global_seed=self.config.global_seed,
                                   sample_id=f"{self.environment}/{ref.source_id}")
            frames.append(Frame(encode_image(from_array(out), "png"),
                                f"{p['file']}#{p['corruption']}({sev})"))
        return frames, [(p["file"], sha256_hex(data))]
