"""The release gate: bytes against the manifest, every medium decoded, the expectations run.

Every benchmark supplies its suites (:class:`Suite`: a name, ONE dataframe of the whole release
— per-file batches would miss a duplicate id spread over two shards — its expectations and the
key column that names failing rows); this module runs them in an ephemeral great-expectations
context (a bare ``get_context()`` would pick up a ``gx/`` folder of a parent) and collects one
:class:`CheckResult` per expectation. :func:`check_release` adds what expectations cannot see
(:mod:`exports.integrity`: sha256, sizes and row counts against the manifest; every embedded
image and media file decoded). The report is ``data_quality.md`` / ``.json`` / ``.html``: the
HTML is one static page with inline styles and no script, readable offline (great-expectations'
Data Docs index is filled in by JavaScript loaded from CDNs, and rendered empty here).

Core expectations do not work on list columns (a length check measures the string form), so the
benchmarks derive scalar or boolean columns from lists in plain Python and check those; the
suites need no custom expectation classes (a suite loaded without their module drops them).
"""

from __future__ import annotations

import html
import json
import logging
import threading
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from exports.integrity import Problem, decode_media, verify_files


@dataclass
class Suite:
    name: str
    frame: pd.DataFrame
    expectations: list[Any]
    key: str = "id"  # column that names an unexpected row in the report


def training_flag_suites(benchmark: str, frames: dict[str, pd.DataFrame],
                    true_columns: dict[str, list[str]]) -> list[Suite]:
    """The row checks of a training split: per frame, unique ids and every column of
    ``true_columns[name]`` true (each such column is one check a row passed when it was built,
    recomputed by the benchmark). The held-out frame is ``<benchmark>_held_out``, the others
    ``<benchmark>_train_<name>``."""
    import great_expectations.expectations as gxe

    out = []
    for name, frame in frames.items():
        exps = [gxe.ExpectColumnValuesToBeUnique(column="id", meta={"check": f"{name}: unique ids"})]
        exps += [gxe.ExpectColumnValuesToBeInSet(column=c, value_set=[True],
                                                 meta={"check": c.replace("_", " ")})
                 for c in true_columns[name]]
        suite = f"{benchmark}_held_out" if name == "held_out" else f"{benchmark}_train_{name}"
        out.append(Suite(suite, frame, exps, "id"))
    return out


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
    # what was checked, as the reports name it ("proactivebench 2.0.0"): never a folder, so a
    # release's own reports do not depend on where it was built
    label: str
    rows: int
    checks: list[CheckResult]
    reports: Path  # folder of data_quality.md / .json / .html
    problems: list[Problem] = field(default_factory=list)  # files and media (exports.integrity)
    files_checked: int = 0
    media_decoded: int = 0  # media that decode, ``media_proven`` included
    media_proven: int = 0  # embedded images identical to bytes the build decoded as it made them

    @property
    def media_summary(self) -> str:
        """How many media decode, and how many of them were proven rather than decoded here."""
        if not self.media_proven:
            return f"{self.media_decoded} images / media decoded"
        return (f"{self.media_decoded} images / media decode ({self.media_proven} of them "
                "identical to bytes the build decoded in full as it made them)")

    @property
    def success(self) -> bool:
        return not self.problems and all(c.success for c in self.checks)

    @property
    def markdown(self) -> Path:
        return self.reports / "data_quality.md"

    @property
    def html(self) -> Path:
        return self.reports / "data_quality.html"

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.success]


def import_in_background() -> threading.Thread:
    """Import great-expectations (and matplotlib, for the counts plot) in a daemon thread.

    Why: importing great-expectations takes seconds and the gate cannot start its expectations
    without it; a driver whose pipeline runs in other processes (local workers, a distributed
    runner) only waits meanwhile, so it imports then (docs/scaling.md). It costs the driver the
    module's memory while the pipeline runs. An import the main thread starts meanwhile waits
    for this one (Python's per-module import locks); a failure here surfaces again where the gate
    imports it."""
    def load() -> None:
        import great_expectations.expectations  # noqa: F401
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
        from great_expectations.checkpoint import Checkpoint  # noqa: F401

    thread = threading.Thread(target=load, name="import-gate-modules", daemon=True)
    thread.start()
    return thread


