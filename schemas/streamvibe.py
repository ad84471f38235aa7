"""StreamVibe-Bench records (StreamVibe §3.1, §3.3, App. B.2).

A sample is "a video stream, an initial user instruction, optional timestamped user turns, and one
or more verified evidence points" (App. B.2); an evidence point ξ_jk stores "an acceptable
intervention window, a preferred time, and a gold response". Each intent i_j "becomes available to
the agent at time τ_j" (§3.1) and Dynamic samples "additionally retain the active intent
transition, making superseded and newly valid constraints distinguishable" (App. B.2).

What a model may see, and what it may not. At step t the policy "accesses only
c_t = ⟨V≤t, I≤t, H<t⟩ […] without access to future video or user inputs" (§3.1), and "at time t,
the record exposes only frames and user turns available by t" (App. B.2). So every released
record keeps three kinds of field apart, by name:

* the **stream** — what a model is given, one decision step at a time: ``frames`` /
  ``frame_times`` / ``frame_pts`` and ``steps[t]`` (the frame on screen at t, the user turns that
  arrived by t *with their text*, and the intents those turns have made valid). Every stream field
  at t is computed from the record truncated at t, and the release's quality suite proves it
  (``pipelines/streamvibe/causality.py``);
* **gold** — every ``gold_*`` field: the annotation of the whole video (all intents, turns,
  transitions, evidence windows and responses, negative probes, the task description). It holds
  the future and is for scoring and analysis only, never model input;
* **provenance** — ids, source, hashes, review record: neither.

Three record types, one definition each (the Arrow / HF / JSON Schema views derive from them):

* :data:`SAMPLE` — the *trajectory* sample: the causal 1 FPS stream plus the gold annotation and
  the provenance App. B.2 asks for (source collection, video id, duration, subtype, requests,
  windows, gold responses, review record, negative-probe type).
* :data:`POINTWISE` — one decision timestamp of the Pointwise setting (§3.5): what the model sees
  at t under *Gold History* (``history``, ``active_intents``, ``frames_visible``) and the
  ``gold_*`` label (respond or not, which point, the reference response).
* Candidates (before release) carry the annotation fields under their plain names
  (:data:`ANNOTATION_FIELDS`) and travel as JSON between generation, review and release
  (``pipelines/streamvibe/candidates.py``); the release renames them with :func:`gold_name`.

The training split (``--split train``; StreamVibe §3.4, App. B.4, Table 18) adds two record types
built from the same reviewed candidates and the same causal stream:

* :data:`SFT_STREAM` — a task-aligned SFT example: the stream of :data:`SAMPLE` whose every step
  also carries its decision label (``gold_decision`` silence / response, and the gold responses
  due at that step): the supervision of the SFT objective (§4.2 Eq. 1: decision tokens and
  response tokens);
* :data:`RL_SEED` — one localized-RL seed: a short causal rollout window around one help point
  (§4.2: "short causal rollouts around annotated help points"), the stream inside the window,
  the Gold History before it, and the gold evidence the point-level reward (Eq. 2) matches.
"""

from __future__ import annotations

from schemas.core import IMAGE, Field, ListOf, RecordSchema, StructOf

BENCHMARK = "streamvibe"

# Table 15 (App. B.2): category, subtype code, operational definition, target samples.
SUBTYPES: dict[str, tuple[str, str, int]] = {
    "I": ("explicit", "One requested event or answer", 200),
    "P": ("explicit", "State transition or irreversible point", 200),
    "R": ("explicit", "Repeated occurrences of a requested event", 200),
    "G": ("implicit", "Guidance for the next task action", 500),
    "L": ("implicit", "Learning and explanation", 500),
    "M": ("implicit", "State monitoring for task progress and changes", 500),
    "T": ("implicit", "Tool use in software interfaces", 500),
    "RV": ("dynamic", "Revision replaces an active intent", 500),
    "CP": ("dynamic", "Composition adds an intent while preserving prior ones", 500),
    "IT": ("dynamic", "Interruption inserts an immediate request while the proactive task "
                      "remains active", 500),
}
DYNAMIC = ("RV", "CP", "IT")
TABLE15_TARGETS = {code: spec[2] for code, spec in SUBTYPES.items()}
ENVIRONMENTS = ("physical", "digital")  # §3.3 Task Collection
TURN_KINDS = ("initial", "revise", "compose", "interrupt")
PROBE_TYPES = ("near_before", "near_after", "between")


