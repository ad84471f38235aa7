"""Per-video candidate generation: template or LLM path, then evidence windows (StreamReady App. C).

One video is the unit of work: its frames are decoded once (1 FPS, App. D) and shared by the
dense captions, the frame-wise evidence check and nothing else, so a one-hour video is decoded
once, not once per question.

LLM path (App. C, in order):

1. **Dense captions** — 30 s segments, 8 frames sampled uniformly in each (the frame on screen at
   the centre of each eighth), captioned by the VLM.
2. **Summaries** — captions aggregated over ``summary_interval_s`` ("several-minute intervals")
   and summarized by the LLM, keeping entities, actions, causal structure and order.
3. **Future-dependent QA** — for each pair of consecutive summaries (A, B), the LLM writes a
   question asked at the end of A whose answer is revealed in B, optionally with follow-ups that
   reference earlier turns, each with the span of B where its answer appears.
4. **Coarse spans from native cues** — the LLM's span is replaced by the hull of the native
   annotations that start inside it, within B (App. C: spans are anchored on native cues);
   without such a cue the LLM's span (clipped to B) is kept and the cue says so.

Template path: :mod:`pipelines.proready.templates`.

Evidence (both paths): ``native_cue`` keeps the coarse native span as [t_s, t_e] (offline);
``vlm_framewise`` asks the VLM about every 1 FPS frame of the padded coarse span after the
question and refines with :func:`pipelines.proready.evidence.refine_window`. Then every item goes
through :func:`pipelines.proready.evidence.validate_item`.

Outcomes per candidate: kept (a candidate for review), filtered (``evidence_not_found``, with
the frame verdicts as evidence) or rejected (malformed model output, a question whose evidence
precedes it, a window outside the video — naming the file and field).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from clients import ModelClient, ModelsConfig, ModelSpec, Request
from core.errors import BadInput, Rejection
from core.media.video import causal_frames
from pipelines.proready.content import content_hash
from pipelines.proready.evidence import refine_window, validate_item
from pipelines.proready.models import ask_json, model_settings
from pipelines.proready.sources import BENCHMARK, Span, VideoSource
from pipelines.proready.templates import TemplateConfig, ask_before, item_id, template_candidates

PROMPT_DIR = Path(__file__).resolve().parents[2] / "configs" / "proready"
PROMPTS = ("caption", "summary", "qa", "evidence", "verify")
ITEMS = "items"  # the accounting environment of candidate items


class Caption(BaseModel):
    caption: str = Field(min_length=1)


class Summary(BaseModel):
    summary: str = Field(min_length=1)


class QATurn(BaseModel):
    task_type: Literal["ssr", "rec", "crr", "ctd", "gsd"]
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    refers_to: int = -1
    evidence_start_s: float
    evidence_end_s: float


class QAChain(BaseModel):
    turns: list[QATurn] = Field(min_length=1)


class FrameVerdict(BaseModel):
    answer_inferable: bool
    cue_visible: bool


@dataclass(frozen=True)
class GenerationConfig:
    """``generation`` and ``evidence`` sections of configs/proready.yaml."""

    method: str = "template"  # template | llm
    template: TemplateConfig = field(default_factory=TemplateConfig)
    segment_s: float = 30.0
    frames_per_segment: int = 8
    summary_interval_s: float = 180.0
    max_followups: int = 2
    evidence: str = "native_cue"  # native_cue | vlm_framewise
    pad_s: float = 2.0
    dwell_frames: int = 2
    frame_max_side: int = 448
    models: ModelsConfig = field(default_factory=ModelsConfig)  # roles vlm, llm (models.py)
    prompts: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.method not in ("template", "llm"):
            raise ValueError(f"generation.method must be template or llm, got {self.method!r}")
        if self.evidence not in ("native_cue", "vlm_framewise"):
            raise ValueError(f"evidence.method must be native_cue or vlm_framewise, got {self.evidence!r}")
        if (self.method == "llm" or self.evidence == "vlm_framewise") and not self.vlm:
            raise ValueError("the llm / vlm_framewise path needs a 'models.vlm' entry")
        if self.method == "llm" and not self.llm:
            raise ValueError("generation.method llm needs a 'models.llm' entry")

    @property
    def vlm(self) -> ModelSpec | None:
        return self.models.spec("vlm")

    @property
    def llm(self) -> ModelSpec | None:
        return self.models.spec("llm")

    @property
    def needs_frames(self) -> bool:
        return self.method == "llm" or self.evidence == "vlm_framewise"


def load_prompts(directory: Path = PROMPT_DIR) -> dict[str, str]:
    return {name: (directory / f"{name}.txt").read_text() for name in PROMPTS}


def make_item(video: VideoSource, iid: str, turns: list[dict[str, Any]], version: int = 1) -> dict:
    item = {
        "id": iid,
        "version": version,
        "video_id": video.video_id,
        "video_file": video.video_file,
        "video_sha256": video.sha256,
        "video_duration_s": video.duration_s,
        "video_fps": video.fps,
        "source": video.source,
        "task_type": turns[0]["task_type"],
        "num_turns": len(turns),
        "turns": turns,
        "generator": turns[0]["generator"],
        "content_hash": "",
        "approvals": [],
        "review_round": "",
    }
    item["content_hash"] = content_hash(item)
    return item


@dataclass
class VideoResult:
    """What one video produced (each candidate in exactly one list)."""

    kept: list[dict[str, Any]] = field(default_factory=list)
    filtered: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)  # candidate-level
    video_rejected: Rejection | None = None  # the video as a whole (no candidates)


def _reject(err: BadInput, stage: str, item: str) -> Rejection:
    return Rejection.from_bad_input(err, benchmark=BENCHMARK, environment=ITEMS, stage=stage,
                                    item_id=item)


# ------------------------------------------------------------------------------------- frames


def video_frames(video: VideoSource, max_side: int) -> dict[int, bytes]:
    """Whole second → JPEG of the frame on screen then (decoded once; the project's one sampler).

    On screen *then*, never later: a frame from after t would let the frame-wise check see the
    evidence before it is shown and pull t_s early (StreamReady §4.3: t_s "marks when
    sufficient evidence first appears"). On ``tree.avi``'s sparse timeline the old "first frame
    at or after t" rule showed a frame from after t on 29 of its 30 seconds, up to 0.4 s after.
    """
    if "://" in video.local_path:  # a remote source (gs://, s3://): OpenCV decodes local files only
        import tempfile

        from apache_beam.io.filesystems import FileSystems

        with FileSystems.open(video.local_path) as src, tempfile.NamedTemporaryFile(
            suffix=Path(video.video_file).suffix
        ) as tmp:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                tmp.write(chunk)
            tmp.flush()
            sampled = causal_frames(tmp.name, max_side=max_side, source_file=video.video_file)
    else:
        sampled = causal_frames(video.local_path, max_side=max_side, source_file=video.video_file)
    return {int(round(f.t)): f.image for f in sampled.frames}


# ------------------------------------------------------------------------------------- LLM path


def segments(duration: float, length: float) -> list[tuple[float, float]]:
    n = max(1, math.ceil(duration / length - 1e-9))
    return [(k * length, min((k + 1) * length, duration)) for k in range(n)]


def segment_frame_times(start: float, end: float, n: int, last: int) -> list[int]:
    """n uniformly spaced 1 FPS frame times: the second on screen at the centre of each n-th."""
    return [min(last, int(math.floor(start + (i + 0.5) * (end - start) / n))) for i in range(n)]


def native_cues(video: VideoSource) -> list[Span]:
    spans = [s for k in ("steps", "actions", "scenes", "subtitles") for s in video.span_list(k)]
    spans += [e for _, e in video.causal] + list(video.goals) + [c.span for c in video.clues]
    return sorted(spans, key=lambda s: (s.start, s.end, s.field))


def _coarse(video: VideoSource, lo: float, hi: float, b: tuple[float, float]) -> tuple[Span, str] | None:
    """Coarse span for an LLM hint [lo, hi] inside scene B: the hull of the native cues that
    start inside it, clipped to B; the hint itself when no cue starts there."""
    lo, hi = max(lo, b[0]), min(hi, b[1])
    if hi < lo:
        return None
    # cues that begin where the LLM says the answer is revealed (a cue already running at lo
    # began before it and would pull the window back towards the question)
    hits = [s for s in native_cues(video) if lo - 1e-9 <= s.start <= hi]
    if not hits:
        return Span(round(lo, 3), round(max(hi, lo), 3), "no native cue overlaps", "llm_hint"), "llm"
    start = max(b[0], min(s.start for s in hits))
    end = min(b[1], max(s.end for s in hits))
    label = "; ".join(f"{s.field}: {s.label}" for s in hits[:4])
    return Span(round(start, 3), round(end, 3), label, "native"), "native"


def llm_candidates(
    video: VideoSource, frames: dict[int, bytes], cfg: GenerationConfig, vlm: ModelClient,
    llm: ModelClient,
) -> tuple[list[tuple[str, list[dict]]], list[Rejection]]:
    """(item id, turns) from captions → summaries → QA; raises BadInput for a video-level
    failure (malformed caption/summary output), returns candidate-level rejections."""
    p = cfg.prompts
    last = max(frames)
    segs = segments(video.duration_s, cfg.segment_s)
    cap_reqs = []
    for k, (s, e) in enumerate(segs):
        times = segment_frame_times(s, e, cfg.frames_per_segment, last)
        prompt = p["caption"].format(start=s, end=e, n=len(times), times=", ".join(map(str, times)))
        cap_reqs.append(Request.of(f"{video.video_id}/caption/{k}", prompt,
                                   [frames[t] for t in times], Caption))
    captions = ask_json(vlm, cap_reqs)
    for k, c in enumerate(captions):
        if isinstance(c, str):
            raise BadInput(video.video_file, f"captions[{k}]", c, video.video_id)
    intervals = segments(video.duration_s, cfg.summary_interval_s)
    sum_reqs = []
    for j, (s, e) in enumerate(intervals):
        lines = [f"[{a:.1f}s-{b:.1f}s] {c.caption}"
                 for (a, b), c in zip(segs, captions, strict=True) if s <= a < e]
        sum_reqs.append(Request.of(f"{video.video_id}/summary/{j}",
                                   p["summary"].format(start=s, end=e, captions="\n".join(lines)),
                                   schema=Summary))
    summaries = ask_json(llm, sum_reqs)
    for j, sm in enumerate(summaries):
        if isinstance(sm, str):
            raise BadInput(video.video_file, f"summaries[{j}]", sm, video.video_id)
    qa_reqs = []
    for i in range(len(intervals) - 1):
        (a0, a1), (b0, b1) = intervals[i], intervals[i + 1]
        cues = [f"[{s.start:.1f}-{s.end:.1f}] {s.label}" for s in native_cues(video) if b0 <= s.start < b1]
        qa_reqs.append(Request.of(f"{video.video_id}/qa/{i}", p["qa"].format(
            a_start=a0, a_end=a1, b_start=b0, b_end=b1,
            summary_a=summaries[i].summary, summary_b=summaries[i + 1].summary,
            cues="; ".join(cues) or "none", max_followups=cfg.max_followups), schema=QAChain))
    chains = ask_json(llm, qa_reqs) if qa_reqs else []
    out: list[tuple[str, list[dict]]] = []
    rejected: list[Rejection] = []
    for i, chain in enumerate(chains):
        iid = item_id(video.video_id, f"llm-{i}")
        if isinstance(chain, str):
            rejected.append(_reject(BadInput(video.video_file, f"qa[{i}]", chain, iid), "qa", iid))
            continue
        try:
            out.append((iid, _llm_turns(video, chain, intervals[i], intervals[i + 1], cfg, i)))
        except BadInput as err:
            rejected.append(_reject(err, "qa", iid))
    return out, rejected


def _llm_turns(video: VideoSource, chain: QAChain, a: tuple[float, float], b: tuple[float, float],
               cfg: GenerationConfig, i: int) -> list[dict]:
    from pipelines.proready.templates import turn

    iid = item_id(video.video_id, f"llm-{i}")
    turns: list[dict] = []
    for k, t in enumerate(chain.turns[: 1 + cfg.max_followups]):
        f = f"qa[{i}].turns[{k}]"
        got = _coarse(video, t.evidence_start_s, t.evidence_end_s, b)
        if got is None:
            raise BadInput(video.video_file, f"{f}.evidence_start_s",
                           f"evidence span [{t.evidence_start_s}, {t.evidence_end_s}]s is not in scene "
                           f"B [{b[0]}, {b[1]}]s: the answer would not be future-dependent", iid)
        span, _ = got
        if k == 0:
            ref, dep = -1, "none"
            ask = ask_before(span.start, a[0], cfg.template.min_lead_s)
            ask = None if ask is None else min(ask, float(math.floor(a[1])))
        else:
            if not 0 <= t.refers_to < k:  # a follow-up must build on an earlier turn (App. C)
                raise BadInput(video.video_file, f"{f}.refers_to",
                               f"malformed model output: follow-up refers to turn {t.refers_to}, "
                               f"not to one of the {k} earlier turn(s)", iid)
            ref = t.refers_to
            dep = "local" if ref == k - 1 else "global"
            ask = ask_before(span.start, turns[ref]["coarse_start_s"], cfg.template.min_lead_s)
            if ask is not None:
                ask = max(ask, float(math.ceil(turns[ref]["coarse_start_s"])))
        if ask is None or ask >= span.start:
            raise BadInput(video.video_file, f"{f}.evidence_start_s",
                           f"no ask time before the evidence at {span.start}s", iid)
        turns.append(turn(t.task_type, t.question, t.answer, ask, span, index=k, refers_to=ref,
                          dependency=dep, generator="llm"))
    return turns


# ------------------------------------------------------------------------------------- evidence


def vlm_windows(
    video: VideoSource, iid: str, turns: list[dict], frames: dict[int, bytes],
    cfg: GenerationConfig, vlm: ModelClient,
) -> tuple[list[dict] | None, dict[str, Any]]:
    """Refine every turn's window with the frame-wise check; (None, evidence) if a turn's answer
    never becomes inferable. Raises BadInput on malformed model output."""
    last = max(frames)
    out: list[dict] = []
    evidence: dict[str, Any] = {}
    for k, t in enumerate(turns):
        t = dict(t)
        if k:  # a follow-up is asked once the answer it builds on has appeared
            ref_ts = out[int(t["refers_to"])]["t_s"]
            t["ask_time_s"] = max(t["ask_time_s"], float(math.ceil(ref_ts)))
        lo = max(int(math.floor(t["ask_time_s"])) + 1, int(math.floor(t["coarse_start_s"] - cfg.pad_s)))
        hi = min(last, int(math.ceil(t["coarse_end_s"] + cfg.pad_s)))
        times = list(range(max(0, lo), hi + 1))
        reqs = [Request.of(f"{iid}/turns[{k}]/t={s}", cfg.prompts["evidence"].format(
            t=s, ask=t["ask_time_s"], question=t["question"], answer=t["answer"]), [frames[s]],
            FrameVerdict) for s in times]
        verdicts = ask_json(vlm, reqs) if reqs else []
        for s, v in zip(times, verdicts, strict=True):
            if isinstance(v, str):
                raise BadInput(video.video_file, f"turns[{k}].frame_check[t={s}]", v, iid)
        inf = [v.answer_inferable for v in verdicts]
        cue = [v.cue_visible for v in verdicts]
        evidence[f"turns[{k}]"] = {"times": times, "answer_inferable": inf, "cue_visible": cue}
        win = refine_window([float(s) for s in times], inf, cue, t["task_type"],
                            (t["coarse_start_s"], t["coarse_end_s"]), cfg.dwell_frames)
        if win is None:
            evidence["failed_turn"] = k
            return None, evidence
        t["t_s"], t["t_e"] = win
        t["evidence_method"] = "vlm_framewise"
        out.append(t)
    return out, evidence


def build_video(video: VideoSource, cfg: GenerationConfig, clients: dict[str, ModelClient]) -> VideoResult:
    """All candidates of one video, each kept / filtered / rejected (see module doc)."""
    res = VideoResult()
    frames: dict[int, bytes] = {}
    try:
        if cfg.needs_frames:
            frames = video_frames(video, cfg.frame_max_side)
        if cfg.method == "llm":
            cands, res.rejected = llm_candidates(video, frames, cfg, clients["vlm"], clients["llm"])
        else:
            cands = template_candidates(video, cfg.template)
    except BadInput as err:
        res.video_rejected = Rejection.from_bad_input(
            err, benchmark=BENCHMARK, environment="videos", stage=f"generate_{cfg.method}",
            item_id=video.video_id)
        return res
    for iid, turns in cands:
        try:
            if cfg.evidence == "vlm_framewise":
                refined, evidence = vlm_windows(video, iid, turns, frames, cfg, clients["vlm"])
                if refined is None:
                    item = make_item(video, iid, turns)
                    k = evidence["failed_turn"]
                    res.filtered.append(dict(
                        item, filter_name="evidence_not_found",
                        filter_reason=f"turn {k}: no frame of the padded coarse span makes the answer "
                                      f"inferable after dwell smoothing ({cfg.dwell_frames} frames)",
                        filter_evidence=json.dumps(evidence, sort_keys=True)))
                    continue
                turns = refined
            item = make_item(video, iid, turns)
            validate_item(item, video.manifest_file)
            res.kept.append(item)
        except BadInput as err:
            res.rejected.append(_reject(err, "evidence", iid))
    return res


def generation_config(cfg: dict[str, Any], cache_root: Path, source: str = "config") -> GenerationConfig:
    """The generation / evidence / models sections of a ProReady config; a bad value stops the
    build naming it."""
    gen, ev = dict(cfg["generation"]), dict(cfg["evidence"])
    try:
        return GenerationConfig(
            method=gen.get("method", "template"),
            template=TemplateConfig(**(gen.get("template") or {})),
            segment_s=float(gen.get("segment_s", 30)),
            frames_per_segment=int(gen.get("frames_per_segment", 8)),
            summary_interval_s=float(gen.get("summary_interval_s", 180)),
            max_followups=int(gen.get("max_followups", 2)),
            evidence=ev.get("method", "native_cue"),
            pad_s=float(ev.get("pad_s", 2)),
            dwell_frames=int(ev.get("dwell_frames", 2)),
            frame_max_side=int(ev.get("frame_max_side", 448)),
            models=model_settings(cfg.get("models"), source, cache_root),
            prompts=load_prompts(cache_root / cfg.get("prompts_dir", "configs/proready")),
        )
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"bad generation/evidence config: {exc}") from exc