def _columns(kwargs: dict[str, Any]) -> str:
    if "column" in kwargs:
        return str(kwargs["column"])
    return ",".join(str(kwargs[k]) for k in ("column_A", "column_B") if k in kwargs)


def check_release(release: Path, listed: list[dict[str, Any]], suites: Callable[[], list[Suite]],
                  reports: Path, *, label: str, threads: int = 1,
                  proven: Collection[str] = frozenset()) -> QualityReport:
    """The whole gate on a (staged or published) release: ``listed`` is the manifest's ``files``;
    ``suites`` builds the expectations' dataframes (a release whose files cannot even be read
    fails with that finding instead of a traceback); ``threads`` check the media, except those
    whose sha256 is in ``proven`` (:func:`exports.integrity.decode_media`).

    With ``threads`` > 1 the expectations and the byte check run in threads of their own beside
    the media check: they are independent, the expectations are mostly Python while reading,
    hashing and decoding mostly release the GIL, and the gate is the serial tail of every build,
    with the workers idle. The findings are
    assembled in the same order either way."""
    if threads > 1:
        with ThreadPoolExecutor(2) as pool:
            validated = pool.submit(_validate, suites)
            verified = pool.submit(verify_files, release, listed)
            media = decode_media(release, listed, threads, proven)
            problems, (checks, rows, unreadable) = verified.result(), validated.result()
    else:
        problems = verify_files(release, listed)
        media = decode_media(release, listed, threads, proven)
        checks, rows, unreadable = _validate(suites)
    problems += media.problems + unreadable
    report = QualityReport(label, rows, checks, reports, problems, len(listed), media.decoded,
                           media.proven)
    write_reports(report)
    return report


def _validate(suites: Callable[[], list[Suite]]) -> tuple[list[CheckResult], int, list[Problem]]:
    """Build the suites and run them: results, rows, and the problem of suites that cannot read
    the release."""
    try:
        built = suites()
    except Exception as exc:  # noqa: BLE001 - any failure to read the release fails the gate
        return [], 0, [Problem("expectations", "data/", f"the suites cannot read the release: "
                                                        f"{type(exc).__name__}: {exc}")]
    checks, rows = expectations(built)
    return checks, rows, []


def run_suites(suites: list[Suite], reports: Path, *, label: str) -> QualityReport:
    """The expectations alone (no manifest to check the files against); writes the report."""
    checks, rows = expectations(suites)
    report = QualityReport(label, rows, checks, reports)
    write_reports(report)
    return report


