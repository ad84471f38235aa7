"""Dataset card (``README.md``) of a release, with the HF ``configs:`` YAML header.

``datasets.load_dataset(<release dir>, "<config>", split=...)`` reads the ``configs:`` block, so
each environment is one config and ``all`` covers every environment (design.md §Environment).
A card lists exactly the configs whose files hold rows: ``datasets`` cannot load a glob that
matches nothing or only zero-row files, and a loading example must name a config that loads.

One config is the default (``default: true``, the HF card convention): ``all`` where the card
has it — every config of ``data/``, the evaluation split, which is what a consumer means by "the
benchmark" — else the first listed. Why: without a default, ``load_dataset(<release dir>)``
stops with "Config name is missing" on every release, since each has several configs.

What a consumer must know before using the data is in every card too: the licence and terms of
use of each source dataset the benchmark is built from (one table, read from the one file that
holds those facts, :data:`SOURCE_LICENCES`), and how to cite the benchmark's paper and
benchforge. A release carries frames, videos and annotations of datasets with different terms,
so its HF metadata is ``license: other`` with ``license_name`` / ``license_link`` pointing at
that table, unless every source has the same SPDX licence (:func:`license_metadata`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import yaml

from schemas.core import RecordSchema

SOURCE_LICENCES = Path(__file__).resolve().parents[1] / "configs" / "source_licences.yaml"
LICENCE_HEADING = "Licences and terms of use"
# the anchor GitHub and the Hugging Face hub give that heading (lower case, spaces to hyphens)
LICENCE_ANCHOR = LICENCE_HEADING.lower().replace(" ", "-")
DEFAULT_CONFIG = "all"


@dataclass(frozen=True)
class SourceTerms:
    """One source dataset's licence and terms of use, as ``configs/source_licences.yaml`` states
    them (its header says what each field means); ``licence`` is None where nothing confirmed it."""

    key: str
    name: str
    licence: str | None
    spdx: str | None
    url: str | None
    terms: str
    agreement: bool
    checked: str | None


def source_terms(keys: Iterable[str], path: Path = SOURCE_LICENCES) -> list[SourceTerms]:
    """The entries of ``keys``, in that order; KeyError naming the file for a key it lacks, so a
    benchmark cannot publish a card that silently leaves a source out."""
    entries = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("sources") or {}
    out = []
    for key in keys:
        if key not in entries:
            raise KeyError(f"{path}: no entry for source dataset {key!r} "
                           f"(known: {', '.join(sorted(entries))})")
        e = entries[key]
        out.append(SourceTerms(key=key, name=str(e["name"]), licence=e.get("licence"), spdx=e.get("spdx"),
                               url=e.get("url"), terms=str(e.get("terms") or ""),
                               agreement=bool(e.get("agreement")), checked=e.get("checked")))
    return out


def slug(text: str) -> str:
    """``ProReady-QA`` → ``proready-qa``: a licence name as HF cards spell them."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def license_metadata(title: str, sources: list[SourceTerms]) -> dict[str, str]:
    """The card's licence fields: the SPDX id (lower case, as HF lists them) when every source has
    the same single one; else ``license: other`` with ``license_name`` and ``license_link`` to the
    card's licence table (HF dataset card convention for a licence that is not an SPDX id)."""
    ids = {s.spdx for s in sources}
    if sources and len(ids) == 1 and (only := ids.pop()) and " " not in only:
        return {"license": only.lower()}
    return {"license": "other", "license_name": f"{slug(title)}-source-terms",
            "license_link": f"README.md#{LICENCE_ANCHOR}"}


def licence_lines(title: str, sources: list[SourceTerms]) -> list[str]:
    """The card's licence section: one table row per source dataset, a signed agreement in bold."""
    licence = license_metadata(title, sources)["license"]
    lines = [f"## {LICENCE_HEADING}", "",
             "This release is derived from the source datasets below, and each one's terms govern "
             "what the release carries from it (frames, videos, annotations); benchforge adds no "
             f"licence over them, hence `license: {licence}` in the card's metadata. A source that "
             "needs a **signed agreement** may only be used by those who have signed or agreed to "
             "its terms of access. The table lists every source this benchmark is built from; "
             "`manifest.json` → `sources` records the ones this release was read from, with their "
             "checksums.", "",
             "| source | licence | terms of use | signed agreement |", "|---|---|---|---|"]
    for s in sources:
        see = f"see <{s.url}>" if s.url else "see its authors"
        licence = s.licence if s.licence else f"not confirmed: {see}"
        terms = s.terms.replace("|", "\\|") + (f" (<{s.url}>)" if s.url and s.licence else "")
        lines.append(f"| {s.name} | {licence} | {terms} | {'**yes**' if s.agreement else 'no'} |")
    return lines + [""]


def citation_lines(citations: list[str]) -> list[str]:
    """The card's citation section: the BibTeX entries as their ``.bib`` files write them."""
    entries = [c.strip() for c in citations if c.strip()]
    if not entries:
        return []
    return ["## Citation", "",
            "If you use this release, cite the paper that defines the benchmark and benchforge, "
            "which built this release (its code version is under Provenance):", "",
            "```bibtex", "\n\n".join(entries), "```", ""]


