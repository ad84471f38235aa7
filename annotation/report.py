"""Agreement report: Markdown + self-contained HTML + PNG plots + JSON (StreamVibe App. B.3).

Why these shapes: the Markdown lands next to the release (``reports/``) and in dataset cards;
the HTML is for people who open a file from a shared drive, so it embeds its plots as data URIs
and its CSS inline (no CDN — reports are read offline, design.md §Conventions). Plots are where a reader would
rather look than read: the decision mix per task type, and κ with its bootstrap interval per
type against the Landis–Koch bands. Undefined statistics are printed as "undefined" with a
footnoted reason, never as ``nan`` or a number. Files are deterministic for a given audit (PNG
metadata without the software/date stamp), so re-running a release does not churn reports.
"""

from __future__ import annotations

import base64
import html
import json
import os
from pathlib import Path
from typing import Any

from annotation.agreement import (
    AgreementAudit,
    Interval,
    IntervalValue,
    ScopeStats,
    Undefined,
    Value,
)
from schemas.review import DECISIONS

_BANDS = ((-1.0, 0.0, "poor"), (0.0, 0.20, "slight"), (0.20, 0.40, "fair"),
          (0.40, 0.60, "moderate"), (0.60, 0.80, "substantial"), (0.80, 1.0, "almost perfect"))
_COLORS = {"approve": "#4c9a2a", "revise": "#e0a526", "reject": "#c0392b"}

MD_NAME = "agreement.md"
HTML_NAME = "agreement.html"
JSON_NAME = "agreement.json"
DECISIONS_PNG = "agreement_decisions.png"
KAPPA_PNG = "agreement_kappa.png"


