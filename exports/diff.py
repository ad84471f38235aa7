"""What changed between two versions of a release, sample by sample, and which SemVer bump that
calls for (``benchforge diff <old> <new>``).

Why by content hash: a rebuild that claims "metadata only" must show identical records, and a
reviewer of a new version must see which samples were added, dropped or altered without reading
Parquet. Samples are matched by ``id`` within each config of the card; a sample's hash is the
sha256 of its canonical JSON (image bytes replaced by their sha256) over the fields *both*
versions have, so a new field alone does not count as a changed record.

TFDS semantics, as design.md §Conventions states them for benchforge releases:

* **patch** — metadata only: every config has the same samples with the same content and the
  same fields;
* **minor** — things were added: new samples, new configs or new fields, while every sample of
  the old version is still there unchanged;
* **major** — records changed: a sample was removed or its content changed, a config or field
  disappeared, or a field changed type.

The bump a diff *requires* is compared with the bump the versions *show*; a smaller one is an
error (exit status 1 of the command), a larger one is allowed and reported.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from core.files import canonical_json
from exports.release import ReleaseError
from exports.release_files import Release, iter_rows, read_release

BUMPS = ("none", "patch", "minor", "major")


def _jsonable(value: Any) -> Any:
    """Canonical-JSON form of a Parquet value: bytes become their sha256 (images hash by content)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return "sha256:" + hashlib.sha256(bytes(value)).hexdigest()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def field_hashes(row: dict[str, Any]) -> dict[str, str]:
    """sha256 of each field's canonical JSON (what "changed" is decided on)."""
    return {k: hashlib.sha256(canonical_json(_jsonable(v)).encode()).hexdigest() for k, v in row.items()}


@dataclass
class ConfigDiff:
    """One config: sample ids added / removed / changed (with the fields that differ)."""

    name: str
    split: str = "test"
    old_rows: int = 0
    new_rows: int = 0
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: dict[str, list[str]] = field(default_factory=dict)  # id → fields whose value differs
    fields_added: list[str] = field(default_factory=list)
    fields_removed: list[str] = field(default_factory=list)
    fields_retyped: list[str] = field(default_factory=list)
    status: str = "both"  # both | added (config only in new) | removed (only in old)

    @property
    def label(self) -> str:
        """``grpo/train``: config and split, as the card's ``configs:`` name them."""
        return f"{self.name}/{self.split}"

    @property
    def unchanged(self) -> int:
        return self.old_rows - len(self.removed) - len(self.changed)

    def required(self) -> str:
        """This config's part of the bump (``none`` when its records and fields are the same)."""
        if self.status == "removed" or self.removed or self.changed or self.fields_removed \
                or self.fields_retyped:
            return "major"
        if self.status == "added" or self.added or self.fields_added:
            return "minor"
        return "none"


@dataclass
class ReleaseDiff:
    old: dict[str, str]  # stamps (benchmark, version, manifest sha256)
    new: dict[str, str]
    configs: list[ConfigDiff]
    metadata_changed: bool  # manifest (but its code_version) or card header differ

    @property
    def required(self) -> str:
        """The smallest bump TFDS semantics allow for these changes: ``none`` only when the
        records and the metadata are the same (a rebuild of the same version)."""
        floor = "patch" if self.metadata_changed else "none"
        return max([floor] + [c.required() for c in self.configs], key=BUMPS.index)

    @property
    def actual(self) -> str:
        return version_bump(self.old["version"], self.new["version"])

    @property
    def verdict(self) -> str:
        """``matches``, ``too small`` (the new version understates its changes) or ``larger
        than required``."""
        need, got = BUMPS.index(self.required), BUMPS.index(self.actual)
        return "matches" if got == need else "too small" if got < need else "larger than required"

    def to_json(self) -> dict[str, Any]:
        return {
            "old": self.old, "new": self.new, "required_bump": self.required,
            "actual_bump": self.actual, "verdict": self.verdict,
            "metadata_changed": self.metadata_changed,
            "configs": [{"config": c.name, "split": c.split, "status": c.status, "old_rows": c.old_rows,
                         "new_rows": c.new_rows, "unchanged": c.unchanged, "added": c.added,
                         "removed": c.removed, "changed": c.changed, "fields_added": c.fields_added,
                         "fields_removed": c.fields_removed, "fields_retyped": c.fields_retyped,
                         "required_bump": c.required()} for c in self.configs],
        }

    def markdown(self, max_ids: int = 20) -> str:
        """The summary a person reads (and a card can link): one table row per config, then
        the ids (first ``max_ids`` of each list)."""
        o, n = self.old, self.new
        lines = [f"# {n['benchmark']} {o['version']} → {n['version']}", "",
                 f"- old manifest sha256: `{o['manifest_sha256']}`",
                 f"- new manifest sha256: `{n['manifest_sha256']}`" if n.get("manifest_sha256")
                 else "- new: this release (its manifest names every file's sha256)",
                 f"- bump required by TFDS semantics: **{self.required}**; shown by the versions: "
                 f"**{self.actual}** — {self.verdict}", "",
                 "| config/split | status | old | new | unchanged | added | removed | changed | "
                 "fields +/−/type |",
                 "|---|---|---:|---:|---:|---:|---:|---:|---|"]
        for c in self.configs:
            fields = "/".join(",".join(x) or "–" for x in (c.fields_added, c.fields_removed,
                                                             c.fields_retyped))
            lines.append(f"| {c.label} | {c.status} | {c.old_rows} | {c.new_rows} | {c.unchanged} | "
                         f"{len(c.added)} | {len(c.removed)} | {len(c.changed)} | {fields} |")
        for c in self.configs:
            for label, ids in (("added", c.added), ("removed", c.removed), ("changed", list(c.changed))):
                if ids:
                    shown = [f"`{i}`" + (f" ({', '.join(c.changed[i])})" if label == "changed" else "")
                             for i in ids[:max_ids]]
                    more = f" … and {len(ids) - max_ids} more" if len(ids) > max_ids else ""
                    lines.append(f"- {c.label} {label}: {', '.join(shown)}{more}")
        return "\n".join(lines) + "\n"


