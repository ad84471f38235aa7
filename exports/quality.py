"""The one great-expectations runner: a release's suites → pass/fail, a report, Data Docs.

Every benchmark supplies its suites (:class:`Suite`: a name, ONE dataframe of the whole release
— per-file batches would miss a duplicate id spread over two shards — its expectations and the
key column that names failing rows); this module runs them in an ephemeral context (a bare
``get_context()`` would pick up a ``gx/`` folder of a parent), collects one :class:`CheckResult`
per expectation and writes ``data_quality.md`` / ``data_quality.json`` (Data Docs pages render
unstyled offline — their CSS comes from CDNs — so the plain summary is what people read).

Core expectations do not work on list columns (a length check measures the string form), so the
benchmarks derive scalar or boolean columns from lists in plain Python and check those; the
suites need no custom expectation classes (a suite loaded without their module drops them).
"""

from __future__ import annotations

import html
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd


@dataclass
class Suite:
    name: str
    frame: pd.DataFrame
    expectations: list[Any]
    key: str = "id"  # column that names an unexpected row in the report


@dataclass
class CheckResult:
    """One expectation's outcome, named for people (``check``) and for GX (``expectation``)."""

    suite: str
    check: str
    expectation: str
    column: str
    success: bool
    unexpected_count: int = 0
    examples: list[Any] = field(default_factory=list)


@dataclass
class QualityReport:
    release: Path
    rows: int
    checks: list[CheckResult]
    data_docs_index: Path | None
    markdown: Path

    @property
    def success(self) -> bool:
        return all(c.success for c in self.checks)

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.success]


def _columns(kwargs: dict[str, Any]) -> str:
    if "column" in kwargs:
        return str(kwargs["column"])
    return ",".join(str(kwargs[k]) for k in ("column_A", "column_B") if k in kwargs)


def run_suites(suites: list[Suite], reports: Path, *, label: Path, data_docs: bool = False
               ) -> QualityReport:
    """Validate every suite; write the report (and Data Docs when asked) into ``reports``.
    ``label`` is the release path the report names (the final path, not a staging folder)."""
    import great_expectations as gx
    from great_expectations.checkpoint import Checkpoint, UpdateDataDocsAction
    from great_expectations.core import ExpectationSuite
    from great_expectations.core.validation_definition import ValidationDefinition
    from great_expectations.data_context.types.base import ProgressBarsConfig

    reports.mkdir(parents=True, exist_ok=True)
    for name in ("great_expectations", "great_expectations.data_context.types.base"):  # no INFO chatter
        logging.getLogger(name).setLevel(logging.WARNING)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    docs_dir = reports / "data_docs"
    site = "release_quality"
    if data_docs:
        context.add_data_docs_site(site_name=site, site_config={
            "class_name": "SiteBuilder",
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
            "store_backend": {"class_name": "TupleFilesystemStoreBackend",
                              "base_directory": str(docs_dir)},
        })
    source = context.data_sources.add_pandas("release")
    checks: list[CheckResult] = []
    for s in suites:
        if s.frame.empty:  # zero rows violate nothing; an empty release is refused by the build
            checks += [CheckResult(s.name, str((e.meta or {}).get("check", e.expectation_type)),
                                   e.expectation_type, _columns(e.configuration.kwargs), True)
                       for e in s.expectations]
            continue
        asset = source.add_dataframe_asset(s.name)
        batch_def = asset.add_batch_definition_whole_dataframe(f"{s.name}_whole")
        suite = context.suites.add(ExpectationSuite(name=s.name, expectations=s.expectations))
        vd = context.validation_definitions.add(ValidationDefinition(name=s.name, data=batch_def,
                                                                     suite=suite))
        actions = [UpdateDataDocsAction(name="data_docs", site_names=[site])] if data_docs else []
        checkpoint = context.checkpoints.add(Checkpoint(
            name=f"{s.name}_checkpoint", validation_definitions=[vd], actions=actions,
            result_format={"result_format": "COMPLETE", "unexpected_index_column_names": [s.key]}))
        result = checkpoint.run(batch_parameters={"dataframe": s.frame})
        for run in result.run_results.values():
            for r in run.results:
                cfg = r.expectation_config
                res = r.result or {}
                examples = res.get("unexpected_index_list") or res.get("partial_unexpected_list") \
                    or []
                examples = [e.get(s.key, e) if isinstance(e, dict) else e for e in examples][:10]
                checks.append(CheckResult(
                    suite=s.name, check=str((cfg.meta or {}).get("check", cfg.type)),
                    expectation=cfg.type, column=_columns(cfg.kwargs), success=bool(r.success),
                    unexpected_count=int(res.get("unexpected_count") or 0), examples=examples))
    index = docs_dir / "index.html"
    rows = len(suites[0].frame) if suites else 0
    report = QualityReport(label, rows, checks, index if data_docs and index.exists() else None,
                           reports / "data_quality.md")
    write_reports(report, reports)
    return report


def write_reports(report: QualityReport, reports: Path) -> None:
    """A plain summary next to the Data Docs (which render unstyled offline)."""
    status = "PASSED" if report.success else "FAILED"
    lines = [
        f"# Data quality: {status}",
        "",
        f"Release: `{report.release}` — {report.rows} rows, "
        f"{len(report.checks) - len(report.failed)}/{len(report.checks)} expectations passed.",
        "",
        "| status | check | expectation | column(s) | unexpected | examples |",
        "|---|---|---|---|---|---|",
    ]
    for c in report.checks:
        ex = ", ".join(html.escape(str(e)) for e in c.examples[:5])
        lines.append(f"| {'ok' if c.success else '**FAIL**'} | {c.check} | `{c.expectation}` | "
                     f"`{c.column}` | {c.unexpected_count} | {ex} |")
    if report.data_docs_index:
        lines += ["", f"Data Docs: `{os.path.relpath(report.data_docs_index, reports)}` "
                      "(unstyled offline: its CSS comes from CDNs)."]
    report.markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (reports / "data_quality.json").write_text(json.dumps({
        "success": report.success, "rows": report.rows,
        "checks": [c.__dict__ for c in report.checks]}, indent=2, default=str) + "\n",
        encoding="utf-8")
