"""The approval rule of StreamVibe App. B.3 (design.md §Annotation rules), applied to checked decisions.

- A candidate is *approved* only when all ``panel_size`` (four) human reviewers approve the same
  — its latest — version. Three approvals are insufficient.
- Any non-approval on a version is final for that version: a "require revision" ⇒
  *needs_correction* (correct, then all four re-review version n+1), a "reject" ⇒ *excluded*
  (unresolvable ambiguity or insufficient evidence is excluded, never given a guessed reference).
  Why final: the paper's rule is that an objection leads to a correction reviewed again by all
  four; if a reviewer could turn "revise" into "approve" on the same version, an objection would
  be withdrawn without a correction and without the other three seeing it again. So the rule reads
  the *full history* of pulled decisions, not the latest state of each annotation — which also
  keeps a deleted objection in force (the deletion itself is a violation, ``annotation.pull``).
- A version with standing integrity violations (the latest pull of its round reported one, e.g. a
  task edited after push or a deleted decision) is never approved: state *violation* unless an
  objection already decides it; the violations are carried for the release's filtered reasons.
- Approvals of older versions never count: only decisions on the latest version known for the
  sample are looked at, and a newer pushed version without decisions makes the sample pending.
- Model raters (the Gemini reviewer) are an agreement audit, not reviewers: ignored here.

Only approved candidates may enter a release: :func:`check_release` enforces it, down to the
version and the content hash that were approved.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

STATES = ("approved", "needs_correction", "excluded", "violation", "pending")


@dataclass(frozen=True)
class Status:
    sample_id: str
    state: str
    version: int
    content_hash: str
    approvals: tuple[str, ...] = ()
    objections: tuple[tuple[str, str], ...] = ()  # (reviewer, "revise" | "reject")
    violations: tuple[str, ...] = ()  # "kind: detail" of the standing violations on ``version``

    @property
    def releasable(self) -> bool:
        return self.state == "approved"


class ReleaseBlocked(ValueError):
    """A release tried to include a candidate (version) that is not approved."""


def statuses(decisions: Iterable[Mapping[str, Any]], panel_size: int = 4,
             latest_versions: Mapping[str, int] | None = None,
             violations: Iterable[Mapping[str, Any]] = ()) -> dict[str, Status]:
    """Status per sample id from ``REVIEW_DECISION`` records — every decision state ever pulled
    (``decision_log.read(..., current=False)``), already integrity-checked by ``annotation.pull`` —
    and the standing violation records (``decision_log.read_violations``).

    ``latest_versions`` (sample id -> newest pushed version) lets a freshly pushed correction
    with no decisions yet show as pending instead of inheriting its predecessor's objections."""
    by_sample: dict[str, dict[int, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for d in decisions:
        if d.get("rater_kind", "human") != "human":
            continue
        by_sample[str(d["sample_id"])][int(d["version"])].append(d)
    standing: dict[tuple[str, int], set[str]] = defaultdict(set)
    for v in violations:
        standing[(str(v["sample_id"]), int(v["version"]))].add(f"{v['kind']}: {v['detail']}")
    out: dict[str, Status] = {}
    # a sample whose only record is a violation (its tampered annotations were not counted) is
    # still reported, at the version the violation names, rather than as "no decisions"
    flagged: dict[str, int] = {}
    for sid, ver in standing:
        flagged[sid] = max(flagged.get(sid, 0), ver)
    for sid in sorted(set(by_sample) | set(latest_versions or {}) | set(flagged)):
        versions = by_sample.get(sid, {})
        latest = max([*versions, (latest_versions or {}).get(sid, 0)]) or flagged.get(sid, 0)
        recs = versions.get(latest, [])
        viol = tuple(sorted(standing.get((sid, latest), ())))
        hashes = {str(r["content_hash"]) for r in recs}
        if len(hashes) > 1:
            raise ValueError(f"sample {sid!r} version {latest} was reviewed with "
                             f"{len(hashes)} different content hashes; versions must be immutable")
        objections = tuple(sorted({(str(r["reviewer"]), str(r["decision"])) for r in recs
                                   if r["decision"] != "approve"}))
        objecting = {rv for rv, _ in objections}
        approvals = tuple(sorted({str(r["reviewer"]) for r in recs if r["decision"] == "approve"}
                                 - objecting))
        if any(dec == "reject" for _, dec in objections):
            state = "excluded"
        elif objections:
            state = "needs_correction"
        elif viol:
            state = "violation"
        elif len(approvals) >= panel_size:
            state = "approved"
        else:
            state = "pending"
        out[sid] = Status(sid, state, latest, hashes.pop() if hashes else "", approvals,
                          objections, viol)
    return out


def approved(statuses_: Mapping[str, Status]) -> dict[str, tuple[int, str]]:
    """sample id -> (approved version, content hash) for every releasable sample."""
    return {s.sample_id: (s.version, s.content_hash) for s in statuses_.values() if s.releasable}


def check_release(items: Iterable[tuple[str, int, str]], statuses_: Mapping[str, Status]) -> None:
    """Raise :class:`ReleaseBlocked` unless every ``(sample_id, version, content_hash)`` is the
    exact approved version of an approved sample."""
    ok = approved(statuses_)
    bad = []
    for sid, ver, h in items:
        st = statuses_.get(sid)
        if ok.get(sid) != (ver, h):
            bad.append(f"{sid} v{ver} ({st.state if st else 'never reviewed'}"
                       f"{'' if not st or st.version == ver else f', latest v{st.version}'})")
    if bad:
        raise ReleaseBlocked(f"{len(bad)} candidates are not approved: {', '.join(bad[:10])}"
                             + (" ..." if len(bad) > 10 else ""))
