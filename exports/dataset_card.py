"""Dataset card (``README.md``) of a release, with the HF ``configs:`` YAML header.

``datasets.load_dataset(<release dir>, "<config>", split=...)`` reads the ``configs:`` block, so
each environment is one config and ``all`` covers every environment (design.md §Environment).
A card lists exactly the configs whose files hold rows: ``datasets`` cannot load a glob that
matches nothing or only zero-row files, and a loading example must name a config that loads.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

import yaml

from schemas.core import RecordSchema


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
    configs.append({"config_name": "all", "data_files": [{"split": split,
                                                          "path": f"data/*/{split}-*.parquet"}]})
    return [c for c in configs + list(extra or []) if config_rows(c, files)]


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
) -> str:
    """The card: ``groups`` become configs (plus ``all``), ``extra_configs`` follow them (e.g. a
    second record type), each only if ``files`` give it rows; ``usage`` is the loading snippet
    (:func:`usage_text`); ``sections`` are markdown lines appended after the provenance."""
    configs = configs_yaml(groups, split, files, extra_configs)
    header = yaml.safe_dump(
        {"configs": configs, "license": "other", "pretty_name": title},
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
    return card + "\n".join(sections) + "\n" if sections else card
