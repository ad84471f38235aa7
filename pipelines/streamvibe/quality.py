"""The StreamVibe release's great-expectations suite; ``python -m pipelines.streamvibe.quality
<release>`` is its CI gate (exit 1 on a failed expectation, 2 when the release cannot be read).

What must hold in every release (StreamVibe §3.1, App. B.2, Table 15; design.md §Conventions):

* **windows ordered and inside the video**: 0 ≤ s ≤ preferred ≤ e ≤ real duration, with a 1 FPS
  decision step inside both the window and the video;
* **causal invariant**: at step t the stream shows a frame sampled at or before t whose decoded
  presentation time is ≤ t (the t = 0 frame excepted: nothing earlier exists), every user turn
  arrives at exactly one step, in (t-1, t]; evidence never opens before its intent is available;
  pointwise gold history holds only turns ≤ t and gold responses before t;
* **allocation**: no subtype above its target; per subtype ``inputs = kept + filtered +
  rejected`` and kept = rows released; **ids unique** over the whole release (read as one batch:
  a per-file batch would miss a duplicate spanning two files, design.md §Environment);
* negative probes outside every window, point counts per intent (I = 1, R ≥ 2), pointwise labels
  agreeing with the probe type and every pointwise row joining a released sample.

great_expectations' core expectations do not work on list columns (design.md §Environment), so each structural
rule is a derived boolean column checked with ``ExpectColumnValuesToBeInSet([True])``. Results
use the project's report format (:class:`exports.quality.CheckResult`, ``data_quality.md`` /
``.json`` next to the Data Docs), so CI reads every benchmark's gate the same way.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from exports.quality import CheckResult, QualityReport
from exports.quality import _write_reports as write_reports
from schemas.streamvibe import SUBTYPES

EPS = 1e-6


def _windows_ok(r: dict[str, Any]) -> bool:
    return all(0 <= p["start"] <= p["preferred"] <= p["end"] for p in r["evidence"])


def _inside_ok(r: dict[str, Any]) -> bool:
    d = r["duration_s"]
    for p in r["evidence"]:
        k = math.ceil(p["start"] - EPS)
        if p["end"] > d + EPS or not (k <= p["end"] + EPS and k < d - EPS):
            return False
    return True


def _causal_ok(r: dict[str, Any]) -> bool:
    times, pts = list(r["frame_times"]), list(r["frame_pts"])
    seen: list[int] = []
    for st in r["steps"]:
        t, f = st["t"], st["frame"]
        if times[f] > t + EPS or (pts[f] > t + EPS and not (t == 0 and f == 0)):
            return False
        for n in st["new_turns"]:
            ut = r["user_turns"][n]["t"]
            if ut > t + EPS or (t > 0 and ut <= t - 1 + EPS):
                return False
            seen.append(int(n))
    if sorted(seen) != list(range(len(r["user_turns"]))):
        return False
    avail = {i["id"]: i["available_at"] for i in r["intents"]}
    return all(p["start"] >= avail[p["intent_id"]] - EPS for p in r["evidence"])


def _negatives_ok(r: dict[str, Any]) -> bool:
    return all(not (p["start"] - EPS <= n["t"] <= p["end"] + EPS)
               for n in r["negative_probes"] for p in r["evidence"])


def _points_ok(r: dict[str, Any]) -> bool:
    per = Counter(p["intent_id"] for p in r["evidence"])
    for i in r["intents"]:
        n = per.get(i["id"], 0)
        if n < 1 or (i["subtype"] == "I" and n != 1) or (i["subtype"] == "R" and n < 2):
            return False
    return True


def _history_ok(r: dict[str, Any]) -> bool:
    return all(h["t"] <= r["t"] + EPS and (h["role"] == "user" or h["t"] < r["t"] - EPS)
               for h in r["gold_history"])


def derived_frames(samples: pd.DataFrame, pointwise: pd.DataFrame, targets: dict[str, int],
                   counts: dict[str, dict[str, int]]) -> dict[str, pd.DataFrame]:
    """The batches the suite checks (list columns walked in Python into boolean columns)."""
    recs = samples.drop(columns=["frames"], errors="ignore").to_dict("records")
    per = Counter(r["subtype"] for r in recs)
    s = pd.DataFrame({
        "id": [r["id"] for r in recs],
        "subtype": [r["subtype"] for r in recs],
        "windows_ordered": [_windows_ok(r) for r in recs],
        "windows_inside_video": [_inside_ok(r) for r in recs],
        "causal": [_causal_ok(r) for r in recs],
        "negatives_outside_windows": [_negatives_ok(r) for r in recs],
        "points_per_intent": [_points_ok(r) for r in recs],
        "within_allocation": [per[r["subtype"]] <= targets.get(r["subtype"], 0) for r in recs],
    }, columns=["id", "subtype", *BOOL_COLUMNS["samples"]])
    prs = pointwise.to_dict("records")
    p = pd.DataFrame({
        "id": [r["id"] for r in prs],
        "sample_id": [r["sample_id"] for r in prs],
        "label_matches_probe": [r["should_respond"] == (r["probe_type"] == "positive") for r in prs],
        "history_causal": [_history_ok(r) for r in prs],
    }, columns=["id", "sample_id", *BOOL_COLUMNS["pointwise"]])
    m = pd.DataFrame([{"id": g, "inputs_accounted": c["inputs"] == c["kept"] + c["filtered"] + c["rejected"],
                       "kept_equals_rows": c["kept"] == per.get(g, 0)}
                      for g, c in sorted(counts.items())], columns=["id", *BOOL_COLUMNS["counts"]])
    return {"samples": s, "pointwise": p, "counts": m}


BOOL_COLUMNS = {
    "samples": ("windows_ordered", "windows_inside_video", "causal", "negatives_outside_windows",
                "points_per_intent", "within_allocation"),
    "pointwise": ("label_matches_probe", "history_causal"),
    "counts": ("inputs_accounted", "kept_equals_rows"),
}


def _expectations(name: str, sample_ids: list[str]) -> list[Any]:
    import great_expectations.expectations as gxe

    out = [gxe.ExpectColumnValuesToBeUnique(column="id", meta={"check": f"{name}: unique ids"})]
    if name == "samples":
        out.append(gxe.ExpectColumnValuesToBeInSet(column="subtype", value_set=list(SUBTYPES),
                                                   meta={"check": "known subtype (Table 15)"}))
    if name == "pointwise":
        out.append(gxe.ExpectColumnValuesToBeInSet(column="sample_id", value_set=sample_ids,
                                                   meta={"check": "pointwise row joins a sample"}))
    out += [gxe.ExpectColumnValuesToBeInSet(column=c, value_set=[True], meta={"check": c.replace("_", " ")})
            for c in BOOL_COLUMNS[name]]
    return out


def read_release(release: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    def read(sub: str) -> pd.DataFrame:
        files = sorted((release / sub).glob("*/*.parquet"))
        return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True) if files else pd.DataFrame(
            columns=["id", "subtype", "sample_id"])

    return read("data"), read("pointwise")


def run_suite(release: Path, targets: dict[str, int], counts: dict[str, dict[str, int]],
              reports: Path | None = None, *, data_docs: bool = False, label: Path | None = None
              ) -> QualityReport:
    """Validate a (staged) release directory; write ``data_quality.{md,json}`` into ``reports``.
    ``label`` is the path the report names (the final release path, not the staging one)."""
    import great_expectations as gx
    from great_expectations.checkpoint import Checkpoint, UpdateDataDocsAction
    from great_expectations.core import ExpectationSuite
    from great_expectations.core.validation_definition import ValidationDefinition
    from great_expectations.data_context.types.base import ProgressBarsConfig

    release = Path(release).resolve()
    reports = Path(reports) if reports else release / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    samples, pointwise = read_release(release)
    frames = derived_frames(samples, pointwise, targets, counts)
    for name in ("great_expectations", "great_expectations.data_context.types.base"):  # no INFO chatter
        logging.getLogger(name).setLevel(logging.WARNING)
    context = gx.get_context(mode="ephemeral")  # never a gx/ folder of a parent (design.md §Environment)
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    site = "streamvibe_quality"
    if data_docs:
        context.add_data_docs_site(site_name=site, site_config={
            "class_name": "SiteBuilder",
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
            "store_backend": {"class_name": "TupleFilesystemStoreBackend",
                              "base_directory": str(reports / "data_docs")}})
    source = context.data_sources.add_pandas("streamvibe")
    checks: list[CheckResult] = []
    for name, frame in frames.items():
        expectations = _expectations(name, sorted(frames["samples"]["id"]))
        if frame.empty:  # zero rows violate nothing; an empty release is refused by the build
            checks += [CheckResult(f"streamvibe_{name}", (e.meta or {})["check"], e.expectation_type,
                                   str(e.column), True) for e in expectations]
            continue
        batch = source.add_dataframe_asset(name).add_batch_definition_whole_dataframe(f"{name}_all")
        suite = context.suites.add(ExpectationSuite(name=f"streamvibe_{name}", expectations=expectations))
        vd = context.validation_definitions.add(ValidationDefinition(name=name, data=batch, suite=suite))
        actions = [UpdateDataDocsAction(name="data_docs", site_names=[site])] if data_docs else []
        checkpoint = context.checkpoints.add(Checkpoint(
            name=f"{name}_checkpoint", validation_definitions=[vd], actions=actions,
            result_format={"result_format": "COMPLETE", "unexpected_index_column_names": ["id"]}))
        result = checkpoint.run(batch_parameters={"dataframe": frame})
        for run in result.run_results.values():
            for r in run.results:
                cfg, res = r.expectation_config, r.result or {}
                examples = res.get("unexpected_index_list") or res.get("partial_unexpected_list") or []
                examples = [e.get("id", e) if isinstance(e, dict) else e for e in examples][:10]
                checks.append(CheckResult(
                    suite=f"streamvibe_{name}", check=str((cfg.meta or {}).get("check", cfg.type)),
                    expectation=cfg.type, column=str(cfg.kwargs.get("column", "")),
                    success=bool(r.success), unexpected_count=int(res.get("unexpected_count") or 0),
                    examples=examples))
    index = reports / "data_docs" / "index.html"
    report = QualityReport(label or release, len(frames["samples"]), checks,
                           index if data_docs and index.exists() else None, reports / "data_quality.md")
    write_reports(report, reports)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Data-quality suite for a StreamVibe-Bench release")
    parser.add_argument("release", type=Path, help="release directory (data/, pointwise/, manifest.json)")
    parser.add_argument("--reports", type=Path, help="output folder (default: <release>/reports)")
    parser.add_argument("--data-docs", action="store_true", help="also build the HTML Data Docs")
    args = parser.parse_args(argv)
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    try:
        manifest = json.loads((args.release / "manifest.json").read_text())
        report = run_suite(args.release, {k: v["target"] for k, v in manifest["allocation"].items()},
                           manifest["counts"], args.reports, data_docs=args.data_docs)
    except (OSError, ValueError, KeyError) as err:
        print(f"error: cannot validate {args.release}: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    print(f"{'PASSED' if report.success else 'FAILED'}: {len(report.checks) - len(report.failed)}/"
          f"{len(report.checks)} expectations on {report.rows} samples")
    for c in report.failed:
        print(f"  FAIL {c.check} [{c.expectation} on {c.column}]: {c.unexpected_count} unexpected, "
              f"e.g. {c.examples[:5]}")
    print(f"summary: {report.markdown}")
    return 0 if report.success else 1


if __name__ == "__main__":
    sys.exit(main())
