"""Agreement report files: Markdown, self-contained HTML, PNG plots, JSON (StreamVibe App. B.3)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import matplotlib.image as mpimg
import pytest

from annotation import agreement as ag
from annotation.agreement import audit
from annotation.report import write_agreement_report
from tests.annotation.test_agreement import MODEL, PANEL, _row, _synthetic

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def mixed_audit():
    """Three types with defined statistics plus one all-approve type (κ undefined)."""
    rows = _synthetic(90, seed=21)
    rows += [_row(f"u{i}", r, "approve", task_type="unanimous") for i in range(4)
             for r in [*PANEL, MODEL]]
    return audit(rows, PANEL, MODEL, n_boot=200, global_seed=3)


def test_report_files_and_contents(mixed_audit, tmp_path):
    paths = write_agreement_report(mixed_audit, tmp_path / "reports")
    names = [Path(p).name for p in paths]
    assert names == ["agreement.md", "agreement.html", "agreement.json",
                     "agreement_decisions.png", "agreement_kappa.png"]
    assert all(Path(p).parent == tmp_path / "reports" for p in paths)

    md = (tmp_path / "reports" / "agreement.md").read_text()
    s = mixed_audit.per_type["explicit"]
    row = next(line for line in md.splitlines() if line.startswith("| explicit |"))
    assert f"| {s.fleiss_kappa:.3f} |" in row
    assert f"[{s.fleiss_interval.low:.3f}, {s.fleiss_interval.high:.3f}]" in row
    assert f"{s.cohen_min:.3f}–{s.cohen_max:.3f}" in row
    assert f"| {s.n_candidates} |" in row
    # The undefined type says so, with its reason in a footnote, and never prints nan.
    urow = next(line for line in md.splitlines() if line.startswith("| unanimous |"))
    assert "undefined [" in urow
    assert ag.REASON_ONE_CLASS in md
    assert not re.search(r"\bnan\b", md, re.IGNORECASE)
    assert "![decision distribution](agreement_decisions.png)" in md
    for r in PANEL:
        assert f"| overall | {r} |" in md

    data = json.loads((tmp_path / "reports" / "agreement.json").read_text())
    assert data == json.loads(json.dumps(mixed_audit.to_dict()))
    assert data["per_type"]["unanimous"]["fleiss_kappa"] == {"undefined": True,
                                                             "reason": ag.REASON_ONE_CLASS}

    for name in ("agreement_decisions.png", "agreement_kappa.png"):
        blob = (tmp_path / "reports" / name).read_bytes()
        assert blob.startswith(PNG_MAGIC)
        img = mpimg.imread(tmp_path / "reports" / name)
        assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 400


def test_html_is_self_contained(mixed_audit, tmp_path):
    write_agreement_report(mixed_audit, tmp_path)
    page = (tmp_path / "agreement.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    # No external resources: no http(s) URLs, no <link>/<script src>, images as data URIs.
    assert not re.search(r"https?://", page)
    assert "<link" not in page and "<script" not in page
    srcs = re.findall(r'<img alt="[^"]*" src="([^"]+)"', page)
    assert len(srcs) == 2
    for src in srcs:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG_MAGIC)
    assert (tmp_path / "agreement_kappa.png").read_bytes() == base64.b64decode(
        srcs[1].split(",", 1)[1])
    assert ag.REASON_ONE_CLASS in page
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)
    assert not re.search(r"\bnan\b", text, re.IGNORECASE)


def test_reports_are_deterministic(mixed_audit, tmp_path):
    a = write_agreement_report(mixed_audit, tmp_path / "a")
    b = write_agreement_report(mixed_audit, tmp_path / "b")
    for pa, pb in zip(a, b, strict=True):
        assert Path(pa).read_bytes() == Path(pb).read_bytes(), Path(pa).name


def test_report_without_model_and_retained_only(tmp_path):
    rows = _synthetic(30, seed=2, model=False)
    no_model = audit(rows, PANEL, None, n_boot=50)
    paths = write_agreement_report(no_model, tmp_path / "nm")
    md = Path(paths[0]).read_text()
    assert "model rater: none" in md
    assert "Cohen's κ per reviewer" not in md

    retained = audit(rows, PANEL, None, population="retained_only", n_boot=50)
    md = Path(write_agreement_report(retained, tmp_path / "ret")[0]).read_text()
    assert ag.REASON_RETAINED in md
    assert "retained samples only" in md


def test_empty_audit_still_reports(tmp_path):
    paths = write_agreement_report(audit([], PANEL, MODEL, n_boot=10), tmp_path)
    md = Path(paths[0]).read_text()
    assert "| overall | 0 |" in md and ag.REASON_NO_CANDIDATES in md
    assert all(Path(p).stat().st_size > 0 for p in paths)


def test_kappa_plot_shows_every_value(tmp_path, monkeypatch):
    """κ = −0.333 must be inside the plot's y-range (it was clipped at −0.2)."""
    import matplotlib.figure

    from annotation.agreement import audit
    from annotation.report import write_agreement_report

    rows = []
    for s, decs in (("a", ["approve", "approve", "revise", "revise"]),
                    ("b", ["revise", "revise", "approve", "approve"]),
                    ("c", ["approve", "revise", "approve", "revise"])):
        for i, d in enumerate(decs, start=1):
            rows.append({"sample_id": s, "version": 1, "task_type": "I", "reviewer": f"r{i}",
                         "rater_kind": "human", "decision": d, "created_at": "2026-11-29T10:00:00Z"})
    result = audit(rows, ["r1", "r2", "r3", "r4"], None, n_boot=50)
    kappa = result.overall.fleiss_kappa
    assert kappa == pytest.approx(-1 / 3)
    seen = []
    orig = matplotlib.figure.Figure.savefig

    def spy(self, *a, **k):
        seen.append([ax.get_ylim() for ax in self.axes])
        return orig(self, *a, **k)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", spy)
    write_agreement_report(result, tmp_path)
    low, high = seen[-1][0]
    assert low < kappa < high