class _Notes:
    """Footnotes for undefined values, numbered by first appearance."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def mark(self, u: Undefined) -> str:
        if u.reason not in self.reasons:
            self.reasons.append(u.reason)
        return f"undefined [{self.reasons.index(u.reason) + 1}]"


def _num(v: Value | str, notes: _Notes, digits: int = 3) -> str:
    if isinstance(v, Undefined):
        return notes.mark(v)
    if isinstance(v, str):
        return v
    return f"{v:.{digits}f}"


def _ci(v: IntervalValue, notes: _Notes) -> str:
    if isinstance(v, Undefined):
        return notes.mark(v)
    extra = f", {v.n_undefined} undefined replicates" if v.n_undefined else ""
    return f"[{v.low:.3f}, {v.high:.3f}]{extra}"


def _scopes(audit: AgreementAudit) -> list[ScopeStats]:
    return [*audit.per_type.values(), audit.overall]


def _dist(d: dict[str, int] | None) -> str:
    if d is None:
        return "–"
    total = sum(d.values())
    if not total:
        return "0"
    return " / ".join(f"{d.get(k, 0)} ({d.get(k, 0) / total:.0%})" for k in DECISIONS)


def _summary_rows(audit: AgreementAudit, notes: _Notes) -> list[list[str]]:
    rows = []
    for s in _scopes(audit):
        if isinstance(s.cohen_min, Undefined):
            rng = notes.mark(s.cohen_min)
        elif isinstance(s.cohen_max, Undefined):
            rng = notes.mark(s.cohen_max)
        else:
            rng = f"{s.cohen_min:.3f}–{s.cohen_max:.3f}"
        rows.append([
            s.scope,
            str(s.n_candidates),
            str(s.n_incomplete),
            _dist(s.decision_distribution),
            _num(s.fleiss_kappa, notes),
            _ci(s.fleiss_interval, notes),
            _num(s.fleiss_band, notes),
            _num(s.p_bar, notes),
            _num(s.unanimous_fraction, notes),
            _num(s.cohen_mean, notes),
            _ci(s.cohen_mean_interval, notes),
            rng,
            _num(s.cohen_band, notes),
        ])
    return rows


_SUMMARY_HEAD = [
    "task type", "candidates", "incomplete", "decisions approve / revise / reject",
    "Fleiss κ", "95% CI", "band", "P̄", "unanimous", "Gemini–human κ (mean)", "95% CI",
    "range", "band",
]


def _pair_rows(audit: AgreementAudit, notes: _Notes) -> list[list[str]]:
    rows = []
    for s in _scopes(audit):
        for p in s.cohen:
            rows.append([s.scope, p.reviewer, str(p.n), _num(p.kappa, notes),
                         _ci(p.interval, notes), _num(p.band, notes)])
    return rows


_PAIR_HEAD = ["task type", "human reviewer", "candidates", "Cohen κ vs model", "95% CI", "band"]


def _model_rows(audit: AgreementAudit) -> list[list[str]]:
    return [[s.scope, str(s.n_model), str(s.n_model_missing), _dist(s.model_decision_distribution)]
            for s in _scopes(audit)]


_MODEL_HEAD = ["task type", "candidates with a model decision", "without (failed/missing)",
               "model decisions approve / revise / reject"]


def _preamble(audit: AgreementAudit) -> list[str]:
    scheme = (
        "binary (approve vs. not approve; revise and reject are non-approvals, design.md §Annotation rules)"
        if audit.scheme == "binary" else "three decision classes (approve / revise / reject)"
    )
    pop = (
        "the original, independent first-round decisions on the frozen candidate set "
        "(version 1, first decision per reviewer, including candidates later dropped)"
        if audit.population == "first_round"
        else "retained samples only — κ is undefined by construction (StreamVibe App. B.3)"
    )
    return [
        f"Population: {pop}.",
        f"Human panel: {', '.join(audit.panel)}; model rater: {audit.model_rater or 'none'} "
        "(a separate rater, never counted toward approval).",
        f"κ, P̄ and unanimity use the {scheme} scheme; decision counts show all three classes.",
        f"Intervals: {audit.level:.0%} percentile bootstrap over candidates, {audit.n_boot} "
        f"replicates, seeded per scope from global seed {audit.global_seed!r} (design.md §Conventions).",
        "Bands: Landis & Koch (1977).",
    ]


# ----------------------------------------------------------------------------- plots


def _plot_decisions(audit: AgreementAudit, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scopes = _scopes(audit)
    labels: list[str] = []
    fracs: dict[str, list[float]] = {d: [] for d in DECISIONS}
    for s in scopes:
        groups = [("humans", s.decision_distribution)]
        if s.model_decision_distribution is not None:
            groups.append(("model", s.model_decision_distribution))
        for who, dist in groups:
            total = sum(dist.values())
            labels.append(f"{s.scope} · {who} ({total} decisions)")
            for d in DECISIONS:
                fracs[d].append(dist.get(d, 0) / total if total else 0.0)
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(labels) + 1.4))
    left = [0.0] * len(labels)
    ys = list(range(len(labels)))[::-1]
    for d in DECISIONS:
        ax.barh(ys, fracs[d], left=left, color=_COLORS[d], label=d, height=0.7)
        left = [a + b for a, b in zip(left, fracs[d], strict=True)]
    ax.set_yticks(ys, labels, fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xlabel("fraction of first-round decisions")
    ax.set_title("Decision distribution per task type")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12 - 1.0 / (len(labels) + 3)),
              fontsize=8, ncols=3, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def _kappa_floor(audit: AgreementAudit) -> float:
    """Bottom of the κ axis: −0.2, or lower so that every κ and interval is drawn (κ ≥ −1)."""
    lows = [-0.2]
    for s in _scopes(audit):
        for k, ci in ((s.fleiss_kappa, s.fleiss_interval), (s.cohen_mean, s.cohen_mean_interval)):
            if not isinstance(k, Undefined):
                lows.append(k)
            if isinstance(ci, Interval):
                lows.append(ci.low)
    return max(-1.05, min(lows) - 0.05)


def _plot_kappa(audit: AgreementAudit, path: Path) -> None:
    """κ per type with its interval and value label, or the word "undefined": every value is
    drawn — the axis reaches down to the lowest κ or interval bound (it once stopped at −0.2
    and hid κ = −0.33)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scopes = _scopes(audit)
    floor = _kappa_floor(audit)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.3 * len(scopes) + 2), 4.2))
    for n, (lo, hi, name) in enumerate(_BANDS):
        ax.axhspan(lo, hi, color="0.93" if n % 2 else "white", zorder=0)
        ax.text(len(scopes) - 0.45, max(lo, floor) / 2 + hi / 2, name, fontsize=7, color="0.45",
                va="center", ha="right")
    series = [("Fleiss κ (humans)", "fleiss_kappa", "fleiss_interval", -0.12, "#1f77b4"),
              ("Gemini–human Cohen κ (mean)", "cohen_mean", "cohen_mean_interval", 0.12, "#d62728")]
    for label, kf, cf, dx, color in series:
        xs, ys, err_lo, err_hi = [], [], [], []
        for i, s in enumerate(scopes):
            k: Value = getattr(s, kf)
            ci: IntervalValue = getattr(s, cf)
            if isinstance(k, Undefined):
                if not (kf == "cohen_mean" and audit.model_rater is None):
                    ax.text(i + dx, 0.02, "undefined", rotation=90, fontsize=7, color=color,
                            ha="center", va="bottom")
                continue
            xs.append(i + dx)
            ys.append(k)
            ax.text(i + dx + 0.05, k, f"{k:.2f}", fontsize=7, color=color, va="center", ha="left")
            if isinstance(ci, Interval):
                err_lo.append(max(0.0, k - ci.low))
                err_hi.append(max(0.0, ci.high - k))
            else:
                err_lo.append(0.0)
                err_hi.append(0.0)
        if xs:
            ax.errorbar(xs, ys, yerr=[err_lo, err_hi], fmt="o", color=color, capsize=4,
                        label=label, zorder=3)
    ax.set_xticks(range(len(scopes)), [s.scope for s in scopes], fontsize=8)
    ax.set_xlim(-0.6, len(scopes) - 0.4)
    ax.set_ylim(floor, 1.05)
    ax.set_ylabel("κ (95% bootstrap CI)")
    ax.set_title("Agreement per task type")
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


