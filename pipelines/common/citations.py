"""What a release cites, from ``CITATIONS.bib``: the paper that defines its benchmark
(``croissant.json`` cites it) and, on the card, benchforge too, which built the release."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCHFORGE_KEY = "benchforge"  # benchforge's own entry in CITATIONS.bib


def citation(key: str) -> str:
    """The BibTeX entry ``key`` (a benchmark's ``citation_key``) of CITATIONS.bib; "" for none."""
    from exports.croissant import bibtex_entry

    return bibtex_entry((REPO / "CITATIONS.bib").read_text(encoding="utf-8"), key) if key else ""


def card_citations(key: str) -> list[str]:
    """What a release card asks its readers to cite: the benchmark's paper (:func:`citation` of
    its ``key``), then benchforge."""
    return [entry for entry in (citation(key), citation(BENCHFORGE_KEY)) if entry]
