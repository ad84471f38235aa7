"""A benchmark folder cites its paper in its own ``citation.bib``: exactly one entry, read as
written (the card and ``croissant.json`` carry those bytes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.common.citations import card_citations, folder_citation

ENTRY = "@misc{paper,\n  title = {A Paper},\n}"


def test_the_entry_is_read_as_written_and_the_card_adds_benchforge(tmp_path: Path) -> None:
    (tmp_path / "citation.bib").write_text(ENTRY + "\n")
    assert folder_citation(tmp_path) == ENTRY
    cites = card_citations(ENTRY)
    assert cites[0] == ENTRY and cites[1].startswith("@software{benchforge,") and len(cites) == 2


@pytest.mark.parametrize("text", ["", "% only a comment\n", ENTRY + "\n\n" + ENTRY.replace("paper", "other")])
def test_a_folder_must_cite_exactly_one_entry(tmp_path: Path, text: str) -> None:
    (tmp_path / "citation.bib").write_text(text)
    with pytest.raises(SystemExit, match="citation.bib: must hold exactly one BibTeX entry"):
        folder_citation(tmp_path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"citation.bib: a benchmark folder cites its paper here"):
        folder_citation(tmp_path)