def version_bump(old: str, new: str) -> str:
    """The SemVer component that changed first (``none`` for the same version)."""
    a, b = (tuple(int(x) for x in v.split("+")[0].split("-")[0].split(".")) for v in (old, new))
    if b < a:
        raise ValueError(f"the new version {new} is lower than the old one {old}")
    for part, (x, y) in zip(("major", "minor", "patch"), zip(a, b, strict=True), strict=True):
        if x != y:
            return part
    return "none"


def _columns(files: list[Path]) -> dict[str, str]:
    return {f.name: str(f.type) for f in pq.read_schema(files[0])} if files else {}


def _index(files: list[Path]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for row in iter_rows(files):
        sid = str(row["id"])
        if sid in out:
            raise ValueError(f"duplicate sample id {sid!r} in {[str(f) for f in files]}")
        out[sid] = field_hashes(row)
    return out


def diff_config(name: str, split: str, old: Release | None, new: Release | None) -> ConfigDiff:
    old_files = old.files(name, split) if old else []
    new_files = new.files(name, split) if new else []
    status = "both" if old and new else "added" if new else "removed"
    c = ConfigDiff(name=name, split=split, status=status)
    a_cols, b_cols = _columns(old_files), _columns(new_files)
    if status == "both":
        c.fields_added = sorted(set(b_cols) - set(a_cols))
        c.fields_removed = sorted(set(a_cols) - set(b_cols))
        c.fields_retyped = sorted(k for k in set(a_cols) & set(b_cols) if a_cols[k] != b_cols[k])
    a, b = _index(old_files), _index(new_files)
    c.old_rows, c.new_rows = len(a), len(b)
    common = sorted(set(a_cols) & set(b_cols) - set(c.fields_retyped))
    c.added = sorted(set(b) - set(a))
    c.removed = sorted(set(a) - set(b))
    for sid in sorted(set(a) & set(b)):
        differ = [f for f in common if a[sid][f] != b[sid][f]]
        if differ:
            c.changed[sid] = differ
    return c


def diff_releases(old_path: str | Path, new_path: str | Path) -> ReleaseDiff:
    """Config by config of every split (the card's configs, without ``all``: the evaluation
    split's and a training split's), sample by sample."""
    return _diff(read_release(old_path), read_release(new_path))


def _diff(old: Release, new: Release) -> ReleaseDiff:
    if old.benchmark != new.benchmark:
        raise ValueError(f"cannot diff {old.benchmark} against {new.benchmark}")
    configs = []
    for split in dict.fromkeys(old.splits + new.splits):
        a = old.configs(split=split) if split in old.splits else {}
        b = new.configs(split=split) if split in new.splits else {}
        configs += [diff_config(name, split, old if name in a else None, new if name in b else None)
                    for name in sorted(set(a) | set(b))]
    return ReleaseDiff(old=old.stamp(), new=new.stamp(), configs=configs,
                       metadata_changed=_metadata(old) != _metadata(new))


def _metadata(release: Release) -> tuple[dict[str, Any], dict[str, Any]]:
    """Manifest and card header without the code version (a rebuild from another commit of the
    same data is not a metadata change)."""
    manifest = {k: v for k, v in release.manifest.items() if k not in ("code_version", "version")}
    return manifest, release.card


def write_diff(diff: ReleaseDiff, out_dir: Path) -> tuple[Path, Path]:
    """``diff-<old>-<new>.json`` and ``.md`` in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"diff-{diff.old['version']}-{diff.new['version']}"
    js, md = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    js.write_text(json.dumps(diff.to_json(), indent=1, sort_keys=True) + "\n")
    md.write_text(diff.markdown())
    return js, md


# -- the diff a build writes into a new version ----------------------------------------------------
def diff_stem(old_version: str, new_version: str) -> str:
    return f"diff-{old_version}-{new_version}"


def card_lines(old_version: str, new_version: str) -> list[str]:
    """The card's link to the diff the build writes (:func:`write_build_diff`)."""
    stem = diff_stem(old_version, new_version)
    return ["", f"## Changes since {old_version}", "",
            f"Samples added, removed and changed since {old_version} (by content hash, config by "
            "config of every split) and whether the version bump matches TFDS semantics: "
            f"[reports/{stem}.md](reports/{stem}.md) (as JSON: `reports/{stem}.json`; "
            f"`benchforge diff <{old_version}> <{new_version}>` prints the same)."]


def write_build_diff(previous: Path, release: Path, manifest: dict[str, Any]
                     ) -> tuple[ReleaseDiff, tuple[Path, Path]]:
    """Diff the previous published version against the release being built (its card written,
    its gate not run yet) into ``release/reports``; returns the diff and the two files written.

    Why in the build: a maintainer reviewing a new version should not have to remember to run
    ``benchforge diff``; the card links this file. The new side's ``manifest`` is given, not
    read: the build writes ``manifest.json`` once, after the gate, so it has no sha256 yet and
    the report names none. It is compared as JSON, the form it will be written in and the
    previous version's was read in, so a tuple or a number key of the build's dict is no
    metadata change."""
    new = read_release(release, manifest=json.loads(json.dumps(manifest)))
    diff = _diff(read_release(previous), new)
    diff.new = {k: v for k, v in diff.new.items() if k != "manifest_sha256"}
    return diff, write_diff(diff, release / "reports")


ALLOW_SMALL_BUMP = "--allow-small-bump"


def next_version(version: str, bump: str) -> str:
    """The lowest version above ``version`` that shows ``bump`` (``2.0.0`` + major → ``3.0.0``)."""
    major, minor, patch = (int(x) for x in version.split("+")[0].split("-")[0].split("."))
    if bump == "major":
        return f"{major + 1}.0.0"
    return f"{major}.{minor + 1}.0" if bump == "minor" else f"{major}.{minor}.{patch + 1}"


def bump_facts(diff: ReleaseDiff, *, allow_small: bool, config: str = "the config") -> dict[str, Any]:
    """The manifest's ``version_bump``: the version compared with, the bump the changes require
    (TFDS semantics, module doc), the bump the versions show and the verdict. A bump smaller than
    required raises :class:`SmallBump` naming the required bump and the version that shows it —
    unless ``allow_small``, and then the facts say it was published anyway.

    Why refuse: a consumer pinned to ``2.0.*`` or ``2.*`` trusts that no sample they scored
    changed or vanished; a removed or changed sample published as a PATCH or MINOR silently
    changes the numbers they report against the same version range."""
    facts: dict[str, Any] = {"previous": diff.old["version"], "required": diff.required,
                             "shown": diff.actual, "verdict": diff.verdict}
    if diff.verdict == "too small":
        if not allow_small:
            raise SmallBump(diff, config)
        facts["published_with"] = ALLOW_SMALL_BUMP
    return facts


def small_bump_warning(facts: dict[str, Any], version: str) -> str:
    """The card's sentence for a release published with a bump smaller than its changes require."""
    return (f"Version {version} understates its changes: they require a {facts['required']} bump over "
            f"{facts['previous']} (TFDS semantics), the version shows a {facts['shown']} bump; it was "
            f"published with {ALLOW_SMALL_BUMP} (manifest: version_bump). Do not compare results "
            f"across {facts['previous']} and {version} as if they were the same samples.")


class SmallBump(ReleaseError):
    """A new version shows a smaller SemVer bump than its changes require; nothing is published."""

    def __init__(self, diff: ReleaseDiff, config: str = "the config") -> None:
        old, new = diff.old["version"], diff.new["version"]
        super().__init__(
            f"version {new} is a {diff.actual} bump over {old}, but its changes require a "
            f"{diff.required} bump ({'; '.join(change_summary(diff)) or 'metadata changed'}): set "
            f"`version: {next_version(old, diff.required)}` in {config}, or pass {ALLOW_SMALL_BUMP} "
            f"to publish it as {new} anyway")


def change_summary(diff: ReleaseDiff) -> list[str]:
    """One phrase per config that needs a bump: ``quickdraw/test: 8 changed``."""
    out = []
    for c in diff.configs:
        if c.required() == "none":
            continue
        parts = [f"config {c.status}"] if c.status != "both" else []
        parts += [f"{n} {what}" for what, n in (("removed", len(c.removed)), ("changed", len(c.changed)),
                                                ("added", len(c.added))) if n]
        parts += [f"fields {what} {', '.join(names)}" for what, names in
                  (("removed", c.fields_removed), ("retyped", c.fields_retyped), ("added", c.fields_added))
                  if names]
        out.append(f"{c.label}: {', '.join(parts)}")
    return out
