"""ProReady-QA as a :class:`~pipelines.common.benchmark.Benchmark` (StreamReady §4, App. C).

StreamReady App. C is semi-automatic: the pipeline proposes, people refine, "only approved items
are released". Without ``--decisions`` the build stops at the pending-review state (candidates,
push units, review media); with a decision log (and optional ``--corrections``: new versions of
items, JSONL of ``sample_id``, ``version``, ``turns``) the same pipeline applies the corrections
and the approval rule of :mod:`annotation.approval` per item and releases the approved items
per task type, with the data-quality suite and the QC reports (windows, two-annotator IoU with
``--qc-windows``, VLM verifiability when a VLM is configured).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from core.errors import BadInput
from exports.release import ReleaseError, source_digest
from pipelines.common import driver
from pipelines.common.benchmark import (
    Benchmark,
    BuildContext,
    Finalized,
    PendingReview,
    review_violations,
)
from pipelines.common.sources import ReaderConfig, preflight
from pipelines.proready.generation import ITEMS, GenerationConfig, generation_config
from pipelines.proready.pipeline import PipelineConfig, build_pipeline
from pipelines.proready.quality import verifiability
from pipelines.proready.release import reviewed_item
from pipelines.proready.review import (
    RUBRIC,
    apply_corrections,
    number_corrections,
    read_rows,
    review_candidate,
    review_media,
)
from pipelines.proready.sources import BENCHMARK, VIDEOS, ProReadyReader
from schemas.proready import FILTERED_ITEM, RELEASED_ITEM, TASK_NAMES, TASK_TYPES

REPO = Path(__file__).resolve().parents[2]


class ProReady(Benchmark):
    name = BENCHMARK
    title = "ProReady-QA"
    citation_key = "streamready"
    summary = (
        "Future-dependent (multi-turn) questions on long videos with answer evidence "
        "windows [t_s, t_e] for readiness-aware evaluation with ARS (StreamReady §4). Five "
        "task types: " + ", ".join(f"{k.upper()} ({v})" for k, v in TASK_NAMES.items())
        + ". Videos are referenced by path and sha256, not embedded. Only items approved "
        "by all four reviewers on the released version are included. Built by benchforge.")
    usage = ("import datasets\n"
             "ds = datasets.load_dataset('/abs/path/to/this/release', '{config}', split='test')\n"
             "ds[0]['questions'][0]  # model input: ask each question at its ask_time_s\n"
             "ds[0]['gold_turns'][0]['t_s']  # gold, for scoring; configs: {configs}\n"
             "# ARS: pipelines.proready.ars.score(qs, tau=manifest['ars_tau_s'])")
    example_config = "ssr"
    schema = RELEASED_ITEM
    filtered_schema = FILTERED_ITEM
    default_config = REPO / "configs" / "proready.yaml"
    group_label = "unit"
    reviewed = True

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--source", default=None, help="override the source directory")
        parser.add_argument("--corrections", type=Path, default=None,
                            help="JSONL of corrected versions: sample_id, version, turns")
        parser.add_argument("--qc-windows", type=Path, default=None,
                            help="JSONL of two annotators' windows for the IoU audit")
        parser.add_argument("--review-media", choices=("source", "webm", "mp4"), default=None,
                            help="media for the review tasks (default: review.media in the config)")

    def check_config(self, config: dict[str, Any], path: Path) -> dict[str, Any]:
        for key in ("source", "generation", "evidence"):
            if key not in config:
                raise SystemExit(f"{path}: missing section {key!r}")
        return config

    def prepare(self, ctx: BuildContext) -> None:
        args, cfg = ctx.args, ctx.config
        for flag, path in (("--corrections", args.corrections), ("--qc-windows", args.qc_windows)):
            if path is not None and not path.exists():
                raise SystemExit(f"{flag}: {path} does not exist")
        if ctx.decisions is None and (args.corrections or args.qc_windows):
            raise SystemExit("--corrections / --qc-windows only apply to a release: pass --decisions too")
        src = dict(cfg["source"])
        root = args.source or str(ctx.raw_dir / src.get("path", "proready"))
        if "://" not in root:
            if not Path(root).exists():
                raise SystemExit(f"ProReady source directory not found: {root} (set RAW_DIR, or "
                                 "--source /path)")
            root = str(Path(root).resolve())
        reader = ProReadyReader(root, ReaderConfig(global_seed=ctx.seed, extra={
            "manifest": src.get("manifest", "manifest.yaml"),
            "end_tolerance_s": src.get("end_tolerance_s", 0.5)}))
        for err in preflight({VIDEOS: reader})[1].values():
            ctx.source_unreadable(self.name, root, err, sole=True)
        try:
            corrections = read_rows(args.corrections) if args.corrections else []
        except (OSError, BadInput) as exc:
            raise SystemExit(f"--corrections: {exc}") from exc
        by_item: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        for n, c in number_corrections(corrections):
            by_item[str(c.get("sample_id", ""))].append((n, c))
        decisions: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for d in ctx.decisions or []:
            decisions[str(d["sample_id"])].append(d)
        violations = None
        if ctx.decisions is not None:
            from annotation.decision_log import read_standing_violations

            violations = read_standing_violations(args.decisions, self.name)
        by_sample: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for v in violations or []:
            by_sample[str(v["sample_id"])].append(v)
        generation = generation_config(cfg, REPO, str(ctx.config_path))
        ctx.state.update(root=root, reader=reader, generation=generation,
                         corrections=dict(by_item), n_corrections=len(corrections),
                         decisions=dict(decisions), violations=violations,
                         violations_by_sample=dict(by_sample),
                         panel=int((cfg.get("review") or {}).get("panel_size", 4)))

    def groups(self, ctx: BuildContext) -> list[str]:
        return [VIDEOS, ITEMS]

    def data_prefix(self, group: str) -> str | None:
        return "data" if group == ITEMS else None

    def source_yield(self, ctx: BuildContext, counts: dict[str, dict[str, int]]
                     ) -> dict[str, tuple[str, int, list[str]]]:
        reader = ctx.state["reader"]
        return {VIDEOS: (f"{reader.root}/{reader.manifest}", counts.get(VIDEOS, {}).get("kept", 0),
                         [VIDEOS])}

    def describe(self, ctx: BuildContext) -> str:
        g = ctx.state["generation"]
        return (f"building {self.name} {ctx.version} from {ctx.state['root']} ({g.method} questions, "
                f"{g.evidence} windows, {'with' if ctx.decisions is not None else 'no'} review "
                "decisions)")

    def pipeline(self, p, ctx: BuildContext) -> None:
        st = ctx.state
        build_pipeline(p, st["reader"], PipelineConfig(
            staging=str(ctx.staging), generation=st["generation"], review=ctx.decisions is not None,
            decisions=st["decisions"], corrections=st["corrections"],
            corrections_file=ctx.args.corrections.name if ctx.args.corrections else "",
            panel_size=st["panel"], violations=st["violations_by_sample"]))

    def _sources(self, ctx: BuildContext) -> dict[str, Any]:
        reader = ctx.state["reader"]
        files = json.loads((ctx.staging / "_build" / "sources.json").read_text())
        return {VIDEOS: {"root": reader.root,
                         "manifest_sha256": hashlib.sha256(reader.read_bytes(reader.manifest)).hexdigest(),
                         **source_digest([{"file": f["file"], "sha256": f["sha256"]} for f in files])}}

    def pending(self, ctx: BuildContext) -> PendingReview:
        cands = sorted(json.loads((ctx.staging / "_build" / "candidates.json").read_text()),
                       key=lambda c: c["id"])
        kind = ctx.args.review_media or (ctx.config.get("review") or {}).get("media", "mp4")
        media_dir = ctx.staging / "_build" / "media"
        media, media_root = review_media(media_dir, cands, ctx.state["root"], kind)
        review = ctx.config.get("review") or {}
        return PendingReview(
            candidates=cands,
            units=[review_candidate(c, [media[c["video_id"]]]) for c in cands],
            status={"rubric": RUBRIC, "review_round": review.get("round", "proready-r1"),
                    "panel_size": ctx.state["panel"], "media": kind,
                    "media_root": media_root,
                    "sources": self._sources(ctx),
                    "per_task": dict(sorted(Counter(c["task_type"] for c in cands).items())),
                    "multi_turn": sum(1 for c in cands if c["num_turns"] > 1)},
            media=media_dir if media_root is None else None)

    def correction_units(self, state: Path, corrections: Path) -> list[dict[str, Any]]:
        """Each corrected item's latest version, checked like the release build checks it
        (:func:`pipelines.proready.review.apply_corrections`), with its candidate's media."""
        items = {c["id"]: c for c in map(json.loads, (state / "candidates.jsonl").read_text().splitlines())}
        media = {u["sample_id"]: u["media"] for u in map(
            json.loads, (state / "review_candidates.jsonl").read_text().splitlines())}
        try:
            rows = read_rows(corrections)
        except (OSError, BadInput) as exc:
            raise SystemExit(f"--corrections: {exc}") from exc
        by_item: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        for n, c in number_corrections(rows):
            by_item[str(c.get("sample_id", ""))].append((n, c))
        units = []
        for sid, mine in sorted(by_item.items()):
            latest, rejected = apply_corrections(items.get(sid), mine, corrections.name)
            if rejected or latest is None:
                raise SystemExit("--corrections: " + "; ".join(
                    f"{r.source_file}: {r.field}: {r.reason}" for r in rejected))
            units.append(review_candidate(latest, media[sid]))
        return units

    def suites(self, release: Path, counts: dict[str, dict[str, int]],
               manifest: dict[str, Any]) -> list[Any]:
        from pipelines.proready.quality import suites

        return suites(release, int(manifest["review"]["panel_size"]))

    def finalize(self, ctx: BuildContext, counts: dict[str, dict[str, int]],
                 files: list[dict[str, Any]]) -> Finalized:
        from pipelines.proready.quality import iou_report, iou_sample, window_report, write_qc

        kept = sorted((reviewed_item(r) for r in pq.read_table(ctx.staging / "data").to_pylist())
                      if counts[ITEMS]["kept"] else [], key=lambda i: i["id"])
        if not kept:
            raise ReleaseError("no item is approved by all reviewers on its latest version: nothing "
                               "to release (see the review states in the decision log)")
        reports = ctx.staging / "reports"
        reports.mkdir(parents=True, exist_ok=True)
        panel = ctx.state["panel"]
        qc: dict[str, Any] = {}
        if ctx.args.qc_windows is not None:
            size = int(ctx.config.get("quality", {}).get("iou_sample_size", 100))
            sample = iou_sample(kept, size, ctx.seed)
            qc["iou"] = iou_report(kept, read_rows(ctx.args.qc_windows), sample)
        gcfg: GenerationConfig = ctx.state["generation"]
        if gcfg.vlm:
            qc["verifiability"] = verifiability(kept, gcfg, Path(ctx.state["root"]))
        write_qc(reports, qc)
        windows = window_report(kept, reports)
        states = json.loads((ctx.staging / "_build" / "review.json").read_text())
        review_states = dict(sorted(Counter(s["state"] for s in states).items()))
        (reports / "review.json").write_text(json.dumps({
            **review_violations(ctx.state["violations"]),
            "states": review_states,
            "statuses": {s["id"]: {k: s[k] for k in ("state", "version", "approvals", "objections")}
                         for s in sorted(states, key=lambda s: s["id"])},
            "corrections_applied": sum(1 for s in states if s["corrected"]),
        }, indent=2, sort_keys=True) + "\n")
        per_task = {t: sum(1 for i in kept if i["task_type"] == t) for t in TASK_TYPES}
        review = ctx.config.get("review") or {}
        return Finalized(
            manifest={
                "sources": self._sources(ctx),
                "per_task": per_task,
                "turns": sum(len(i["turns"]) for i in kept),
                "multi_turn_items": sum(1 for i in kept if len(i["turns"]) > 1),
                "ars_tau_s": ars_tau(kept),
                "windows": windows,
                "review": {"rubric": RUBRIC, "round": review.get("round", "proready-r1"),
                           "panel_size": panel, "states": review_states,
                           "decisions": len(ctx.decisions or []),
                           "corrections": ctx.state["n_corrections"],
                           **review_violations(ctx.state["violations"])},
                "qc": qc,
            },
            warnings=warnings(ctx.config, qc, ctx.args.decisions),
            configs={t: f"data/{t}" for t in TASK_TYPES if per_task[t]},
            summary_lines=[f"per task: {per_task}  review states: {review_states}"],
        )