# Training split (App. B.4, Table 18). Task-aligned SFT examples per intent category (Table 18 has
# no Dynamic component); the localized-RL seed pool per group, "general" being the external
# general-streaming data benchforge does not build or download (sft/general_mixture.json).
TRAIN_SPLIT = "train"
TRAIN_PREFIX = "train/"  # sample ids and counts groups of the training split
TABLE18_SFT_TARGETS = {"explicit": 35_000, "implicit": 35_000, "dynamic": 0}
GENERAL = "general"
TABLE18_RL_TARGETS = {"explicit": 5_000, "implicit": 5_000, GENERAL: 5_000}
DECISIONS = ("silence", "response")  # a_t of §3.1


def config_name(subtype: str) -> str:
    """HF config / data directory name of a subtype (lower-case code: ``rv``, ``i``…)."""
    return subtype.lower()


INTENT = StructOf((
    Field("id", "string", "Intent id within the sample (i1, i2, …)."),
    Field("subtype", "string", "Subtype this intent exercises (for IT the inserted request is 'IT')."),
    Field("request", "string", "The user's request text."),
    Field("available_at", "float64", "τ_j: seconds at which the intent becomes available (§3.1)."),
    Field("closed_at", "float64", "Seconds at which a revision superseded it; -1 = never closed."),
    Field("proactive", "bool", "False for an immediate (reactive) request inserted by an interruption."),
))

USER_TURN = StructOf((
    Field("t", "float64", "Seconds at which the turn arrives."),
    Field("kind", "string", "initial / revise / compose / interrupt."),
    Field("intent_id", "string", "Intent the turn introduces."),
    Field("text", "string", "What the user says."),
))

TRANSITION = StructOf((
    Field("t", "float64", "Seconds of the user turn that changed the active intents."),
    Field("kind", "string", "initial / revise / compose / interrupt."),
    Field("opened", ListOf("string"), "Intents that became active."),
    Field("closed", ListOf("string"), "Intents superseded (closed) by this turn."),
    Field("active_after", ListOf("string"), "Active intent set right after the turn, sorted."),
))

EVIDENCE = StructOf((
    Field("id", "string", "Evidence point id within the sample (e1, e2, … in time order)."),
    Field("intent_id", "string", "Intent the point serves."),
    Field("start", "float64", "s_jk: window start (seconds)."),
    Field("end", "float64", "e_jk: window end (seconds), s ≤ preferred ≤ e."),
    Field("preferred", "float64", "Preferred response time (seconds)."),
    Field("response", "string", "Gold (reference) response ŷ_jk."),
    Field("proactive", "bool", "False for the answer to an immediate (reactive) request."),
))

NEGATIVE_PROBE = StructOf((
    Field("t", "float64", "Probe time (an integer second, outside every window)."),
    Field("probe_type", "string", f"One of {', '.join(PROBE_TYPES)} (relative to the nearest window)."),
    Field("nearest_evidence", "string", "Id of the evidence point whose window is nearest."),
    Field("distance", "float64", "Seconds to that window's nearest edge (> the largest supported τ)."),
))

STEP = StructOf((
    Field("t", "float64", "Decision time (integer seconds, 1 FPS)."),
    Field("frame", "int32", "Index into `frames` shown at t (the latest frame sampled at or before t)."),
    Field("new_turns", ListOf(USER_TURN),
          "User turns arriving in (previous step, t] (all turns ≤ t at the first step), with their text."),
    Field("active_intents", ListOf("string"),
          "Intents valid at t by the user turns up to t: opened and not superseded (sorted). Never "
          "depends on evidence: whether a point is covered is the policy's own history."),
))

REVIEW = StructOf((
    Field("reviewer", "string", "Pseudonymous reviewer id (r1..r4)."),
    Field("decision", "string", "approve / revise / reject."),
    Field("version", "int32", "Candidate version the decision is for."),
    Field("review_round", "string", "Review round / Label Studio project."),
    Field("created_at", "string", "ISO-8601 time of the decision."),
))