def config_rows(config: dict[str, Any], files: list[dict[str, Any]]) -> int:
    """Rows of the release's Parquet files a config's ``data_files`` globs match."""
    patterns = [d["path"] for d in config["data_files"]]
    return sum(f.get("rows", 0) for f in files if any(fnmatchcase(f["path"], p) for p in patterns))


def configs_yaml(groups: dict[str, str], split: str, files: list[dict[str, Any]],
                 extra: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """``groups`` maps config name → data directory (relative to the release); ``all`` covers
    ``data/``; ``extra`` configs follow (e.g. a second record type). Only configs with rows in
    ``files`` (the manifest's inventory) are kept."""
    configs = [
        {"config_name": name, "data_files": [{"split": split, "path": f"{d}/{split}-*.parquet"}]}
        for name, d in sorted(groups.items())
    ]
    configs.append({"config_name": DEFAULT_CONFIG, "data_files": [{"split": split,
                                                                   "path": f"data/*/{split}-*.parquet"}]})
    kept = [c for c in configs + list(extra or []) if config_rows(c, files)]
    return mark_default(kept)


def mark_default(configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``default: true`` on ``all`` when the card has it, else on the first config (module doc);
    it follows ``config_name``, where HF cards put it."""
    names = [c["config_name"] for c in configs]
    chosen = DEFAULT_CONFIG if DEFAULT_CONFIG in names else names[0] if names else None
    return [{"config_name": c["config_name"], "default": True,
             **{k: v for k, v in c.items() if k != "config_name"}} if c["config_name"] == chosen else c
            for c in configs]


def default_config(configs: list[dict[str, Any]]) -> str | None:
    """The config ``load_dataset(<release dir>)`` loads without a name."""
    return next((c["config_name"] for c in configs if c.get("default")), None)


def usage_text(usage: str, configs: list[dict[str, Any]], example: str) -> str:
    """The loading snippet with ``{config}`` (``example`` if it loads, else the first config)
    and ``{configs}`` (all of them) filled in; a release without rows says so instead."""
    names = [c["config_name"] for c in configs]
    if not names:
        return "# This release holds no records: there is no config to load."
    chosen = example if example in names else names[0]
    return usage.replace("{config}", chosen).replace("{configs}", ", ".join(names))


def render_card(
    *,
    title: str,
    summary: str,
    manifest: dict[str, Any],
    groups: dict[str, str],
    split: str,
    schema: RecordSchema,
    warnings: list[str],
    usage: str,
    files: list[dict[str, Any]],
    example: str = "",
    extra_configs: list[dict[str, Any]] | None = None,
    sections: list[str] | None = None,
    sources: list[SourceTerms] | None = None,
    citations: list[str] | None = None,
) -> str:
    """The card: ``groups`` become configs (plus ``all``, the default), ``extra_configs`` follow
    them (e.g. a second record type), each only if ``files`` give it rows; ``usage`` is the loading
    snippet (:func:`usage_text`); ``sections`` are markdown lines appended after the provenance,
    then the licence table of ``sources`` (:func:`licence_lines`) and the ``citations`` (BibTeX
    entries)."""
    configs = configs_yaml(groups, split, files, extra_configs)
    header = yaml.safe_dump(
        {"configs": configs, **license_metadata(title, list(sources or [])), "pretty_name": title},
        sort_keys=False,
    )
    lines = [f"---\n{header}---", f"# {title} — release {manifest['version']}", "", summary, ""]
    if warnings:
        lines += ["## ⚠ Read this first", ""] + [f"- **{w}**" for w in warnings] + [""]
    lines += ["## Counts", "", "| config | inputs | kept | filtered | rejected |",
              "|---|---:|---:|---:|---:|"]
    for env, c in sorted(manifest["counts"].items()):
        lines.append(f"| {env} | {c['inputs']} | {c['kept']} | {c['filtered']} | {c['rejected']} |")
    lines += [
        "",
        "Every input ends as kept (`data/`), filtered (`filtered/`: samples a named filter removed, "
        "with its evidence; `filtered_inputs/`: source items a named selection rule left out, e.g. "
        "a multi-object image; a row's `count` says how many items it stands for, since a per-class "
        "sample is summarised as one row per class file) or rejected (`rejected/`, with the file and "
        "field that were wrong).",
        "",
        "## Loading",
        "",
        "```python",
        usage_text(usage.strip(), configs, example),
        "```",
        "",
    ]
    if (default := default_config(configs)) is not None:
        lines += [f"Without a config name, `datasets.load_dataset('/abs/path/to/this/release')` loads "
                  f"`{default}`, the card's default config"
                  + (" (every config of `data/`, the evaluation split)." if default == DEFAULT_CONFIG
                     else "."), ""]
    lines += [
        f"## Fields (record `{schema.name}`, schema {schema.version})",
        "",
        "| field | description |",
        "|---|---|",
    ]
    lines += [f"| `{f.name}` | {f.doc} |" for f in schema.fields]
    lines += [
        "",
        "## Provenance",
        "",
        f"- code version: `{manifest['code_version']}`",
        f"- config sha256: `{manifest['config_sha256']}`",
        f"- global seed: `{manifest['global_seed']}`",
        "- per-file sha256 and row counts: `manifest.json`",
        "",
    ]
    card = "\n".join(lines)
    card = card + "\n".join(sections) + "\n" if sections else card
    tail = (licence_lines(title, list(sources)) if sources else []) + citation_lines(list(citations or []))
    return card + ("\n" + "\n".join(tail) if tail else "")