def ars_tau(items: list[dict[str, Any]]) -> float | None:
    """τ of ARS (StreamReady Eq. 10–11): median evidence duration over all released turns — the
    scale evaluators should use for this release (:func:`pipelines.proready.ars.score`)."""
    from pipelines.proready.ars import Question, Turn, median_evidence_duration

    qs = [Question([Turn(t["t_s"], t["t_e"], None) for t in i["turns"]], id=i["id"]) for i in items]
    return round(median_evidence_duration(qs), 4) if qs else None


def warnings(cfg: dict[str, Any], qc: dict[str, Any], decisions_path: Path) -> list[str]:
    out = []
    if cfg["generation"].get("method", "template") == "template":
        out.append("Questions come from the offline template generator over native annotations, "
                   "not from the LLM pipeline of StreamReady App. C.")
    if cfg["evidence"].get("method", "native_cue") == "native_cue":
        out.append("Evidence windows are the native annotation spans (no frame-wise VLM check).")
    if "iou" not in qc:
        out.append("Two-annotator temporal IoU was not measured for this release (App. C QC).")
    if "demo" in decisions_path.name:
        out.append("DEMO: the review decisions come from a scripted demo panel, not from people.")
    return out


PROREADY = ProReady()


def run(argv: list[str] | None = None) -> Path:
    return driver.run(PROREADY, argv)


def main() -> None:
    driver.main(PROREADY)