def expectations(suites: list[Suite]) -> tuple[list[CheckResult], int]:
    """Validate every suite: one result per expectation, and the rows of the first suite."""
    import great_expectations as gx
    from great_expectations.checkpoint import Checkpoint
    from great_expectations.core import ExpectationSuite
    from great_expectations.core.validation_definition import ValidationDefinition
    from great_expectations.data_context.types.base import ProgressBarsConfig

    for name in ("great_expectations", "great_expectations.data_context.types.base"):  # no INFO chatter
        logging.getLogger(name).setLevel(logging.WARNING)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
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
        checkpoint = context.checkpoints.add(Checkpoint(
            name=f"{s.name}_checkpoint", validation_definitions=[vd], actions=[],
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
    return checks, (len(suites[0].frame) if suites else 0)


def write_reports(report: QualityReport) -> None:
    """``data_quality.md`` (people, diffs), ``.json`` (tools) and ``.html`` (a browser, offline:
    static, inline styles, no script). No timestamps: a rebuild writes the same bytes."""
    report.reports.mkdir(parents=True, exist_ok=True)
    status = "PASSED" if report.success else "FAILED"
    passed = len(report.checks) - len(report.failed)
    lines = [
        f"# Data quality: {status}",
        "",
        f"Release: `{report.label}` — {report.rows} rows, "
        f"{passed}/{len(report.checks)} expectations passed; {report.files_checked} files checked "
        f"against the manifest, {report.media_summary}, "
        f"{len(report.problems)} file problems.",
        "",
    ]
    if report.problems:
        lines += ["| file check | file | problem |", "|---|---|---|"]
        lines += [f"| **{p.check}** | `{p.path}` | {html.escape(p.detail)} |" for p in report.problems]
        lines.append("")
    lines += ["| status | check | expectation | column(s) | unexpected | examples |",
              "|---|---|---|---|---|---|"]
    for c in report.checks:
        ex = ", ".join(html.escape(str(e)) for e in c.examples[:5])
        lines.append(f"| {'ok' if c.success else '**FAIL**'} | {c.check} | `{c.expectation}` | "
                     f"`{c.column}` | {c.unexpected_count} | {ex} |")
    report.markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (report.reports / "data_quality.json").write_text(json.dumps({
        "success": report.success, "rows": report.rows, "files_checked": report.files_checked,
        "media_decoded": report.media_decoded, "media_proven": report.media_proven,
        "problems": [p.__dict__ for p in report.problems],
        "checks": [c.__dict__ for c in report.checks]}, indent=2, default=str) + "\n",
        encoding="utf-8")
    report.html.write_text(render_html(report), encoding="utf-8")


_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1.passed { color: #1b5e20; } h1.failed { color: #b71c1c; }
table { border-collapse: collapse; width: 100%; margin: 1em 0 2em; }
th, td { border: 1px solid #ccc; padding: .3em .5em; text-align: left; vertical-align: top; }
th { background: #f1f1f1; } tr.fail td { background: #ffebee; } tr.ok td.status { color: #1b5e20; }
code { font-size: 90%; }
"""


def render_html(report: QualityReport) -> str:
    """The report as one self-contained page (what ``benchforge check`` and a build leave for a
    person to open): every result is in the HTML itself, nothing is fetched or scripted."""
    e = html.escape
    status = "PASSED" if report.success else "FAILED"
    passed = len(report.checks) - len(report.failed)
    rows = []
    for p in report.problems:
        rows.append(f"<tr class=\"fail\"><td class=\"status\">FAIL</td><td>{e(p.check)}</td>"
                    f"<td><code>{e(p.path)}</code></td><td>{e(p.detail)}</td></tr>")
    problems = ("<p>Every file matches the manifest and every image / medium decodes.</p>"
                if not rows else
                "<table id=\"files\"><tr><th>status</th><th>file check</th><th>file</th>"
                "<th>problem</th></tr>" + "".join(rows) + "</table>")
    checks = "".join(
        f"<tr class=\"{'ok' if c.success else 'fail'}\"><td class=\"status\">"
        f"{'ok' if c.success else 'FAIL'}</td><td>{e(c.suite)}</td><td>{e(c.check)}</td>"
        f"<td><code>{e(c.expectation)}</code></td><td><code>{e(c.column)}</code></td>"
        f"<td>{c.unexpected_count}</td><td>{e(', '.join(str(x) for x in c.examples[:5]))}</td></tr>"
        for c in report.checks)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>Data quality: {status}</title><style>{_STYLE}</style></head><body>"
        f"<h1 class=\"{status.lower()}\">Data quality: {status}</h1>"
        f"<p>Release <code>{e(str(report.label))}</code>: {report.rows} rows; "
        f"<strong>{passed}/{len(report.checks)}</strong> expectations passed; "
        f"{report.files_checked} files checked against the manifest (size, sha256, rows); "
        f"{e(report.media_summary)}; {len(report.problems)} file problems.</p>"
        f"<h2>Files and media</h2>{problems}"
        "<h2>Expectations</h2><table id=\"expectations\"><tr><th>status</th><th>suite</th>"
        "<th>check</th><th>expectation</th><th>column(s)</th><th>unexpected</th><th>examples</th>"
        f"</tr>{checks}</table></body></html>\n")
