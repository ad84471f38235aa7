"""The general-streaming mixture of the SFT manifest, by reference (StreamVibe App. B.4, Table 18).

The paper's SFT mixture is 70K task-aligned examples — what benchforge builds — plus 768K general
streaming examples from public datasets (Live-WhisperX, Shot2Story, …, EgoIT, Streamo-Instruct).
Those are other people's datasets under their own licences: benchforge neither downloads nor
redistributes them. A training release lists them (``sft/general_mixture.json``) by name,
version, licence, count and where to fetch them, so the whole SFT manifest is accounted for;
``configs/streamvibe/general_mixture.yaml`` says where each fact comes from, and a fact nobody
checked is written as such rather than guessed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

SOURCE_KEYS = ("name", "paper", "version", "licence", "count", "fetch", "checked")
NOTICE = ("benchforge does not download or redistribute these datasets; fetch each from its source "
          "under its own licence. Counts per source are not reported by StreamVibe (Table 18 gives "
          "family totals); null means unknown.")


def load_general_mixture(path: Path) -> dict[str, Any]:
    """The mixture manifest written into a training release; SystemExit naming the file and the
    key when the listing is malformed."""
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"cannot read the general mixture {path}: {exc}") from exc
    families = raw.get("families") if isinstance(raw, dict) else None
    if not isinstance(families, list) or not families:
        raise SystemExit(f"{path}: needs `families:`, a list")
    out = []
    for i, fam in enumerate(families):
        where = f"{path}: families[{i}]"
        if not isinstance(fam.get("table18_examples"), int) or not fam.get("sources"):
            raise SystemExit(f"{where}: needs table18_examples (an integer) and sources")
        for j, src in enumerate(fam["sources"]):
            missing = [k for k in SOURCE_KEYS if k not in src]
            if missing:
                raise SystemExit(f"{where}.sources[{j}]: missing {missing} (write null for unknown)")
        out.append({"name": fam["name"], "examples": fam["table18_examples"], "use": fam.get("use", ""),
                    "note": fam.get("note", ""),
                    "sources": [{k: src[k] for k in SOURCE_KEYS} for src in fam["sources"]]})
    return {"version": raw.get("version"), "downloaded_by_benchforge": False, "notice": NOTICE,
            "examples": sum(f["examples"] for f in out), "families": out}


def mixture_card_lines(mixture: dict[str, Any]) -> list[str]:
    """The card's table of the external sources (Markdown lines)."""
    lines = ["", "### General-streaming mixture (external, by reference)", "",
             f"{mixture['notice']} Listed in `sft/general_mixture.json`; Table 18 counts "
             f"{mixture['examples']:,} examples.", "",
             "| family | source | version | licence | fetch |", "|---|---|---|---|---|"]
    for fam in mixture["families"]:
        for s in fam["sources"]:
            lines.append(f"| {fam['name']} ({fam['examples']:,}) | {s['name']} | {s['version'] or '—'} | "
                         f"{s['licence']} | {s['fetch'] or '—'} |")
    return lines