# ----------------------------------------------------------------------------- writers


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    def esc(c: str) -> str:
        return c.replace("|", "\\|")

    out = ["| " + " | ".join(esc(h) for h in head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return out


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows
    )
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em;
max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}
img{max-width:100%;border:1px solid #eee;margin:0.5em 0}
.note{color:#555;font-size:13px}
"""


def _listed(what: str, ids: list[str]) -> str:
    return (f"{what}: {len(ids)}" + (f" — {', '.join(ids[:50])}" if ids else "")
            + (" …" if len(ids) > 50 else ""))


def write_agreement_report(audit: AgreementAudit, out_dir: str | os.PathLike[str]) -> list[str]:
    """Write ``agreement.{md,html,json}`` and two PNG plots into ``out_dir``; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    dec_png, kap_png = out / DECISIONS_PNG, out / KAPPA_PNG
    _plot_decisions(audit, dec_png)
    _plot_kappa(audit, kap_png)

    notes = _Notes()
    summary = _summary_rows(audit, notes)
    pairs = _pair_rows(audit, notes)
    models = _model_rows(audit) if audit.model_rater else []
    title = "Annotation agreement audit"
    pre = _preamble(audit)
    ignored = [f"{k}: {v}" for k, v in audit.ignored.items()]
    incomplete = _listed("Candidates missing a panel decision (excluded from the statistics)",
                         audit.incomplete_ids)
    unreviewed = _listed("Candidates of the frozen set nobody decided on version 1 (excluded "
                         "from the statistics)", audit.unreviewed_ids)

    md: list[str] = [f"# {title}", ""]
    md += [f"- {p}" for p in pre] + [""]
    md += ["## Human–human agreement and Gemini–human agreement", ""]
    md += _md_table(_SUMMARY_HEAD, summary) + [""]
    md += [f"![decision distribution]({DECISIONS_PNG})", "", f"![kappa per type]({KAPPA_PNG})", ""]
    if audit.model_rater:
        md += ["## Gemini–human Cohen's κ per reviewer", ""]
        md += _md_table(_PAIR_HEAD, pairs) + [""]
        md += ["## Model rater coverage", ""] + _md_table(_MODEL_HEAD, models) + [""]
    md += ["## Excluded rows", "", f"- {unreviewed}", f"- {incomplete}"]
    md += [f"- ignored decision rows — {i}" for i in ignored] or ["- ignored decision rows: 0"]
    md += [""]
    if notes.reasons:
        md += ["## Undefined values", ""]
        md += [f"{i}. {r}" for i, r in enumerate(notes.reasons, start=1)] + [""]

    def data_uri(p: Path) -> str:
        return "data:image/png;base64," + base64.b64encode(p.read_bytes()).decode()

    h: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1><ul>",
        *[f"<li>{html.escape(p)}</li>" for p in pre],
        "</ul><h2>Human–human agreement and Gemini–human agreement</h2>",
        _html_table(_SUMMARY_HEAD, summary),
        f'<img alt="decision distribution" src="{data_uri(dec_png)}">',
        f'<img alt="kappa per type" src="{data_uri(kap_png)}">',
    ]
    if audit.model_rater:
        h += ["<h2>Gemini–human Cohen's κ per reviewer</h2>", _html_table(_PAIR_HEAD, pairs),
              "<h2>Model rater coverage</h2>", _html_table(_MODEL_HEAD, models)]
    h += ["<h2>Excluded rows</h2><ul>", f"<li>{html.escape(unreviewed)}</li>",
          f"<li>{html.escape(incomplete)}</li>"]
    h += [f"<li>ignored decision rows — {html.escape(i)}</li>" for i in ignored]
    h += ["</ul>"]
    if notes.reasons:
        h += ["<h2>Undefined values</h2><ol class=\"note\">"]
        h += [f"<li>{html.escape(r)}</li>" for r in notes.reasons]
        h += ["</ol>"]
    h += ["</body></html>", ""]

    md_path, html_path, json_path = out / MD_NAME, out / HTML_NAME, out / JSON_NAME
    md_path.write_text("\n".join(md), encoding="utf-8")
    html_path.write_text("\n".join(h), encoding="utf-8")
    payload: dict[str, Any] = audit.to_dict()
    json_path.write_text(json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                         encoding="utf-8")
    return [str(p) for p in (md_path, html_path, json_path, dec_png, kap_png)]

