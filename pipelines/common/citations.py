"""What a release cites: the paper that defines its benchmark (its folder's ``citation.bib``,
which ``croissant.json`` cites) and, on the card, benchforge too (``CITATIONS.bib``), which built
the release."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCHFORGE_KEY = "benchforge"  # benchforge's own entry in CITATIONS.bib


def folder_citation(folder: Path) -> str:
    """The BibTeX entry of a benchmark folder's ``citation.bib`` (exactly one entry), as written
    there; SystemExit naming the file when it is missing or holds another number of entries."""
    path = folder / "citation.bib"
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as err:
        raise SystemExit(f"{path}: a benchmark folder cites its paper here ({err.strerror})") from None
    if len(re.findall(r"^@\w+\{", text, flags=re.M)) != 1:
        raise SystemExit(f"{path}: must hold exactly one BibTeX entry")
    return text


def card_citations(paper: str) -> list[str]:
    """What a release card asks its readers to cite: the benchmark's paper (BibTeX), then
    benchforge."""
    from exports.croissant import bibtex_entry

    own = bibtex_entry((REPO / "CITATIONS.bib").read_text(encoding="utf-8"), BENCHFORGE_KEY)
    return [entry for entry in (paper, own) if entry]