PROVENANCE_FIELDS = (
    Field("id", "string", "Sample id: '<subtype>/<collection>/<video id>/<request index>'."),
    Field("subtype", "string", f"One of {', '.join(SUBTYPES)} (Table 15)."),
    Field("category", "string", "explicit / implicit / dynamic."),
    Field("environment", "string", "physical / digital (§3.3)."),
    Field("source_collection", "string", "Source collection of the task video."),
    Field("source_video_id", "string", "Video id in the source collection."),
    Field("source_file", "string", "Video path relative to the source root."),
    Field("video_sha256", "string", "sha256 of the video file."),
    Field("duration_s", "float64", "Real decodable duration (last decoded pts + one frame period)."),
    Field("header_frames", "int32", "Frame count the container header claims (may lie)."),
    Field("decodable_frames", "int32", "Frames that actually decode."),
    Field("generator", "string", "rule, or gemini:<model> — who proposed the candidate."),
    Field("prompt_version", "string", "Prompt file version for model candidates ('' for rule)."),
    Field("fixes", ListOf("string"), "Unambiguous corrections applied by validation."),
    Field("version", "int32", "Candidate version that was approved."),
    Field("content_hash", "string", "sha256 of the reviewed candidate content."),
)

# The annotation as candidates carry it; released under gold_<name> (module doc).
ANNOTATION_FIELDS = (
    Field("task", "string", "Task description from the task record (may describe what happens later)."),
    Field("initial_instruction", "string", "The first user turn's text."),
    Field("intents", ListOf(INTENT), "Intents with availability and closing times."),
    Field("user_turns", ListOf(USER_TURN), "Every timestamped user turn of the sample, in time order."),
    Field("transitions", ListOf(TRANSITION), "Active-intent transitions (one per user turn)."),
    Field("evidence", ListOf(EVIDENCE), "Evidence points in time order."),
    Field("negative_probes", ListOf(NEGATIVE_PROBE), "Designated nearby negatives (FPR_near)."),
)
GOLD_PREFIX = "gold_"


def gold_name(name: str) -> str:
    """Released name of an annotation field: ``evidence`` → ``gold_evidence``."""
    return GOLD_PREFIX + name


def _gold(f: Field) -> Field:
    return Field(gold_name(f.name), f.kind, f"Gold, never model input (it holds the future). {f.doc}")


STREAM_FIELDS = (
    Field("frames", ListOf(IMAGE), "1 FPS frames (JPEG); frames[k] is sampled at frame_times[k]."),
    Field("frame_times", ListOf("float64"), "Sampling time of each frame (k seconds)."),
    Field("frame_pts", ListOf("float64"), "Presentation time of the decoded frame (≤ its time)."),
    Field("steps", ListOf(STEP), "Causal stream: per second, the frame, turns and valid intents at t."),
)

SAMPLE = RecordSchema(
    name="streamvibe_sample",
    version="2.0.0",
    doc="A StreamVibe-Bench trajectory sample: causal 1 FPS stream, gold annotation (gold_*), provenance.",
    fields=PROVENANCE_FIELDS + STREAM_FIELDS + tuple(_gold(f) for f in ANNOTATION_FIELDS) + (
        Field("review", ListOf(REVIEW), "Review record of the approved version (App. B.2)."),
    ),
)

HISTORY_ITEM = StructOf((
    Field("t", "float64", "Seconds."),
    Field("role", "string", "user / assistant."),
    Field("intent_id", "string", "Intent the item belongs to."),
    Field("text", "string", "Turn text or gold response."),
))

POINTWISE = RecordSchema(
    name="streamvibe_pointwise",
    version="3.0.0",
    doc="One Pointwise decision timestamp (§3.5): model input under Gold History, and the gold label.",
    fields=(
        Field("id", "string", "'<sample id>@<t>#<j>', j counting the rows at that t (no label in it)."),
        Field("sample_id", "string", "Trajectory sample this probe belongs to (joins `SAMPLE.id`)."),
        Field("subtype", "string", "Subtype of the sample."),
        Field("t", "float64", "Decision time (integer seconds)."),
        Field("frames_visible", "int32", "Frames of the sample's stream visible at t (frames[:n])."),
        Field("active_intents", ListOf("string"), "Intents valid at t by the user turns up to t."),
        Field("history", ListOf(HISTORY_ITEM),
              "Gold History (§3.5): user turns ≤ t and the gold responses of points decided before t."),
        Field("gold_should_respond", "bool", "Gold label: True at a positive (an evidence point)."),
        Field("gold_probe_type", "string", "Gold label: positive / near_before / near_after / between."),
        Field("gold_evidence_id", "string", "Gold: evidence point of a positive ('' for negatives)."),
        Field("gold_response", "string", "Gold: reference response of a positive ('' for negatives)."),
    ),
)

