"""Leak-filter report: counts (paper Fig. 10), first-turn accuracy (Fig. 11), per-model accuracy,
request/token usage, and the binomial argument for the 25% threshold (ProactiveBench App. 0.A.8).

The binomial analysis. The paper says: "Assuming a first-turn success rate of 40%, this strategy
achieves a 92.8% recall under the binomial model (vs. 37.6% of the binomial test at 0.05)". The
definitions that reproduce both numbers for a pool of n = 22 models (checked by a test):

- A *leaking* sample is one every probe model answers correctly with probability p at the first
  turn, independently, so the number of correct models is X ~ Binomial(n, p).
- The 25% rule flags the sample when X / n ≥ 0.25, i.e. X ≥ k_rule = ⌈0.25·n⌉ = 6. Its recall is
  P(X ≥ 6 | n = 22, p = 0.4) = ``binom.sf(5, 22, 0.4)`` = 0.9278 → **92.8%**.
- The alternative is a one-sided (greater) exact binomial test of H0: success rate = chance =
  1/4 (four categories) at α = 0.05. It flags when the p-value P(X ≥ k | 22, 0.25) ≤ 0.05, i.e.
  X ≥ k_test = 10 (P(X ≥ 10 | 0.25) = 0.0295, P(X ≥ 9 | 0.25) = 0.0746). Its recall is
  P(X ≥ 10 | 22, 0.4) = ``binom.sf(9, 22, 0.4)`` = 0.3756 → **37.6%**.

We also report the price of that recall: a sample no model can see (pure guessing at 1/4) is
flagged by the rule with probability P(X ≥ 6 | 22, 0.25) = 48.3%, by the test with 3.0%. The
paper accepts this because filtering only removes samples (App. 0.A.8: "this strategy mostly
retains samples that require proactiveness"); the report makes the trade-off visible.
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path
from typing import Any

from filtering.leak import NOT_APPLIED_NOTICE, LeakFilter


def rule_min_correct(n: int, threshold: float = 0.25) -> int:
    """Smallest k with k / n ≥ threshold (exact arithmetic): 6 for n = 22."""
    return math.ceil(Fraction(str(threshold)) * n)


def test_min_correct(n: int, chance: float = 0.25, alpha: float = 0.05) -> int:
    """Smallest k whose one-sided exact binomial test against ``chance`` has p-value ≤ alpha."""
    from scipy.stats import binomtest

    for k in range(n + 1):
        if binomtest(k, n, chance, alternative="greater").pvalue <= alpha:
            return k
    return n + 1  # never significant


def binomial_analysis(
    n: int, p: float, threshold: float = 0.25, chance: float = 0.25, alpha: float = 0.05
) -> dict[str, Any]:
    """Recall of the threshold rule and of the binomial test under X ~ Binomial(n, p)."""
    from scipy.stats import binom

    if n <= 0:
        return {
            "n": n,
            "p": p,
            "threshold": threshold,
            "chance": chance,
            "alpha": alpha,
            "rule_min_correct": None,
            "rule_recall": None,
            "test_min_correct": None,
            "test_recall": None,
            "rule_flag_rate_at_chance": None,
            "test_flag_rate_at_chance": None,
        }
    k_rule = rule_min_correct(n, threshold)
    k_test = test_min_correct(n, chance, alpha)
    return {
        "n": n,
        "p": p,
        "threshold": threshold,
        "chance": chance,
        "alpha": alpha,
        "rule_min_correct": k_rule,
        "rule_recall": float(binom.sf(k_rule - 1, n, p)),
        "test_min_correct": k_test,
        "test_recall": float(binom.sf(k_test - 1, n, p)),
        "rule_flag_rate_at_chance": float(binom.sf(k_rule - 1, n, chance)),
        "test_flag_rate_at_chance": float(binom.sf(k_test - 1, n, chance)),
    }


def per_model_accuracy(results: Iterable[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """First-turn accuracy per probe model over the samples it answered (failed ones apart)."""
    acc: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"answered": 0, "correct": 0, "failed": 0, "backend": ""}
    )
    for rows in results:
        for r in rows:
            a = acc[r["model"]]
            a["backend"] = r.get("backend", "")
            if r["status"] == "answered":
                a["answered"] += 1
                a["correct"] += int(bool(r["correct"]))
            else:
                a["failed"] += 1
    return [
        {"model": m, **v, "accuracy": (v["correct"] / v["answered"]) if v["answered"] else None}
        for m, v in sorted(acc.items())
    ]


def first_turn_accuracy(results: Iterable[list[dict[str, Any]]]) -> float | None:
    """Mean over models of each model's first-turn accuracy ("avg. across all MLLMs", §3.3)."""
    accs = [m["accuracy"] for m in per_model_accuracy(results) if m["accuracy"] is not None]
    return sum(accs) / len(accs) if accs else None


