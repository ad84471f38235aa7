"""Dataset card (``README.md``) of a release, with the HF ``configs:`` YAML header.

``datasets.load_dataset(<release dir>, "<config>", split=...)`` reads the ``configs:`` block, so
each environment is one config and ``all`` covers every environment (design.md §Environment).
"""

from __future__ import annotations

from typing import Any

import yaml

from schemas.core import RecordSchema


def configs_yaml(groups: dict[str, str], split: str) -> list[dict[str, Any]]:
    """``groups`` maps config name → data directory (relative to the release)."""
    configs = [
        {"config_name": name, "data_files": [{"split": split, "path": f"{d}/{split}-*.parquet"}]}
        for name, d in sorted(groups.items())
    ]
    if configs:  # no kept rows at all: no config (a glob matching nothing does not load)
        configs.append(
            {"config_name": "all", "data_files": [{"split": split, "path": f"data/*/{split}-*.parquet"}]}
        )
    return configs


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
    extra_configs: list[dict[str, Any]] | None = None,
    sections: list[str] | None = None,
) -> str:
    """The card: ``groups`` become configs (plus ``all``), ``extra_configs`` follow them (e.g. a
    second record type); ``sections`` are markdown lines appended after the provenance."""
    configs = configs_yaml(groups, split) + list(extra_configs or [])
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
        "Every input ends as kept (`data/`), filtered (`filtered/`, with the filter's evidence) or "
        "rejected (`rejected/`, with the file and field that were wrong).",
        "",
        "## Loading",
        "",
        "```python",
        usage.strip(),
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