# -- training split --------------------------------------------------------------------------

RESPONSE = StructOf((
    Field("evidence_id", "string", "Evidence point whose gold response is due at this step."),
    Field("intent_id", "string", "Intent the response serves."),
    Field("text", "string", "The gold response ŷ."),
))

LABELED_STEP = StructOf(STEP.fields + (
    Field("gold_decision", "string",
          "SFT label at t (the decision token of Eq. 1): 'response' when an evidence point's "
          "response is due at t, else 'silence'. A target, never model input at t; computed from "
          "the record up to t."),
    Field("gold_responses", ListOf(RESPONSE),
          "SFT label at t: the gold responses due at t (the response tokens of Eq. 1); empty on "
          "silence."),
))

STREAM_SHA256 = Field(
    "stream_sha256", "string",
    "sha256 of the decoded 1 FPS stream (every frame time with the sha256 of its JPEG): the "
    "content key the held-out check compares with the evaluation split's videos.")

SFT_STREAM = RecordSchema(
    name="streamvibe_sft_stream",
    version="1.0.0",
    doc="A task-aligned SFT example (StreamVibe App. B.4): the causal 1 FPS stream with a decision "
        "label per step, the gold annotation (gold_*) and provenance.",
    fields=PROVENANCE_FIELDS + (STREAM_SHA256,) + STREAM_FIELDS[:3] + (
        Field("steps", ListOf(LABELED_STEP),
              "Causal stream with labels: per second, the frame, the turns and valid intents at t "
              "(model input) and the decision label at t (gold_decision, gold_responses)."),
    ) + tuple(_gold(f) for f in ANNOTATION_FIELDS) + (
        Field("review", ListOf(REVIEW), "Review record of the approved version (App. B.3)."),
    ),
)

RL_SEED = RecordSchema(
    name="streamvibe_rl_seed",
    version="1.0.0",
    doc="One localized-RL seed (StreamVibe §4.2, App. B.4): a causal rollout window around one help "
        "point, with the Gold History before it and the gold evidence of the point-level reward.",
    fields=(
        Field("id", "string", "'<sample id>@<help point id>'."),
        Field("sample_id", "string", "The reviewed training sample the window comes from."),
    ) + tuple(f for f in PROVENANCE_FIELDS if f.name != "id") + (
        STREAM_SHA256,
        Field("window_start", "float64",
              "First decision time of the rollout (s): the help point's window start minus the "
              "configured lead, floored to a step, never before 0."),
        Field("window_end", "float64",
              "Last decision time of the rollout (s): the window end plus the configured tail, "
              "never past the stream's last step."),
        Field("frames", ListOf(IMAGE),
              "The stream's frames sampled in [window_start, window_end] (1 FPS, JPEG); the source "
              "stream samples t = 0, 1, 2, … so frames[k] is the frame at window_start + k."),
        Field("frame_times", ListOf("float64"), "Sampling time of each frame (seconds of the video)."),
        Field("frame_pts", ListOf("float64"), "Presentation time of the decoded frame (≤ its time)."),
        Field("steps", ListOf(STEP),
              "The stream's causal steps in the window (`frame` indexes this row's `frames`)."),
        Field("history", ListOf(HISTORY_ITEM),
              "Gold History before the window (model input): the user turns that arrived at earlier "
              "steps and the gold responses due before window_start."),
        Field("gold_help_point", "string", "Gold: id of the help point the window is built around."),
        Field("gold_reward_evidence", ListOf(EVIDENCE),
              "Gold: the evidence points whose response is due inside the window — what the "
              "point-level reward (Eq. 2) matches predictions to (N_gt)."),
    ) + tuple(_gold(f) for f in ANNOTATION_FIELDS) + (
        Field("review", ListOf(REVIEW), "Review record of the approved version (App. B.3)."),
    ),
)

FILTERED = RecordSchema(
    name="streamvibe_filtered",
    version="1.0.0",
    doc="A validated candidate that was not released, with the filter and its evidence.",
    fields=(
        Field("id", "string", "Candidate id."),
        Field("subtype", "string", "Subtype."),
        Field("filter_name", "string", "review / allocation / held_out (training split)."),
        Field("filter_reason", "string", "Why, in words."),
        Field("filter_evidence", "string", "Evidence as JSON (review status, rank…)."),
        Field("candidate", "string", "The candidate as canonical JSON."),
    ),
)