def env_rows(samples: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Report rows from per-sample dicts {environment, route, probe_results}.

    ``route`` is kept | filtered | rejected, ``decision`` (optional) is keep | filter |
    unresolved. kept/filtered exclude unresolved samples (counted apart). Accuracy "before" uses
    all samples, "after" those routed to the release (route kept).
    """
    by_env: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in samples:
        by_env[s["environment"]].append(s)
    rows = []
    for env, items in sorted(by_env.items()):
        rows.append(
            {
                "environment": env,
                "kept": sum(1 for s in items if s["route"] == "kept" and s.get("decision") != "unresolved"),
                "filtered": sum(
                    1 for s in items if s["route"] == "filtered" and s.get("decision") != "unresolved"
                ),
                "unresolved": sum(1 for s in items if s.get("decision") == "unresolved"),
                "acc_before": first_turn_accuracy(s["probe_results"] for s in items),
                "acc_after": first_turn_accuracy(s["probe_results"] for s in items if s["route"] == "kept"),
            }
        )
    return rows


def _acc(row: dict[str, Any], when: str) -> float | None:
    for key in (f"acc_{when}", f"first_turn_acc_{when}", f"first_turn_accuracy_{when}"):
        if key in row:
            return row[key]
    return None


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _plot(path: str, rows: list[dict[str, Any]], analysis: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from scipy.stats import binom

    envs = [r["environment"] for r in rows]
    x = np.arange(len(envs))
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    before = [r["kept"] + r["filtered"] + r.get("unresolved", 0) for r in rows]
    after = [r["kept"] for r in rows]
    ax = axes[0]
    ax.bar(x - 0.2, before, 0.4, label="original")
    ax.bar(x + 0.2, after, 0.4, label="after filtering")
    ax.set_xticks(x, envs, rotation=30, ha="right")
    ax.set_title("Samples per environment (cf. Fig. 10)")
    ax.legend()
    ax = axes[1]
    ab = [100 * (_acc(r, "before") or 0) for r in rows]
    aa = [100 * (_acc(r, "after") or 0) for r in rows]
    ax.bar(x - 0.2, ab, 0.4, label="before filtering")
    ax.bar(x + 0.2, aa, 0.4, label="after filtering")
    ax.set_xticks(x, envs, rotation=30, ha="right")
    ax.set_ylabel("first-turn accuracy (%)")
    ax.set_title("First-turn accuracy (cf. Fig. 11)")
    ax.legend()
    ax = axes[2]
    n = analysis["n"]
    if n and n > 0:
        ps = np.linspace(0, 1, 101)
        ax.plot(
            ps,
            binom.sf(analysis["rule_min_correct"] - 1, n, ps),
            label=f"rule: ≥{analysis['threshold']:g} (k≥{analysis['rule_min_correct']})",
        )
        ax.plot(
            ps,
            binom.sf(analysis["test_min_correct"] - 1, n, ps),
            label=f"binomial test α={analysis['alpha']:g} (k≥{analysis['test_min_correct']})",
        )
        ax.axvline(analysis["p"], color="grey", ls="--", lw=1)
        ax.axvline(analysis["chance"], color="grey", ls=":", lw=1)
        ax.set_xlabel("per-model first-turn success rate p")
        ax.set_ylabel("P(flagged)")
        ax.legend(fontsize=8)
    ax.set_title(f"Recall under Binomial(n={n}, p)")
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def write_leak_report(
    out_dir: str,
    per_env_rows: list[dict[str, Any]],
    pool: list[str],
    n: int,
    p: float,
    *,
    threshold: float = 0.25,
    chance: float = 0.25,
    alpha: float = 0.05,
    per_model: list[dict[str, Any]] | None = None,
    usage: dict[str, dict[str, int]] | None = None,
    applied: bool | None = None,
) -> list[str]:
    """Write ``leak_filter.md``, ``leak_filter.png`` and ``leak_filter.json``; return the paths.

    ``per_env_rows``: environment, kept, filtered, unresolved, acc_before, acc_after (fractions).
    ``n`` is the pool size used in the binomial analysis, ``p`` the assumed first-turn success
    rate of a leaking sample.
    """
    os.makedirs(out_dir, exist_ok=True)
    applied = bool(pool) if applied is None else applied
    analysis = binomial_analysis(n, p, threshold, chance, alpha)
    rows = sorted(per_env_rows, key=lambda r: r["environment"])
    md: list[str] = ["# Leak filter report", ""]
    if not applied:
        md += [f"> ⚠️ {NOT_APPLIED_NOTICE}", ""]
    else:
        md += [
            f"Rule (ProactiveBench §3.3, App. 0.A.8): a sample is filtered when correct / answering "
            f"probe models ≥ {threshold:g}. Failed models are not counted as wrong.",
            "",
            f"Probe pool ({len(pool)}): " + ", ".join(f"`{m}`" for m in pool),
            "",
        ]
    md += [
        "## Samples per environment (cf. Fig. 10, Fig. 11)",
        "",
        "| environment | original | kept | filtered | unresolved | first-turn acc. before "
        "| first-turn acc. after |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    tot = {"kept": 0, "filtered": 0, "unresolved": 0}
    for r in rows:
        orig = r["kept"] + r["filtered"] + r.get("unresolved", 0)
        for k in tot:
            tot[k] += int(r.get(k, 0))
        md.append(
            f"| {r['environment']} | {orig} | {r['kept']} | {r['filtered']} | "
            f"{r.get('unresolved', 0)} | {_pct(_acc(r, 'before'))} | "
            f"{_pct(_acc(r, 'after'))} |"
        )
    md.append(
        f"| **total** | {sum(tot.values())} | {tot['kept']} | {tot['filtered']} | {tot['unresolved']} | | |"
    )
    md += [
        "",
        "`original` = kept + filtered + unresolved. Unresolved samples (too few answering "
        "models) are counted only in their own column; the configured `unresolved_policy` "
        "routes them to kept, filtered or rejected. Accuracy after filtering is over the "
        "samples in the release.",
        "",
    ]
    if per_model:
        md += [
            "## First-turn accuracy per probe model",
            "",
            "| model | backend | answered | correct | failed | accuracy |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for m in per_model:
            md.append(
                f"| {m['model']} | {m.get('backend', '')} | {m['answered']} | "
                f"{m['correct']} | {m['failed']} | {_pct(m['accuracy'])} |"
            )
        md.append("")
    if usage is not None:
        md += [
            "## Requests and tokens",
            "",
            "| probe | requests | retries | cache hits | failures | prompt tokens | completion tokens |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for name, u in sorted(usage.items()):
            md.append(
                f"| {name} | {u.get('requests', 0)} | {u.get('retries', 0)} | "
                f"{u.get('cache_hits', 0)} | {u.get('failures', 0)} | "
                f"{u.get('prompt_tokens', 0)} | {u.get('completion_tokens', 0)} |"
            )
        md.append("")
    a = analysis
    md += ["## Why the threshold (binomial model)", ""]
    if n > 0:
        md += [
            f"Assume a leaking sample is answered correctly by each of n = {n} probe models "
            f"independently with probability p = {p:g}, so the number of correct models is "
            f"X ~ Binomial({n}, {p:g}).",
            "",
            f"| procedure | flags when | recall P(flag; p) | flag rate at chance ({chance:g}) |",
            "|---|---|---:|---:|",
            f"| threshold rule (≥ {threshold:g}) | X ≥ {a['rule_min_correct']} | "
            f"{_pct(a['rule_recall'])} | {_pct(a['rule_flag_rate_at_chance'])} |",
            f"| one-sided binomial test vs. chance {chance:g}, α = {alpha:g} | "
            f"X ≥ {a['test_min_correct']} | {_pct(a['test_recall'])} | "
            f"{_pct(a['test_flag_rate_at_chance'])} |",
            "",
            "Recall = `scipy.stats.binom.sf(k - 1, n, p)`; the test's k is the smallest count "
            "with `binomtest(k, n, chance, alternative='greater').pvalue <= alpha`. The paper "
            "reports 92.8% vs. 37.6% for n = 22, p = 0.4.",
            "",
        ]
    else:
        md += ["No probe models: no analysis.", ""]
    md_path = os.path.join(out_dir, "leak_filter.md")
    png_path = os.path.join(out_dir, "leak_filter.png")
    json_path = os.path.join(out_dir, "leak_filter.json")
    md += [f"![leak filter]({os.path.basename(png_path)})", ""]
    with open(md_path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(md))
    _plot(png_path, rows, analysis)
    with open(json_path, "w", encoding="utf-8") as fh:
        json.dump(
            {
                "applied": applied,
                "pool": pool,
                "rows": rows,
                "binomial": analysis,
                "per_model": per_model,
                "usage": usage,
            },
            fh,
            indent=2,
            sort_keys=True,
        )
    return [md_path, png_path, json_path]


def main(argv: list[str] | None = None) -> int:
    """CLI: print the binomial analysis (defaults reproduce the paper's 92.8% / 37.6%)."""
    import argparse

    ap = argparse.ArgumentParser(description="Binomial analysis of the leak-filter threshold")
    ap.add_argument("--n", type=int, default=22)
    ap.add_argument("--p", type=float, default=0.4)
    ap.add_argument("--threshold", type=float, default=0.25)
    ap.add_argument("--chance", type=float, default=0.25)
    ap.add_argument("--alpha", type=float, default=0.05)
    a = ap.parse_args(argv)
    print(json.dumps(binomial_analysis(a.n, a.p, a.threshold, a.chance, a.alpha), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def release_leak_summary(staging: Path, probes: str | None, cfg: dict[str, Any]) -> dict[str, Any]:
    """Manifest entry of the leak filter, and its report in ``reports/`` (ProactiveBench App. 0.A.8:
    kept/filtered per environment, first-turn accuracy before/after, the threshold's recall)."""
    import pyarrow.parquet as pq

    if not probes:
        return {"applied": False, "probes_config": None}
    lf = LeakFilter(probes, run_id=staging.name)
    samples = []
    for folder in ("data", "filtered"):
        for shard in sorted((staging / folder).rglob("*.parquet")):
            table = pq.read_table(shard, columns=["environment", "probe_results"]).to_pylist()
            for row in table:
                decision = lf.decide(row["probe_results"])[0]
                samples.append({**row, "decision": decision, "route": lf.route(decision)})
    rejected = pq.read_table(staging / "rejected").to_pylist()
    samples += [{"environment": r["environment"], "route": "rejected", "decision": "unresolved",
                 "probe_results": []} for r in rejected if r["stage"] == "leak_filter"]
    report_p = float((cfg.get("leak_report") or {}).get("assumed_success_rate", 0.4))
    paths = write_leak_report(
        str(staging / "reports"), env_rows(samples), lf.pool, n=len(lf.pool), p=report_p,
        threshold=lf.config.threshold,
        per_model=per_model_accuracy(s["probe_results"] for s in samples), usage=lf.usage(),
        applied=True,
    )
    return {**lf.describe(), "probes_config": probes,
            "report": [Path(p).relative_to(staging).as_posix() for p in paths]}
