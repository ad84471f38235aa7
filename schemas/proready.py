"""The ProReady-QA item record (StreamReady §4.1–4.2, App. C).

An item is one *question chain* on one long video: a single future-dependent question, or a
multi-turn dialogue whose follow-ups reference earlier turns ("local": the turn just before;
"global": one from farther back — StreamReady §4.2, App. C "Multi-Turn Proactive QA Generation").
Each turn carries the time it is asked in the stream (``ask_time_s``) and its answer evidence
window [t_s, t_e] (StreamReady §4.3: t_s "when sufficient evidence first appears", t_e "when it
ceases to be valid"), which is what ARS scores against (:mod:`pipelines.proready.ars`).

Why chains and not single QA rows: ARS averages over the turns of a question with several valid
answers (§4.3), and a follow-up is meaningless without the turn it refers to, so the chain is the
unit that is reviewed, versioned, approved and released. The video itself is referenced (path
relative to the source root + sha256), not embedded: ProReady videos are 30–60 min long.

Two record types. :data:`ITEM` is the *reviewed* unit — candidates (empty ``approvals``),
corrections and filtered items — where each turn holds the question next to its answer and
window, because reviewers judge them together. :data:`RELEASED_ITEM` is what a release holds, with
what a model may see kept apart by name: a model watching the stream is asked ``questions[k]`` at
its ``ask_time_s`` and sees nothing else of the record (the video itself is read causally, the
frame on screen at t — ``core/media/video.causal_frames``); ``gold_turns`` (the reviewed turns:
answers, evidence windows, cues) is for scoring only, never model input. The release's quality
suite checks that ``questions`` at every t is what the item truncated at t gives
(``pipelines/proready/released.py``).
"""

from schemas.core import Field, ListOf, RecordSchema, StructOf

# StreamReady §4.1 (the ProReady-QA task types), in the paper's order.
TASK_TYPES = ("ssr", "rec", "crr", "ctd", "gsd")
TASK_NAMES = {
    "ssr": "Sequential Steps Recognition",
    "rec": "Repetitive Event Count",
    "crr": "Clues Reveal Responding",
    "ctd": "Causal Trigger Detection",
    "gsd": "Goal-State Detection",
}
DEPENDENCIES = ("none", "local", "global")
GENERATORS = ("template", "llm", "manual")
EVIDENCE_METHODS = ("native_cue", "vlm_framewise", "human")

TURN = StructOf(
    (
        Field("turn_index", "int32", "0-based position of the turn in the chain."),
        Field("task_type", "string", f"One of {', '.join(TASK_TYPES)} (StreamReady §4.1)."),
        Field("question", "string", "The question, as posed to the model at ask_time_s."),
        Field("answer", "string", "Reference answer."),
        Field("ask_time_s", "float64", "Stream time (s) at which the question is asked; < t_s."),
        Field("t_s", "float64", "Evidence onset (s): earliest time the answer is inferable."),
        Field("t_e", "float64", "Evidence end (s): last time the supporting cue is valid."),
        Field("refers_to", "int32", "turn_index this follow-up references (-1 for none)."),
        Field("dependency", "string", "none | local (previous turn) | global (an earlier turn)."),
        Field("cue", "string", "Native annotation the coarse evidence span came from."),
        Field("coarse_start_s", "float64", "Start (s) of the coarse candidate span (native cue)."),
        Field("coarse_end_s", "float64", "End (s) of the coarse candidate span (native cue)."),
        Field("evidence_method", "string", "native_cue | vlm_framewise | human (a reviewer's fix)."),
        Field("generator", "string", "template | llm | manual (who wrote the question)."),
    )
)

_ITEM_FACTS = (
    Field("id", "string", "Stable item id (video id + task + native anchor); same across versions."),
    Field("version", "int32", "Review version of this content (1 = generated candidate)."),
    Field("video_id", "string", "Id of the source video."),
    Field("video_file", "string", "Video path relative to the source root."),
    Field("video_sha256", "string", "sha256 of the video file."),
    Field("video_duration_s", "float64", "Real decodable duration (last frame pts + 1 frame)."),
    Field("video_fps", "float64", "Frame rate of the video (the review player counts frames with it)."),
    Field("source", "string", "Source dataset of the video (e.g. ego4d, movienet, opencv-doc)."),
    Field("task_type", "string", "Task type of the first turn (the config the item is in)."),
    Field("num_turns", "int32", "Number of turns in the chain."),
)
_REVIEW_FACTS = (
    Field("generator", "string", "template | llm | manual (of the first turn)."),
    Field("content_hash", "string", "sha256 of the reviewed content (what approvals refer to)."),
    Field("approvals", ListOf("string"), "Panel reviewers who approved this version (released)."),
    Field("review_round", "string", "Review round that approved it ('' for candidates)."),
)

ITEM = RecordSchema(
    name="proready_candidate",
    version="1.0.0",
    doc="A future-dependent (multi-turn) question chain on a long video with evidence windows, as "
        "reviewed (candidates, corrections, filtered items).",
    fields=_ITEM_FACTS + (Field("turns", ListOf(TURN), "The turns, in the order they are asked."),)
    + _REVIEW_FACTS,
)

QUESTION = StructOf(
    (
        Field("turn_index", "int32", "Turn the question belongs to (joins gold_turns[].turn_index)."),
        Field("ask_time_s", "float64", "Stream time (s) at which the question is asked."),
        Field("question", "string", "The question, as posed to the model at ask_time_s."),
    )
)

RELEASED_ITEM = RecordSchema(
    name="proready_item",
    version="2.0.0",
    doc="A released question chain: model input (questions, in ask order) apart from the gold turns.",
    fields=_ITEM_FACTS + (
        Field("questions", ListOf(QUESTION),
              "Model input: ask questions[k] at its ask_time_s, never before; in ask order."),
        Field("gold_turns", ListOf(TURN),
              "Gold, never model input: the reviewed turns with answers and evidence windows [t_s, t_e]."),
    ) + _REVIEW_FACTS,
)

FILTERED_ITEM = ITEM.extend(
    "proready_filtered_item",
    "A candidate removed by a named filter (evidence check, review), with its evidence.",
    Field("filter_name", "string", "Filter that removed it (evidence_not_found, review_*)."),
    Field("filter_reason", "string", "Why, in words."),
    Field("filter_evidence", "string", "Evidence as JSON (frame verdicts, review decisions)."),
)
